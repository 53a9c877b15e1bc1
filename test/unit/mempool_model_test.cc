// PriorityMempool against a reference model: random sequences of inserts (new, replacing,
// duplicate, stale, too large, over the sender cap, into a full pool), removals, expiries,
// commits (Update with txs taken by a reap and new base nonces), reaps with random verdicts and
// ReapMax, run on both. The model is a plain vector that recomputes everything naively (the
// eviction frontier at every step, the reap by repeatedly picking the best available tx, the
// least sufficient priority by trying each one just above a resident tx's, the replacement bump
// in arbitrary-precision arithmetic); both must make the same decisions. Priorities are fees per
// gas as the app computes them: mostly below 1 per gas with ties across gas limits, some whole
// numbers, a few near the Q64.64 maximum.
#include <catch2/catch.hpp>

#include <boost/multiprecision/cpp_int.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "mempool/priority_mempool.h"

namespace kairos::mempool {
namespace {

const Priority kMaxPriority = Priority::Max();

using Removal = std::pair<Hash, RemoveReason>;

// The model's entry (hides mempool::Entry, which only the pool makes).
struct Entry {
  TxInfo tx;
  std::uint64_t arrival = 0;
  std::int64_t arrival_height = 0;
  std::int64_t arrival_time = 0;
};

struct ModelResult {
  bool ok = false;
  RejectReason reject{};
  Priority needed;
  std::optional<Hash> replaced;
  std::vector<Hash> evicted, promoted, stale;
  bool parked = false;
  std::uint64_t waiting_for = 0;
};

// A verdict for the visited tx: a function of the tx and of how many were visited before, so
// both pools get the same verdicts as long as they visit the same txs.
using VerdictFn = std::function<Verdict(const TxInfo&, std::size_t visited)>;

class Model {
 public:
  explicit Model(Config c) : c_(c) {}

