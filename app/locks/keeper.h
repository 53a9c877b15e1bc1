// LocksKeeper: the state of the lease-locks module (specs/locks.md "State") and the rules that
// change it: the derived predicates, end_session, the per-slot acquisition steps of Acquire and
// Write, Release, Register, RefundRegistration and the EndBlock cleanup. Money moves only through
// BankKeeper: deposits and bonds into the escrow module account (EscrowAddress()), refunds,
// bounties and bonds out of it, forfeits burned or sent to the sink module account.
//
// Store layout (keys are bytes; <addr> is a raw 20-byte address, <slot> is
// <1-byte resource length><resource> then "\x00" for the single variable or "\x01"<key> for a
// map element, so the two can never collide):
//   locks/params                      kairos.locks.v1.Params (written at genesis)
//   locks/lock/<slot>                 the holder's raw address
//   locks/session/<addr>              kairos.locks.v1.Session
//   locks/last_end/<addr>             8-byte big-endian height the last session ended
//   locks/reg/<addr>                  kairos.locks.v1.Registration
//   locks/queue/<BE64 expiry><addr>   "\x01": one entry per session, for the EndBlock cleanup
//   locks/var/<slot>                  decimal int64 (absent when 0)
//
// Every method takes the store it works on: in a tx the context's gas-metered branch, so every
// access costs gas. Heights come from ctx.block.height. Arithmetic on heights and amounts is
// checked: an overflow is code locks 11 and the message fails.
//
// Thread-compatible: the keeper holds only a reference to the bank keeper; state is in the
// store argument.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ante/context.h"
#include "app/locks/expected_keepers.h"
#include "app/locks/msgs.h"
#include "app/locks/params.h"

namespace kairos::app::locks {

struct Session {
  std::int64_t start = 0;
  std::int64_t expiry = 0;
  ante::Uint256 deposit = 0;
  std::vector<LockSlot> held;
  bool operator==(const Session&) const = default;
};

struct Registration {
  std::int64_t expiry = 0;
  ante::Uint256 bond = 0;
  bool operator==(const Registration&) const = default;
};

enum class SlotStatus { kFree, kExpired, kCurrent, kLocked };

// What end_session did (also the lock_session_ended event).
struct SessionEnd {
  std::string holder;
  std::int64_t end = 0;
  bool expired = false;  // ended at (or after) its expiry rather than released early
  ante::Uint256 deposit = 0, refund = 0, forfeit = 0, bounty = 0;
};

// What one slot's acquisition did.
struct SlotAcquired {
  bool already_held = false;       // status Current: nothing changed
  bool session_started = false;
  ante::Uint256 deposit = 0;       // escrowed by this step
  std::int64_t session_expiry = 0;
};

// Who ends a session, for the bounty and the event: an address, or the module (EndBlock).
struct Cleaner {
  std::string address;  // raw; empty for the module
  std::string_view reason;  // "release", "takeover", "renewal", "end_block"
};

class LocksKeeper {
 public:
  explicit LocksKeeper(const BankKeeper& bank) : bank_(bank) {}
  // Over any keeper with BankKeeper's methods (expected_keepers.h), through an adapter it
  // owns. REQUIRES: `bank` outlives the keeper.
  template <class K>
    requires(!std::derived_from<K, BankKeeper>)
  explicit LocksKeeper(const K& bank)
      : owned_(std::make_shared<BankKeeperOf<K>>(bank)), bank_(*owned_) {}

  static constexpr std::string_view kParamsKey = "locks/params";
  static constexpr std::string_view kLockPrefix = "locks/lock/";
  static constexpr std::string_view kSessionPrefix = "locks/session/";
  static constexpr std::string_view kLastEndPrefix = "locks/last_end/";
  static constexpr std::string_view kRegistrationPrefix = "locks/reg/";
  static constexpr std::string_view kQueuePrefix = "locks/queue/";
  static constexpr std::string_view kVarPrefix = "locks/var/";
  static std::string SlotKeyPart(const LockSlot& slot);
  static std::string LockKey(const LockSlot& slot);
  static std::string SessionKey(std::string_view address);
  static std::string LastEndKey(std::string_view address);
  static std::string RegistrationKey(std::string_view address);
  static std::string QueueKey(std::int64_t expiry, std::string_view address);
  static std::string VarKey(const LockSlot& slot);

  // ---- reads (NotFound never escapes: absence is nullopt / the default)
  // The stored params; the defaults when none are stored (a chain without the module's genesis).
  Result<Params> GetParams(const store::KvReader& kv) const;
  Status SetParams(store::KvStore& kv, const Params& p) const;
  // The chain's denom (bank/denom), in which deposits and bonds are paid.
  Result<std::string> GetDenom(const store::KvReader& kv) const;
  Result<std::optional<std::string>> GetHolder(const store::KvReader& kv,
                                               const LockSlot& slot) const;
  Result<std::optional<Session>> GetSession(const store::KvReader& kv,
                                            std::string_view address) const;
  Result<std::optional<std::int64_t>> GetLastEnd(const store::KvReader& kv,
                                                 std::string_view address) const;
  Result<std::optional<Registration>> GetRegistration(const store::KvReader& kv,
                                                      std::string_view address) const;
  Result<std::int64_t> GetVar(const store::KvReader& kv, const LockSlot& slot) const;

