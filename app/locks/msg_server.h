// The locks module's message handlers (the SDK's msg server) and their stateless checks
// (ValidateBasic). A handler reads the params, emits the SDK's "message" event and runs the
// keeper's steps on the message branch; a failure anywhere discards the branch, so Acquire's
// slots are all or nothing and a Write that overflows also gives its lock back.
//
// Thread-compatible: immutable after construction; state is in the context's store.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ante/context.h"
#include "ante/errors.h"
#include "app/locks/msgs.h"
#include "app/locks/keeper.h"
#include "app/module.h"

namespace kairos::app::locks {

// What is wrong with a slot, or nullopt: resource [A-Za-z][A-Za-z0-9_.:/-]{0,63}; key "" or
// 1..128 bytes of printable ASCII without space (0x21..0x7e).
std::optional<std::string> SlotProblem(const LockSlot& slot);

// ValidateBasic: code 7 for an address that is not 20 bytes, 18 for anything else (no slots,
// a bad or repeated slot, a Write without an op).
ante::TxStatus ValidateBasic(const MsgRegister& msg);
ante::TxStatus ValidateBasic(const MsgRefundRegistration& msg);
ante::TxStatus ValidateBasic(const MsgAcquire& msg);
ante::TxStatus ValidateBasic(const MsgWrite& msg);
ante::TxStatus ValidateBasic(const MsgRelease& msg);
// Code 7 for an authority that is not 20 bytes; 18 "MsgUpdateParams.params.<field>: <why>" for
// params the genesis would refuse (params.h Validate).
ante::TxStatus ValidateBasic(const MsgUpdateParams& msg);

class MsgServer {
 public:
  // REQUIRES: `bank` outlives the server.
  explicit MsgServer(const BankKeeper& bank) : keeper_(bank) {}

  ante::TxStatus Handle(ante::Context& ctx, const MsgRegister& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgRefundRegistration& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgAcquire& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgWrite& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const MsgRelease& msg,
                        std::size_t msg_index) const;
  // Only the chain's authority (app::CheckAuthority, code 4). The params apply to the messages
  // after it, also later in the same block: every locks message reads them from the store, as
  // the SDK's keepers do (GetParams(ctx) per message).
  ante::TxStatus Handle(ante::Context& ctx, const MsgUpdateParams& msg,
                        std::size_t msg_index) const;

  // Once, when the module list is bound (null: the chain has no authority).
  void set_authority(const AuthorityKeeper* authority) { authority_ = authority; }

  const LocksKeeper& keeper() const { return keeper_; }

 private:
  // ValidateBasic, the params into *params, the SDK's "message" event.
  template <class Msg>
  ante::TxStatus Begin(ante::Context& ctx, const Msg& msg, std::string_view type_url,
                       std::size_t msg_index, Params* params) const;

  LocksKeeper keeper_;
  const AuthorityKeeper* authority_ = nullptr;
};

}  // namespace kairos::app::locks