  ModelResult Insert(const TxInfo& tx, std::uint64_t base_nonce, std::int64_t height,
                     std::int64_t now) {
    ModelResult r;
    auto reject = [&](RejectReason reason) {
      r.ok = false;
      r.reject = reason;
      ++rejected_[static_cast<std::size_t>(reason)];
      return r;
    };
    if (tx.bytes.size() > c_.max_tx_bytes) return reject(RejectReason::kTooLarge);
    const bool ordered = !tx.unordered;
    std::vector<Hash> parked_before;
    std::uint64_t base = ordered ? base_nonce : 0;
    if (ordered && HasSender(tx.sender)) {
      for (const Entry& e : SortedOrdered(tx.sender)) {
        if (!Ready(e)) parked_before.push_back(e.tx.hash);
      }
      if (base_nonce > base_[tx.sender]) {
        base_[tx.sender] = base_nonce;
        for (const Entry& e : SortedOrdered(tx.sender)) {
          if (e.tx.nonce < base_nonce) {
            r.stale.push_back(e.tx.hash);
            RemoveHash(e.tx.hash, RemoveReason::kStaleNonce);
          }
        }
      }
      if (HasSender(tx.sender)) base = std::max(base, base_[tx.sender]);
    }
    auto promoted = [&] {
      for (const Entry& e : SortedOrdered(tx.sender)) {
        if (Ready(e) && std::count(parked_before.begin(), parked_before.end(), e.tx.hash)) {
          r.promoted.push_back(e.tx.hash);
        }
      }
    };
    if (Find(tx.hash) != nullptr) {
      promoted();
      return reject(RejectReason::kDuplicate);
    }
    if (ordered && tx.nonce < base) {
      promoted();
      return reject(RejectReason::kNonceTooLow);
    }
    const Entry* replaced = nullptr;
    for (const Entry& e : pool_) {
      if (ordered && !e.tx.unordered && e.tx.sender == tx.sender && e.tx.nonce == tx.nonce) {
        replaced = &e;
      }
    }
    if (replaced != nullptr) {
      // max(ceil(old * (100 + bump) / 100), old + 1), with no bound on the width.
      using boost::multiprecision::cpp_int;
      const cpp_int old = ToBig(replaced->tx.priority);
      const cpp_int scaled = old * (100 + c_.replace_bump_percent);
      const cpp_int needed = std::max<cpp_int>((scaled + 99) / 100, old + 1);
      if (needed > ToBig(kMaxPriority) || ToBig(tx.priority) < needed) {
        promoted();
        r.needed = needed > ToBig(kMaxPriority) ? kMaxPriority : FromBig(needed);
        return reject(RejectReason::kReplacementUnderpriced);
      }
    } else if (SenderCount(tx.sender) >= c_.max_txs_per_sender) {
      promoted();
      return reject(RejectReason::kSenderCap);
    }
    // The pool as it would be with the tx in (and the one it replaces out): which txs are
    // parked there.
    Entry incoming;
    incoming.tx = tx;
    incoming.arrival = next_arrival_;
    Incoming in;
    in.tx = &incoming;
    in.replaced = replaced;
    for (const Entry& e : pool_) {
      if (&e != replaced) in.after.push_back(&e);
    }
    in.after.push_back(&incoming);
    in.sender_base = HasSender(tx.sender) ? base_.at(tx.sender) : 0;
    if (ordered) in.sender_base = std::max(in.sender_base, base);
    in.parked = ordered && !ReadyAfter(in, incoming);
    std::size_t sender_parked = 0;
    for (const Entry& e : pool_) {
      sender_parked += e.tx.sender == tx.sender && !e.tx.unordered && !Ready(e);
    }
    if (in.parked && replaced == nullptr && sender_parked >= c_.max_parked_per_sender) {
      promoted();
      return reject(RejectReason::kParkedCap);
    }
    for (const Entry* e : in.after) in.parked_after += !e->tx.unordered && !ReadyAfter(in, *e);
    const bool parked_full = in.parked && in.parked_after > c_.max_parked;
    std::vector<Hash> victims;
    if (!Evict(in, tx.priority, &victims)) {
      // The least priority that would have been accepted, by trying them.
      std::set<Priority> tries;
      for (const Entry& e : pool_) {
        if (e.tx.priority >= tx.priority && e.tx.priority < kMaxPriority) {
          tries.insert(e.tx.priority.Next());
        }
      }
      r.needed = kMaxPriority;
      for (Priority p : tries) {
        if (Evict(in, p, nullptr)) {
          r.needed = p;
          break;
        }
      }
      promoted();
      return reject(parked_full ? RejectReason::kParkedCap : RejectReason::kFull);
    }
    if (replaced != nullptr) {
      r.replaced = replaced->tx.hash;
      RemoveHash(replaced->tx.hash, RemoveReason::kReplaced);
    }
    for (const Hash& h : victims) RemoveHash(h, RemoveReason::kEvicted);
    r.evicted = victims;
    if (!HasSender(tx.sender)) base_[tx.sender] = 0;
    if (ordered) base_[tx.sender] = std::max(base_[tx.sender], base);
    last_height_ = std::max(last_height_, height);
    last_time_ = std::max(last_time_, now);
    Entry e;
    e.tx = tx;
    e.arrival = next_arrival_++;
    e.arrival_height = last_height_;
    e.arrival_time = last_time_;
    pool_.push_back(e);
    last_insert_[tx.hash] = removals_.size();
    r.parked = ordered && !Ready(pool_.back());
    if (r.parked) {
      r.waiting_for = base_[tx.sender];
      while (HasOrdered(tx.sender, r.waiting_for)) ++r.waiting_for;
    }
    promoted();
    r.ok = true;
    return r;
  }

  static boost::multiprecision::cpp_int ToBig(Priority p) {
    using boost::multiprecision::cpp_int;
    const Uint128 q = p.q64();
    return (cpp_int(static_cast<std::uint64_t>(q >> 64)) << 64) + static_cast<std::uint64_t>(q);
  }
  static Priority FromBig(const boost::multiprecision::cpp_int& v) {
    const auto half = [&](unsigned shift) {
      return static_cast<Uint128>(
          static_cast<std::uint64_t>((v >> shift) & std::numeric_limits<std::uint64_t>::max()));
    };
    return Priority::FromQ64((half(64) << 64) | half(0));
  }

  bool Remove(const Hash& h, RemoveReason reason) {
    if (Find(h) == nullptr) return false;
    RemoveHash(h, reason);
    return true;
  }

  std::vector<Removal> Update(std::int64_t height, std::int64_t now,
                              const std::vector<Hash>& included,
                              const std::vector<std::pair<std::string, std::uint64_t>>& bases) {
    std::vector<Removal> out;
    for (const Hash& h : included) {
      if (Remove(h, RemoveReason::kIncluded)) out.emplace_back(h, RemoveReason::kIncluded);
    }
    for (const auto& [sender, b] : bases) {
      if (!HasSender(sender) || b <= base_[sender]) continue;
      base_[sender] = b;
      for (const Entry& e : SortedOrdered(sender)) {
        if (e.tx.nonce < b) {
          RemoveHash(e.tx.hash, RemoveReason::kStaleNonce);
          out.emplace_back(e.tx.hash, RemoveReason::kStaleNonce);
        }
      }
    }
    for (const auto& r : Purge(height, now)) out.push_back(r);
    return out;
  }

