#include "crypto/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

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

const EVP_MD* Sha256Md() {
  static const EVP_MD* md = FetchedMd("SHA256");
  return md;
}
const EVP_MD* Ripemd160Md() {
  static const EVP_MD* md = FetchedMd("RIPEMD160");
  return md;
}
const EVP_MD* Sha512Md() {
  static const EVP_MD* md = FetchedMd("SHA512");
  return md;
}

using internal::Uchars;

std::string Digest(const EVP_MD* md, std::string_view data) {
  std::string out(static_cast<std::size_t>(EVP_MD_get_size(md)), '\0');
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), Uchars(out), &len, md, nullptr) != 1) {
    throw std::runtime_error("EVP_Digest failed");
  }
  return out;
}

}  // namespace

std::string Sha256(std::string_view data) { return Digest(Sha256Md(), data); }

std::string Ripemd160(std::string_view data) { return Digest(Ripemd160Md(), data); }

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
