#include "app/tx_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <unordered_set>
#include <utility>

#include "app/hex.h"
#include "app/logging.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "store/varint.h"

namespace kairos::app {

std::int64_t ProtoSizeOfTx(std::string_view tx) {
  return static_cast<std::int64_t>(1 + UvarintSize(tx.size()) + tx.size());
}

namespace {

constexpr std::size_t kMaxRememberedFailures = 10000;

std::uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

mempool::Hash ToHash(const std::string& bytes) {
  mempool::Hash h{};
  std::copy_n(bytes.begin(), std::min(bytes.size(), h.size()), h.begin());
  return h;
}

std::string HashString(const mempool::Hash& h) { return std::string(h.begin(), h.end()); }
std::string HashString(const mempool::EntryPtr& e) { return HashString(e->tx.hash); }

std::int64_t WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void CheckStore(const Status& s, const char* where) {
  if (!s.ok() && !s.IsNotFound()) StopOnBrokenStore(where, s);
}

CheckOutcome Refusal(std::uint32_t code, std::string log) {
  CheckOutcome c;
  c.code = code;
  c.log = std::move(log);
  return c;
}

CheckOutcome FromOutcome(TxOutcome out) {
  CheckOutcome c;
  c.code = out.status.code();
  c.log = out.status.ok() ? std::string() : out.status.log();
  c.gas_wanted = out.gas_wanted;
  c.gas_used = out.gas_used;
  if (out.status.ok()) c.events = std::move(out.events);
  return c;
}

}  // namespace

TxPool::TxPool(const TxRunner& runner, const PoolAccountKeeper& accounts,
               const PoolBankKeeper& bank, TxPoolOptions options)
    : runner_(runner), accounts_(accounts), bank_(bank), options_(std::move(options)),
      pool_(options_.pool), gossiped_(RandomSeed()) {}

// --- state helpers ------------------------------------------------------------------------

TxPool::Effects TxPool::EffectsOf(const ante::Tx& tx) {
  Effects e;
  e.payer = tx.FeePayer();
  e.fee = tx.fee;
  if (tx.unordered) {
    e.nonce_signers = tx.signers;
    e.timeout = tx.timeout_unix_nanos.value_or(0);
  } else {
    e.signers = tx.signers;
  }
  return e;
}

void TxPool::MarkApplied(const mempool::Hash& hash, const ante::Tx& tx) {
  applied_.insert_or_assign(hash, EffectsOf(tx));
}

namespace {

// The committed state as the check state's parent (before block 1: with the genesis writes):
// reads go through the check state's read cache, so the account a CheckTx is about is fetched
// from the store once, not twice.
class ParentView final : public store::KvReader {
 public:
  explicit ParentView(const store::Branch& branch) : branch_(branch) {}
  Status Get(std::string_view key, std::string* value) const override {
    return branch_.GetFromParent(key, value);
  }
  std::unique_ptr<store::KvIterator> Iterate(std::string_view, std::string_view) const override {
    return nullptr;  // never called: only point reads
  }

