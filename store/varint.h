// Unsigned base-128 varints (protobuf, Go's binary.Uvarint, LEB128): the one implementation for
// the ABCI frame length prefix (abci/), the store's page and record encodings (store/), and the
// protobuf fields written or read by hand (ante/, app/). Header-only, so that abci/ can use it
// without linking the store (as crypto/ uses store/status.h). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kairos {

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

// Decodes one uvarint from the front of `in`. Non-minimal encodings (a trailing 0x00 byte after
// a continuation) are accepted, as Go's binary.Uvarint does; a caller that must refuse them
// checks `in[length - 1]`.
inline UvarintResult DecodeUvarint(std::span<const std::uint8_t> in) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint8_t byte = in[i];
    if (i == kMaxUvarintBytes - 1 && byte > 1) {
      return {UvarintStatus::kOverflow};  // bits beyond 64, or an 11th byte would follow
    }
    value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) return {UvarintStatus::kOk, value, i + 1};
  }
  return {UvarintStatus::kTruncated};
}

// Reads one uvarint from the front of `*in` and removes it. False (and `*in` unchanged) when the
// input is truncated or the varint overflows 64 bits.
inline bool ReadUvarint(std::string_view* in, std::uint64_t* v) {
  const UvarintResult r = DecodeUvarint(std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(in->data()), in->size()));
  if (r.status != UvarintStatus::kOk) return false;
  *v = r.value;
  in->remove_prefix(r.length);
  return true;
}

// Writes the encoding of `value` into `out` (at least kMaxUvarintBytes long) and returns its
// length.
inline std::size_t EncodeUvarint(std::uint64_t value, std::uint8_t* out) {
  std::size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<std::uint8_t>(value);
  return n;
}

// Appends the uvarint encoding of `value` to `out`.
inline void AppendUvarint(std::uint64_t value, std::string* out) {
  std::uint8_t buf[kMaxUvarintBytes];
  const std::size_t n = EncodeUvarint(value, buf);
  out->append(reinterpret_cast<const char*>(buf), n);
}

// The length of the encoding of `value` (1 to 10).
inline constexpr std::size_t UvarintSize(std::uint64_t value) {
  std::size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

}  // namespace kairos
