#include "crypto/hash.h"

// SHA-256 and RIPEMD-160 use OpenSSL's low-level functions on a context on the stack
// (deprecated in 3.0, kept through 3.x): OpenSSL 3.0's EVP_DigestInit frees and allocates its
// algorithm context on every call even when the context is reused, and the one-shot SHA256()
// goes through EVP too; either costs more than hashing a public key or a short tx. The
// low-level calls run the same assembly (SHA extensions where the CPU has them).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ripemd.h>
#include <openssl/sha.h>

#include <stdexcept>

#include "crypto/internal.h"

namespace kairos::crypto {

namespace {

// Fetches an algorithm once: OpenSSL 3 looks an implicitly fetched EVP_MD up on every call.
const EVP_MD* FetchedMd(const char* name) {
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  if (md == nullptr) throw std::runtime_error(std::string("OpenSSL has no ") + name);
  return md;
}

const EVP_MD* Sha512Md() {
  static const EVP_MD* md = FetchedMd("SHA512");
  return md;
}

using internal::Uchars;

}  // namespace

namespace {

// SHA-256 of the concatenation of `parts` into `out` (32 bytes).
void Sha256To(std::initializer_list<std::string_view> parts, unsigned char* out) {
  SHA256_CTX c;
  if (SHA256_Init(&c) != 1) throw std::runtime_error("SHA-256 failed");
  for (std::string_view p : parts) {
    if (SHA256_Update(&c, p.data(), p.size()) != 1) throw std::runtime_error("SHA-256 failed");
  }
  if (SHA256_Final(out, &c) != 1) throw std::runtime_error("SHA-256 failed");
}

}  // namespace

std::string Sha256(std::string_view data) {
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  Sha256To({data}, Uchars(out));
  return out;
}

Digest32 Sha256Array(std::string_view data) {
  return Sha256Concat({data});
}

Digest32 Sha256Concat(std::initializer_list<std::string_view> parts) {
  Digest32 out;
  Sha256To(parts, reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

std::string Ripemd160(std::string_view data) {
  std::string out(RIPEMD160_DIGEST_LENGTH, '\0');
  RIPEMD160_CTX c;
  if (RIPEMD160_Init(&c) != 1 || RIPEMD160_Update(&c, data.data(), data.size()) != 1 ||
      RIPEMD160_Final(Uchars(out), &c) != 1) {
    throw std::runtime_error("RIPEMD-160 failed");
  }
  return out;
}

std::string HmacSha512(std::string_view key, std::string_view data) {
  std::string out(64, '\0');
  unsigned int len = 0;
  if (HMAC(Sha512Md(), key.data(), static_cast<int>(key.size()), Uchars(data), data.size(),
           Uchars(out), &len) == nullptr) {
    throw std::runtime_error("HMAC-SHA512 failed");
  }
  return out;
}

std::string Pbkdf2Sha512(std::string_view password, std::string_view salt, int iterations,
                         std::size_t out_len) {
  std::string out(out_len, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), Uchars(salt),
                        static_cast<int>(salt.size()), iterations, Sha512Md(),
                        static_cast<int>(out_len), Uchars(out)) != 1) {
    throw std::runtime_error("PBKDF2-HMAC-SHA512 failed");
  }
  return out;
}

}  // namespace kairos::crypto
