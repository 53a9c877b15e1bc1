#include "store/sha256.h"

#include <openssl/evp.h>

#include <new>

namespace kairos::store {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    throw std::bad_alloc();
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

Sha256& Sha256::Update(std::string_view bytes) {
  EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
  return *this;
}

Hash Sha256::Finish() {
  Hash out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, out.data(), &len);
  EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr);
  return out;
}

Hash Sha256Of(std::string_view bytes) {
  Hash out{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

}  // namespace kairos::store