  // Every expired entry, in arrival order.
  std::vector<Removal> Purge(std::int64_t height, std::int64_t now) {
    std::vector<Removal> out;
    std::vector<Entry> by_arrival = pool_;
    std::sort(by_arrival.begin(), by_arrival.end(),
              [](const Entry& a, const Entry& b) { return a.arrival < b.arrival; });
    for (const Entry& e : by_arrival) {
      if (c_.ttl_blocks > 0 && height - e.arrival_height > c_.ttl_blocks) {
        out.emplace_back(e.tx.hash, RemoveReason::kExpiredBlocks);
      } else if (c_.ttl_nanos > 0 && now - e.arrival_time > c_.ttl_nanos) {
        out.emplace_back(e.tx.hash, RemoveReason::kExpiredTime);
      }
    }
    for (const auto& [h, reason] : out) RemoveHash(h, reason);
    return out;
  }

  // Repeatedly offers the best available tx: every unordered tx not offered yet, and each
  // sender's next ready ordered tx once the one before it was taken.
  std::vector<Hash> Reap(const VerdictFn& verdict) const {
    std::vector<Hash> visited;
    std::map<std::string, std::pair<std::vector<const Entry*>, bool>> chains;  // ready, dead
    std::map<std::string, std::size_t> next;
    std::set<Hash> offered_unordered;
    for (const Entry& e : pool_) {
      if (!e.tx.unordered && Ready(e)) chains[e.tx.sender].first.push_back(&e);
    }
    for (auto& [s, chain] : chains) {
      std::sort(chain.first.begin(), chain.first.end(),
                [](const Entry* a, const Entry* b) { return a->tx.nonce < b->tx.nonce; });
    }
    for (;;) {
      const Entry* best = nullptr;
      auto consider = [&](const Entry* e) {
        if (best == nullptr || e->tx.priority > best->tx.priority ||
            (e->tx.priority == best->tx.priority && e->arrival < best->arrival)) {
          best = e;
        }
      };
      for (const Entry& e : pool_) {
        if (e.tx.unordered && !offered_unordered.count(e.tx.hash)) consider(&e);
      }
      for (auto& [s, chain] : chains) {
        if (!chain.second && next[s] < chain.first.size()) consider(chain.first[next[s]]);
      }
      if (best == nullptr) break;
      const Verdict v = verdict(best->tx, visited.size());
      visited.push_back(best->tx.hash);
      if (best->tx.unordered) {
        offered_unordered.insert(best->tx.hash);
      } else if (v == Verdict::kTake) {
        ++next[best->tx.sender];
      } else {
        chains[best->tx.sender].second = true;
      }
      if (v == Verdict::kStop) break;
    }
    return visited;
  }

  std::vector<Hash> ReapMax(std::uint64_t max_bytes, std::uint64_t max_gas) const {
    std::vector<Hash> taken;
    std::uint64_t bytes = 0, gas = 0;
    int misses = 0;
    Reap([&](const TxInfo& tx, std::size_t) {
      if ((max_bytes && bytes + tx.bytes.size() > max_bytes) ||
          (max_gas && gas + tx.gas_wanted > max_gas)) {
        return ++misses >= PriorityMempool::kReapMaxSkips ? Verdict::kStop : Verdict::kSkip;
      }
      misses = 0;
      bytes += tx.bytes.size();
      gas += tx.gas_wanted;
      taken.push_back(tx.hash);
      return Verdict::kTake;
    });
    return taken;
  }

  std::vector<Hash> RecheckOrder() const {
    std::vector<Entry> sorted = pool_;
    std::map<std::string, std::uint64_t> oldest;
    for (const Entry& e : pool_) {
      auto [it, fresh] = oldest.emplace(e.tx.sender, e.arrival);
      if (!fresh) it->second = std::min(it->second, e.arrival);
    }
    std::sort(sorted.begin(), sorted.end(), [&](const Entry& a, const Entry& b) {
      const auto ka = std::make_tuple(oldest[a.tx.sender], a.tx.unordered,
                                      a.tx.unordered ? a.arrival : a.tx.nonce);
      const auto kb = std::make_tuple(oldest[b.tx.sender], b.tx.unordered,
                                      b.tx.unordered ? b.arrival : b.tx.nonce);
      return ka < kb;
    });
    std::vector<Hash> out;
    for (const Entry& e : sorted) out.push_back(e.tx.hash);
    return out;
  }

