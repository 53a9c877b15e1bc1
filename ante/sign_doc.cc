// SIGN_MODE_DIRECT sign bytes, written out by hand: they are built for every signature checked,
// and the encoding is small and fixed. The bytes equal the generated cosmos.tx.v1beta1.SignDoc's
// serialization (a unit test compares them): fields in number order, proto3 defaults omitted.
// Pure; thread-safe.
#include "ante/sign_doc.h"

#include "ante/wire.h"

namespace kairos::ante {

std::string SignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                         std::string_view chain_id, std::uint64_t account_number) {
  std::string out;
  AppendSignDocBytes(body_bytes, auth_info_bytes, chain_id, account_number, &out);
  return out;
}

void AppendSignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                        std::string_view chain_id, std::uint64_t account_number,
                        std::string* out) {
  out->reserve(out->size() + body_bytes.size() + auth_info_bytes.size() + chain_id.size() + 32);
  // proto3: a default (empty, zero) field is not written.
  if (!body_bytes.empty()) wire::AppendBytesField(1, body_bytes, out);
  if (!auth_info_bytes.empty()) wire::AppendBytesField(2, auth_info_bytes, out);
  if (!chain_id.empty()) wire::AppendBytesField(3, chain_id, out);
  if (account_number != 0) wire::AppendVarintField(4, account_number, out);
}

}  // namespace kairos::ante
