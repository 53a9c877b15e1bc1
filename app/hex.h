// Hex encoding for logs, query paths and state keys: the project's one hex codec, over Abseil's.
// (Debian's Abseil has its own absl::string_view, hence the conversions.) Pure functions;
// thread-safe.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"

namespace kairos::app {

// Lowercase by default; `upper` for hashes as CometBFT prints them.
inline std::string HexEncode(std::string_view bytes, bool upper = false) {
  std::string out = absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
  if (upper) absl::AsciiStrToUpper(&out);
  return out;
}

// Either case. False (and `*out` unspecified) for an odd length or a non-hex character.
// (absl::HexStringToBytes does not check its input, hence the check first.)
inline bool HexDecode(std::string_view hex, std::string* out) {
  const bool valid = hex.size() % 2 == 0 && std::all_of(hex.begin(), hex.end(), [](char c) {
                       return absl::ascii_isxdigit(static_cast<unsigned char>(c));
                     });
  if (!valid) return false;
  *out = absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
  return true;
}

}  // namespace kairos::app
