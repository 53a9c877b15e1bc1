// Bech32 (BIP-173, not bech32m) addresses: human-readable prefix + 8-bit data. Kairos account
// addresses use the prefix "kairos". Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/status.h"

namespace kairos::crypto {

inline constexpr char kAccountPrefix[] = "kairos";
inline constexpr std::size_t kBech32MaxLength = 90;  // BIP-173, the whole string

struct Bech32Data {
  std::string hrp;    // lower case
  std::string bytes;  // the data, regrouped to 8-bit bytes
};

// Encodes `bytes` (regrouped to 5-bit groups) under `hrp`. REQUIRES: a valid lower-case hrp
// (1..83 characters in 33..126). The result may exceed 90 characters for long data; Bech32Decode
// rejects such a string.
std::string Bech32Encode(std::string_view hrp, std::string_view bytes);
// Decodes and checks: the checksum, the character set, mixed case, length <= 90, and padding
// (BIP-173 rules). InvalidArgument with a message saying what is wrong.
Result<Bech32Data> Bech32Decode(std::string_view text);

// An account address: the prefix must be "kairos" and the data 20 bytes (32 is also accepted,
// as the SDK does for module accounts). Returns the raw bytes.
Result<std::string> DecodeAccountAddress(std::string_view text);
std::string EncodeAccountAddress(std::string_view address_bytes);

// The lower level, for data that is not whole bytes (a segwit address puts a 5-bit witness
// version before its program). A word is a 5-bit value, 0..31.
struct Bech32Words {
  std::string hrp;  // lower case
  std::vector<std::uint8_t> words;
};
// REQUIRES: as Bech32Encode, and every word < 32.
std::string Bech32EncodeWords(std::string_view hrp, std::span<const std::uint8_t> words);
// All the checks of Bech32Decode except padding (there is no regrouping).
Result<Bech32Words> Bech32DecodeWords(std::string_view text);
// 8-bit bytes to 5-bit words, the last word padded with zero bits.
std::vector<std::uint8_t> Bech32BytesToWords(std::string_view bytes);
// 5-bit words to 8-bit bytes. InvalidArgument if the padding is 5 bits or more, or not zero.
Result<std::string> Bech32WordsToBytes(std::span<const std::uint8_t> words);

}  // namespace kairos::crypto
