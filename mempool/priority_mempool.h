// PriorityMempool: the app-side priority mempool (ADR-067 and what goes past it). It holds txs
// the ante pipeline accepted and knows only their metadata (hash, size, sender, nonce or unordered
// timeout, priority, gas), never ABCI or state.
//
// What it does:
// - several txs per sender in nonce order; the ones contiguous from the sender's committed
//   sequence (`base_nonce`) are ready, the rest are parked (not reaped) until the gap is filled;
//   parked txs are capped per sender and in the whole pool, never evict a ready tx, and are
//   evicted before any ready tx (a parked tx may never pay);
// - unordered (ADR-070) txs are independent entries, always ready;
// - caps on count, bytes, one tx's size and txs per sender; when full, the lowest-priority tx of
//   the eviction frontier (each sender's last ordered tx, every unordered tx) is evicted if it is
//   strictly cheaper than the new one, so no nonce gap ever appears;
// - replacement of (sender, nonce) with a priority bump; TTLs by height and by time;
// - reaping in priority order (ties: earlier arrival) with each sender's txs in nonce order,
//   from maintained indexes (no sort of the pool); counters of rejections and removals by reason.
//
// Costs (n txs resident, k visited, s = txs of one sender, s <= max_txs_per_sender):
// Insert / Remove / one eviction O(log n + s); Reap O(k log k + log n) per visited chunk;
// PurgeExpired O(expired * (log n + s)) and O(1) when nothing expired; RecheckOrder O(n).
//
// Thread-safety: internally synchronised by one mutex; every method may be called from any
// thread. Reap does not hold the mutex while it calls `visit`: it computes the next chunk of
// candidates (16, growing to 256) under the mutex, releases it, calls `visit` for each, and takes
// the mutex again for the next chunk, resuming the walk of the ready index by key (priority,
// arrival), not by a stored iterator. Inserts and removals therefore proceed during a reap (and
// `visit` may itself call the pool). What a concurrent change means for a running reap: a
// candidate removed meanwhile is not offered (and its sender's later txs are not offered either);
// a tx that became ready behind the reap's position is not offered; a sender's offered ordered
// txs are always in strictly increasing nonce order and no entry is offered twice. Entries are
// immutable and shared (`EntryPtr`), so what a reap returns stays valid after it leaves the pool.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mempool/priority.h"

namespace kairos::mempool {

using Hash = std::array<std::uint8_t, 32>;  // sha256 of the tx bytes (computed by the app)

struct TxInfo {  // filled by the app after the ante pipeline accepted the tx
  std::string bytes;  // the raw tx
  Hash hash{};
  std::string sender;     // raw address bytes of the first signer (1..32 bytes; < 64 KiB)
  bool unordered = false;  // ADR-070 unordered tx: independent entry, nonce = timeout
  std::uint64_t nonce = 0;  // account sequence (ordered) or timeout UnixNano (unordered)
  Priority priority;  // fee per gas (priority.h)
  std::uint64_t gas_wanted = 0;
};

class Entry;
namespace detail {
void DestroyEntry(const Entry* e);  // frees the entry's allocation (priority_mempool.cc)
struct NodeAccess;
}  // namespace detail

// The tx as the pool keeps it: the scalar fields of TxInfo, the raw bytes as a view into the
// entry's own allocation, and the sender as a view into the sender record the entry holds a
// reference to (both valid as long as the entry is held).
struct EntryTx {
  Hash hash{};
  std::uint64_t nonce = 0;
  Priority priority;
  std::uint64_t gas_wanted = 0;
  bool unordered = false;
  std::string_view bytes() const;
  std::string_view sender() const;  // in priority_mempool.cc
  TxInfo info() const;  // a copy, as the TxInfo it was inserted from

 private:
  friend struct detail::NodeAccess;
  std::atomic<bool> in_pool_{false};  // the pool's: written under its mutex, read by Reap
  // The pool's: when non-zero, the sender's address (this many bytes) follows the tx bytes in the
  // entry's allocation (the first tx of a sender that had none, see priority_mempool.cc).
  std::uint16_t inline_key_len_ = 0;
  std::uint32_t bytes_len_ = 0;
};

// Immutable once inserted. Made only by the pool, in one allocation with the pool's bookkeeping
// and followed by the tx bytes; shared through EntryPtr (reference counted), so an
// entry handed out stays valid after it leaves the pool.
class Entry {
 public:
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  EntryTx tx;  // first member: EntryTx::bytes() finds the entry from it
  std::uint64_t arrival = 0;  // pool-wide insertion counter, strictly increasing
  // The height and UnixNano passed to Insert. Both are raised to the previous entry's if the
  // caller's value went backwards (a clock step), so arrival order is also height and time order.
  std::int64_t arrival_height = 0;
  std::int64_t arrival_time = 0;

