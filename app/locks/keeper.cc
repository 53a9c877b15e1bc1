#include "app/locks/keeper.h"

#include <map>
#include <stdexcept>

#include <boost/multiprecision/cpp_int.hpp>

#include "app/locks/errors.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"
#include "store/big_endian.h"

namespace kairos::app::locks {

namespace {

using ante::TxStatus;
using ante::Uint256;
namespace lpb = kairos::locks::v1;

// Products of a 256-bit amount and a 64-bit factor, before the division that brings them back.
using Uint512 = boost::multiprecision::checked_uint512_t;


std::string Bech32(std::string_view raw) { return crypto::EncodeAccountAddress(raw); }

std::string Amount(const Uint256& v) { return ante::ToString(v); }

TxStatus Overflow(std::string_view what) {
  return Error(kErrOverflow, std::string(what) + " overflows");
}

// h + n, or nullopt on overflow.
std::optional<std::int64_t> AddHeights(std::int64_t h, std::int64_t n) {
  std::int64_t out;
  if (__builtin_add_overflow(h, n, &out)) return std::nullopt;
  return out;
}

Result<Uint256> ParseStoredAmount(const std::string& text, std::string_view what) {
  if (text.empty()) return Uint256(0);
  auto v = ante::ParseAmount(text);
  if (!v.ok()) return Status::Corruption(std::string(what) + " in the state is malformed");
  return *v;
}

std::string EncodeSession(const Session& s) { return SerializeDeterministic(ToProto(s)); }

Result<Session> DecodeSession(const std::string& bytes) {
  lpb::Session pb;
  if (!pb.ParseFromString(bytes)) return Status::Corruption("a locks session is malformed");
  Session s;
  s.start = pb.start();
  s.expiry = pb.expiry();
  auto deposit = ParseStoredAmount(pb.deposit(), "a session deposit");
  if (!deposit.ok()) return deposit.status();
  s.deposit = *deposit;
  for (const lpb::Slot& slot : pb.held()) s.held.push_back({slot.resource(), slot.key()});
  return s;
}

std::string EncodeRegistration(const Registration& r) {
  return SerializeDeterministic(ToProto(r));
}

Result<Registration> DecodeRegistration(const std::string& bytes) {
  lpb::Registration pb;
  if (!pb.ParseFromString(bytes)) return Status::Corruption("a locks registration is malformed");
  auto bond = ParseStoredAmount(pb.bond(), "a registration bond");
  if (!bond.ok()) return bond.status();
  return Registration{pb.expiry(), *bond};
}

// Reads `key`; nullopt when absent.
Result<std::optional<std::string>> Read(const store::KvReader& kv, std::string_view key) {
  std::string value;
  Status s = kv.Get(key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return s;
  return std::optional<std::string>(std::move(value));
}

// Reads `key` and decodes it with decode(bytes) -> Result<T>; nullopt when absent.
template <class T, class Decode>
Result<std::optional<T>> ReadDecoded(const store::KvReader& kv, std::string_view key,
                                     Decode&& decode) {
  auto bytes = Read(kv, key);
  if (!bytes.ok()) return bytes.status();
  if (!*bytes) return std::optional<T>();
  auto v = decode(**bytes);
  if (!v.ok()) return v.status();
  return std::optional<T>(std::move(*v));
}

TxStatus Store(const Status& s) { return s.ok() ? TxStatus::OK() : TxStatus::FromStore(s); }

}  // namespace

lpb::Session ToProto(const Session& s) {
  lpb::Session pb;
  pb.set_start(s.start);
  pb.set_expiry(s.expiry);
  pb.set_deposit(AmountText(s.deposit));
  for (const LockSlot& slot : s.held) {
    lpb::Slot* out = pb.add_held();
    out->set_resource(slot.resource);
    out->set_key(slot.key);
  }
  return pb;
}

lpb::Registration ToProto(const Registration& r) {
  lpb::Registration pb;
  pb.set_expiry(r.expiry);
  pb.set_bond(AmountText(r.bond));
  return pb;
}

std::string SlotName(const LockSlot& slot) {
  return slot.key.empty() ? slot.resource : slot.resource + "[" + slot.key + "]";
}

// ---- keys

std::string LocksKeeper::SlotKeyPart(const LockSlot& slot) {
  std::string out;
  out.push_back(static_cast<char>(slot.resource.size()));
  out += slot.resource;
  if (slot.key.empty()) {
    out.push_back('\x00');
  } else {
    out.push_back('\x01');
    out += slot.key;
  }
  return out;
}

std::string LocksKeeper::LockKey(const LockSlot& slot) {
  return std::string(kLockPrefix) + SlotKeyPart(slot);
}
std::string LocksKeeper::SessionKey(std::string_view address) {
  return std::string(kSessionPrefix) + std::string(address);
}
std::string LocksKeeper::LastEndKey(std::string_view address) {
  return std::string(kLastEndPrefix) + std::string(address);
}
std::string LocksKeeper::RegistrationKey(std::string_view address) {
  return std::string(kRegistrationPrefix) + std::string(address);
}
std::string LocksKeeper::QueueKey(std::int64_t expiry, std::string_view address) {
  return std::string(kQueuePrefix) + EncodeBigEndian64(static_cast<std::uint64_t>(expiry)) +
         std::string(address);
}
std::string LocksKeeper::VarKey(const LockSlot& slot) {
  return std::string(kVarPrefix) + SlotKeyPart(slot);
}

// ---- reads

Result<Params> LocksKeeper::GetParams(const store::KvReader& kv) const {
  auto bytes = Read(kv, kParamsKey);
  if (!bytes.ok()) return bytes.status();
  if (!*bytes) return Params{};
  lpb::Params pb;
  if (!pb.ParseFromString(**bytes)) return Status::Corruption("locks/params is malformed");
  auto p = FromProto(pb);
  if (!p.ok()) return Status::Corruption("locks/params: " + p.status().message());
  return *p;
}

Status LocksKeeper::SetParams(store::KvStore& kv, const Params& p) const {
  return kv.Set(kParamsKey, SerializeDeterministic(ToProto(p)));
}

Result<std::string> LocksKeeper::GetDenom(const store::KvReader& kv) const {
  return bank_.GetDenom(kv);
}

Result<std::optional<std::string>> LocksKeeper::GetHolder(const store::KvReader& kv,
                                                          const LockSlot& slot) const {
  return Read(kv, LockKey(slot));
}

Result<std::optional<Session>> LocksKeeper::GetSession(const store::KvReader& kv,
                                                       std::string_view address) const {
  return ReadDecoded<Session>(kv, SessionKey(address), DecodeSession);
}

Result<std::optional<std::int64_t>> LocksKeeper::GetLastEnd(const store::KvReader& kv,
                                                            std::string_view address) const {
  return ReadDecoded<std::int64_t>(kv, LastEndKey(address),
                                   [](const std::string& bytes) -> Result<std::int64_t> {
                                     std::uint64_t v = 0;
                                     if (!DecodeBigEndian64(bytes, &v)) {
                                       return Status::Corruption("a last session end is malformed");
                                     }
                                     return static_cast<std::int64_t>(v);
                                   });
}

Result<std::optional<Registration>> LocksKeeper::GetRegistration(const store::KvReader& kv,
                                                                 std::string_view address) const {
  return ReadDecoded<Registration>(kv, RegistrationKey(address), DecodeRegistration);
}

Result<std::int64_t> LocksKeeper::GetVar(const store::KvReader& kv,
                                         const LockSlot& slot) const {
  auto bytes = Read(kv, VarKey(slot));
  if (!bytes.ok()) return bytes.status();
  if (!*bytes) return std::int64_t{0};
  try {
    std::size_t used = 0;
    const long long v = std::stoll(**bytes, &used);
    if (used != (*bytes)->size()) throw std::invalid_argument("trailing bytes");
    return static_cast<std::int64_t>(v);
  } catch (const std::exception&) {
    return Status::Corruption("a shared variable in the state is malformed");
  }
}

// ---- raw writes

Status LocksKeeper::SetSessionRecord(store::KvStore& kv, std::string_view address,
                                     const Session& s) const {
  return kv.Set(SessionKey(address), EncodeSession(s));
}

Status LocksKeeper::SetLastEnd(store::KvStore& kv, std::string_view address,
                               std::int64_t height) const {
  return kv.Set(LastEndKey(address), EncodeBigEndian64(static_cast<std::uint64_t>(height)));
}

Status LocksKeeper::SetRegistration(store::KvStore& kv, std::string_view address,
                                    const Registration& r) const {
  return kv.Set(RegistrationKey(address), EncodeRegistration(r));
}

Status LocksKeeper::SetVar(store::KvStore& kv, const LockSlot& slot,
                           std::int64_t value) const {
  const std::string key = VarKey(slot);
  return value == 0 ? kv.Delete(key) : kv.Set(key, std::to_string(value));
}

// ---- predicates

Uint256 LocksKeeper::DepositRequired(const Params& p, std::optional<std::int64_t> last_end,
                                     std::int64_t h) {
  if (p.base_deposit == 0) return 0;
  if (!last_end) return p.base_deposit;
  // LastEnd + b - h, clamped to [0, b] (LastEnd <= h always holds, so it is <= b; the clamp
  // only keeps the shift in range). Computed without overflow: h - LastEnd >= 0.
  const std::int64_t since = h - *last_end;
  const std::int64_t e =
      since >= p.cooloff_period ? 0 : p.cooloff_period - std::max<std::int64_t>(since, 0);
  return p.base_deposit << static_cast<unsigned>(e);  // fits: Validate checks D0 * 2^b
}

std::int64_t LocksKeeper::CooloffUntil(const Params& p, std::optional<std::int64_t> last_end) {
  if (!last_end || p.base_deposit == 0) return 0;
  return AddHeights(*last_end, p.cooloff_period).value_or(std::numeric_limits<std::int64_t>::max());
}

Uint256 LocksKeeper::Refund(const Params& p, const Session& s, std::int64_t h) {
  if (h >= s.expiry) return 0;
  if (!p.scale_refund) return s.deposit;
  // expiry - h is in (0, a] for a session of this chain (expiry = start + a, h >= start).
  const Uint512 left = static_cast<std::uint64_t>(s.expiry - h);
  const Uint512 r = Uint512(s.deposit) * left / static_cast<std::uint64_t>(p.session_period);
  return r >= Uint512(s.deposit) ? s.deposit : Uint256(r);
}

Result<SlotStatus> LocksKeeper::StatusOf(const store::KvReader& kv, const LockSlot& slot,
                                         std::string_view u, std::int64_t h) const {
  auto holder = GetHolder(kv, slot);
  if (!holder.ok()) return holder.status();
  if (!*holder) return SlotStatus::kFree;
  auto session = GetSession(kv, **holder);
  if (!session.ok()) return session.status();
  if (!Active(*session, h)) return SlotStatus::kExpired;
  return **holder == u ? SlotStatus::kCurrent : SlotStatus::kLocked;
}

// ---- money

TxStatus LocksKeeper::Move(ante::Context& ctx, std::string_view from, std::string_view to,
                           const Uint256& amount) const {
  if (amount == 0) return TxStatus::OK();
  auto denom = GetDenom(*ctx.store);
  if (!denom.ok()) return TxStatus::FromStore(denom.status());
  auto coins = ante::Coins::FromSorted({{*denom, amount}});
  if (!coins.ok()) return TxStatus::Error(ante::kInvalidCoins, coins.status().message());
  return bank_.Send(ctx, from, to, *coins);
}

TxStatus LocksKeeper::Forfeit(ante::Context& ctx, const Params& p, const Uint256& amount) const {
  if (amount == 0) return TxStatus::OK();
  const std::string sink = ForfeitSinkAddress(p);
  if (!sink.empty()) return Move(ctx, EscrowAddress(), sink, amount);
  auto denom = GetDenom(*ctx.store);
  if (!denom.ok()) return TxStatus::FromStore(denom.status());
  auto coins = ante::Coins::FromSorted({{*denom, amount}});
  if (!coins.ok()) return TxStatus::Error(ante::kInvalidCoins, coins.status().message());
  return bank_.Burn(ctx, EscrowAddress(), *coins);
}


// ---- end_session

TxStatus LocksKeeper::EndSession(ante::Context& ctx, const Params& p, std::string_view u,
                                 const Cleaner& cleaner, SessionEnd* out) const {
  store::KvStore& kv = *ctx.store;
  const std::int64_t h = ctx.block.height;
  auto found = GetSession(kv, u);
  if (!found.ok()) return TxStatus::FromStore(found.status());
  if (!*found) return TxStatus::FromStore(Status::Corruption("end_session without a session"));
  const Session& s = **found;

  SessionEnd e;
  e.holder = std::string(u);
  e.deposit = s.deposit;
  e.expired = h >= s.expiry;
  e.end = e.expired ? s.expiry : h;  // cool-off runs from the expiry when it expired
  e.refund = e.expired ? Uint256(0) : Refund(p, s, h);
  e.forfeit = s.deposit - e.refund;  // refund <= deposit: no underflow
  if (e.expired && !cleaner.address.empty() && cleaner.address != u) {
    e.bounty = Uint256(Uint512(e.forfeit) * p.release_bounty_bps / 10000);
  }

  if (TxStatus st = Move(ctx, EscrowAddress(), u, e.refund); !st.ok()) return st;
  if (TxStatus st = Move(ctx, EscrowAddress(), cleaner.address, e.bounty); !st.ok()) return st;
  if (TxStatus st = Forfeit(ctx, p, e.forfeit - e.bounty); !st.ok()) return st;
  for (const LockSlot& slot : s.held) {
    auto holder = GetHolder(kv, slot);
    if (!holder.ok()) return TxStatus::FromStore(holder.status());
    if (*holder && **holder == u) {  // never a slot someone else holds now
      if (TxStatus st = Store(kv.Delete(LockKey(slot))); !st.ok()) return st;
    }
  }
  if (TxStatus st = Store(kv.Delete(SessionKey(u))); !st.ok()) return st;
  if (TxStatus st = Store(kv.Delete(QueueKey(s.expiry, u))); !st.ok()) return st;
  if (TxStatus st = Store(SetLastEnd(kv, u, e.end)); !st.ok()) return st;
  ctx.Emit("lock_session_ended",
           {{"holder", Bech32(u)},
            {"end", std::to_string(e.end)},
            {"reason", std::string(cleaner.reason)},
            {"expired", e.expired ? "true" : "false"},
            {"deposit", Amount(e.deposit)},
            {"refund", Amount(e.refund)},
            {"forfeit", Amount(e.forfeit)},
            {"bounty", Amount(e.bounty)},
            {"cleaner", cleaner.address.empty() ? std::string(kModuleName)
                                                : Bech32(cleaner.address)}});
  if (out) *out = std::move(e);
  return TxStatus::OK();
}

// ---- Acquire, one slot

TxStatus LocksKeeper::AcquireSlot(ante::Context& ctx, const Params& p, std::string_view u,
                                  const LockSlot& slot, const Uint256& max_deposit,
                                  SlotAcquired* out) const {
  store::KvStore& kv = *ctx.store;
  const std::int64_t h = ctx.block.height;
  *out = {};
  auto holder = GetHolder(kv, slot);
  if (!holder.ok()) return TxStatus::FromStore(holder.status());
  const bool held_by_other = *holder && **holder != u;
  if (*holder) {
    auto hs = GetSession(kv, **holder);
    if (!hs.ok()) return TxStatus::FromStore(hs.status());
    if (!*hs) {
      return TxStatus::FromStore(
          Status::Corruption("the lock on " + SlotName(slot) + " has a holder without a session"));
    }
    if (Active(*hs, h)) {
      if (held_by_other) {  // 1. Locked
        return Error(kErrLocked, SlotName(slot) + " is locked by " + Bech32(**holder) +
                                     " until height " + std::to_string((*hs)->expiry));
      }
      out->already_held = true;  // 2. Current: nothing changes, nothing is charged
      out->session_expiry = (*hs)->expiry;
      return TxStatus::OK();
    }
  }
  // 3. Free or Expired: the sender must be whitelisted.
  auto reg = GetRegistration(kv, u);
  if (!reg.ok()) return TxStatus::FromStore(reg.status());
  if (!Whitelisted(p, *reg, h)) {
    return Error(kErrNotWhitelisted,
                 Bech32(u) + " is not whitelisted at height " + std::to_string(h) +
                     (*reg ? " (its registration expired at height " +
                                 std::to_string((*reg)->expiry) + ")"
                           : " (send MsgRegister, bonding " + Amount(p.whitelist_fee) + ")"));
  }
  // 4. Expired under another holder: end that session, the sender as cleaner.
  if (held_by_other) {
    const std::string previous = **holder;
    if (TxStatus st = EndSession(ctx, p, previous, {std::string(u), "takeover"}, nullptr);
        !st.ok()) {
      return st;
    }
    ctx.Emit("lock_takeover", {{"resource", slot.resource},
                               {"key", slot.key},
                               {"previous_holder", Bech32(previous)},
                               {"holder", Bech32(u)}});
  }
  auto own = GetSession(kv, u);
  if (!own.ok()) return TxStatus::FromStore(own.status());
  std::optional<Session> session = std::move(*own);
  // 5. The sender's own session has expired: end it (also frees this slot if it was its).
  if (session && !Active(session, h)) {
    if (TxStatus st = EndSession(ctx, p, u, {std::string(u), "renewal"}, nullptr); !st.ok()) {
      return st;
    }
    session.reset();
  }
  // 6. No active session: start one, escrowing exactly the deposit due.
  if (!session) {
    auto last_end = GetLastEnd(kv, u);
    if (!last_end.ok()) return TxStatus::FromStore(last_end.status());
    const Uint256 due = DepositRequired(p, *last_end, h);
    if (due > max_deposit) {
      return Error(kErrDepositTooHigh,
                   "the deposit due at height " + std::to_string(h) + " is " + Amount(due) +
                       " (cool-off until height " + std::to_string(CooloffUntil(p, *last_end)) +
                       "), above max_deposit " + Amount(max_deposit));
    }
    const auto expiry = AddHeights(h, p.session_period);
    if (!expiry) return Overflow("the session expiry height");
    if (TxStatus st = Move(ctx, u, EscrowAddress(), due); !st.ok()) {
      return st.Wrapped("escrowing the session deposit " + Amount(due) + ": ");
    }
    session = Session{h, *expiry, due, {}};
    if (TxStatus st = Store(kv.Set(QueueKey(*expiry, u), "\x01")); !st.ok()) return st;
    ctx.Emit("lock_session_started", {{"holder", Bech32(u)},
                                      {"start", std::to_string(h)},
                                      {"expiry", std::to_string(*expiry)},
                                      {"deposit", Amount(due)}});
    out->session_started = true;
    out->deposit = due;
  }
  // 7. The lock limit.
  if (session->held.size() >= p.max_locks_per_session) {
    return Error(kErrLockLimit, "the session of " + Bech32(u) + " already holds " +
                                    std::to_string(session->held.size()) +
                                    " slot(s) (max_locks_per_session " +
                                    std::to_string(p.max_locks_per_session) + ")");
  }
  // 8. Take the slot.
  session->held.push_back(slot);
  if (TxStatus st = Store(kv.Set(LockKey(slot), u)); !st.ok()) return st;
  if (TxStatus st = Store(SetSessionRecord(kv, u, *session)); !st.ok()) return st;
  ctx.Emit("lock_acquired", {{"holder", Bech32(u)},
                             {"resource", slot.resource},
                             {"key", slot.key},
                             {"expiry", std::to_string(session->expiry)}});
  out->session_expiry = session->expiry;
  return TxStatus::OK();
}

// ---- Release, Register, RefundRegistration, Write

TxStatus LocksKeeper::Release(ante::Context& ctx, const Params& p, std::string_view sender,
                              std::string_view holder, SessionEnd* out) const {
  const std::int64_t h = ctx.block.height;
  auto session = GetSession(*ctx.store, holder);
  if (!session.ok()) return TxStatus::FromStore(session.status());
  if (!*session) return Error(kErrNoSession, Bech32(holder) + " has no session");
  if (Active(*session, h) && sender != holder) {
    return TxStatus::Error(ante::kUnauthorized,
                           "the session of " + Bech32(holder) + " is active until height " +
                               std::to_string((*session)->expiry) +
                               "; only its holder can release it before then");
  }
  return EndSession(ctx, p, holder, {std::string(sender), "release"}, out);
}

TxStatus LocksKeeper::Register(ante::Context& ctx, const Params& p, std::string_view sender,
                               Registration* out) const {
  const std::int64_t h = ctx.block.height;
  if (p.whitelist_fee == 0) {
    return Error(kErrWhitelistDisabled, "the whitelist is off (whitelist_fee is 0)");
  }
  auto existing = GetRegistration(*ctx.store, sender);
  if (!existing.ok()) return TxStatus::FromStore(existing.status());
  if (*existing) {
    return Error(kErrAlreadyRegistered,
                 Bech32(sender) + " has an outstanding bond (registration expiry " +
                     std::to_string((*existing)->expiry) + "); refund it first");
  }
  const auto expiry = AddHeights(h, p.whitelist_period);
  if (!expiry) return Overflow("the registration expiry height");
  if (TxStatus st = Move(ctx, sender, EscrowAddress(), p.whitelist_fee); !st.ok()) {
    return st.Wrapped("bonding the whitelist fee " + Amount(p.whitelist_fee) + ": ");
  }
  const Registration r{*expiry, p.whitelist_fee};
  if (TxStatus st = Store(SetRegistration(*ctx.store, sender, r)); !st.ok()) return st;
  ctx.Emit("lock_registered", {{"address", Bech32(sender)},
                               {"expiry", std::to_string(r.expiry)},
                               {"bond", Amount(r.bond)}});
  if (out) *out = r;
  return TxStatus::OK();
}

TxStatus LocksKeeper::RefundRegistration(ante::Context& ctx, const Params& p,
                                         std::string_view sender, std::string_view address,
                                         Uint256* refunded) const {
  const std::int64_t h = ctx.block.height;
  auto reg = GetRegistration(*ctx.store, address);
  if (!reg.ok()) return TxStatus::FromStore(reg.status());
  if (!*reg) return Error(kErrNotRegistered, Bech32(address) + " is not registered");
  const auto from = AddHeights((*reg)->expiry, p.refund_holding_period);
  if (!from) return Overflow("the refund height");
  if (h < *from) {
    return Error(kErrHoldingPeriod, "the bond of " + Bech32(address) +
                                        " can be refunded from height " + std::to_string(*from) +
                                        " (now " + std::to_string(h) + ")");
  }
  if (TxStatus st = Move(ctx, EscrowAddress(), address, (*reg)->bond); !st.ok()) return st;
  if (TxStatus st = Store(ctx.store->Delete(RegistrationKey(address))); !st.ok()) return st;
  ctx.Emit("lock_registration_refunded", {{"address", Bech32(address)},
                                          {"amount", Amount((*reg)->bond)},
                                          {"sender", Bech32(sender)}});
  if (refunded) *refunded = (*reg)->bond;
  return TxStatus::OK();
}

TxStatus LocksKeeper::WriteVar(ante::Context& ctx, const LockSlot& slot,
                               LockWriteOp op, std::int64_t value,
                               std::int64_t* result) const {
  auto old = GetVar(*ctx.store, slot);
  if (!old.ok()) return TxStatus::FromStore(old.status());
  std::int64_t next = value;
  if (op == LockWriteOp::kAdd && __builtin_add_overflow(*old, value, &next)) {
    return Overflow(SlotName(slot) + " = " + std::to_string(*old) + " + " + std::to_string(value));
  }
  if (TxStatus st = Store(SetVar(*ctx.store, slot, next)); !st.ok()) return st;
  ctx.Emit("lock_var_written", {{"resource", slot.resource},
                                {"key", slot.key},
                                {"op", op == LockWriteOp::kAdd ? "add" : "set"},
                                {"operand", std::to_string(value)},
                                {"value", std::to_string(next)}});
  *result = next;
  return TxStatus::OK();
}

// ---- EndBlock

TxStatus LocksKeeper::EndBlock(ante::Context& ctx, std::size_t* ended) const {
  *ended = 0;
  auto params = GetParams(*ctx.store);
  if (!params.ok()) return TxStatus::FromStore(params.status());
  const std::int64_t h = ctx.block.height;
  if (params->end_block_cleanup_limit == 0 || h < 0) return TxStatus::OK();
  // The entries with expiry <= h: the queue up to (h + 1, ""). Collected first, then ended.
  std::vector<std::string> due;
  {
    const auto next = AddHeights(h, 1);
    const std::string end = next ? QueueKey(*next, "") : store::PrefixEnd(kQueuePrefix);
    auto it = ctx.store->Iterate(kQueuePrefix, end);
    for (; it->Valid() && due.size() < params->end_block_cleanup_limit; it->Next()) {
      due.emplace_back(it->key().substr(kQueuePrefix.size() + 8));
    }
    if (!it->status().ok()) return TxStatus::FromStore(it->status());
  }
  for (const std::string& u : due) {
    TxStatus st = EndSession(ctx, *params, u, {std::string(), "end_block"}, nullptr);
    if (!st.ok()) return st;
    ++*ended;
  }
  return TxStatus::OK();
}

Status LocksKeeper::RunEndBlock(store::KvStore& block, const ante::BlockInfo& info,
                               std::vector<tendermint::abci::Event>* events,
                               std::size_t* ended) const {
  ante::Context ctx;
  ctx.mode = ante::ExecMode::kFinalize;
  ctx.block = info;
  ctx.store = &block;
  TxStatus s = EndBlock(ctx, ended);
  for (auto& e : ctx.events) events->push_back(std::move(e));
  if (s.ok()) return Status::OK();
  // Module-paid moves from the escrow cannot fail unless the state is broken.
  return s.store_failure() ? Status::IOError(s.log())
                           : Status::Corruption("locks EndBlock: " + s.log());
}

// ---- invariants

Status LocksKeeper::CheckInvariants(const store::KvReader& kv, std::int64_t h) const {
  auto params = GetParams(kv);
  if (!params.ok()) return params.status();
  const auto bad = [](const std::string& why) { return Status::InvalidArgument(why); };

  std::map<std::string, std::string> locks;  // slot key part -> holder
  {
    auto it = kv.Iterate(kLockPrefix, store::PrefixEnd(kLockPrefix));
    for (; it->Valid(); it->Next()) {
      locks.emplace(std::string(it->key().substr(kLockPrefix.size())), std::string(it->value()));
    }
    if (!it->status().ok()) return it->status();
  }
  Uint256 deposits = 0;
  std::map<std::string, std::int64_t> expiries;  // holder -> session expiry
  std::map<std::string, std::size_t> slots_of;   // holder -> how many locks name it
  {
    auto it = kv.Iterate(kSessionPrefix, store::PrefixEnd(kSessionPrefix));
    for (; it->Valid(); it->Next()) {
      const std::string u(it->key().substr(kSessionPrefix.size()));
      auto s = DecodeSession(std::string(it->value()));
      if (!s.ok()) return s.status();
      if (s->held.size() > params->max_locks_per_session) {
        return bad("invariant 2: the session of " + Bech32(u) + " holds " +
                   std::to_string(s->held.size()) + " slots");
      }
      for (const LockSlot& slot : s->held) {
        auto found = locks.find(SlotKeyPart(slot));
        if (found == locks.end() || found->second != u) {
          return bad("session of " + Bech32(u) + " lists " + SlotName(slot) +
                     ", which it does not hold");
        }
      }
      deposits += s->deposit;
      expiries[u] = s->expiry;
      slots_of[u] = s->held.size();
    }
    if (!it->status().ok()) return it->status();
  }
  std::map<std::string, std::size_t> locked_by;
  for (const auto& [slot, holder] : locks) {
    if (!expiries.contains(holder)) {
      return bad("invariant 1: a lock is held by " + Bech32(holder) + ", which has no session");
    }
    ++locked_by[holder];
  }
  for (const auto& [holder, n] : locked_by) {
    if (slots_of[holder] != n) {
      return bad("invariant 1: " + Bech32(holder) + " holds " + std::to_string(n) +
                 " locks but its session lists " + std::to_string(slots_of[holder]));
    }
  }
  {
    std::size_t entries = 0;
    auto it = kv.Iterate(kQueuePrefix, store::PrefixEnd(kQueuePrefix));
    for (; it->Valid(); it->Next(), ++entries) {
      std::uint64_t expiry = 0;
      DecodeBigEndian64(it->key().substr(kQueuePrefix.size(), 8), &expiry);
      const std::string u(it->key().substr(kQueuePrefix.size() + 8));
      auto found = expiries.find(u);
      if (found == expiries.end() || found->second != static_cast<std::int64_t>(expiry)) {
        return bad("the expiry queue has (" + std::to_string(expiry) + ", " + Bech32(u) +
                   ") without a matching session");
      }
    }
    if (!it->status().ok()) return it->status();
    if (entries != expiries.size()) {
      return bad("the expiry queue has " + std::to_string(entries) + " entries for " +
                 std::to_string(expiries.size()) + " sessions");
    }
  }
  {
    auto it = kv.Iterate(kLastEndPrefix, store::PrefixEnd(kLastEndPrefix));
    for (; it->Valid(); it->Next()) {
      std::uint64_t end = 0;
      if (!DecodeBigEndian64(it->value(), &end) || static_cast<std::int64_t>(end) > h) {
        return bad("LastEnd of " + Bech32(it->key().substr(kLastEndPrefix.size())) +
                   " is after height " + std::to_string(h));
      }
    }
    if (!it->status().ok()) return it->status();
  }
  Uint256 bonds = 0;
  {
    auto it = kv.Iterate(kRegistrationPrefix, store::PrefixEnd(kRegistrationPrefix));
    for (; it->Valid(); it->Next()) {
      auto r = DecodeRegistration(std::string(it->value()));
      if (!r.ok()) return r.status();
      bonds += r->bond;
    }
    if (!it->status().ok()) return it->status();
  }
  auto denom = GetDenom(kv);
  if (!denom.ok()) return denom.status();
  auto escrow = bank_.GetBalance(kv, EscrowAddress(), *denom);
  if (!escrow.ok()) return escrow.status();
  if (*escrow != deposits + bonds) {
    return bad("invariant 8: the escrow holds " + Amount(*escrow) + *denom + ", but deposits (" +
               Amount(deposits) + ") + bonds (" + Amount(bonds) + ") are " +
               Amount(deposits + bonds));
  }
  return Status::OK();
}

}  // namespace kairos::app::locks