 private:
  const store::Branch& branch_;
};

}  // namespace

std::uint64_t TxPool::CommittedSequence(const std::string& address) const {
  auto seq = accounts_.ReadSequence(ParentView(*check_state_), address);
  if (!seq.ok()) StopOnBrokenStore("reading an account for the mempool", seq.status());
  return *seq;
}

std::uint64_t TxPool::CheckSequence(const std::string& address) const {
  auto seq = accounts_.ReadSequence(*check_state_, address);
  if (!seq.ok()) StopOnBrokenStore("reading an account for the mempool", seq.status());
  return *seq;
}

namespace {

using Sequences = std::vector<std::pair<std::string, std::uint64_t>>;  // (address, sequence)

// Sets each listed account's sequence in `kv` (through the keeper); returns the previous values.
Sequences SetSequences(const PoolAccountKeeper& accounts, store::KvStore& kv,
                       const Sequences& wanted) {
  Sequences previous;
  for (const auto& [address, sequence] : wanted) {
    auto was = accounts.SetSequence(kv, address, sequence);
    if (!was.ok()) StopOnBrokenStore("setting a sequence", was.status());
    if (!*was) continue;  // the ante reports the missing account
    previous.emplace_back(address, **was);
  }
  return previous;
}

}  // namespace

TxOutcome TxPool::RunDirect(ante::ExecMode mode, const ante::Tx& tx, store::Branch& state,
                            const ante::BlockInfo& block) const {
  return runner_.Run(mode, tx, state, block, options_.min_gas_prices,
                     TxRunner::AnteWrites::kDirect);
}

TxOutcome TxPool::RunDetached(const ante::Tx& tx, const ante::BlockInfo& block,
                              const Effects* refund, store::Branch& child) const {
  if (refund != nullptr) {
    CheckStore(bank_.ReturnFee(child, refund->payer, refund->fee), "returning a fee");
  }
  Sequences wanted;
  for (std::size_t i = 0; i < tx.signers.size() && i < tx.signer_infos.size(); ++i) {
    wanted.emplace_back(tx.signers[i], tx.signer_infos[i].sequence);
  }
  Sequences previous = SetSequences(accounts_, child, wanted);
  TxOutcome out = RunDirect(ante::ExecMode::kCheck, tx, child, block);
  CheckStore(out.status, "CheckTx");
  if (!out.status.ok()) return out;
  if (refund != nullptr) {
    // A replacement of a tx in the check state, which the child then becomes part of: each
    // signer's sequence there loses the replaced tx's increment and gains this one's. A signer of
    // both keeps its sequence; a co-signer new in this tx goes one up, one only the replaced tx
    // had goes one down.
    const auto signed_by = [](const std::vector<std::string>& signers, const std::string& a) {
      return std::find(signers.begin(), signers.end(), a) != signers.end();
    };
    for (auto& [address, sequence] : previous) {
      if (!signed_by(refund->signers, address)) ++sequence;
    }
    for (const std::string& address : refund->signers) {
      if (signed_by(tx.signers, address)) continue;
      CheckStore(accounts_.DecrementSequence(child, address), "setting a sequence");
    }
  }
  SetSequences(accounts_, child, previous);
  return out;
}

// --- reservations ---------------------------------------------------------------------------

std::optional<TxPool::Debits> TxPool::DebitsOf(const ante::Tx& tx) {
  Debits d;
  const auto add = [&](const std::string& account, const ante::Coins& coins) {
    auto it = std::find_if(d.begin(), d.end(), [&](const auto& e) { return e.first == account; });
    if (it == d.end()) {
      d.emplace_back(account, coins);
    } else {
      it->second = it->second.Add(coins);  // throws on overflow
    }
  };
  try {
    if (!tx.fee.empty()) add(tx.FeePayer(), tx.fee);
    for (const ante::Msg& msg : tx.msgs) {
      if (const ante::Coins* spent = msg.spends()) add(msg.signer(), *spent);
    }
  } catch (const std::overflow_error&) {
    return std::nullopt;
  }
  return d;
}

namespace {

const ante::Coins* CoinsOf(const std::vector<std::pair<std::string, ante::Coins>>& debits,
                           std::string_view account) {
  for (const auto& [a, coins] : debits) {
    if (a == account) return &coins;
  }
  return nullptr;
}

}  // namespace

std::optional<CheckOutcome> TxPool::CheckReservations(const Debits& debits,
                                                      const Debits* replaced) const {
  const ParentView committed(*check_state_);
  for (const auto& [account, coins] : debits) {
    const auto held = reserved_.find(account);
    const ante::Coins* returned = replaced != nullptr ? CoinsOf(*replaced, account) : nullptr;
    for (const ante::Coin& c : coins.coins()) {
      ante::Uint256 reserved = held != reserved_.end() ? held->second.AmountOf(c.denom) : 0;
      if (returned != nullptr) reserved -= std::min(reserved, returned->AmountOf(c.denom));
      auto have = bank_.GetBalance(committed, account, c.denom);
      if (!have.ok()) StopOnBrokenStore("reading a balance for the mempool", have.status());
      if (*have >= reserved && *have - reserved >= c.amount) continue;
      return Refusal(
          ante::kInsufficientFunds,
          "insufficient funds: " + crypto::EncodeAccountAddress(account) + " has " +
              ante::ToString(*have) + c.denom + " committed, its txs in the mempool reserve " +
              ante::ToString(reserved) + c.denom +
              " for fees and sends (ready and parked alike), and this tx needs " +
              ante::ToString(c.amount) + c.denom + " more");
    }
  }
  return std::nullopt;
}

void TxPool::Reserve(const mempool::Hash& hash, Debits debits) {
  for (const auto& [account, coins] : debits) {
    ante::Coins& held = reserved_[account];
    held = held.Add(coins);  // cannot overflow: admitted only below a balance
  }
  debits_.insert_or_assign(hash, std::move(debits));
}

void TxPool::Release(const Debits& debits) {
  for (const auto& [account, coins] : debits) {
    auto it = reserved_.find(account);
    std::optional<ante::Coins> left;
    if (it != reserved_.end()) left = it->second.SafeSub(coins);
    if (!left) {  // a bookkeeping bug, not input: say so, and drop the account's reservation
      Log()->error("mempool: releasing {} of {} that was not reserved",
                   coins.ToString(), crypto::EncodeAccountAddress(account));
      if (it != reserved_.end()) reserved_.erase(it);
      continue;
    }
    if (left->empty()) {
      reserved_.erase(it);
    } else {
      it->second = std::move(*left);
    }
  }
}

void TxPool::Release(const mempool::EntryPtr& entry) {
  auto it = debits_.find(entry->tx.hash);
  if (it == debits_.end()) {  // a bookkeeping bug, not input
    Log()->error("mempool: tx {} left the pool with no reservation recorded", HashString(entry));
    return;
  }
  Release(it->second);
  debits_.erase(it);
}

ante::Coins TxPool::Reserved(std::string_view account) const {
  // (Debian's absl has its own string_view: no heterogeneous lookup with std::string_view.)
  auto it = reserved_.find(std::string(account));
  return it != reserved_.end() ? it->second : ante::Coins();
}

// --- check state ----------------------------------------------------------------------------

void TxPool::Unapply(const mempool::EntryPtr& entry) {
  auto it = applied_.find(entry->tx.hash);
  if (it == applied_.end()) return;
  const Effects e = std::move(it->second);
  applied_.erase(it);
  constexpr const char* kWhere = "taking a tx out of the check state";
  for (const std::string& signer : e.signers) {
    CheckStore(accounts_.DecrementSequence(*check_state_, signer), kWhere);
  }
  for (const std::string& signer : e.nonce_signers) {
    CheckStore(accounts_.RemoveUnorderedNonce(*check_state_, signer, e.timeout), kWhere);
  }
  CheckStore(bank_.ReturnFee(*check_state_, e.payer, e.fee), kWhere);
}

void TxPool::RecordFailure(const std::string& hash, std::uint32_t code, std::string log) {
  auto [it, fresh] = failures_.insert_or_assign(hash, Failure{code, std::move(log)});
  if (!fresh) return;
  failure_order_.push_back(hash);
  while (failure_order_.size() > kMaxRememberedFailures) {
    failures_.erase(failure_order_.front());
    failure_order_.pop_front();
  }
}

namespace {

// What Recheck answers for a tx the pool removed for `reason`; nullopt for a failed recheck,
// which records the ante's own answer, and for removals CometBFT never asks about.
std::optional<std::pair<std::uint32_t, std::string>> RemovalAnswer(mempool::RemoveReason reason) {
  switch (reason) {
    case mempool::RemoveReason::kEvicted:
      return std::pair{ante::kMempoolIsFull,
                       "evicted from the mempool by a tx with a higher priority (mempool full)"};
    case mempool::RemoveReason::kReplaced:
      return std::pair{ante::kTxInMempoolCache,
                       "replaced in the mempool by a tx with the same sender and sequence and a "
                       "higher fee"};
    case mempool::RemoveReason::kExpiredBlocks:
    case mempool::RemoveReason::kExpiredTime:
      return std::pair{ante::kMempoolIsFull,
                       std::string("expired from the mempool (") + mempool::Name(reason) +
                           "; see mempool.ttl_blocks and mempool.ttl_duration)"};
    case mempool::RemoveReason::kExpiredParked:
      return std::pair{ante::kMempoolIsFull,
                       std::string("expired from the mempool (expired_parked): parked behind a "
                                   "sequence gap that no tx filled for more than "
                                   "mempool.parked_ttl_blocks blocks")};
    default:
      return std::nullopt;
  }
}

}  // namespace

void TxPool::Forget(const mempool::EntryPtr& entry, mempool::RemoveReason reason) {
  const std::string hash = HashString(entry);
  if (!entry->tx.unordered) {
    // The pool parked the sender's later txs: their effects leave the check state too.
    for (std::uint64_t n = entry->tx.nonce + 1;; ++n) {
      auto next = pool_.FindOrdered(entry->tx.sender(), n);
      if (!next || !applied_.contains(next->tx.hash)) break;
      Unapply(next);
    }
  }
  Unapply(entry);
  Release(entry);
  if (auto answer = RemovalAnswer(reason)) {
    RecordFailure(hash, answer->first, std::move(answer->second));
  }
}

bool TxPool::ApplyEntry(const mempool::EntryPtr& entry, ante::ExecMode mode,
                        const ante::BlockInfo& block) {
  const std::string hash = HashString(entry);
  auto decoded = DecodeTx(entry->tx.bytes());
  CheckOutcome failure;
  if (auto* err = std::get_if<TxError>(&decoded)) {
    failure.code = err->code;  // cannot happen: it decoded when it came in
    failure.log = err->log;
  } else {
    const ante::Tx& tx = std::get<ante::Tx>(decoded);
    store::BranchJournal journal(*check_state_);
    TxOutcome out = RunDirect(mode, tx, *check_state_, block);
    CheckStore(out.status, "a mempool recheck");
    if (out.status.ok()) {
      journal.Commit();
      MarkApplied(entry->tx.hash, tx);
      return true;
    }
    journal.RollBack();  // before Forget below writes to the check state
    failure = FromOutcome(std::move(out));
  }
  if (pool_.Remove(entry->tx.hash, mempool::RemoveReason::kRecheckFailed)) {
    Forget(entry, mempool::RemoveReason::kRecheckFailed);
  }
  Log()->debug("mempool: dropped tx {} on recheck: code {}: {}", HexEncode(hash, true),
               failure.code, failure.log);
  RecordFailure(hash, failure.code, std::move(failure.log));
  return false;
}

// --- commit and recheck -------------------------------------------------------------------

void TxPool::Reset(const store::KvReader& committed, const store::KvLimits& limits,
                   const store::ChangeSet* pending) {
  NewCheckState(committed, limits, pending);
  QueueRecheck();
}

void TxPool::NewCheckState(const store::KvReader& committed, const store::KvLimits& limits,
                           const store::ChangeSet* pending) {
  limits_ = limits;
  // The new check state starts with the old one's table size: it will hold about as many keys
  // (growing the table again at every block would rehash it several times per block).
  const std::size_t keys = check_state_ ? check_state_->size() : 0;
  check_state_.reset();
  genesis_state_.reset();
  const store::KvReader* parent = &committed;
  if (pending != nullptr) {  // before block 1: the genesis writes are "committed" for the pool
    genesis_state_ = std::make_unique<store::Branch>(committed, limits);
    genesis_state_->Apply(*pending);
    parent = genesis_state_.get();
  }
  check_state_ = std::make_unique<store::Branch>(*parent, limits);
  check_state_->Reserve(keys);
  // Keeps the table's size: the pool's txs are re-applied into it (absl's clear() frees a
  // large table).
  const std::size_t applied = applied_.size();
  applied_.clear();
  applied_.reserve(applied);
}

void TxPool::QueueRecheck() {
  recheck_by_sender_.clear();
  recheck_order_.clear();
  for (const mempool::EntryPtr& e : pool_.RecheckOrder()) {
    auto [it, fresh] = recheck_by_sender_.try_emplace(std::string(e->tx.sender()));
    if (fresh) recheck_order_.push_back(std::string(e->tx.sender()));
    it->second.push_back(e);
  }
}

void TxPool::RecheckSender(const std::string& sender, const ante::BlockInfo& block) {
  auto it = recheck_by_sender_.find(sender);
  if (it == recheck_by_sender_.end()) return;
  const std::vector<mempool::EntryPtr> entries = std::move(it->second);
  recheck_by_sender_.erase(it);
  for (const mempool::EntryPtr& e : entries) {
    if (!pool_.Find(e->tx.hash) || applied_.contains(e->tx.hash) || pool_.IsParked(e->tx.hash)) {
      continue;  // gone, already in, or waiting for a gap to fill
    }
    ApplyEntry(e, ante::ExecMode::kReCheck, block);
  }
}

void TxPool::DrainRecheck(std::chrono::steady_clock::time_point deadline,
                          const ante::BlockInfo& block) {
  while (!recheck_order_.empty() && std::chrono::steady_clock::now() < deadline) {
    const std::string sender = std::move(recheck_order_.front());
    recheck_order_.pop_front();
    RecheckSender(sender, block);
  }
}

void TxPool::PurgeExpired(std::int64_t now_nanos) {
  for (const auto& [entry, reason] : pool_.PurgeExpired(height_, now_nanos)) {
    Forget(entry, reason);
  }
}

std::size_t TxPool::DropStaleParked() {
  if (options_.parked_ttl_blocks <= 0 || pool_.stats().parked == 0) return 0;
  std::size_t dropped = 0;
  // The recheck queue QueueRecheck just built already holds every pooled tx by sender: no second
  // walk of the pool. (Entries the update removed are no longer parked, nor removable.)
  for (const std::string& sender : recheck_order_) {
    for (const mempool::EntryPtr& e : recheck_by_sender_.at(sender)) {
      if (height_ - e->arrival_height <= options_.parked_ttl_blocks) continue;
      if (!pool_.IsParked(e->tx.hash)) continue;
      if (!pool_.Remove(e->tx.hash, mempool::RemoveReason::kExpiredParked)) continue;
      Log()->info("mempool: dropped tx {} of {} at sequence {}: parked behind a sequence gap for "
                  "more than {} blocks (mempool.parked_ttl_blocks); its predecessors never came",
                  HexEncode(HashString(e), true), crypto::EncodeAccountAddress(sender),
                  e->tx.nonce, options_.parked_ttl_blocks);
      Forget(e, mempool::RemoveReason::kExpiredParked);
      ++dropped;
    }
  }
  return dropped;
}

void TxPool::AfterCommit(const store::KvReader& committed, const store::KvLimits& limits,
                         std::int64_t height, const std::vector<std::string>& included,
                         const std::vector<std::string>& senders,
                         const ante::BlockInfo& next_block) {
  const auto started = std::chrono::steady_clock::now();
  height_ = height;
  // The new committed state first: the base sequences below are read through it.
  NewCheckState(committed, limits);
  std::vector<mempool::Hash> hashes;
  hashes.reserve(included.size());
  for (const std::string& h : included) hashes.push_back(ToHash(h));
  // The recheck queue is built before the update: the txs the update removes are skipped when
  // their sender's turn comes. Its senders are also the ones that get base sequences (a block
  // of txs that never went through this node's pool costs no account reads here).
  QueueRecheck();
  const std::size_t queued = recheck_order_.size();
  Sequences bases;
  std::unordered_set<std::string, store::SeededHash, std::equal_to<>> seen;
  for (const std::string& s : senders) {
    if (recheck_by_sender_.count(s) && seen.insert(s).second) {
      bases.emplace_back(s, CommittedSequence(s));
    }
  }
  std::size_t dropped = 0;
  for (const auto& [entry, reason] : pool_.Update(height, WallNanos(), hashes, bases)) {
    if (reason == mempool::RemoveReason::kIncluded) {
      Release(entry);  // the check state starts over anyway
      continue;
    }
    ++dropped;
    Forget(entry, reason);  // nothing to take out of the new check state; this records why
  }
  dropped += DropStaleParked();
  DrainRecheck(started + std::chrono::nanoseconds(options_.recheck_budget_nanos), next_block);
  const mempool::Stats s = pool_.stats();
  Log()->debug("mempool after block {}: {} tx(s) ({} parked, {} sender(s)), {} dropped by TTL or "
               "sequence, {} of {} sender(s) rechecked in {:.1f} ms",
               height, s.size, s.parked, s.senders, dropped, queued - recheck_order_.size(),
               queued,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                         started)
                   .count());
}

