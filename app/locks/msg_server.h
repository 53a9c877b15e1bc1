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
#include "ante/tx.h"
#include "app/locks/keeper.h"

namespace kairos::app::locks {

// What is wrong with a slot, or nullopt: resource [A-Za-z][A-Za-z0-9_.:/-]{0,63}; key "" or
// 1..128 bytes of printable ASCII without space (0x21..0x7e).
std::optional<std::string> SlotProblem(const ante::LockSlot& slot);

// ValidateBasic: code 7 for an address that is not 20 bytes, 18 for anything else (no slots,
// a bad or repeated slot, a Write without an op).
ante::TxStatus ValidateBasic(const ante::MsgLocksRegister& msg);
ante::TxStatus ValidateBasic(const ante::MsgLocksRefundRegistration& msg);
ante::TxStatus ValidateBasic(const ante::MsgLocksAcquire& msg);
ante::TxStatus ValidateBasic(const ante::MsgLocksWrite& msg);
ante::TxStatus ValidateBasic(const ante::MsgLocksRelease& msg);

class MsgServer {
 public:
  // REQUIRES: `bank` outlives the server.
  explicit MsgServer(const BankKeeper& bank) : keeper_(bank) {}

  ante::TxStatus Handle(ante::Context& ctx, const ante::MsgLocksRegister& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const ante::MsgLocksRefundRegistration& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const ante::MsgLocksAcquire& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const ante::MsgLocksWrite& msg,
                        std::size_t msg_index) const;
  ante::TxStatus Handle(ante::Context& ctx, const ante::MsgLocksRelease& msg,
                        std::size_t msg_index) const;

  const LocksKeeper& keeper() const { return keeper_; }

 private:
  // ValidateBasic, the params into *params, the SDK's "message" event.
  template <class Msg>
  ante::TxStatus Begin(ante::Context& ctx, const Msg& msg, std::string_view type_url,
                       std::size_t msg_index, Params* params) const;

  LocksKeeper keeper_;
};

}  // namespace kairos::app::locks
