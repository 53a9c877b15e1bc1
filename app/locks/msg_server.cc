#include "app/locks/msg_server.h"

#include <set>

#include "crypto/bech32.h"

namespace kairos::app::locks {

namespace {

using ante::TxStatus;

constexpr std::size_t kMaxResourceBytes = 64;
constexpr std::size_t kMaxKeyBytes = 128;

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

TxStatus CheckAddress(const std::string& raw, std::string_view what) {
  if (raw.size() != crypto::kAddressBytes) {
    return TxStatus::Error(ante::kInvalidAddress,
                           "invalid " + std::string(what) + " address: " +
                               std::to_string(raw.size()) + " bytes, want " +
                               std::to_string(crypto::kAddressBytes));
  }
  return TxStatus::OK();
}

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
  return CheckAddress(msg.sender, "sender");
}

TxStatus ValidateBasic(const MsgRefundRegistration& msg) {
  if (TxStatus s = CheckAddress(msg.sender, "sender"); !s.ok()) return s;
  return CheckAddress(msg.address, "registration");
}

TxStatus ValidateBasic(const MsgAcquire& msg) {
  if (TxStatus s = CheckAddress(msg.sender, "sender"); !s.ok()) return s;
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
  if (TxStatus s = CheckAddress(msg.sender, "sender"); !s.ok()) return s;
  if (TxStatus s = CheckSlot(msg.slot, "MsgWrite"); !s.ok()) return s;
  if (msg.op != LockWriteOp::kSet && msg.op != LockWriteOp::kAdd) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgWrite.op must be set (1) or add (2)");
  }
  return TxStatus::OK();
}

TxStatus ValidateBasic(const MsgRelease& msg) {
  if (TxStatus s = CheckAddress(msg.sender, "sender"); !s.ok()) return s;
  return CheckAddress(msg.holder, "holder");
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

}  // namespace kairos::app::locks