 private:
  friend class EntryPtr;
  friend struct EntryTx;
  friend struct detail::NodeAccess;
  Entry() = default;
  ~Entry() = default;
  // The tx bytes start right after the last field, in what would be the struct's tail padding
  // (nothing writes that padding once the entry is made: the pool sets fields one by one).
  const char* tail() const { return reinterpret_cast<const char*>(&refs_ + 1); }

  mutable std::atomic<std::uint32_t> refs_{1};  // the last field (see tail())
};

// `tx` is Entry's first member (checked where entries are made), so `this` is the entry's address.
inline std::string_view EntryTx::bytes() const {
  return {reinterpret_cast<const Entry*>(this)->tail(), bytes_len_};
}

inline TxInfo EntryTx::info() const {
  TxInfo t;
  t.bytes.assign(bytes());
  t.hash = hash;
  t.sender.assign(sender());
  t.unordered = unordered;
  t.nonce = nonce;
  t.priority = priority;
  t.gas_wanted = gas_wanted;
  return t;
}

// A reference-counted handle to an Entry (like shared_ptr<const Entry>, 8 bytes, intrusive).
class EntryPtr {
 public:
  EntryPtr() = default;
  EntryPtr(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  EntryPtr(const EntryPtr& o) : p_(o.p_) { Ref(); }
  EntryPtr(EntryPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  EntryPtr& operator=(const EntryPtr& o) {
    EntryPtr(o).swap(*this);
    return *this;
  }
  EntryPtr& operator=(EntryPtr&& o) noexcept {
    EntryPtr(std::move(o)).swap(*this);
    return *this;
  }
  ~EntryPtr() { Unref(); }

  const Entry* get() const { return p_; }
  const Entry& operator*() const { return *p_; }
  const Entry* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  void swap(EntryPtr& o) noexcept { std::swap(p_, o.p_); }
  friend bool operator==(const EntryPtr& a, const EntryPtr& b) { return a.p_ == b.p_; }
  friend bool operator==(const EntryPtr& a, std::nullptr_t) { return a.p_ == nullptr; }

 private:
  friend struct detail::NodeAccess;
  // Adopt: takes over a reference the caller owns; otherwise adds one.
  EntryPtr(const Entry* p, bool adopt) : p_(p) {
    if (!adopt) Ref();
  }
  void Ref() const {
    if (p_ != nullptr) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() {
    if (p_ != nullptr && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      detail::DestroyEntry(p_);
    }
  }

  const Entry* p_ = nullptr;
};

struct Config {
  std::size_t max_txs = 5000;
  std::size_t max_bytes = 1ull << 30;   // sum of tx bytes
  std::size_t max_tx_bytes = 1 << 20;   // one tx
  std::size_t max_txs_per_sender = 64;  // ordered + unordered of one sender
  // Parked txs (ordered txs behind a sequence gap: not reaped, and paying nothing until the gap
  // fills) of one sender, and in the whole pool.
  std::size_t max_parked_per_sender = 16;
  std::size_t max_parked = 1000;
  std::uint32_t replace_bump_percent = 10;
  std::int64_t ttl_blocks = 0;           // 0 = off
  std::int64_t ttl_nanos = 0;            // 0 = off
  std::size_t recent_removals = 10000;  // how many removal reasons RemovalReasonOf remembers
};

enum class RejectReason {
  kDuplicate,
  kFull,
  kReplacementUnderpriced,
  kSenderCap,
  kTooLarge,
  kNonceTooLow,
  kParkedCap  // a tx behind a sequence gap, over max_parked_per_sender or max_parked
};
inline constexpr std::size_t kRejectReasons = 7;
enum class RemoveReason {
  kIncluded,
  kEvicted,
  kReplaced,
  kExpiredBlocks,
  kExpiredTime,
  kRecheckFailed,
  kStaleNonce,
  kExpiredParked  // parked for too long (the app's parked TTL: Remove with this reason)
};
inline constexpr std::size_t kRemoveReasons = 8;
// "duplicate", "full", "replacement_underpriced", "sender_cap", "too_large", "nonce_too_low",
// "parked_cap"
const char* Name(RejectReason reason);
// "included", "evicted", "replaced", "expired_blocks", "expired_time", "recheck_failed",
// "stale_nonce", "expired_parked"
const char* Name(RemoveReason reason);

struct InsertResult {
  bool ok = false;        // added (possibly replacing / evicting)
  RejectReason reject{};  // when !ok
  // When !ok: a clear sentence for the client, e.g. "tx already in mempool",
  // "mempool is full: 5000 txs, 1048576 bytes; a tx needs a fee per gas above 0.025 to evict
  // (this one offers 0.02)", "replacement of sequence 7 needs a fee per gas of at least 0.0275
  // (+10%), got 0.026". Fees per gas print as Priority::ToDecimal.
  std::string message;
  // kReplacementUnderpriced: the bump threshold. kFull, and kParkedCap when max_parked stood in
  // the way: the least priority that would have been accepted (at least the replacement
  // threshold when it replaces), or Priority::Max() when none would (the tx is larger than the
  // pool, only its own predecessors stand in the way, or a parked tx would need a ready victim).
  // Priority::MinFeeFor(gas) turns it into the fee the tx would need.
  Priority needed_priority;
  EntryPtr replaced;              // the entry this one replaced (same sender, same ordered nonce)
  std::vector<EntryPtr> evicted;  // entries evicted to make room, in eviction order
  bool parked = false;            // the new entry is parked (an ordered nonce gap before it)
  std::uint64_t waiting_for = 0;  // when parked: the first sequence missing before it
  std::vector<EntryPtr> promoted;  // parked entries of this sender that became ready, nonce order
  // Added: entries of this sender removed as kStaleNonce because `base_nonce` was above the
  // sequence the pool knew for the sender (it happens whether or not the tx is accepted).
  std::vector<EntryPtr> stale;
};

struct Stats {
  std::size_t size = 0, bytes = 0, senders = 0, parked = 0;
  std::array<std::uint64_t, kRejectReasons> rejected{};  // by RejectReason
  std::array<std::uint64_t, kRemoveReasons> removed{};   // by RemoveReason (all removals)
};

// One sender's txs in the pool (PriorityMempool::SenderTxs).
struct SenderView {
  std::uint64_t base = 0;        // the sender's committed sequence, as the pool last heard it
  std::uint64_t next_ready = 0;  // the first sequence missing: ordered txs above it are parked
  struct Tx {
    EntryPtr entry;
    bool parked = false;
  };
  std::vector<Tx> txs;  // ordered txs by sequence, then unordered ones by arrival
};

// Work done by the pool's indexes since it was made: a debug statistic, counted always (a few
// increments under the mutex), so that the cost of an operation can be measured in steps that do
// not depend on caches (mempool_bench reports them per eviction).
struct WorkCounters {
  std::uint64_t heap_levels = 0;    // levels items moved in the frontier / expiry heaps
  std::uint64_t heap_compares = 0;  // key comparisons in those heaps
  std::uint64_t tree_compares = 0;  // key comparisons in the ready-heads tree
  std::uint64_t index_probes = 0;   // slots inspected in the hash indexes (tx, sender, removals)
  std::uint64_t plan_steps = 0;     // frontier entries examined when planning evictions
};

enum class Verdict { kTake, kSkip, kStop };

class PriorityMempool {
 public:
  explicit PriorityMempool(Config config);
  ~PriorityMempool();
  PriorityMempool(const PriorityMempool&) = delete;
  PriorityMempool& operator=(const PriorityMempool&) = delete;

  // Checks in this order: kTooLarge, then (ordered txs) the sender's base moves up to
  // `base_nonce` if that is higher than what the pool knew, removing the sender's entries below
  // it (InsertResult::stale), then kDuplicate, kNonceTooLow, kReplacementUnderpriced,
  // kSenderCap, kParkedCap (a new parked tx over max_parked_per_sender), then room: kFull, or
  // kParkedCap when a parked tx finds max_parked parked txs it may not evict. Room is made by
  // evicting from the frontier (each sender's last ordered tx, every unordered tx): parked txs
  // first, whatever they offer, then ready ones strictly cheaper than the new tx; a new parked
  // tx evicts only parked txs strictly cheaper than itself. A tx that fills a gap counts its
  // sender's txs it promotes as ready. Nothing is evicted or replaced unless the tx is accepted.
  // `base_nonce`: for an ordered tx, the sender's account sequence in the COMMITTED state (the
  // next sequence a block would accept), NOT the check state's (which counts pool txs). Ignored
  // for unordered txs. A sender's base only moves forward.
  // REQUIRES: tx.hash is the sha256 of tx.bytes; `height` and `now_nanos` are
  // the last committed height and the current time.
  InsertResult Insert(TxInfo tx, std::uint64_t base_nonce, std::int64_t height,
                      std::int64_t now_nanos);
  EntryPtr Find(const Hash& hash) const;
  EntryPtr FindOrdered(std::string_view sender, std::uint64_t nonce) const;
  bool IsParked(const Hash& hash) const;  // false when not in the pool
  // Removes one tx; false when it is not in the pool. Removing a middle ordered tx parks the
  // sender's later ones.
  bool Remove(const Hash& hash, RemoveReason reason);
  // After a commit: removes `included`, sets each listed sender's base nonce (removing its
  // ordered entries below it as kStaleNonce and re-deriving ready/parked), then PurgeExpired.
  // Returns every removed entry with its reason (included ones too), in that order.
  // List at least the senders of the included txs: removing a sender's first ordered tx parks
  // the rest until its base moves past it (the pool does not infer sequences from inclusion).
  std::vector<std::pair<EntryPtr, RemoveReason>> Update(
      std::int64_t height, std::int64_t now_nanos, const std::vector<Hash>& included,
      const std::vector<std::pair<std::string, std::uint64_t>>& base_nonces);
  // TTL: expired when height - arrival_height > ttl_blocks (kExpiredBlocks, checked first) or
  // now - arrival_time > ttl_nanos (kExpiredTime). O(1) when nothing expired.
  std::vector<std::pair<EntryPtr, RemoveReason>> PurgeExpired(std::int64_t height,
                                                              std::int64_t now_nanos);
  // Visits READY txs in reap order: priority desc, ties by arrival asc; a sender's ordered txs
  // in nonce order, each offered only after its predecessor was taken (kTake) in this reap;
  // unordered txs are independent entries. kSkip drops this tx and its sender's later ordered
  // txs from this reap; kStop ends. Deterministic for a given pool state. Removes nothing.
  // `visit` runs without the pool's mutex held (see the file comment).
  void Reap(const std::function<Verdict(const EntryPtr&)>& visit) const;
  // Ready txs in reap order while they fit in max_bytes (sum of tx bytes) and max_gas (sum of
  // gas_wanted); 0 = unlimited: a block's worth, with no re-validation (the app's
  // PrepareProposal and ReapTxs walk Reap themselves, to re-validate or to skip what was
  // gossiped; the model test and benches use this). A tx that
  // does not fit is skipped (with its sender's later txs), not the end; the walk ends after
  // kReapMaxSkips txs in a row did not fit (so a full block does not walk the whole pool).
  static constexpr int kReapMaxSkips = 1000;
  std::vector<EntryPtr> ReapMax(std::uint64_t max_bytes, std::uint64_t max_gas) const;
  // For the app's recheck after a commit: senders ordered by their oldest arrival; within a
  // sender its ordered txs by nonce (parked ones too), then its unordered txs by arrival.
  std::vector<EntryPtr> RecheckOrder() const;
  // The sender's txs, each with whether it is parked (empty when the sender has none).
  SenderView SenderTxs(std::string_view sender) const;
  // The reason a tx recently left the pool (bounded memory, Config::recent_removals), if known.
  // Forgotten when the same tx is inserted again.
  std::optional<RemoveReason> RemovalReasonOf(const Hash& hash) const;
  Stats stats() const;
  WorkCounters work_counters() const;
  const Config& config() const { return config_; }

 private:
  struct State;  // the indexes; in priority_mempool.cc

  const Config config_;
  mutable std::mutex mu_;
  std::unique_ptr<State> state_;  // guarded by mu_
};

}  // namespace kairos::mempool
