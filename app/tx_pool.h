// TxPool: the app side of the mempool. It keeps two things in step:
//   - the priority mempool (mempool/PriorityMempool): every tx that passed CheckTx (or InsertTx,
//     CometBFT v0.40's app-mempool mode), with its sender, nonce, priority and gas;
//   - the check state: the committed state plus the ante effects (fee, sequence, unordered
//     nonce) of every READY pool tx, so the next CheckTx of a sender sees its pending txs.
//
// How a new tx is judged (CheckNew), for its first signer (the sender):
//   - its sequence is the next one after the sender's ready txs: the ante runs on the check
//     state and its effects stay there;
//   - its sequence is higher (a gap): the ante runs on a throwaway branch with the account's
//     sequence set to the tx's (signature, fee and balance are checked); the tx is parked, with
//     no effect on the check state, until the gap fills; then it runs for real (promotion). Its
//     answer is code 0 with a log and info saying "parked" and the sequence it waits for;
//   - the sequence of a tx already in the pool: a replacement. The old tx's fee is returned, the
//     ante runs with the sequence set back, and the pool takes it only with the priority bump.
// Then, whatever the kind: what the tx takes from accounts (its fee from the payer, its MsgSend
// amounts from their senders) is reserved. A tx is admitted only if each such account's
// COMMITTED balance covers everything its pooled txs (ready and parked) reserve plus this tx's
// share (code 5 otherwise). Nothing is ever credited: a recipient cannot spend what a pooled tx
// would send it until that tx is committed. So every pooled tx can pay its fee in any order of
// execution, and a tx that spends the balance cannot make the sender's later txs free.
// A tx leaving the pool other than by inclusion (eviction, expiry, a failed recheck) takes its
// effects, and those of its sender's later txs, back out of the check state (they are parked).
//
// After a commit (AfterCommit): the pool drops the included txs, moves senders' base sequences,
// purges TTLs; the check state restarts from the committed state and the pool's txs are
// re-applied in RecheckOrder in ReCheck mode (no signature verification: the bytes are
// unchanged), within a time budget; senders not reached are rechecked on demand (their next
// CheckTx, a CometBFT Recheck of one of their txs, or the next commit). A tx that fails is
// removed, and the reason is kept for CometBFT's Recheck answer.
//
// PrepareProposal (FillProposal) reaps the pool by priority, each sender in nonce order, and
// runs each candidate whole (ante and messages, as FinalizeBlock will) on the proposal's scratch
// branch, skipping what fails its ante or does not fit. A candidate whose ante passes and whose
// messages fail is included: FinalizeBlock will charge its fee and sequence, as the SDK does,
// and its message writes are dropped on the scratch branch too.
//
// Thread-compatible: every method runs on the ABCI application executor (abci/application.h).
// The PriorityMempool it owns is itself thread-safe (inserts may run while a reap runs).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "abci/application.h"
#include "ante/coins.h"
#include "ante/context.h"
#include "ante/errors.h"
#include "app/store_failure.h"
#include "app/tx_hash_set.h"
#include "app/tx_runner.h"
#include "mempool/priority_mempool.h"
#include "store/branch.h"
#include "store/kv.h"
#include "store/seeded_hash.h"
#include "store/status.h"