  // The latest removal of `h` among the last recent_removals ones, unless inserted since.
  std::optional<RemoveReason> ReasonOf(const Hash& h) const {
    const std::size_t from =
        removals_.size() > c_.recent_removals ? removals_.size() - c_.recent_removals : 0;
    for (std::size_t i = removals_.size(); i > from; --i) {
      if (removals_[i - 1].first != h) continue;
      auto ins = last_insert_.find(h);
      if (ins != last_insert_.end() && ins->second >= i) return std::nullopt;
      return removals_[i - 1].second;
    }
    return std::nullopt;
  }

  // What the model knows of `h`, for failure messages.
  std::string Debug(const Hash& h) const {
    std::string out;
    for (std::size_t i = 0; i < removals_.size(); ++i) {
      if (removals_[i].first != h) continue;
      out += " removed@" + std::to_string(i) + ":" + Name(removals_[i].second);
    }
    auto ins = last_insert_.find(h);
    if (ins != last_insert_.end()) out += " inserted@" + std::to_string(ins->second);
    out += " total " + std::to_string(removals_.size());
    return out;
  }

  Stats stats() const {
    Stats s;
    std::set<std::string> senders;
    for (const Entry& e : pool_) {
      ++s.size;
      s.bytes += e.tx.bytes.size();
      senders.insert(e.tx.sender);
      if (!e.tx.unordered && !Ready(e)) ++s.parked;
    }
    s.senders = senders.size();
    s.rejected = rejected_;
    s.removed = removed_;
    return s;
  }

  const std::vector<Entry>& pool() const { return pool_; }

  // The first sequence from max(the sender's base, `committed`) that has no tx in the pool.
  std::uint64_t NextReady(const std::string& sender, std::uint64_t committed) const {
    auto it = base_.find(sender);
    std::uint64_t n = std::max(committed, it == base_.end() ? 0 : it->second);
    while (HasOrdered(sender, n)) ++n;
    return n;
  }

  std::vector<Hash> Parked() const {
    std::vector<Hash> out;
    for (const Entry& e : pool_) {
      if (!e.tx.unordered && !Ready(e)) out.push_back(e.tx.hash);
    }
    return out;
  }
  // (hash, parked) of the sender's ordered txs by nonce, then its unordered ones by arrival.
  std::vector<std::pair<Hash, bool>> SenderTxs(const std::string& sender) const {
    std::vector<std::pair<Hash, bool>> out;
    for (const Entry& e : SortedOrdered(sender)) out.emplace_back(e.tx.hash, !Ready(e));
    for (const Entry& e : pool_) {  // pool_ is in arrival order
      if (e.tx.unordered && e.tx.sender == sender) out.emplace_back(e.tx.hash, false);
    }
    return out;
  }

 private:
  const Entry* Find(const Hash& h) const {
    for (const Entry& e : pool_) {
      if (e.tx.hash == h) return &e;
    }
    return nullptr;
  }
  bool HasSender(const std::string& s) const { return SenderCount(s) > 0; }
  std::size_t SenderCount(const std::string& s) const {
    return static_cast<std::size_t>(std::count_if(
        pool_.begin(), pool_.end(), [&](const Entry& e) { return e.tx.sender == s; }));
  }
  std::vector<Entry> SortedOrdered(const std::string& s) const {
    std::vector<Entry> out;
    for (const Entry& e : pool_) {
      if (!e.tx.unordered && e.tx.sender == s) out.push_back(e);
    }
    std::sort(out.begin(), out.end(),
              [](const Entry& a, const Entry& b) { return a.tx.nonce < b.tx.nonce; });
    return out;
  }
  // Ready: every nonce from the sender's base up to this one is in the pool.
  bool Ready(const Entry& e) const {
    auto it = base_.find(e.tx.sender);
    std::vector<const Entry*> all;
    for (const Entry& o : pool_) all.push_back(&o);
    return ReadyAmong(all, it == base_.end() ? 0 : it->second, e);
  }
  static bool ReadyAmong(const std::vector<const Entry*>& pool, std::uint64_t base,
                         const Entry& e) {
    for (std::uint64_t n = base; n <= e.tx.nonce; ++n) {
      bool found = false;
      for (const Entry* o : pool) {
        found |= !o->tx.unordered && o->tx.sender == e.tx.sender && o->tx.nonce == n;
      }
      if (!found) return false;
    }
    return true;
  }
  bool HasOrdered(const std::string& sender, std::uint64_t nonce) const {
    for (const Entry& e : pool_) {
      if (!e.tx.unordered && e.tx.sender == sender && e.tx.nonce == nonce) return true;
    }
    return false;
  }

