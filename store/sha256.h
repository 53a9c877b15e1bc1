// SHA-256 over OpenSSL's EVP interface: the hash of the Merkle tree and the app hash.
// A Sha256 object is single-threaded; the free function is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace kairos::store {

using Hash = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& Update(std::string_view bytes);
  Sha256& Update(const Hash& h) {
    return Update(std::string_view(reinterpret_cast<const char*>(h.data()), h.size()));
  }
  // Returns the digest; the object is then reset for a new message.
  Hash Finish();

 private:
  evp_md_ctx_st* ctx_;
};

Hash Sha256Of(std::string_view bytes);

inline std::string ToBytes(const Hash& h) {
  return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

}  // namespace kairos::store