namespace kairos::app {

// CometBFT v0.40 app mempool: InsertTx codes >= 32000 mean "retry later".
inline constexpr std::uint32_t kCodeRetryLater = 32000;

// Size of `tx` as an element of a repeated bytes field: what CometBFT counts against
// max_tx_bytes (types.ComputeProtoSizeForTxs).
std::int64_t ProtoSizeOfTx(std::string_view tx);

// What the pool needs from the account keeper (as a module's expected_keepers.h): sequences to
// read, and the inverses of what the ante writes, to take a tx back out of the check state. The
// pool never writes accounts or nonces itself. KairosApp hands it auth's keeper through
// PoolAccountKeeperOf.
class PoolAccountKeeper {
 public:
  virtual ~PoolAccountKeeper() = default;
  // The account's sequence (0 when it does not exist). Not OK only when the store fails.
  virtual Result<std::uint64_t> ReadSequence(const store::KvReader& kv,
                                             std::string_view address) const = 0;
  // Sets the sequence; returns the previous one, nullopt (nothing written) without an account.
  virtual Result<std::optional<std::uint64_t>> SetSequence(store::KvStore& kv,
                                                           std::string_view address,
                                                           std::uint64_t sequence) const = 0;
  // Undoes the ante's increment (no write without an account or at sequence 0).
  virtual Status DecrementSequence(store::KvStore& kv, std::string_view address) const = 0;
  // Undoes the ante's write of an unordered nonce (OK when there is none).
  virtual Status RemoveUnorderedNonce(store::KvStore& kv, std::string_view signer,
                                      std::int64_t timeout_unix_nanos) const = 0;
};

// What the pool needs from the bank keeper: balances and the denom to read (reservations, the
// fee an underpriced tx would need), and the inverse of the ante's fee deduction.
class PoolBankKeeper {
 public:
  virtual ~PoolBankKeeper() = default;
  virtual Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                           std::string_view denom) const = 0;
  // The chain's denom ("stake" when genesis set none).
  virtual Result<std::string> GetDenom(const store::KvReader& kv) const = 0;
  // Moves `fee` from the fee collector back to `payer`. Not OK only when the store fails.
  virtual Status ReturnFee(store::KvStore& kv, std::string_view payer,
                           const ante::Coins& fee) const = 0;
};

// The pool's keeper interfaces over any keeper K with the same methods. REQUIRES: `keeper`
// outlives the adapter.
template <class K>
class PoolAccountKeeperOf final : public PoolAccountKeeper {
 public:
  explicit PoolAccountKeeperOf(const K& keeper) : k_(keeper) {}
  Result<std::uint64_t> ReadSequence(const store::KvReader& kv,
                                     std::string_view address) const override {
    return k_.ReadSequence(kv, address);
  }
  Result<std::optional<std::uint64_t>> SetSequence(store::KvStore& kv, std::string_view address,
                                                   std::uint64_t sequence) const override {
    return k_.SetSequence(kv, address, sequence);
  }
  Status DecrementSequence(store::KvStore& kv, std::string_view address) const override {
    return k_.DecrementSequence(kv, address);
  }
  Status RemoveUnorderedNonce(store::KvStore& kv, std::string_view signer,
                              std::int64_t timeout_unix_nanos) const override {
    return k_.RemoveUnorderedNonce(kv, signer, timeout_unix_nanos);
  }

 private:
  const K& k_;
};

template <class K>
class PoolBankKeeperOf final : public PoolBankKeeper {
 public:
  explicit PoolBankKeeperOf(const K& keeper) : k_(keeper) {}
  Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                   std::string_view denom) const override {
    return k_.GetBalance(kv, address, denom);
  }
  Result<std::string> GetDenom(const store::KvReader& kv) const override {
    return k_.GetDenom(kv);
  }
  Status ReturnFee(store::KvStore& kv, std::string_view payer,
                   const ante::Coins& fee) const override {
    return k_.ReturnFee(kv, payer, fee);
  }

 private:
  const K& k_;
};

struct TxPoolOptions {
  mempool::Config pool;
  std::int64_t recheck_budget_nanos = 200'000'000;
  std::vector<ante::GasPrice> min_gas_prices;
  // A parked tx (a sequence gap before it) that has been in the pool for more than this many
  // blocks is dropped (0: never), counted as expired_parked and logged at info: a gap that is
  // never filled (its tx refused by a full CometBFT mempool, or lost with a crashed node) must
  // not hold the sender's later txs, and the pool's and CometBFT's space, forever.
  std::int64_t parked_ttl_blocks = 20;
  // Reap (CometBFT v0.40 ReapTxs) hands a ready tx out once, and the whole pool again every
  // this long (0: at every call).
  std::int64_t regossip_interval_nanos = 10'000'000'000;
};

