// Unsigned base-128 varints (protobuf / Go binary.Uvarint), the ABCI frame length prefix.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kairos::abci {

// The longest encoding of a uint64: 10 bytes, the last of which may only be 0 or 1.
inline constexpr std::size_t kMaxUvarintBytes = 10;

enum class UvarintStatus {
  kOk,        // a value was decoded
  kTruncated, // the input ends before the varint does: read more
  kOverflow,  // more than 10 bytes, or a value above 2^64-1: the stream is corrupt
};

struct UvarintResult {
  UvarintStatus status;
  std::uint64_t value = 0;
  std::size_t length = 0;  // bytes consumed, when status == kOk
};

// Decodes one uvarint from the front of `in`.
UvarintResult DecodeUvarint(std::span<const std::uint8_t> in);

// Appends the uvarint encoding of `value` to `out`.
void AppendUvarint(std::uint64_t value, std::string* out);

// Writes the encoding of `value` into `out` (at least kMaxUvarintBytes long) and returns its
// length.
std::size_t EncodeUvarint(std::uint64_t value, std::uint8_t* out);

}  // namespace kairos::abci