  // ---- raw record writes, for genesis (no checks, no money, no events)
  Status SetSessionRecord(store::KvStore& kv, std::string_view address, const Session& s) const;
  Status SetLastEnd(store::KvStore& kv, std::string_view address, std::int64_t height) const;
  Status SetRegistration(store::KvStore& kv, std::string_view address,
                         const Registration& r) const;
  // Deletes the variable when `value` is 0.
  Status SetVar(store::KvStore& kv, const LockSlot& slot, std::int64_t value) const;

  // ---- the spec's derived predicates (pure)
  static bool Active(const std::optional<Session>& s, std::int64_t h) {
    return s && h < s->expiry;
  }
  static bool Whitelisted(const Params& p, const std::optional<Registration>& r,
                          std::int64_t h) {
    return p.whitelist_fee == 0 || (r && h < r->expiry);
  }
  // deposit_required(u, h) given LastEnd[u] (nullopt: never had a session).
  static ante::Uint256 DepositRequired(const Params& p, std::optional<std::int64_t> last_end,
                                       std::int64_t h);
  // The first height from which deposit_required is D0 again.
  static std::int64_t CooloffUntil(const Params& p, std::optional<std::int64_t> last_end);
  // refund(S, h): floor(deposit * (expiry - h) / a) before expiry with scale_refund.
  static ante::Uint256 Refund(const Params& p, const Session& s, std::int64_t h);
  Result<SlotStatus> StatusOf(const store::KvReader& kv, const LockSlot& slot,
                              std::string_view u, std::int64_t h) const;

  // ---- state changes (ctx.store is the branch; h = ctx.block.height)
  // Steps 1-8 of Acquire for one slot.
  ante::TxStatus AcquireSlot(ante::Context& ctx, const Params& p, std::string_view u,
                             const LockSlot& slot, const ante::Uint256& max_deposit,
                             SlotAcquired* out) const;
  // end_session(u, h, cleaner). REQUIRES: u has a session.
  ante::TxStatus EndSession(ante::Context& ctx, const Params& p, std::string_view u,
                            const Cleaner& cleaner, SessionEnd* out) const;
  ante::TxStatus Release(ante::Context& ctx, const Params& p, std::string_view sender,
                         std::string_view holder, SessionEnd* out) const;
  ante::TxStatus Register(ante::Context& ctx, const Params& p, std::string_view sender,
                          Registration* out) const;
  ante::TxStatus RefundRegistration(ante::Context& ctx, const Params& p, std::string_view sender,
                                    std::string_view address, ante::Uint256* refunded) const;
  // The shared variable after `op`. REQUIRES: the caller holds the slot.
  ante::TxStatus WriteVar(ante::Context& ctx, const LockSlot& slot, LockWriteOp op,
                          std::int64_t value, std::int64_t* result) const;
  // EndBlock: ends up to end_block_cleanup_limit sessions whose expiry is <= h (oldest expiry
  // first), the module as cleaner. Returns how many. A non-OK status is a broken store.
  ante::TxStatus EndBlock(ante::Context& ctx, std::size_t* ended) const;
  // EndBlock as FinalizeBlock runs it, after the block's txs: on `block` without a gas meter,
  // at info.height; its events are appended to `events`. Not OK only when the store fails.
  Status RunEndBlock(store::KvStore& block, const ante::BlockInfo& info,
                     std::vector<tendermint::abci::Event>* events, std::size_t* ended) const;

  // ---- checks for tests and genesis
  // Invariants 1, 2 and 8 of the spec, plus the bookkeeping they rest on: every lock's holder
  // has a session that lists the slot, every held slot is locked by its session's holder, one
  // queue entry per session at its expiry, LastEnd <= h. InvalidArgument naming the first
  // breach.
  Status CheckInvariants(const store::KvReader& kv, std::int64_t h) const;

  const BankKeeper& bank() const { return bank_; }

 private:
  // Moves `amount` of the denom between accounts (nothing when 0).
  ante::TxStatus Move(ante::Context& ctx, std::string_view from, std::string_view to,
                      const ante::Uint256& amount) const;
  ante::TxStatus Forfeit(ante::Context& ctx, const Params& p, const ante::Uint256& amount) const;

  std::shared_ptr<const BankKeeper> owned_;  // the adapter, when built over another type
  const BankKeeper& bank_;
};

// "foo" or "foo[key]": a slot as logs and events show it.
std::string SlotName(const LockSlot& slot);

// The stored forms (also the query answers' fields, so a proof covers them byte for byte).
kairos::locks::v1::Session ToProto(const Session& s);
kairos::locks::v1::Registration ToProto(const Registration& r);

}  // namespace kairos::app::locks