// --- CheckTx ------------------------------------------------------------------------------

std::string TxPool::FeeNeeded(const mempool::Priority& needed, const ante::Tx& tx) const {
  const std::string amount = mempool::DecimalString(needed.MinFeeFor(tx.gas_limit));
  std::string denoms;
  for (const ante::Coin& c : tx.fee.coins()) denoms += (denoms.empty() ? "" : ", ") + c.denom;
  if (tx.fee.coins().size() > 1) {  // its priority is its least coin's: each must reach it
    return amount + " of each of " + denoms;
  }
  if (denoms.empty()) {
    auto denom = bank_.GetDenom(*check_state_);
    if (!denom.ok()) StopOnBrokenStore("reading the denom", denom.status());
    denoms = std::move(*denom);
  }
  return amount + denoms;
}

CheckOutcome TxPool::Reject(mempool::InsertResult r, const ante::Tx& tx) const {
  CheckOutcome c;
  switch (r.reject) {
    case mempool::RejectReason::kDuplicate: c.code = ante::kTxInMempoolCache; break;
    case mempool::RejectReason::kFull:
    case mempool::RejectReason::kSenderCap: c.code = ante::kMempoolIsFull; break;
    case mempool::RejectReason::kReplacementUnderpriced: c.code = ante::kInsufficientFee; break;
    case mempool::RejectReason::kTooLarge: c.code = ante::kTxTooLarge; break;
    case mempool::RejectReason::kNonceTooLow: c.code = ante::kWrongSequence; break;
    case mempool::RejectReason::kParkedCap: c.code = ante::kMempoolIsFull; break;
  }
  c.log = std::move(r.message);
  if ((r.reject == mempool::RejectReason::kFull ||
       r.reject == mempool::RejectReason::kReplacementUnderpriced) &&
      !r.needed_priority.is_max()) {
    c.log += "; with its gas limit of " + std::to_string(tx.gas_limit) +
             " that is a fee of at least " + FeeNeeded(r.needed_priority, tx);
  }
  return c;
}

