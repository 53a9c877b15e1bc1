// The chain's identity and chain-wide limits in the store (meta/...): written by InitChain from
// the genesis, read back when the app opens a committed store; never from a node's config.
// Integers are 8-byte big-endian two's complement. Thread-safe (constants and pure functions).
#pragma once

#include <cstdint>
#include <string>

#include "ante/errors.h"
#include "store/big_endian.h"

namespace kairos::app {

inline constexpr char kKeyChainId[] = "meta/chain_id";
inline constexpr char kKeyInitialHeight[] = "meta/initial_height";
inline constexpr char kKeyMaxKeyBytes[] = "meta/max_key_bytes";
inline constexpr char kKeyMaxValueBytes[] = "meta/max_value_bytes";
inline constexpr char kKeyMaxBlockGas[] = "meta/max_block_gas";

inline std::string EncodeInt64(std::int64_t v) {
  return EncodeBigEndian64(static_cast<std::uint64_t>(v));
}

inline bool DecodeInt64(const std::string& in, std::int64_t* v) {
  std::uint64_t u = 0;
  if (!DecodeBigEndian64(in, &u)) return false;
  *v = static_cast<std::int64_t>(u);
  return true;
}

// A byte string as printable text for logs and responses (proto3 strings must be UTF-8).
inline std::string Printable(const std::string& bytes) { return ante::Printable(bytes, 128); }

}  // namespace kairos::app