  // A tx being inserted: the pool with it in (`after`), and whether it would be parked.
  struct Incoming {
    const Entry* tx = nullptr;
    const Entry* replaced = nullptr;
    std::vector<const Entry*> after;
    std::uint64_t sender_base = 0;  // its sender's base once it is in
    bool parked = false;
    std::size_t parked_after = 0;  // parked txs with it in
  };
  // Ready in the pool with the new tx in (which may promote some of its sender's txs).
  bool ReadyAfter(const Incoming& in, const Entry& e) const {
    if (e.tx.unordered) return true;
    const std::uint64_t base =
        e.tx.sender == in.tx->tx.sender ? in.sender_base : base_.at(e.tx.sender);
    return ReadyAmong(in.after, base, e);
  }
  void RemoveHash(const Hash h, RemoveReason reason) {  // a copy: `h` may point into pool_
    auto it = std::find_if(pool_.begin(), pool_.end(),
                           [&](const Entry& e) { return e.tx.hash == h; });
    const std::string sender = it->tx.sender;
    pool_.erase(it);
    ++removed_[static_cast<std::size_t>(reason)];
    removals_.emplace_back(h, reason);
    if (!HasSender(sender)) base_.erase(sender);
  }

  // Simulates evicting for the incoming tx with priority `priority`: at every step the frontier
  // is recomputed (each sender's highest ordered nonce and every unordered tx, without the
  // replaced tx and the new tx's predecessors), and its first entry in eviction order goes
  // (parked ones first, readiness as with the new tx in; then the cheapest, newest), until the
  // new tx fits (and, for a parked one, the parked txs are within max_parked). A ready victim
  // must be strictly cheaper; a parked one too when the new tx is parked, which never evicts a
  // ready one. False when that fails or nothing is left.
  bool Evict(const Incoming& in, Priority priority, std::vector<Hash>* victims) const {
    const TxInfo& tx = in.tx->tx;
    std::vector<const Entry*> left;
    for (const Entry* e : in.after) {
      if (e != in.tx) left.push_back(e);
    }
    std::size_t bytes = tx.bytes.size();
    for (const Entry* e : left) bytes += e->tx.bytes.size();
    std::size_t count = left.size() + 1;
    std::size_t parked = in.parked_after;
    if (tx.bytes.size() > c_.max_bytes) return false;
    while (count > c_.max_txs || bytes > c_.max_bytes || (in.parked && parked > c_.max_parked)) {
      const Entry* pick = nullptr;
      bool pick_ready = false;
      for (const Entry* e : left) {
        if (!e->tx.unordered) {
          if (!tx.unordered && e->tx.sender == tx.sender && e->tx.nonce < tx.nonce) continue;
          bool last = true;
          for (const Entry* o : left) {
            last &= o->tx.unordered || o->tx.sender != e->tx.sender || o->tx.nonce <= e->tx.nonce;
          }
          if (!last) continue;
        }
        const bool ready = ReadyAfter(in, *e);
        if (pick == nullptr || (!ready && pick_ready) ||
            (ready == pick_ready &&
             (e->tx.priority < pick->tx.priority ||
              (e->tx.priority == pick->tx.priority && e->arrival > pick->arrival)))) {
          pick = e;
          pick_ready = ready;
        }
      }
      if (pick == nullptr) return false;
      if (in.parked && pick_ready) return false;
      if ((in.parked || pick_ready) && pick->tx.priority >= priority) return false;
      if (victims != nullptr) victims->push_back(pick->tx.hash);
      --count;
      bytes -= pick->tx.bytes.size();
      parked -= pick_ready ? 0 : 1;
      left.erase(std::find(left.begin(), left.end(), pick));
    }
    return true;
  }