// One CheckTx / InsertTx answer.
struct CheckOutcome {
  std::uint32_t code = 0;
  std::string log;   // also for code 0: "parked: ..." when the tx waits behind a sequence gap
  std::string info;  // "parked; waiting for sequence N" for such a tx
  std::uint64_t gas_wanted = 0;
  std::uint64_t gas_used = 0;
  std::vector<tendermint::abci::Event> events;
};

class TxPool {
 public:
  // REQUIRES: the runner and keepers outlive the pool.
  TxPool(const TxRunner& runner, const PoolAccountKeeper& accounts, const PoolBankKeeper& bank,
         TxPoolOptions options);

  // Starts the check state over from `committed` (plus `pending`, e.g. the genesis writes
  // before block 1). The pool's txs are queued for recheck. REQUIRES: `committed` outlives the
  // pool and does not change until the next Reset or AfterCommit.
  void Reset(const store::KvReader& committed, const store::KvLimits& limits,
             const store::ChangeSet* pending);

  // CheckTx (NEW) and InsertTx: judge the tx against the check state and add it to the pool.
  CheckOutcome CheckNew(const std::string& raw, const ante::BlockInfo& block);
  // CheckTx (RECHECK): code 0 only if the tx is still in the pool and valid. A tx the pool has
  // never seen (kairosd restarted, CometBFT kept its mempool) is judged as new.
  CheckOutcome Recheck(const std::string& raw, const ante::BlockInfo& block);

  // After Commit of `height`: removes the included txs (`included`: their hashes, `senders`:
  // their first signers), applies TTLs, then Reset(committed) and rechecks within the budget.
  void AfterCommit(const store::KvReader& committed, const store::KvLimits& limits,
                   std::int64_t height, const std::vector<std::string>& included,
                   const std::vector<std::string>& senders, const ante::BlockInfo& next_block);

  // PrepareProposal: txs from the pool in reap order that pass the ante cumulatively on
  // `scratch`, each run whole (ante and messages, exactly as FinalizeBlock: `scratch` receives
  // what the block will write; a tx whose messages fail is included and pays its fee), within
  // `max_tx_bytes` (protobuf size, as CometBFT counts a block's data) and `max_gas` (< 0:
  // none). Deterministic for a given pool and state.
  std::vector<std::string> FillProposal(store::Branch& scratch, const ante::BlockInfo& block,
                                        std::int64_t max_tx_bytes, std::int64_t max_gas);

  // CometBFT v0.40 ReapTxs: ready txs in reap order within the limits (0 = none), each handed
  // out once per gossip round. CometBFT sends every tx ReapTxs returns to every peer, each
  // time (it keeps no record of what it sent), so a tx returned at every call would be
  // gossiped every reap_interval (500 ms), by every node holding it, for as long as it waits.
  // A round lasts options.regossip_interval_nanos (`now_nanos`: a monotonic clock); the next
  // round hands out the whole pool again, for peers that connected since (CometBFT's flood
  // mempool sends its pool to a new peer; the app mempool cannot know one came). What did not
  // fit the limits waits for the next call.
  std::vector<std::string> Reap(std::uint64_t max_bytes, std::uint64_t max_gas,
                                std::int64_t now_nanos);

