#include "abci/varint.h"

namespace kairos::abci {

UvarintResult DecodeUvarint(std::span<const std::uint8_t> in) {
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

std::size_t EncodeUvarint(std::uint64_t value, std::uint8_t* out) {
  std::size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<std::uint8_t>(value);
  return n;
}

void AppendUvarint(std::uint64_t value, std::string* out) {
  std::uint8_t buf[kMaxUvarintBytes];
  const std::size_t n = EncodeUvarint(value, buf);
  out->append(reinterpret_cast<const char*>(buf), n);
}

}  // namespace kairos::abci
