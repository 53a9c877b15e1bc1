// Bech32 (BIP-173) addresses: human-readable prefix + 8-bit data. Kairos account addresses use the
// prefix "kairos". Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "store/status.h"

namespace kairos::crypto {

inline constexpr char kAccountPrefix[] = "kairos";

struct Bech32Data {
  std::string hrp;    // lower case
  std::string bytes;  // the data, regrouped to 8-bit bytes
};

// Encodes `bytes` (regrouped to 5-bit groups) under `hrp`. REQUIRES: a valid lower-case hrp.
std::string Bech32Encode(std::string_view hrp, std::string_view bytes);
// Decodes and checks: the checksum, the character set, mixed case, length <= 90, and padding
// (BIP-173 rules). InvalidArgument with a message saying what is wrong.
Result<Bech32Data> Bech32Decode(std::string_view text);

// An account address: the prefix must be "kairos" and the data 20 bytes (32 is also accepted,
// as the SDK does for module accounts). Returns the raw bytes.
Result<std::string> DecodeAccountAddress(std::string_view text);
std::string EncodeAccountAddress(std::string_view address_bytes);

}  // namespace kairos::crypto