  bool Contains(const std::string& hash) const;
  // One sender's pooled txs with their state (ready or parked). Thread-safe: it reads the
  // PriorityMempool only (the query path may run off the application executor).
  mempool::SenderView SenderTxs(std::string_view sender) const { return pool_.SenderTxs(sender); }
  // What the pooled txs reserve of `account` (fees and MsgSend amounts); for tests.
  ante::Coins Reserved(std::string_view account) const;
  // The pool's counters, with the duplicates this class answers before reaching the pool.
  // Thread-safe (unlike the rest of the class): the metrics endpoint reads it while scraping.
  mempool::Stats stats() const {
    mempool::Stats s = pool_.stats();
    s.rejected[static_cast<std::size_t>(mempool::RejectReason::kDuplicate)] +=
        duplicates_.load(std::memory_order_relaxed);
    return s;
  }
  const store::Branch& check_state() const { return *check_state_; }

 private:
  // What a ready tx wrote into the check state, to take it back out (Unapply, a replacement's
  // refund) through the keepers' inverses. Kept per applied tx from when the ante ran, so the
  // tx is never decoded again for it: a few short strings per ready tx (the payer, the fee's
  // denoms, the signers: about 200 bytes with a single signer and fee coin).
  struct Effects {
    std::string payer;
    ante::Coins fee;
    std::vector<std::string> signers;  // sequences incremented (ordered txs)
    std::vector<std::string> nonce_signers;  // unordered nonces written (unordered txs)
    std::int64_t timeout = 0;
  };
  // A removal we remember for Recheck answers.
  struct Failure {
    std::uint32_t code = 0;
    std::string log;
  };
  // What a tx takes from accounts: its fee from the payer, its MsgSend amounts from their
  // senders; one entry per account, in the order met.
  using Debits = std::vector<std::pair<std::string, ante::Coins>>;

  static Effects EffectsOf(const ante::Tx& tx);
  // Records that `tx` (the entry `hash`) has its effects in the check state.
  void MarkApplied(const mempool::Hash& hash, const ante::Tx& tx);
  // nullopt when the amounts add up past 2^256 (no balance could cover them).
  static std::optional<Debits> DebitsOf(const ante::Tx& tx);
  // Code 5 unless every account `debits` names has a committed balance covering what the pool
  // reserves of it (less `replaced`, the debits of the tx this one replaces) plus `debits`.
  std::optional<CheckOutcome> CheckReservations(const Debits& debits,
                                                const Debits* replaced) const;
  // The pool took the tx `hash`: its debits are reserved, and kept for its release.
  void Reserve(const mempool::Hash& hash, Debits debits);
  void Release(const Debits& debits);
  // The pool removed `entry`: its reservations (kept since Reserve) go.
  void Release(const mempool::EntryPtr& entry);
  std::uint64_t CommittedSequence(const std::string& address) const;
  std::uint64_t CheckSequence(const std::string& address) const;
  // Runs a CheckTx-mode ante that writes straight into `state` (TxRunner::AnteWrites::kDirect):
  // a child of the check state that the caller drops when the tx fails, or the check state
  // itself under a journal (store::BranchJournal) that the caller rolls back then.
  TxOutcome RunDirect(ante::ExecMode mode, const ante::Tx& tx, store::Branch& state,
                      const ante::BlockInfo& block) const;
  // Runs the ante in check mode on `child`, a child of the check state, with each signer's
  // account sequence set to the tx's (for parked txs and replacements); `refund` (the effects of
  // a replaced tx that is in the check state) first returns its fee. The child keeps the writes;
  // the signers' sequences are put back to the check state's, or, with `refund`, to what they
  // are with the replaced tx out and this one in (a co-signer only one of them has moves).
  TxOutcome RunDetached(const ante::Tx& tx, const ante::BlockInfo& block, const Effects* refund,
                        store::Branch& child) const;
  // Applies a pool entry (ready, not yet applied) to the check state; on failure removes it
  // from the pool. True when applied.
  bool ApplyEntry(const mempool::EntryPtr& entry, ante::ExecMode mode,
                  const ante::BlockInfo& block);
  // Takes a ready tx's effects (kept in applied_) back out of the check state, through the
  // keepers' inverse operations (no-op if it had none).
  void Unapply(const mempool::EntryPtr& entry);
  // The pool removed `entry` (not included): take it and its sender's later ordered txs back
  // out of the check state, release its reservations, and remember why for Recheck.
  void Forget(const mempool::EntryPtr& entry, mempool::RemoveReason reason);
  void RecordFailure(const std::string& hash, std::uint32_t code, std::string log);
  // A check state over `committed` (plus `pending`, the genesis writes before block 1) with no
  // pool tx applied yet.
  void NewCheckState(const store::KvReader& committed, const store::KvLimits& limits,
                     const store::ChangeSet* pending = nullptr);
  // Queues every pool tx for recheck, by sender in RecheckOrder.
  void QueueRecheck();
  // Rechecks the queued txs of one sender / of everyone until the deadline.
  void RecheckSender(const std::string& sender, const ante::BlockInfo& block);
  void DrainRecheck(std::chrono::steady_clock::time_point deadline, const ante::BlockInfo& block);
  void PurgeExpired(std::int64_t now_nanos);
  // Drops the parked txs older than options_.parked_ttl_blocks; returns how many. REQUIRES: the
  // recheck queue of this commit is built (QueueRecheck) and not drained yet.
  std::size_t DropStaleParked();
  // The answer to a tx the pool refused; for an underpriced tx it names the fee that would do.
  CheckOutcome Reject(mempool::InsertResult r, const ante::Tx& tx) const;
  // The least fee that gives `tx` the priority `needed` for its gas limit, with its denom(s):
  // "5500stake", or "5500 of each of atom, stake" (its priority is its least coin's).
  std::string FeeNeeded(const mempool::Priority& needed, const ante::Tx& tx) const;

