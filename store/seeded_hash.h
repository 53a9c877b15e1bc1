// SeededHash: the hash of every hash map or set whose keys an outsider can choose or grind
// (store keys, addresses, tx hashes, signature-cache keys, tree paths): SipHash-1-3 under a
// 128-bit key drawn from the OS once per process. Why it exists (issue 20): libstdc++'s
// std::hash<std::string_view> is MurmurHash64A with a fixed seed, every step of it invertible,
// so an attacker computes any number of keys with one full 64-bit hash directly (no search),
// and a table holding them does quadratic work; one block of 20,000 sends to such recipients
// took 19 s to finalize instead of 0.5 s. A seed mixed in after a fixed hash does not help (full
// collisions stay collisions), and neither does a digest's first 8 bytes used as its own hash
// (a SHA-256 output can be ground for partial collisions of the bits a table uses).
//
// Why not absl::Hash with a random seed: Debian 12's Abseil (20220623) hashes std::string_view
// with std::hash (its absl::string_view is its own type there), and hashes other strings longer
// than 16 bytes with LowLevelHash, whose per-process seed is an address (ASLR) and whose
// 16-byte rounds multiply (word ^ public salt) by the state: a key whose 8 bytes at a round's
// start equal the public salt erases the seed and everything before it, so keys with those 8
// bytes in place of an address's middle all collide, for every seed. SipHash is a keyed PRF
// built for exactly this use (hash-flooding resistance); 1-3 rounds is the variant Rust's
// HashMap and CPython use for their tables. It is 40 lines, so it is written here rather than
// taken from a new dependency (libsodium has it; OpenSSL's EVP_MAC costs an allocation a call).
//
// CountingKeyEqual: the maps' key equality, counting its calls into a counter the owner
// exposes as a debug statistic (tests assert on it: a crafted workload must not cost more key
// comparisons than a random one).
//
// Thread-safe: the process key is set once, before first use (a function-local static), and
// read only afterwards. The hash of a key differs between processes, so nothing may iterate a
// table hashed with it into state, hashes, events or responses (none does: store/README.md).
#pragma once

#include <sys/random.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>

namespace kairos::store {

using SipKey = std::array<std::uint64_t, 2>;

// SipHash-1-3 of `n` bytes at `data` under `key` (k0, k1: the key's two little-endian halves).
inline std::uint64_t SipHash13(const SipKey& key, const void* data, std::size_t n) {
  std::uint64_t v0 = key[0] ^ 0x736f6d6570736575ull, v1 = key[1] ^ 0x646f72616e646f6dull;
  std::uint64_t v2 = key[0] ^ 0x6c7967656e657261ull, v3 = key[1] ^ 0x7465646279746573ull;
  auto round = [&] {
    v0 += v1, v1 = std::rotl(v1, 13), v1 ^= v0, v0 = std::rotl(v0, 32);
    v2 += v3, v3 = std::rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = std::rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = std::rotl(v1, 17), v1 ^= v2, v2 = std::rotl(v2, 32);
  };
  static_assert(std::endian::native == std::endian::little, "SipHash reads little-endian words");
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t whole = n & ~std::size_t{7};
  for (std::size_t i = 0; i < whole; i += 8) {
    std::uint64_t m;
    std::memcpy(&m, p + i, 8);
    v3 ^= m;
    round();
    v0 ^= m;
  }
  std::uint64_t last = static_cast<std::uint64_t>(n) << 56;
  for (std::size_t i = whole; i < n; ++i) last |= std::uint64_t{p[i]} << (8 * (i - whole));
  v3 ^= last;
  round();
  v0 ^= last;
  v2 ^= 0xff;
  round();
  round();
  round();
  return v0 ^ v1 ^ v2 ^ v3;
}

// This process's key: 128 bits from the OS (getrandom; std::random_device should it fail),
// drawn at the first hash.
inline const SipKey& ProcessSipKey() {
  static const SipKey key = [] {
    SipKey k{};
    if (::getrandom(k.data(), sizeof k, 0) != static_cast<ssize_t>(sizeof k)) {
      std::random_device os;
      for (std::uint64_t& half : k) half = (std::uint64_t{os()} << 32) | os();
    }
    return k;
  }();
  return key;
}

inline std::size_t SeededHashOf(const void* data, std::size_t n) {
  return static_cast<std::size_t>(SipHash13(ProcessSipKey(), data, n));
}

// The hasher. Transparent: a table of std::string keys is probed with a string_view, without
// building a string. Deliberately not noexcept: libstdc++'s std::unordered_map then keeps each
// node's hash beside it (it does so for hashers that may throw), so a bucket walk or a rehash
// never hashes a key again.
struct SeededHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view bytes) const {
    return SeededHashOf(bytes.data(), bytes.size());
  }
  // A fixed-size byte array (a SHA-256 digest, a signature-cache key).
  template <class Byte, std::size_t N>
    requires(sizeof(Byte) == 1)
  std::size_t operator()(const std::array<Byte, N>& bytes) const {
    return SeededHashOf(bytes.data(), N);
  }
};

// Transparent byte equality that counts its calls into `*comparisons`, when set (REQUIRES: the
// counter outlives the table, and is touched only by one thread at a time, as the table is).
struct CountingKeyEqual {
  using is_transparent = void;
  std::uint64_t* comparisons = nullptr;
  bool operator()(std::string_view a, std::string_view b) const {
    if (comparisons != nullptr) ++*comparisons;
    return a == b;
  }
};

}  // namespace kairos::store