CheckOutcome TxPool::CheckNew(const std::string& raw, const ante::BlockInfo& block) {
  if (raw.size() > options_.pool.max_tx_bytes) {
    return Refusal(ante::kTxTooLarge, "tx too large: " + std::to_string(raw.size()) +
                                        " bytes; this node's mempool takes " +
                                        std::to_string(options_.pool.max_tx_bytes) +
                                        " at most (mempool.max_tx_bytes)");
  }
  const std::int64_t now = WallNanos();
  PurgeExpired(now);
  auto decoded = DecodeTx(raw);
  if (auto* err = std::get_if<TxError>(&decoded)) return Refusal(err->code, std::move(err->log));
  const ante::Tx& tx = std::get<ante::Tx>(decoded);
  if (pool_.Find(ToHash(tx.hash))) {
    duplicates_.fetch_add(1, std::memory_order_relaxed);
    return Refusal(ante::kTxInMempoolCache, "tx already in mempool");
  }
  if (tx.signers.empty() || tx.signer_infos.empty()) {
    // No sender to queue it under; the ante says why it is invalid.
    store::Branch child(*check_state_, limits_);
    TxOutcome out = RunDirect(ante::ExecMode::kCheck, tx, child, block);
    CheckStore(out.status, "CheckTx");
    if (!out.status.ok()) return FromOutcome(std::move(out));
    return Refusal(ante::kInvalidRequest, "a tx needs a signer");
  }
  const std::string& sender = tx.signers.front();
  RecheckSender(sender, block);  // its pending txs first, so the check state is current

  enum class Kind { kNext, kParked, kReplace } kind = Kind::kNext;
  std::uint64_t base = 0;
  std::uint64_t nonce = tx.unordered ? static_cast<std::uint64_t>(tx.timeout_unix_nanos.value_or(0))
                                     : tx.signer_infos.front().sequence;
  mempool::EntryPtr old;
  if (!tx.unordered) {
    base = CommittedSequence(sender);
    if (nonce >= base) {
      old = pool_.FindOrdered(sender, nonce);
      if (old) {
        kind = Kind::kReplace;
      } else if (nonce > base && nonce > CheckSequence(sender)) {
        // (The check state's sequence is never below the committed one, so a tx at the
        // committed sequence is never parked: no second read for the common case.)
        kind = Kind::kParked;
      }
    }
  }
  // The next tx of its sender (the common case) runs straight on the check state under a
  // journal, kept if the pool takes the tx; the others run on a child branch.
  std::optional<store::BranchJournal> journal;
  std::optional<store::Branch> child;
  TxOutcome out;
  if (kind == Kind::kNext) {
    journal.emplace(*check_state_);
    out = RunDirect(ante::ExecMode::kCheck, tx, *check_state_, block);
    CheckStore(out.status, "CheckTx");
  } else {
    child.emplace(*check_state_, limits_);
    const Effects* refund = nullptr;  // the replaced tx's, when they are in the check state
    if (old) {
      if (auto it = applied_.find(old->tx.hash); it != applied_.end()) refund = &it->second;
    }
    out = RunDetached(tx, block, refund, *child);
  }
  if (!out.status.ok()) return FromOutcome(std::move(out));  // the journal rolls back

  // What it takes from accounts, against what their committed balances still cover once the
  // pool's other txs (ready and parked) have taken theirs.
  const auto refuse = [&](CheckOutcome c) {
    c.gas_wanted = out.gas_wanted;
    c.gas_used = out.gas_used;
    return c;
  };
  const std::optional<Debits> debits = DebitsOf(tx);
  if (!debits) {
    return refuse(Refusal(ante::kInsufficientFunds,
                          "insufficient funds: the tx's fee and sends add up past any balance"));
  }
  const Debits* old_debits = nullptr;  // the replaced tx's (valid until debits_ changes)
  if (old) {
    if (auto it = debits_.find(old->tx.hash); it != debits_.end()) old_debits = &it->second;
  }
  if (auto refusal = CheckReservations(*debits, old_debits)) {
    return refuse(std::move(*refusal));
  }

  mempool::TxInfo info;
  info.bytes = raw;
  info.hash = ToHash(tx.hash);
  info.sender = sender;
  info.unordered = tx.unordered;
  info.nonce = nonce;
  info.priority = mempool::Priority::FromQ64(out.priority);
  info.gas_wanted = out.gas_wanted;
  mempool::InsertResult r = pool_.Insert(std::move(info), base, height_, now);
  for (const mempool::EntryPtr& e : r.stale) {
    applied_.erase(e->tx.hash);
    Release(e);
  }
  if (!r.ok) return refuse(Reject(std::move(r), tx));
  Reserve(ToHash(tx.hash), *debits);
  // The new tx's effects go in first; evicted txs' come out after (the adjustments commute).
  if (r.replaced) {
    // Not Forget: its fee was returned on the child, and the sender's later txs stay.
    applied_.erase(r.replaced->tx.hash);
    Release(r.replaced);
    auto answer = RemovalAnswer(mempool::RemoveReason::kReplaced);
    RecordFailure(HashString(r.replaced), answer->first, std::move(answer->second));
  }
  if (!r.parked) {
    if (kind == Kind::kParked) {
      // The pool sees no gap where the check state did (it cannot, normally): run it for real.
      ApplyEntry(pool_.Find(ToHash(tx.hash)), ante::ExecMode::kCheck, block);
    } else {
      if (journal) {
        journal->Commit();
      } else {
        check_state_->Apply(*child);
      }
      MarkApplied(ToHash(tx.hash), tx);
    }
  }
  // If the pool parked it after all, its writes go (a no-op after Commit). The journal is
  // closed before Forget and ApplyEntry below write to the check state or open their own.
  if (journal) journal->RollBack();
  for (const mempool::EntryPtr& e : r.evicted) Forget(e, mempool::RemoveReason::kEvicted);
  for (const mempool::EntryPtr& e : r.promoted) {
    if (!ApplyEntry(e, ante::ExecMode::kReCheck, block)) break;  // the rest stay parked
  }
  CheckOutcome c = FromOutcome(std::move(out));
  if (r.parked) {
    // Code 0, but nothing is proposed until the gap fills: say so, and what it waits for.
    const std::string waiting = std::to_string(r.waiting_for);
    c.info = "parked; waiting for sequence " + waiting;
    c.log = "parked: waiting for sequence " + waiting + " of " +
            crypto::EncodeAccountAddress(sender) + " (this tx has sequence " +
            std::to_string(nonce) + "); it is not proposed before the txs from sequence " +
            waiting + " on reach the mempool" +
            (options_.parked_ttl_blocks > 0
                 ? ", and it is dropped after " + std::to_string(options_.parked_ttl_blocks) +
                       " blocks without them (mempool.parked_ttl_blocks)"
                 : std::string());
    Log()->debug("mempool: parked tx {} of {} at sequence {}, waiting for {}",
                 HexEncode(tx.hash, true), crypto::EncodeAccountAddress(sender), nonce, waiting);
  }
  return c;
}

