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

// One digest context per thread, reused: EVP_Digest allocates and frees a context on every call,
// which costs several times the hashing of a short input (a tx, sign bytes, a public key), and
// CheckTx hashes three or four of those.
EVP_MD_CTX* ThreadContext() {
  thread_local struct Holder {
    Holder() : ctx(EVP_MD_CTX_new()) {
      if (ctx == nullptr) throw std::runtime_error("EVP_MD_CTX_new failed");
    }
    ~Holder() { EVP_MD_CTX_free(ctx); }
    EVP_MD_CTX* ctx;
  } holder;
  return holder.ctx;
}

std::string Digest(const EVP_MD* md, std::string_view data) {
  std::string out(static_cast<std::size_t>(EVP_MD_get_size(md)), '\0');
  unsigned int len = 0;
  EVP_MD_CTX* ctx = ThreadContext();
  if (EVP_DigestInit_ex2(ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, Uchars(out), &len) != 1) {
    throw std::runtime_error("SHA digest failed");
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
