// SIGN_MODE_DIRECT sign bytes through the generated cosmos.tx.v1beta1.SignDoc. Pure; thread-safe.
#include "ante/sign_doc.h"

#include "cosmos/tx/v1beta1/tx.pb.h"

namespace kairos::ante {

std::string SignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                         std::string_view chain_id, std::uint64_t account_number) {
  cosmos::tx::v1beta1::SignDoc doc;
  doc.set_body_bytes(body_bytes.data(), body_bytes.size());
  doc.set_auth_info_bytes(auth_info_bytes.data(), auth_info_bytes.size());
  doc.set_chain_id(chain_id.data(), chain_id.size());
  doc.set_account_number(account_number);
  // Proto3 omits default values and the C++ serializer writes fields in number order: the
  // result is the canonical encoding the Go SDK and CosmJS produce. (No maps, so deterministic.)
  return doc.SerializeAsString();
}

}  // namespace kairos::ante
