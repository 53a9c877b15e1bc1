#include "crypto/bech32.h"

#include <array>
#include <optional>
#include <string>

#include <cstdio>

namespace kairos::crypto {

namespace {

constexpr char kCharset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
constexpr std::size_t kChecksumLength = 6;
constexpr std::uint32_t kBech32Constant = 1;
constexpr std::uint32_t kBech32mConstant = 0x2bc830a3;  // BIP-350, only to name the mistake

// The BCH checksum of BIP-173 over 5-bit values. The generator terms selected by the five bits
// shifted out are XORed from a 32-entry table (one lookup instead of five tests per character:
// every address in every tx is decoded).
constexpr std::array<std::uint32_t, 32> kGenTable = [] {
  constexpr std::uint32_t kGen[5] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
  std::array<std::uint32_t, 32> table{};
  for (std::uint32_t top = 0; top < 32; ++top) {
    for (int i = 0; i < 5; ++i) {
      if ((top >> i) & 1) table[top] ^= kGen[i];
    }
  }
  return table;
}();

std::uint32_t PolymodStep(std::uint32_t chk, std::uint8_t value) {
  return (((chk & 0x1ffffff) << 5) ^ value) ^ kGenTable[chk >> 25];
}

// The checksum state after the expanded hrp: high bits of each character, 0, low bits.
std::uint32_t PolymodHrp(std::string_view hrp) {
  std::uint32_t chk = 1;
  for (char c : hrp) chk = PolymodStep(chk, static_cast<std::uint8_t>(c) >> 5);
  chk = PolymodStep(chk, 0);
  for (char c : hrp) chk = PolymodStep(chk, static_cast<std::uint8_t>(c) & 31);
  return chk;
}

// The inverse of kCharset: a character's 5-bit value, or -1. A table, not a scan: every
// address in every tx is decoded.
constexpr std::array<std::int8_t, 256> kCharsetRev = [] {
  std::array<std::int8_t, 256> rev{};
  rev.fill(-1);
  for (int i = 0; i < 32; ++i) rev[static_cast<unsigned char>(kCharset[i])] = static_cast<std::int8_t>(i);
  return rev;
}();

int CharsetIndex(char c) { return kCharsetRev[static_cast<unsigned char>(c)]; }

std::string Describe(char c) {
  const auto u = static_cast<unsigned char>(c);
  char buf[16];
  if (u >= 33 && u <= 126) {
    std::snprintf(buf, sizeof buf, "'%c'", c);
  } else {
    std::snprintf(buf, sizeof buf, "0x%02X", u);
  }
  return buf;
}

Status Invalid(const std::string& what) { return Status::InvalidArgument("bech32: " + what); }

}  // namespace

std::string Bech32EncodeWords(std::string_view hrp, std::span<const std::uint8_t> words) {
  std::uint32_t chk = PolymodHrp(hrp);
  for (std::uint8_t w : words) chk = PolymodStep(chk, w);
  for (std::size_t i = 0; i < kChecksumLength; ++i) chk = PolymodStep(chk, 0);
  chk ^= kBech32Constant;

  std::string out(hrp);
  out.push_back('1');
  for (std::uint8_t w : words) out.push_back(kCharset[w & 31]);
  for (std::size_t i = 0; i < kChecksumLength; ++i) {
    out.push_back(kCharset[(chk >> (5 * (kChecksumLength - 1 - i))) & 31]);
  }
  return out;
}

Result<Bech32Words> Bech32DecodeWords(std::string_view text) {
  if (text.size() > kBech32MaxLength) {
    return Invalid("string is " + std::to_string(text.size()) + " characters, more than 90");
  }
  bool lower = false, upper = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 33 || u > 126) {
      return Invalid("character " + Describe(text[i]) + " out of range at position " +
                     std::to_string(i));
    }
    lower |= (u >= 'a' && u <= 'z');
    upper |= (u >= 'A' && u <= 'Z');
  }
  if (lower && upper) return Invalid("string mixes upper and lower case");

  const std::size_t sep = text.rfind('1');
  if (sep == std::string_view::npos) return Invalid("no separator '1'");
  if (sep == 0) return Invalid("empty human-readable part");
  if (text.size() - sep - 1 < kChecksumLength) {
    return Invalid("data part is shorter than the 6-character checksum");
  }

  Bech32Words out;
  out.hrp.reserve(sep);
  for (std::size_t i = 0; i < sep; ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.hrp.push_back(c);
  }
  std::uint32_t chk = PolymodHrp(out.hrp);
  const std::size_t data_len = text.size() - sep - 1;
  out.words.reserve(data_len - kChecksumLength);
  for (std::size_t i = sep + 1; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const int value = CharsetIndex(c);
    if (value < 0) {
      return Invalid("invalid data character " + Describe(text[i]) + " at position " +
                     std::to_string(i));
    }
    chk = PolymodStep(chk, static_cast<std::uint8_t>(value));
    if (i < text.size() - kChecksumLength) out.words.push_back(static_cast<std::uint8_t>(value));
  }
  if (chk != kBech32Constant) {
    return Invalid(chk == kBech32mConstant ? "invalid checksum (a bech32m checksum, not bech32)"
                                           : "invalid checksum");
  }
  return out;
}

