#include "app/auth/msg_server.h"

#include <string>
#include <utility>

#include "app/authority_msg.h"

namespace kairos::app::auth {

using ante::TxStatus;

TxStatus ValidateBasic(const MsgUpdateParams& msg) {
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  const SdkParams& p = msg.params;
  for (auto [name, value] : {std::pair{"max_memo_characters", p.max_memo_characters},
                             std::pair{"tx_sig_limit", p.tx_sig_limit},
                             std::pair{"tx_size_cost_per_byte", p.tx_size_cost_per_byte},
                             std::pair{"sig_verify_cost_ed25519", p.sig_verify_cost_ed25519},
                             std::pair{"sig_verify_cost_secp256k1", p.sig_verify_cost_secp256k1}}) {
    if (value == 0) {
      return TxStatus::Error(ante::kInvalidRequest,
                             std::string("MsgUpdateParams.params.") + name + ": must be positive");
    }
  }
  return TxStatus::OK();
}

TxStatus HandleUpdateParams(ante::Context& ctx, const AuthKeeper& keeper,
                            const AuthorityKeeper* authority, const MsgUpdateParams& msg,
                            std::size_t msg_index) {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  if (TxStatus s = BeginAuthorityMsg(ctx, authority, msg.authority, MsgUpdateParams::kTypeUrl,
                                     "auth", msg_index);
      !s.ok()) {
    return s;
  }
  auto stored = keeper.ReadParams(*ctx.store);
  if (!stored.ok()) return TxStatus::FromStore(stored.status());
  if (Status s = keeper.WriteParams(*ctx.store, msg.params.ApplyTo(*stored)); !s.ok()) {
    return TxStatus::FromStore(s);
  }
  const SdkParams& p = msg.params;
  ctx.Emit("auth_update_params",
           {{"max_memo_characters", std::to_string(p.max_memo_characters)},
            {"tx_sig_limit", std::to_string(p.tx_sig_limit)},
            {"tx_size_cost_per_byte", std::to_string(p.tx_size_cost_per_byte)},
            {"sig_verify_cost_ed25519", std::to_string(p.sig_verify_cost_ed25519)},
            {"sig_verify_cost_secp256k1", std::to_string(p.sig_verify_cost_secp256k1)}});
  return TxStatus::OK();
}

}  // namespace kairos::app::auth