CheckOutcome TxPool::Recheck(const std::string& raw, const ante::BlockInfo& block) {
  const std::string hash = crypto::Sha256(raw);
  if (auto e = pool_.Find(ToHash(hash))) {
    RecheckSender(std::string(e->tx.sender()), block);
    if (pool_.Find(ToHash(hash))) return {};
  }
  if (auto it = failures_.find(hash); it != failures_.end()) {
    return Refusal(it->second.code, it->second.log);
  }
  if (auto reason = pool_.RemovalReasonOf(ToHash(hash))) {
    return Refusal(ante::kMempoolIsFull,
                   std::string("no longer in the app mempool (") + mempool::Name(*reason) + ")");
  }
  // Never seen: kairosd restarted while CometBFT kept its mempool. Judge it as new.
  return CheckNew(raw, block);
}

bool TxPool::Contains(const std::string& hash) const {
  return pool_.Find(ToHash(hash)) != nullptr;
}

// --- block building -----------------------------------------------------------------------

std::vector<std::string> TxPool::FillProposal(store::Branch& scratch,
                                              const ante::BlockInfo& block,
                                              std::int64_t max_tx_bytes, std::int64_t max_gas) {
  PurgeExpired(WallNanos());
  std::vector<std::string> out;
  std::int64_t bytes = 0;
  std::int64_t gas = 0;
  int misfits_in_a_row = 0;
  std::size_t failed = 0, failed_messages = 0;
  pool_.Reap([&](const mempool::EntryPtr& e) {
    const std::int64_t size = ProtoSizeOfTx(e->tx.bytes());
    const auto tx_gas = static_cast<std::int64_t>(
        std::min<std::uint64_t>(e->tx.gas_wanted, std::numeric_limits<std::int64_t>::max()));
    if (bytes + size > max_tx_bytes || (max_gas >= 0 && gas > max_gas - tx_gas)) {
      // Skip it (and its sender's later txs), keep filling with smaller ones; a block that is
      // nearly full stops the walk.
      return ++misfits_in_a_row > mempool::PriorityMempool::kReapMaxSkips ? mempool::Verdict::kStop
                                                                          : mempool::Verdict::kSkip;
    }
    auto decoded = DecodeTx(e->tx.bytes());
    if (!std::holds_alternative<ante::Tx>(decoded)) return mempool::Verdict::kSkip;
    // Whole (ante and messages), so that `scratch` is what FinalizeBlock will compute: a tx
    // whose fee an earlier tx of the block spent fails its ante here.
    TxOutcome o = runner_.Run(ante::ExecMode::kPrepareProposal, std::get<ante::Tx>(decoded),
                              scratch, block);
    CheckStore(o.status, "PrepareProposal");
    if (!o.ante_passed) {
      ++failed;
      Log()->debug("PrepareProposal {}: skipped tx {}: code {}: {}", block.height,
                   HexEncode(HashString(e), true), o.status.code(), o.status.log());
      return mempool::Verdict::kSkip;
    }
    if (!o.status.ok()) {
      // Its messages fail: FinalizeBlock will still charge its fee and sequence (as the SDK
      // does) and report the failure to its sender. Left out, it would wait in the pool, and
      // hold its sender's later txs, until a TTL.
      ++failed_messages;
      Log()->debug("PrepareProposal {}: tx {} will fail in the block (it pays its fee): code {}: "
                   "{}",
                   block.height, HexEncode(HashString(e), true), o.status.code(),
                   o.status.log());
    }
    misfits_in_a_row = 0;
    bytes += size;
    gas += tx_gas;
    out.push_back(std::string(e->tx.bytes()));
    return mempool::Verdict::kTake;
  });
  if (failed > 0 || failed_messages > 0) {
    Log()->info("PrepareProposal {}: left out {} mempool tx(s) the ante rejects now; {} included "
                "tx(s) will fail their messages",
                block.height, failed, failed_messages);
  }
  return out;
}

