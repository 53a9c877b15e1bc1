#include "store/sha256.h"

#include <openssl/evp.h>

#include <new>

namespace kairos::store {

namespace {

// The SHA-256 implementation, fetched once: passing EVP_sha256() to every call makes OpenSSL 3
// look the algorithm up each time, which costs more than hashing 65 bytes.
const EVP_MD* Sha256Md() {
  static EVP_MD* md = [] {
    EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (m == nullptr) throw std::bad_alloc();
    return m;
  }();
  return md;
}

// One reusable context per thread for the one-shot helper.
EVP_MD_CTX* ThreadContext() {
  thread_local struct Holder {
    Holder() : ctx(EVP_MD_CTX_new()) {
      if (ctx == nullptr) throw std::bad_alloc();
    }
    ~Holder() { EVP_MD_CTX_free(ctx); }
    EVP_MD_CTX* ctx;
  } holder;
  return holder.ctx;
}

}  // namespace

Hash Sha256Of(std::string_view bytes) {
  EVP_MD_CTX* ctx = ThreadContext();
  Hash out{};
  unsigned int len = 0;
  EVP_DigestInit_ex2(ctx, Sha256Md(), nullptr);
  EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
  EVP_DigestFinal_ex(ctx, out.data(), &len);
  return out;
}

}  // namespace kairos::store
