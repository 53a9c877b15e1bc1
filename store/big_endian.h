// 8-byte big-endian integers: the one implementation for the store's keys and records
// (versions, so LevelDB keys sort by number) and the app's state keys and values (heights,
// counters, expiries). These bytes reach store keys and the app hash: they must never change.
// Header-only over Boost.Endian. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/endian/conversion.hpp>

namespace kairos {

inline void AppendBigEndian64(std::uint64_t v, std::string* out) {
  unsigned char bytes[8];
  boost::endian::store_big_u64(bytes, v);
  out->append(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

inline std::string EncodeBigEndian64(std::uint64_t v) {
  std::string out;
  AppendBigEndian64(v, &out);
  return out;
}

// The first 8 bytes of `in`. REQUIRES: in.size() >= 8.
inline std::uint64_t ReadBigEndian64(std::string_view in) {
  return boost::endian::load_big_u64(reinterpret_cast<const unsigned char*>(in.data()));
}

// false unless `in` is exactly 8 bytes.
inline bool DecodeBigEndian64(std::string_view in, std::uint64_t* v) {
  if (in.size() != 8) return false;
  *v = ReadBigEndian64(in);
  return true;
}

}  // namespace kairos
