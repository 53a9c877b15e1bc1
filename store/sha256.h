// SHA-256 over OpenSSL's EVP interface: the hash of the Merkle tree and the app hash.
// Thread-safe (each thread reuses its own OpenSSL context).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kairos::store {

using Hash = std::array<std::uint8_t, 32>;

Hash Sha256Of(std::string_view bytes);

inline std::string ToBytes(const Hash& h) {
  return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

}  // namespace kairos::store
