// 8-byte big-endian integers, as the app writes them into state keys and values (so they sort
// by value). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kairos::app {

inline std::string EncodeBigEndian64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (56 - 8 * i));
  return out;
}

// false unless `in` is exactly 8 bytes.
inline bool DecodeBigEndian64(std::string_view in, std::uint64_t* v) {
  if (in.size() != 8) return false;
  std::uint64_t u = 0;
  for (unsigned char c : in) u = (u << 8) | c;
  *v = u;
  return true;
}

}  // namespace kairos::app