std::vector<std::uint8_t> Bech32BytesToWords(std::string_view bytes) {
  std::vector<std::uint8_t> out;
  out.reserve((bytes.size() * 8 + 4) / 5);
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 31));
    }
  }
  if (bits > 0) out.push_back(static_cast<std::uint8_t>((acc << (5 - bits)) & 31));
  return out;
}

Result<std::string> Bech32WordsToBytes(std::span<const std::uint8_t> words) {
  std::string out;
  out.reserve(words.size() * 5 / 8);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::uint8_t w : words) {
    if (w > 31) return Invalid("word out of range");
    acc = ((acc << 5) | w) & 0xfff;  // at most 12 bits are ever pending
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (bits >= 5) return Invalid("more than 4 bits of padding");
  if ((acc & ((1u << bits) - 1)) != 0) return Invalid("non-zero padding bits");
  return out;
}

std::string Bech32Encode(std::string_view hrp, std::string_view bytes) {
  return Bech32EncodeWords(hrp, Bech32BytesToWords(bytes));
}

Result<Bech32Data> Bech32Decode(std::string_view text) {
  Result<Bech32Words> words = Bech32DecodeWords(text);
  if (!words.ok()) return words.status();
  Result<std::string> bytes = Bech32WordsToBytes(words->words);
  if (!bytes.ok()) return bytes.status();
  return Bech32Data{std::move(words->hrp), std::move(*bytes)};
}

namespace {

// The common case, a 20-byte address in lower case with the account prefix ("kairos1", 32 data
// characters, 6 checksum characters), decoded in one pass with no allocation but the result.
// nullopt for anything else, valid or not: the general path decodes it or names the problem.
std::optional<std::string> DecodeAccountAddressFast(std::string_view text) {
  constexpr std::size_t kHrpLength = std::char_traits<char>::length(kAccountPrefix);
  constexpr std::size_t kDataWords = 32;  // 20 bytes = 160 bits = 32 five-bit words, no padding
  if (text.size() != kHrpLength + 1 + kDataWords + kChecksumLength ||
      text.substr(0, kHrpLength) != kAccountPrefix || text[kHrpLength] != '1') {
    return std::nullopt;
  }
  static const std::uint32_t kHrpChecksum = PolymodHrp(kAccountPrefix);
  std::uint32_t chk = kHrpChecksum;
  std::string out(20, '\0');
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t o = 0;
  for (std::size_t i = kHrpLength + 1; i < text.size(); ++i) {
    const int value = CharsetIndex(text[i]);  // upper case is not in the charset: general path
    if (value < 0) return std::nullopt;
    chk = PolymodStep(chk, static_cast<std::uint8_t>(value));
    if (i < kHrpLength + 1 + kDataWords) {
      acc = ((acc << 5) | static_cast<std::uint32_t>(value)) & 0xfff;
      bits += 5;
      if (bits >= 8) {
        bits -= 8;
        out[o++] = static_cast<char>((acc >> bits) & 0xff);
      }
    }
  }
  if (chk != kBech32Constant) return std::nullopt;
  return out;
}

}  // namespace

Result<std::string> DecodeAccountAddress(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("empty address string is not allowed");
  if (auto fast = DecodeAccountAddressFast(text)) return std::move(*fast);
  Result<Bech32Data> data = Bech32Decode(text);
  if (!data.ok()) return data.status();
  if (data->hrp != kAccountPrefix) {
    return Status::InvalidArgument("invalid Bech32 prefix; expected " +
                                   std::string(kAccountPrefix) + ", got " + data->hrp);
  }
  if (data->bytes.size() != 20 && data->bytes.size() != 32) {
    return Status::InvalidArgument("address length must be 20 or 32 bytes, got " +
                                   std::to_string(data->bytes.size()));
  }
  return std::move(data->bytes);
}

std::string EncodeAccountAddress(std::string_view address_bytes) {
  return Bech32Encode(kAccountPrefix, address_bytes);
}

}  // namespace kairos::crypto