std::vector<std::string> TxPool::Reap(std::uint64_t max_bytes, std::uint64_t max_gas,
                                      std::int64_t now_nanos) {
  const std::int64_t round = options_.regossip_interval_nanos;
  if (round <= 0 || gossip_round_start_ == std::numeric_limits<std::int64_t>::min() ||
      now_nanos - gossip_round_start_ >= round ||
      gossiped_.size() > 2 * options_.pool.max_txs) {
    gossiped_.clear();  // a new round: the whole pool goes out again
    gossip_round_start_ = now_nanos;
  }
  std::vector<std::string> out;
  std::uint64_t bytes = 0, gas = 0;
  pool_.Reap([&](const mempool::EntryPtr& e) {
    const mempool::Hash& hash = e->tx.hash;
    if (gossiped_.contains(hash)) {
      return mempool::Verdict::kTake;  // its sender's next tx may still be new
    }
    const std::uint64_t size = e->tx.bytes().size();
    const std::uint64_t g = e->tx.gas_wanted;
    if ((max_bytes != 0 && size > max_bytes - bytes) || (max_gas != 0 && g > max_gas - gas)) {
      // Not now (nor its sender's later txs, which must follow it): the next call offers it.
      return mempool::Verdict::kSkip;
    }
    bytes += size;
    gas += g;
    out.emplace_back(e->tx.bytes());
    gossiped_.insert(hash);
    return mempool::Verdict::kTake;
  });
  return out;
}

}  // namespace kairos::app
