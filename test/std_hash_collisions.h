// Test and benchmark helper: addresses whose store keys all have the same libstdc++
// std::hash<std::string_view>, derived directly (no search), as an attacker would derive them.
//
// libstdc++'s std::hash<std::string_view> on 64-bit targets is _Hash_bytes(p, n, 0xc70f6907), a
// MurmurHash64A variant with a fixed seed:
//   h = seed ^ (n * mul); for each 8-byte little-endian block b: h ^= shift_mix(b * mul) * mul;
//   h *= mul; then the 1..7 tail bytes (little-endian): h ^= tail; h *= mul; and finally
//   h = shift_mix(shift_mix(h) * mul), with mul = 0xc6a4a7935bd1e995, shift_mix(v) = v ^ (v >> 47).
// Every step is invertible (mul is odd; shift_mix by 47 >= 32 is its own inverse), so for one
// 8-byte block of the key that the attacker chooses freely, and everything else in the key fixed
// or random, the block can be solved so that the state after the whole key is any chosen value:
// full 64-bit collisions for as many keys of one length as wanted. Store keys end with, or
// contain, a 20-byte address that a sender names freely (a MsgSend's recipient), which holds
// such a block. This is what made store::Branch and the store's value cache quadratic before
// they used store::SeededHash (issue 20).
//
// Thread-safe (pure functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::test {

inline constexpr std::uint64_t kStdHashMul = 0xc6a4a7935bd1e995ull;
inline constexpr std::uint64_t kStdHashSeed = 0xc70f6907ull;

inline std::uint64_t StdHashShiftMix(std::uint64_t v) { return v ^ (v >> 47); }

// The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct bits).
inline std::uint64_t InverseMod64(std::uint64_t a) {
  std::uint64_t x = a;  // correct to 3 bits for odd a
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}

inline std::uint64_t LoadLittleEndian(const char* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Overwrites key[at, at + 8) (REQUIRES: `at` a multiple of 8, the block inside the key) so that
// _Hash_bytes' state after the whole key, before its final mixing, is `state`: every key of one
// length forged with one `state` then has the same std::hash.
inline void ForgeStdHashState(std::string* key, std::size_t at, std::uint64_t state) {
  const std::size_t n = key->size();
  if (at % 8 != 0 || at + 8 > n) throw std::invalid_argument("the free block must be aligned");
  const std::uint64_t inverse = InverseMod64(kStdHashMul);
  // Forward over the blocks before the free one.
  std::uint64_t before = kStdHashSeed ^ (n * kStdHashMul);
  for (std::size_t p = 0; p < at; p += 8) {
    before ^= StdHashShiftMix(LoadLittleEndian(key->data() + p, 8) * kStdHashMul) * kStdHashMul;
    before *= kStdHashMul;
  }
  // Backward from `state` over the tail and the blocks after the free one.
  const std::size_t aligned = n & ~std::size_t{7};
  std::uint64_t after = state;
  if (n % 8 != 0) after = (after * inverse) ^ LoadLittleEndian(key->data() + aligned, n % 8);
  for (std::size_t p = aligned; p > at + 8; p -= 8) {
    after = (after * inverse) ^
            (StdHashShiftMix(LoadLittleEndian(key->data() + p - 8, 8) * kStdHashMul) * kStdHashMul);
  }
  // after = (before ^ shift_mix(b * mul) * mul) * mul: solve for the block b.
  const std::uint64_t mixed = (after * inverse) ^ before;
  const std::uint64_t block = StdHashShiftMix(mixed * inverse) * inverse;
  for (int i = 0; i < 8; ++i) (*key)[at + i] = static_cast<char>(block >> (8 * i));
}

// `n` distinct random 20-byte addresses (deterministic in `seed`).
inline std::vector<std::string> RandomAddresses(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string a(20, '\0');
    for (char& c : a) c = static_cast<char>(rng());
    out.push_back(std::move(a));
  }
  return out;
}

// `n` distinct 20-byte addresses whose keys key_of(address) (a std::string; the address must
// appear in it at one offset whatever the address) all have one std::hash<std::string_view>
// value. Each address is random (from `seed`) except 8 bytes solved with ForgeStdHashState.
template <class KeyOf>
std::vector<std::string> StdHashCollidingAddresses(std::size_t n, KeyOf key_of,
                                                   std::uint64_t seed) {
  constexpr std::size_t kAddressBytes = 20;
  const std::string marker(kAddressBytes, '\x5a');
  const std::string probe = key_of(marker);
  const std::size_t offset = probe.find(marker);
  if (offset == std::string::npos) throw std::invalid_argument("the key does not hold the address");
  const std::size_t block = (offset + 7) / 8 * 8;  // the first aligned block inside the address
  if (block + 8 > offset + kAddressBytes) throw std::invalid_argument("no aligned block");
  const std::uint64_t state = 0x6b6169726f732d31ull;  // any value: all keys share it
  std::vector<std::string> out = RandomAddresses(n, seed);
  for (std::string& address : out) {
    std::string key = key_of(address);
    ForgeStdHashState(&key, block, state);
    address = key.substr(offset, kAddressBytes);
  }
  return out;
}

}  // namespace kairos::test
