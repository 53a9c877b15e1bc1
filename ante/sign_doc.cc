// SIGN_MODE_DIRECT sign bytes, written out by hand: they are built for every signature checked,
// and the encoding is small and fixed. The bytes equal the generated cosmos.tx.v1beta1.SignDoc's
// serialization (a unit test compares them): fields in number order, proto3 defaults omitted.
// Pure; thread-safe.
#include "ante/sign_doc.h"

namespace kairos::ante {

namespace {

void AppendVarint(std::uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendBytes(char tag, std::string_view bytes, std::string* out) {
  if (bytes.empty()) return;  // proto3: a default is not written
  out->push_back(tag);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

}  // namespace

std::string SignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                         std::string_view chain_id, std::uint64_t account_number) {
  std::string out;
  out.reserve(body_bytes.size() + auth_info_bytes.size() + chain_id.size() + 32);
  AppendBytes('\x0a', body_bytes, &out);       // body_bytes = 1
  AppendBytes('\x12', auth_info_bytes, &out);  // auth_info_bytes = 2
  AppendBytes('\x1a', chain_id, &out);         // chain_id = 3
  if (account_number != 0) {                   // account_number = 4 (varint)
    out.push_back('\x20');
    AppendVarint(account_number, &out);
  }
  return out;
}

}  // namespace kairos::ante