  const TxRunner& runner_;
  const PoolAccountKeeper& accounts_;
  const PoolBankKeeper& bank_;
  TxPoolOptions options_;
  mempool::PriorityMempool pool_;
  store::KvLimits limits_;
  // Before block 1 only: the committed (empty) state plus the genesis writes, the check state's
  // parent.
  std::unique_ptr<store::Branch> genesis_state_;
  std::unique_ptr<store::Branch> check_state_;
  // What the pooled txs (ready and parked) will take from each account: fees and MsgSend
  // amounts (Debits). Keyed by addresses outsiders choose: absl's hash, seeded per process.
  absl::flat_hash_map<std::string, ante::Coins> reserved_;
  std::int64_t height_ = 0;  // the last committed height
  // Ready txs whose effects are in the check state, by hash, with those effects. Tx hashes are
  // bytes a peer can grind: SipHash under the per-process key (store/seeded_hash.h).
  absl::flat_hash_map<mempool::Hash, Effects, store::SeededHash> applied_;
  // Every pooled tx's (ready and parked) debits, by hash, as reserved: a tx that leaves the
  // pool releases them without being decoded again (a few short strings per pooled tx).
  absl::flat_hash_map<mempool::Hash, Debits, store::SeededHash> debits_;
  // Txs waiting for their recheck after a commit, by sender, and the senders in order.
  std::unordered_map<std::string, std::vector<mempool::EntryPtr>, store::SeededHash,
                     std::equal_to<>>
      recheck_by_sender_;
  std::deque<std::string> recheck_order_;
  // Txs that Reap handed out in this gossip round (begun at gossip_round_start_), by hash; also
  // cleared when it holds more than twice the pool's capacity (txs that left are not erased).
  TxHashSet gossiped_;
  std::int64_t gossip_round_start_ = std::numeric_limits<std::int64_t>::min();
  // Why recent txs left the pool (bounded, oldest forgotten first), for Recheck answers.
  std::unordered_map<std::string, Failure, store::SeededHash, std::equal_to<>> failures_;
  std::deque<std::string> failure_order_;
  // Refused as already pooled, before the ante ran. Atomic only for stats() from other threads.
  std::atomic<std::uint64_t> duplicates_{0};
};

}  // namespace kairos::app
