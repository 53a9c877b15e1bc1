// Protobuf wire-format writing for the few messages encoded by hand on hot paths (the
// SIGN_MODE_DIRECT sign bytes, BaseAccount): tags, varint and length-delimited fields, over
// store/varint.h's varints. The callers keep proto3's rules (fields in number order, defaults
// omitted) themselves. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/varint.h"

namespace kairos::ante::wire {

inline constexpr int kVarint = 0;
inline constexpr int kLengthDelimited = 2;

inline void AppendTag(int field, int wire_type, std::string* out) {
  AppendUvarint(static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire_type),
                out);
}

// A length-delimited field, written even when `bytes` is empty (the caller omits defaults).
inline void AppendBytesField(int field, std::string_view bytes, std::string* out) {
  AppendTag(field, kLengthDelimited, out);
  AppendUvarint(bytes.size(), out);
  out->append(bytes);
}

inline void AppendVarintField(int field, std::uint64_t v, std::string* out) {
  AppendTag(field, kVarint, out);
  AppendUvarint(v, out);
}

}  // namespace kairos::ante::wire
