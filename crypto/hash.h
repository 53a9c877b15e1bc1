// Hash functions and key-derivation primitives over OpenSSL 3: SHA-256, RIPEMD-160 (from the
// default provider), HMAC-SHA512 and PBKDF2-HMAC-SHA512. All functions are pure and thread-safe.
// Outputs are raw bytes in a std::string. An OpenSSL failure (out of memory, a missing
// algorithm) throws std::runtime_error: it means a broken node, not bad input.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace kairos::crypto {

std::string Sha256(std::string_view data);     // 32 bytes
using Digest32 = std::array<char, 32>;
Digest32 Sha256Array(std::string_view data);   // the same, without a heap allocation
// SHA-256 of the concatenation of `parts`, without building it.
Digest32 Sha256Concat(std::initializer_list<std::string_view> parts);
std::string Ripemd160(std::string_view data);  // 20 bytes
std::string HmacSha512(std::string_view key, std::string_view data);  // 64 bytes
// PBKDF2-HMAC-SHA512 (BIP39 uses 2048 iterations and a 64-byte output).
std::string Pbkdf2Sha512(std::string_view password, std::string_view salt, int iterations,
                         std::size_t out_len);

}  // namespace kairos::crypto
