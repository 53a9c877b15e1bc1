// x/auth's message handler (the SDK's msg server) for MsgUpdateParams and its stateless checks.
// Only the chain's authority may send it (app::CheckAuthority: code 4, "expected authority
// kairos1..., got kairos1..."). It writes auth/params on the message branch; the ante keeps
// using the params of the last committed block (keeper.h), so the change applies from the next
// block on every node.
//
// Events (besides the SDK's "message" with action, sender = the authority, module "auth",
// msg_index):
//   auth_update_params  max_memo_characters, tx_sig_limit, tx_size_cost_per_byte,
//                       sig_verify_cost_ed25519, sig_verify_cost_secp256k1 (the new values)
//
// Thread-compatible: immutable after Bind; state is in the context's store.
#pragma once

#include <cstddef>

#include "ante/context.h"
#include "ante/errors.h"
#include "app/auth/keeper.h"
#include "app/auth/msgs.h"
#include "app/module.h"

namespace kairos::app::auth {

// Code 7 for an authority that is not 20 bytes; 18 "MsgUpdateParams.params.<field>: must be
// positive" for a zero param (every one must be, as the SDK's Params.Validate).
ante::TxStatus ValidateBasic(const MsgUpdateParams& msg);

ante::TxStatus HandleUpdateParams(ante::Context& ctx, const AuthKeeper& keeper,
                                  const AuthorityKeeper* authority, const MsgUpdateParams& msg,
                                  std::size_t msg_index);

}  // namespace kairos::app::auth
