// The poa module's message handlers (the SDK's msg server) and their stateless checks
// (ValidateBasic). Every message must come from the chain's authority (code 4 otherwise,
// "expected authority kairos1..., got kairos1..."); its effects are written on the message
// branch, which the tx runner drops when the tx fails, so a failed message leaves nothing.
//
// Events (besides the SDK's "message" with action, sender = the authority, module "poa",
// msg_index):
//   poa_set_validator     consensus_address (upper-case hex), pub_key_type, pub_key (base64),
//                         power, previous_power, action (add | update | remove), moniker,
//                         operator_address, total_power, validators
//   poa_update_authority  previous_authority, new_authority
//   poa_update_params     max_validators
//
// Thread-compatible: immutable; state is in the context's store.
#pragma once

#include <cstddef>

#include "ante/context.h"
#include "ante/errors.h"
#include "app/poa/keeper.h"
#include "app/poa/msgs.h"

namespace kairos::app::poa {

// ValidateBasic: code 7 for an address that is not 20 bytes; 8 for a missing pub_key; 18 for a
// negative power, one over kMaxTotalVotingPower, a moniker over 70 bytes, invalid params.
ante::TxStatus ValidateBasic(const MsgSetValidator& msg);
ante::TxStatus ValidateBasic(const MsgUpdateAuthority& msg);
ante::TxStatus ValidateBasic(const MsgUpdateParams& msg);

class MsgServer {
 public:
  explicit MsgServer(const PoaKeeper& keeper) : keeper_(keeper) {}

  ante::TxStatus Handle(ante::Context& ctx, const MsgSetValidator& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgUpdateAuthority& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgUpdateParams& msg,
                        std::size_t msg_index) const;

 private:
  // ValidateBasic, the authority check, the SDK's "message" event.
  template <class Msg>
  ante::TxStatus Begin(ante::Context& ctx, const Msg& msg, std::size_t msg_index) const;

  const PoaKeeper& keeper_;
};

}  // namespace kairos::app::poa
