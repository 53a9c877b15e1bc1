#include "app/locks/msg_server.h"

#include <set>

#include "app/authority_msg.h"
#include "crypto/bech32.h"

namespace kairos::app::locks {

namespace {

using ante::TxStatus;

constexpr std::size_t kMaxResourceBytes = 64;
constexpr std::size_t kMaxKeyBytes = 128;

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

TxStatus CheckSlot(const LockSlot& slot, std::string_view where) {
  if (auto problem = SlotProblem(slot)) {
    return TxStatus::Error(ante::kInvalidRequest, std::string(where) + ": " + *problem);
  }
  return TxStatus::OK();
}

}  // namespace

std::optional<std::string> SlotProblem(const LockSlot& slot) {
  const std::string& r = slot.resource;
  if (r.empty() || r.size() > kMaxResourceBytes || !IsLetter(r[0])) {
    return "resource \"" + ante::Printable(r, 80) +
           "\" must be 1..64 characters starting with a letter";
  }
  for (char c : r) {
    if (!(IsLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
          c == '/' || c == '-')) {
      return "resource \"" + ante::Printable(r, 80) + "\" may only hold [A-Za-z0-9_.:/-]";
    }
  }
  if (slot.key.size() > kMaxKeyBytes) {
    return "key of " + r + " is " + std::to_string(slot.key.size()) + " bytes, at most 128";
  }
  for (char c : slot.key) {
    if (c < 0x21 || c > 0x7e) {
      return "key \"" + ante::Printable(slot.key, 80) + "\" of " + r +
             " may only hold printable ASCII without spaces";
    }
  }
  return std::nullopt;
}

TxStatus ValidateBasic(const MsgRegister& msg) {
  return CheckAddressSize(msg.sender, "sender");
}

TxStatus ValidateBasic(const MsgRefundRegistration& msg) {
  if (TxStatus s = CheckAddressSize(msg.sender, "sender"); !s.ok()) return s;
  return CheckAddressSize(msg.address, "registration");
}

TxStatus ValidateBasic(const MsgAcquire& msg) {
  if (TxStatus s = CheckAddressSize(msg.sender, "sender"); !s.ok()) return s;
  if (msg.slots.empty()) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgAcquire needs at least one slot");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < msg.slots.size(); ++i) {
    const std::string where = "slots[" + std::to_string(i) + "]";
    if (TxStatus s = CheckSlot(msg.slots[i], where); !s.ok()) return s;
    if (!seen.insert(LocksKeeper::SlotKeyPart(msg.slots[i])).second) {
      return TxStatus::Error(ante::kInvalidRequest,
                             where + ": " + SlotName(msg.slots[i]) + " is listed twice");
    }
  }
  return TxStatus::OK();
}

TxStatus ValidateBasic(const MsgWrite& msg) {
  if (TxStatus s = CheckAddressSize(msg.sender, "sender"); !s.ok()) return s;
  if (TxStatus s = CheckSlot(msg.slot, "MsgWrite"); !s.ok()) return s;
  if (msg.op != LockWriteOp::kSet && msg.op != LockWriteOp::kAdd) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgWrite.op must be set (1) or add (2)");
  }
  return TxStatus::OK();
}

TxStatus ValidateBasic(const MsgRelease& msg) {
  if (TxStatus s = CheckAddressSize(msg.sender, "sender"); !s.ok()) return s;
  return CheckAddressSize(msg.holder, "holder");
}

TxStatus ValidateBasic(const MsgUpdateParams& msg) {
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  if (Status s = Validate(msg.params); !s.ok()) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgUpdateParams.params." + s.message());
  }
  return TxStatus::OK();
}

template <class Msg>
TxStatus MsgServer::Begin(ante::Context& ctx, const Msg& msg, std::string_view type_url,
                          std::size_t msg_index, Params* params) const {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  auto stored = keeper_.GetParams(*ctx.store);
  if (!stored.ok()) return TxStatus::FromStore(stored.status());
  *params = std::move(*stored);
  ctx.Emit("message", {{"action", std::string(type_url)},
                       {"sender", msg.sender_address},
                       {"module", std::string(kModuleName)},
                       {"msg_index", std::to_string(msg_index)}});
  return TxStatus::OK();
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgRegister& msg,
                           std::size_t msg_index) const {
  Params p;
  if (TxStatus s = Begin(ctx, msg, MsgRegister::kTypeUrl, msg_index, &p); !s.ok()) return s;
  return keeper_.Register(ctx, p, msg.sender, nullptr);
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgRefundRegistration& msg,
                           std::size_t msg_index) const {
  Params p;
  if (TxStatus s = Begin(ctx, msg, MsgRefundRegistration::kTypeUrl, msg_index, &p); !s.ok()) {
    return s;
  }
  return keeper_.RefundRegistration(ctx, p, msg.sender, msg.address, nullptr);
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgAcquire& msg,
                           std::size_t msg_index) const {
  Params p;
  if (TxStatus s = Begin(ctx, msg, MsgAcquire::kTypeUrl, msg_index, &p); !s.ok()) return s;
  for (const LockSlot& slot : msg.slots) {
    SlotAcquired acquired;
    TxStatus s = keeper_.AcquireSlot(ctx, p, msg.sender, slot, msg.max_deposit, &acquired);
    if (!s.ok()) return s;
    if (ctx.gas.exhausted()) break;  // the runner turns this into code 11
  }
  return TxStatus::OK();
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgWrite& msg,
                           std::size_t msg_index) const {
  Params p;
  if (TxStatus s = Begin(ctx, msg, MsgWrite::kTypeUrl, msg_index, &p); !s.ok()) return s;
  SlotAcquired acquired;
  TxStatus s = keeper_.AcquireSlot(ctx, p, msg.sender, msg.slot, msg.max_deposit, &acquired);
  if (!s.ok()) return s;
  std::int64_t value = 0;
  return keeper_.WriteVar(ctx, msg.slot, msg.op, msg.value, &value);
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgRelease& msg,
                           std::size_t msg_index) const {
  Params p;
  if (TxStatus s = Begin(ctx, msg, MsgRelease::kTypeUrl, msg_index, &p); !s.ok()) return s;
  return keeper_.Release(ctx, p, msg.sender, msg.holder, nullptr);
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgUpdateParams& msg,
                           std::size_t msg_index) const {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  if (TxStatus s = BeginAuthorityMsg(ctx, authority_, msg.authority, MsgUpdateParams::kTypeUrl,
                                     kModuleName, msg_index);
      !s.ok()) {
    return s;
  }
  if (Status s = keeper_.SetParams(*ctx.store, msg.params); !s.ok()) {
    return TxStatus::FromStore(s);
  }
  const Params& p = msg.params;
  ctx.Emit("locks_update_params",
           {{"session_period", std::to_string(p.session_period)},
            {"cooloff_period", std::to_string(p.cooloff_period)},
            {"whitelist_period", std::to_string(p.whitelist_period)},
            {"refund_holding_period", std::to_string(p.refund_holding_period)},
            {"base_deposit", ante::ToString(p.base_deposit)},
            {"whitelist_fee", ante::ToString(p.whitelist_fee)},
            {"max_locks_per_session", std::to_string(p.max_locks_per_session)},
            {"scale_refund", p.scale_refund ? "true" : "false"},
            {"release_bounty_bps", std::to_string(p.release_bounty_bps)},
            {"forfeit_sink", p.forfeit_sink},
            {"end_block_cleanup_limit", std::to_string(p.end_block_cleanup_limit)}});
  return TxStatus::OK();
}

}  // namespace kairos::app::locks
