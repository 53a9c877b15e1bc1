// x/bank's handler (the SDK's msg server) for MsgUpdateParams and its stateless checks. Only the
// chain's authority may send it (app::CheckAuthority: code 4, "expected authority kairos1...,
// got kairos1..."). It writes bank/params on the message branch; MsgSend keeps obeying the
// params of the last committed block (keeper.h), so the change applies from the next block on
// every node.
//
// Events (besides the SDK's "message" with action, sender = the authority, module "bank",
// msg_index):
//   bank_update_params  default_send_enabled (the new value, "true" or "false")
//
// Thread-safe: pure functions; state is in the context's store.
#pragma once

#include <cstddef>

#include "ante/context.h"
#include "ante/errors.h"
#include "app/bank/keeper.h"
#include "app/bank/msgs.h"
#include "app/module.h"

namespace kairos::app::bank {

// Code 7 for an authority that is not 20 bytes; 18 naming "MsgUpdateParams.params.send_enabled"
// for a non-empty per-denom list (Kairos keeps default_send_enabled only).
ante::TxStatus ValidateBasic(const MsgUpdateParams& msg);

ante::TxStatus HandleUpdateParams(ante::Context& ctx, const BankKeeper& keeper,
                                  const AuthorityKeeper* authority, const MsgUpdateParams& msg,
                                  std::size_t msg_index);

}  // namespace kairos::app::bank