  Config c_;
  std::vector<Entry> pool_;
  std::map<std::string, std::uint64_t> base_;  // senders with entries only, like the pool
  std::uint64_t next_arrival_ = 1;
  std::int64_t last_height_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_time_ = std::numeric_limits<std::int64_t>::min();
  std::array<std::uint64_t, kRejectReasons> rejected_{};
  std::array<std::uint64_t, kRemoveReasons> removed_{};
  std::vector<Removal> removals_;
  std::map<Hash, std::size_t> last_insert_;  // hash -> removals_.size() when last inserted
};

std::vector<Hash> Hashes(const std::vector<EntryPtr>& v) {
  std::vector<Hash> out;
  for (const auto& e : v) out.push_back(e->tx.hash);
  return out;
}
std::vector<Removal> Removals(const std::vector<std::pair<EntryPtr, RemoveReason>>& v) {
  std::vector<Removal> out;
  for (const auto& [e, reason] : v) out.emplace_back(e->tx.hash, reason);
  return out;
}

void CheckStats(const Stats& got, const Stats& want) {
  CHECK(got.size == want.size);
  CHECK(got.bytes == want.bytes);
  CHECK(got.senders == want.senders);
  CHECK(got.parked == want.parked);
  CHECK(got.rejected == want.rejected);
  CHECK(got.removed == want.removed);
}

struct Workload {
  std::uint64_t seed;
  int ops;
  int senders;
  Config config;
  std::uint64_t commit_percent;  // of the ops (at most 8)
};

// Runs the workload on both; returns the pool's counters.
Stats Run(const Workload& w) {
  std::mt19937_64 rng(w.seed);
  PriorityMempool pool(w.config);
  Model model(w.config);
  auto rand = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  std::uint64_t hash_counter = w.seed << 32;
  std::vector<std::uint64_t> chain_base(static_cast<std::size_t>(w.senders), 0);
  std::vector<TxInfo> history;  // txs inserted, for duplicates and re-inserts
  std::int64_t height = 1, now = 1'000'000;
  int inserts_ok = 0, evictions = 0, expiries = 0, replacements = 0, reaps = 0, commits = 0;
  int parked_inserts = 0;

  auto make_tx = [&](bool unordered) {
    TxInfo t;
    // A quarter of the txs come from a few busy senders (so the per-sender cap is reached).
    const auto s = rand(4) == 0 ? rand(std::min<std::uint64_t>(8, w.senders))
                                : rand(static_cast<std::uint64_t>(w.senders));
    t.sender = "sender" + std::to_string(s);
    t.unordered = unordered;
    // Half of them extend the sender's ready txs; the others at or just past the committed
    // sequence (replacements, gaps), sometimes stale.
    if (unordered) {
      t.nonce = rng();
    } else if (rand(2) == 0) {
      t.nonce = model.NextReady(t.sender, chain_base[s]);
    } else {
      t.nonce = chain_base[s] + rand(6) - (rand(20) == 0 ? 1 : 0);
    }
    // Fees per gas: mostly a few dozen fee levels over three gas limits (gas prices below 1,
    // many ties across gas limits: 5000/200000 == 2500/100000), some whole numbers, and a few
    // near the maximum (replacement bumps that overflow).
    const auto kind = rand(20);
    if (kind < 14) {
      static constexpr std::uint64_t kGas[] = {100'000, 200'000, 250'000};
      t.priority = Priority::PerGas(500 * rand(40), kGas[rand(3)]);
    } else if (kind < 19) {
      t.priority = Priority::Whole(rand(rand(4) == 0 ? 1000 : 40));
    } else {
      t.priority = Priority::FromQ64(Priority::Max().q64() - rand(3) * (Uint128{1} << 126));
    }
    t.bytes.assign(40 + rand(rand(30) == 0 ? 500 : 200), 'a' + static_cast<char>(s % 26));
    t.gas_wanted = 1000 + rand(100'000);
    ++hash_counter;
    std::memcpy(t.hash.data(), &hash_counter, sizeof hash_counter);
    return t;
  };
  auto verdict_fn = [&](std::uint64_t salt, std::size_t limit) -> VerdictFn {
    return [salt, limit](const TxInfo& tx, std::size_t visited) {
      if (visited + 1 >= limit) return Verdict::kStop;
      return (tx.hash[0] ^ salt) % 7 == 0 ? Verdict::kSkip : Verdict::kTake;
    };
  };

  for (int op = 0; op < w.ops; ++op) {
    INFO("seed " << w.seed << " op " << op);
    const auto kind = rand(100);
    if (kind < 70) {  // insert
      TxInfo tx;
      if (kind < 4 && !history.empty()) {
        tx = history[rand(history.size())];  // a duplicate, or a re-insert after removal
      } else {
        tx = make_tx(kind >= 60);
      }
      const auto s = std::stoul(tx.sender.substr(6));
      std::uint64_t base = chain_base[s];
      if (rand(25) == 0 && base > 0) --base;  // a caller with an older view
      history.push_back(tx);
      const ModelResult want = model.Insert(tx, base, height, now);
      const InsertResult got = pool.Insert(tx, base, height, now);
      INFO("want ok " << want.ok << " reason " << Name(want.reject) << "; got " << got.message);
      REQUIRE(got.ok == want.ok);
      if (!got.ok) {
        CHECK(got.reject == want.reject);
        if (want.reject == RejectReason::kFull ||
            want.reject == RejectReason::kReplacementUnderpriced) {
          CHECK(got.needed_priority == want.needed);
        }
      } else {
        ++inserts_ok;
        CHECK(got.parked == want.parked);
        if (want.parked) CHECK(got.waiting_for == want.waiting_for);
        parked_inserts += want.parked;
      }
      CHECK((got.replaced ? std::optional<Hash>(got.replaced->tx.hash) : std::nullopt) ==
            want.replaced);
      CHECK(Hashes(got.evicted) == want.evicted);
      CHECK(Hashes(got.promoted) == want.promoted);
      CHECK(Hashes(got.stale) == want.stale);
      evictions += static_cast<int>(want.evicted.size());
      replacements += want.replaced ? 1 : 0;
    } else if (kind < 78) {  // reap with random verdicts
      const std::uint64_t salt = rng();
      const std::size_t limit = 1 + rand(80);
      std::vector<Hash> got;
      const VerdictFn v = verdict_fn(salt, limit);
      pool.Reap([&](const EntryPtr& e) {
        TxInfo seen;  // the verdicts depend on the hash only
        seen.hash = e->tx.hash;
        const Verdict verdict = v(seen, got.size());
        got.push_back(e->tx.hash);
        return verdict;
      });
      CHECK(got == model.Reap(v));
      ++reaps;
    } else if (kind < 78 + w.commit_percent) {  // commit a block reaped by ReapMax
      const std::uint64_t max_bytes = rand(3) == 0 ? 0 : 200 + rand(3000);
      const std::uint64_t max_gas = rand(3) == 0 ? 0 : 50'000 + rand(500'000);
      const std::vector<EntryPtr> block = pool.ReapMax(max_bytes, max_gas);
      const std::vector<Hash> block_hashes = Hashes(block);
      REQUIRE(block_hashes == model.ReapMax(max_bytes, max_gas));
      std::vector<std::pair<std::string, std::uint64_t>> bases;
      for (const EntryPtr& e : block) {
        if (e->tx.unordered) continue;
        const auto s = std::stoul(std::string(e->tx.sender().substr(6)));
        chain_base[s] = std::max(chain_base[s], e->tx.nonce + 1);
      }
      for (int i = 0; i < w.senders; ++i) {
        if (rand(40) == 0) chain_base[static_cast<std::size_t>(i)] += 1 + rand(2);  // elsewhere
        if (rand(10) != 0) {  // the app may leave a sender out
          bases.emplace_back("sender" + std::to_string(i), chain_base[static_cast<std::size_t>(i)]);
        }
      }
      height += 1;
      now += static_cast<std::int64_t>(rand(2'000'000'000ull));
      const auto got = Removals(pool.Update(height, now, block_hashes, bases));
      const auto want = model.Update(height, now, block_hashes, bases);
      CHECK(got == want);
      for (const auto& removal : want) {
        expiries += removal.second == RemoveReason::kExpiredBlocks ||
                    removal.second == RemoveReason::kExpiredTime;
      }
      ++commits;
    } else if (kind < 86) {  // recheck failure of a random tx
      const auto& entries = model.pool();
      if (entries.empty()) continue;
      const Hash h = entries[rand(entries.size())].tx.hash;
      CHECK(pool.Remove(h, RemoveReason::kRecheckFailed) ==
            model.Remove(h, RemoveReason::kRecheckFailed));
    } else if (kind < 88) {  // the app's parked TTL drops a random parked tx
      const std::vector<Hash> parked = model.Parked();
      if (parked.empty()) continue;
      const Hash h = parked[rand(parked.size())];
      CHECK(pool.IsParked(h));
      CHECK(pool.Remove(h, RemoveReason::kExpiredParked) ==
            model.Remove(h, RemoveReason::kExpiredParked));
    } else if (kind < 89) {  // one sender's txs, with their state
      const std::string sender = "sender" + std::to_string(rand(static_cast<std::uint64_t>(w.senders)));
      const SenderView got = pool.SenderTxs(sender);
      const std::vector<std::pair<Hash, bool>> want = model.SenderTxs(sender);
      REQUIRE(got.txs.size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(got.txs[i].entry->tx.hash == want[i].first);
        CHECK(got.txs[i].parked == want[i].second);
      }
    } else if (kind < 91) {  // time passes; a lazy purge
      now += static_cast<std::int64_t>(rand(1'000'000'000ull));
      const auto got = Removals(pool.PurgeExpired(height, now));
      const auto want = model.Purge(height, now);
      CHECK(got == want);
      expiries += static_cast<int>(want.size());
    } else if (kind < 94) {  // the recheck order
      CHECK(Hashes(pool.RecheckOrder()) == model.RecheckOrder());
    } else {  // lookups
      for (int i = 0; i < 5 && !history.empty(); ++i) {
        const TxInfo& t = history[rand(history.size())];
        const auto gr = pool.RemovalReasonOf(t.hash);
        const auto wr = model.ReasonOf(t.hash);
        INFO("got " << (gr ? Name(*gr) : "none") << " want " << (wr ? Name(*wr) : "none")
                    << model.Debug(t.hash));
        CHECK(gr == wr);
        const EntryPtr e = pool.Find(t.hash);
        bool in_model = false;
        for (const Entry& m : model.pool()) in_model |= m.tx.hash == t.hash;
        CHECK((e != nullptr) == in_model);
      }
    }
    CheckStats(pool.stats(), model.stats());
  }
  // The workload must have exercised the rules.
  INFO("seed " << w.seed << ": " << inserts_ok << " inserts, " << evictions << " evictions, "
               << replacements << " replacements, " << expiries << " expiries, " << reaps
               << " reaps, " << commits << " commits");
  CHECK(inserts_ok > w.ops / 5);
  CHECK(evictions > 20);
  CHECK(replacements > 5);
  CHECK(expiries > 5);
  CHECK(parked_inserts > 20);
  CHECK(reaps > 100);
  CHECK(commits > 50);
  return pool.stats();
}

// Every rejection and removal reason happened at least once over the runs.
void CheckCoverage(const std::vector<Stats>& runs) {
  Stats sum;
  for (const Stats& s : runs) {
    for (std::size_t i = 0; i < s.rejected.size(); ++i) sum.rejected[i] += s.rejected[i];
    for (std::size_t i = 0; i < s.removed.size(); ++i) sum.removed[i] += s.removed[i];
  }
  for (std::size_t i = 0; i < sum.rejected.size(); ++i) {
    INFO(Name(static_cast<RejectReason>(i)));
    CHECK(sum.rejected[i] > 0);
  }
  for (std::size_t i = 0; i < sum.removed.size(); ++i) {
    INFO(Name(static_cast<RemoveReason>(i)));
    CHECK(sum.removed[i] > 0);
  }
}

Config ModelConfig() {
  Config c;
  c.max_txs = 60;
  c.max_bytes = 9000;
  c.max_tx_bytes = 400;
  c.max_txs_per_sender = 5;
  c.max_parked_per_sender = 3;
  c.max_parked = 8;
  c.replace_bump_percent = 10;
  c.ttl_blocks = 6;
  c.ttl_nanos = 8'000'000'000;
  c.recent_removals = 50;
  return c;
}

TEST_CASE("mempool model: random operations agree with the reference", "[mempool]") {
  std::vector<Stats> runs;
  for (std::uint64_t seed : {1, 2, 3}) runs.push_back(Run({seed, 3000, 200, ModelConfig(), 4}));
  CheckCoverage(runs);
}

TEST_CASE("mempool model: few senders, tight caps", "[mempool]") {
  Config c = ModelConfig();
  c.max_txs = 25;
  c.max_bytes = 3000;
  c.max_txs_per_sender = 4;
  c.replace_bump_percent = 25;
  std::vector<Stats> runs;
  for (std::uint64_t seed : {11, 12}) runs.push_back(Run({seed, 3000, 12, c, 6}));
  CheckCoverage(runs);
}

TEST_CASE("mempool model: many txs per sender, a larger pool", "[mempool]") {
  // Senders with up to 10 txs (their tx arrays grow past the four inline slots and shrink back)
  // and a frontier of up to 100 entries (three levels of the 8-ary heap).
  Config c = ModelConfig();
  c.max_txs = 100;
  c.max_bytes = 10'000;
  c.max_txs_per_sender = 10;
  c.max_parked_per_sender = 6;
  c.max_parked = 40;
  // (Not every reason happens in this one: the other cases check coverage.)
  for (std::uint64_t seed : {21, 22}) Run({seed, 3000, 40, c, 3});
}

}  // namespace
}  // namespace kairos::mempool
