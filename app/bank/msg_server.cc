#include "app/bank/msg_server.h"

#include <string>

#include "app/authority_msg.h"

namespace kairos::app::bank {

using ante::TxStatus;

TxStatus ValidateBasic(const MsgUpdateParams& msg) {
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  if (msg.send_enabled_entries != 0) {
    return TxStatus::Error(
        ante::kInvalidRequest,
        "MsgUpdateParams.params.send_enabled: Kairos keeps no per-denom send flags (the SDK "
        "deprecated this list in v0.47 for MsgSetSendEnabled); send it empty and set "
        "default_send_enabled");
  }
  return TxStatus::OK();
}

TxStatus HandleUpdateParams(ante::Context& ctx, const BankKeeper& keeper,
                            const AuthorityKeeper* authority, const MsgUpdateParams& msg,
                            std::size_t msg_index) {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  if (TxStatus s = BeginAuthorityMsg(ctx, authority, msg.authority, MsgUpdateParams::kTypeUrl,
                                     "bank", msg_index);
      !s.ok()) {
    return s;
  }
  if (Status s = keeper.WriteParams(*ctx.store, msg.params); !s.ok()) {
    return TxStatus::FromStore(s);
  }
  ctx.Emit("bank_update_params",
           {{"default_send_enabled", msg.params.default_send_enabled ? "true" : "false"}});
  return TxStatus::OK();
}

}  // namespace kairos::app::bank
