// PriorityMempool: the indexes and the rules. See priority_mempool.h for the contract and
// mempool/README.md for the design.
//
// Layout. Each entry lives in one allocation: a Node (intrusive hooks, sender pointer), then the
// Entry (with its reference count; the pool holds one reference while the tx is in it), then the
// sender and tx bytes. EntryPtr is an intrusive reference-counted handle to the Entry.
// Indexes, all guarded by the pool's mutex:
//   by_hash    FlatIndex of Node* keyed by the tx hash;
//   senders    FlatIndex of Sender* keyed by the sender bytes; a Sender holds its ordered txs in
//              a vector sorted by nonce (the first `ready` of them are contiguous from its base),
//              its unordered txs in arrival order, and which of its nodes are in heads/frontier;
//   by_arrival intrusive list in arrival order (TTL, recheck order);
//   heads      intrusive red-black tree of the ready "heads" in reap order: each sender's first
//              ready ordered tx, and every unordered tx;
//   frontier   4-ary min-heap, in eviction order (the reverse of reap order), of what may be
//              evicted: each sender's last ordered tx, and every unordered tx. Its items carry
//              their key, and each node knows its position, so a push or an erase is O(log n)
//              in one array.
#include "mempool/priority_mempool.h"

#include <algorithm>
#include <cassert>
#include <new>
#include <atomic>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <unordered_map>

#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>

#include "mempool/flat_index.h"

namespace kairos::mempool {

namespace bi = boost::intrusive;

namespace {

constexpr std::int64_t kNoPriority = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kNotReady = std::numeric_limits<std::size_t>::max();
constexpr std::uint32_t kNotInFrontier = std::numeric_limits<std::uint32_t>::max();

struct Sender;

using TreeHook = bi::set_member_hook<bi::optimize_size<true>>;

// A tx's bookkeeping. One allocation holds the Node, then its Entry, then the sender and tx
// bytes (Entry::tail). The Entry's reference count includes one for the pool while it holds the
// node; the last EntryPtr frees the allocation (detail::DestroyEntry).
struct Node {
  bi::list_member_hook<> by_arrival;
  TreeHook in_heads;
  Sender* sender = nullptr;  // while in the pool

  Entry& entry() { return *reinterpret_cast<Entry*>(reinterpret_cast<char*>(this) + sizeof(Node)); }
  const Entry& entry() const {
    return *reinterpret_cast<const Entry*>(reinterpret_cast<const char*>(this) + sizeof(Node));
  }
  const EntryTx& tx() const { return entry().tx; }
  bool ordered() const { return !entry().tx.unordered; }
};
static_assert(sizeof(Node) % alignof(Entry) == 0);

}  // namespace

namespace detail {
struct NodeAccess {
  static Node* Make(TxInfo& tx) {
    const std::size_t size = sizeof(Node) + sizeof(Entry) + tx.sender.size() + tx.bytes.size();
    char* mem = static_cast<char*>(::operator new(size));
    Node* node = new (mem) Node;
    Entry* e = new (mem + sizeof(Node)) Entry;
    assert(static_cast<const void*>(&e->tx) == static_cast<const void*>(e));
    e->tx.hash = tx.hash;
    e->tx.nonce = tx.nonce;
    e->tx.priority = tx.priority;
    e->tx.gas_wanted = tx.gas_wanted;
    e->tx.unordered = tx.unordered;
    e->tx.sender_len_ = static_cast<std::uint16_t>(tx.sender.size());
    e->tx.bytes_len_ = static_cast<std::uint32_t>(tx.bytes.size());
    e->frontier_pos_ = kNotInFrontier;
    char* tail = mem + sizeof(Node) + sizeof(Entry);
    std::memcpy(tail, tx.sender.data(), tx.sender.size());
    std::memcpy(tail + tx.sender.size(), tx.bytes.data(), tx.bytes.size());
    return node;
  }
  static Node* NodeOf(const Entry* e) {
    return reinterpret_cast<Node*>(
        const_cast<char*>(reinterpret_cast<const char*>(e)) - sizeof(Node));
  }
  // A new reference to the node's entry / the pool's own reference, handed over.
  static EntryPtr Share(const Node* n) { return EntryPtr(&n->entry(), false); }
  static EntryPtr Adopt(const Node* n) { return EntryPtr(&n->entry(), true); }
  static std::atomic<bool>& InPool(const Node* n) {
    return const_cast<Entry&>(n->entry()).tx.in_pool_;
  }
  static std::uint32_t& FrontierPos(Node& n) { return n.entry().frontier_pos_; }
  static void Destroy(const Entry* e) {
    Node* n = NodeOf(e);
    const_cast<Entry*>(e)->~Entry();
    n->~Node();
    ::operator delete(static_cast<void*>(n));
  }
};

void DestroyEntry(const Entry* e) { NodeAccess::Destroy(e); }
}  // namespace detail

namespace {

using detail::NodeAccess;
bool InPool(const Node* n, std::memory_order order) {
  return NodeAccess::InPool(n).load(order);
}
void SetInPool(const Node* n, bool v) { NodeAccess::InPool(n).store(v, std::memory_order_release); }
std::uint32_t& FrontierPos(Node& n) { return NodeAccess::FrontierPos(n); }
EntryPtr Share(const Node* n) { return NodeAccess::Share(n); }

// Reap order: priority descending, then arrival ascending (arrival is unique: a total order).
struct ReapKey {
  std::int64_t priority;
  std::uint64_t arrival;
};
ReapKey KeyOf(const Node& n) { return {n.entry().tx.priority, n.entry().arrival}; }
bool Before(const ReapKey& a, const ReapKey& b) {
  return a.priority != b.priority ? a.priority > b.priority : a.arrival < b.arrival;
}
struct ReapOrder {
  bool operator()(const Node& a, const Node& b) const { return Before(KeyOf(a), KeyOf(b)); }
  bool operator()(const ReapKey& a, const Node& b) const { return Before(a, KeyOf(b)); }
  bool operator()(const Node& a, const ReapKey& b) const { return Before(KeyOf(a), b); }
};

using HeadSet = bi::set<Node, bi::member_hook<Node, TreeHook, &Node::in_heads>,
                        bi::compare<ReapOrder>, bi::constant_time_size<false>>;

// The eviction frontier: a 4-ary min-heap in eviction order (lowest priority first, newest
// first among equals) whose nodes know their position.
class FrontierHeap {
 public:
  struct Item {
    ReapKey key;
    Node* node;
  };
  // Children per item: 4 halves the levels a sift walks (each a cache miss on the item and on the
  // moved node's position at 1M txs) for a few more comparisons within one or two cache lines.
  static constexpr std::size_t kArity = 4;
  // `a` is evicted before `b`: the reverse of reap order.
  static bool EvictsBefore(const ReapKey& a, const ReapKey& b) { return Before(b, a); }

  const std::vector<Item>& items() const { return items_; }
  void Push(Node& n) {
    items_.push_back({KeyOf(n), &n});
    SiftUp(items_.size() - 1);
  }
  void Erase(Node& n) {
    const std::size_t i = FrontierPos(n);
    FrontierPos(n) = kNotInFrontier;
    Item last = items_.back();
    items_.pop_back();
    if (i == items_.size()) return;
    Set(i, last);
    SiftUp(i);
    SiftDown(FrontierPos(*last.node));
  }
  void Clear() {
    for (Item& it : items_) FrontierPos(*it.node) = kNotInFrontier;
    items_.clear();
  }

 private:
  void Set(std::size_t i, const Item& it) {
    items_[i] = it;
    FrontierPos(*it.node) = static_cast<std::uint32_t>(i);
  }
  void SiftUp(std::size_t i) {
    const Item it = items_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!EvictsBefore(it.key, items_[parent].key)) break;
      Set(i, items_[parent]);
      i = parent;
    }
    Set(i, it);
  }
  void SiftDown(std::size_t i) {
    const Item it = items_[i];
    const std::size_t n = items_.size();
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      for (std::size_t c = first + 1; c < std::min(first + kArity, n); ++c) {
        if (EvictsBefore(items_[c].key, items_[child].key)) child = c;
      }
      if (!EvictsBefore(items_[child].key, it.key)) break;
      Set(i, items_[child]);
      i = child;
    }
    Set(i, it);
  }

  std::vector<Item> items_;
};
using ArrivalList =
    bi::list<Node, bi::member_hook<Node, bi::list_member_hook<>, &Node::by_arrival>,
             bi::constant_time_size<false>>;

struct Sender {
  // The sender's address bytes follow the Sender in its allocation (MakeSender).
  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_len}; }
  std::uint64_t id = 0;    // unique over the pool's lifetime (a reap tracks senders by it)
  std::uint64_t base = 0;  // the committed sequence as last told; only moves forward
  std::vector<Node*> ordered;    // by nonce; all >= base
  // Its unordered txs by arrival; allocated on the first (most senders have none).
  std::unique_ptr<std::vector<Node*>> unordered;
  std::uint32_t ready = 0;       // ordered[0..ready) have nonces base, base+1, ...
  std::uint16_t key_len = 0;
  Node* head_linked = nullptr;   // the ordered node this sender has in `heads`
  Node* tail_linked = nullptr;   // the ordered node this sender has in `frontier`
  std::uint64_t mark = 0;        // RecheckOrder's visit stamp

  std::size_t count() const { return ordered.size() + (unordered ? unordered->size() : 0); }
  std::size_t parked() const { return ordered.size() - ready; }
  // Index of `n` in `ordered` when it is ready, else npos.
  std::size_t ReadyIndex(const Node& n) const {
    if (ready == 0) return kNotReady;
    const std::uint64_t i = n.tx().nonce - ordered.front()->tx().nonce;
    return i < ready && ordered[i] == &n ? static_cast<std::size_t>(i) : kNotReady;
  }
  // Checks the last one first: appends and evictions (of tails) are the common cases, and each
  // node looked at is a cache miss in a large pool.
  std::vector<Node*>::const_iterator LowerBound(std::uint64_t nonce) const {
    if (ordered.empty() || ordered.back()->tx().nonce < nonce) return ordered.end();
    if (ordered.back()->tx().nonce == nonce) return ordered.end() - 1;
    return std::lower_bound(ordered.begin(), ordered.end() - 1, nonce,
                            [](const Node* n, std::uint64_t v) { return n->tx().nonce < v; });
  }
  Node* FindNonce(std::uint64_t nonce) const {
    auto it = LowerBound(nonce);
    return it != ordered.end() && (*it)->tx().nonce == nonce ? *it : nullptr;
  }
};

void FreeSender(Sender* s) {
  s->~Sender();
  ::operator delete(static_cast<void*>(s));
}

std::uint64_t Load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct NodeByHash {
  using Key = Hash;
  static const Hash& KeyOf(const Node* n) { return n->tx().hash; }
  static std::uint64_t HashOf(const Key& h) { return Load64(h.data()); }
};
struct SenderByKey {
  using Key = std::string_view;
  static std::string_view KeyOf(const Sender* s) { return s->key(); }
  static std::uint64_t HashOf(std::string_view k) { return std::hash<std::string_view>()(k); }
};

// The reasons of the last `capacity` removals: a ring of records indexed by hash.
class RecentRemovals {
 public:
  RecentRemovals(std::size_t capacity, std::uint64_t seed) : capacity_(capacity), index_(seed) {}

  void Add(const Hash& hash, RemoveReason reason) {
    if (capacity_ == 0) return;
    Record* rec;
    if (ring_.size() < capacity_) {
      rec = &ring_.emplace_back();  // deque: earlier records do not move
    } else {
      rec = &ring_[next_];
      next_ = (next_ + 1) % capacity_;
      if (index_.Find(rec->hash) == rec) index_.Erase(rec->hash);
    }
    index_.Erase(hash);  // an older record of the same tx stays in the ring, unindexed
    rec->hash = hash;
    rec->reason = reason;
    index_.Insert(rec);
  }
  void Forget(const Hash& hash) { index_.Erase(hash); }
  std::optional<RemoveReason> Find(const Hash& hash) const {
    const Record* rec = index_.Find(hash);
    if (rec == nullptr) return std::nullopt;
    return rec->reason;
  }

 private:
  struct Record {
    Hash hash{};
    RemoveReason reason{};
  };
  struct ByHash {
    using Key = Hash;
    static const Hash& KeyOf(const Record* r) { return r->hash; }
    static std::uint64_t HashOf(const Key& h) { return Load64(h.data()); }
  };

  std::size_t capacity_;
  std::deque<Record> ring_;
  std::size_t next_ = 0;  // the slot to overwrite next once the ring is full
  FlatIndex<Record, ByHash> index_;
};

std::uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

// max(ceil(old * (100 + bump) / 100), old + 1), or nullopt when it does not fit in int64.
std::optional<std::int64_t> BumpThreshold(std::int64_t old, std::uint32_t bump_percent) {
  const __int128 scaled = static_cast<__int128>(old) * (100 + static_cast<__int128>(bump_percent));
  __int128 needed = scaled / 100;
  if (scaled % 100 > 0) ++needed;
  needed = std::max(needed, static_cast<__int128>(old) + 1);
  if (needed > kNoPriority) return std::nullopt;
  return static_cast<std::int64_t>(needed);
}

// now - then > ttl, without overflow.
bool Exceeds(std::int64_t now, std::int64_t then, std::int64_t ttl) {
  return static_cast<__int128>(now) - then > ttl;
}

}  // namespace

const char* Name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kDuplicate:
      return "duplicate";
    case RejectReason::kFull:
      return "full";
    case RejectReason::kReplacementUnderpriced:
      return "replacement_underpriced";
    case RejectReason::kSenderCap:
      return "sender_cap";
    case RejectReason::kTooLarge:
      return "too_large";
    case RejectReason::kNonceTooLow:
      return "nonce_too_low";
  }
  return "unknown";
}

const char* Name(RemoveReason reason) {
  switch (reason) {
    case RemoveReason::kIncluded:
      return "included";
    case RemoveReason::kEvicted:
      return "evicted";
    case RemoveReason::kReplaced:
      return "replaced";
    case RemoveReason::kExpiredBlocks:
      return "expired_blocks";
    case RemoveReason::kExpiredTime:
      return "expired_time";
    case RemoveReason::kRecheckFailed:
      return "recheck_failed";
    case RemoveReason::kStaleNonce:
      return "stale_nonce";
  }
  return "unknown";
}

using Removed = std::vector<std::pair<EntryPtr, RemoveReason>>;

struct PriorityMempool::State {
  explicit State(const Config& c)
      : config(c),
        by_hash(RandomSeed()),
        senders(RandomSeed()),
        recent(c.recent_removals, RandomSeed()) {}

  ~State() {
    heads.clear();
    frontier.Clear();
    by_arrival.clear_and_dispose([](Node* n) {
      SetInPool(n, false);
      n->sender = nullptr;
      EntryPtr release = NodeAccess::Adopt(n);  // frees the node unless someone still holds it
    });
    senders.ForEach([](Sender* s) { FreeSender(s); });
  }

  const Config& config;
  FlatIndex<Node, NodeByHash> by_hash;
  FlatIndex<Sender, SenderByKey> senders;
  ArrivalList by_arrival;
  HeadSet heads;
  FrontierHeap frontier;
  RecentRemovals recent;
  std::size_t bytes = 0;
  std::size_t size = 0;
  std::size_t parked = 0;
  std::uint64_t next_arrival = 1;
  std::uint64_t next_sender_id = 1;
  std::uint64_t mark = 0;
  std::int64_t last_height = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_time = std::numeric_limits<std::int64_t>::min();
  std::array<std::uint64_t, 6> rejected{};
  std::array<std::uint64_t, 7> removed{};

  // --- senders ---

  Sender* GetOrCreateSender(std::string_view key) {
    if (Sender* s = senders.Find(key)) return s;
    char* mem = static_cast<char*>(::operator new(sizeof(Sender) + key.size()));
    auto* s = new (mem) Sender;
    s->key_len = static_cast<std::uint16_t>(key.size());  // Insert rejects longer addresses
    std::memcpy(mem + sizeof(Sender), key.data(), key.size());
    s->id = next_sender_id++;
    senders.Insert(s);
    return s;
  }

  void DropIfEmpty(Sender* s) {
    if (s->count() != 0) return;
    senders.Erase(s->key());
    FreeSender(s);
  }

  // Puts the sender's first ready ordered node in `heads` and its last ordered node in
  // `frontier`, taking out the ones it had there before.
  void Relink(Sender& s) {
    Node* head = s.ready > 0 ? s.ordered.front() : nullptr;
    if (s.head_linked != head) {
      if (s.head_linked != nullptr) heads.erase(heads.iterator_to(*s.head_linked));
      if (head != nullptr) heads.insert(*head);
      s.head_linked = head;
    }
    Node* tail = s.ordered.empty() ? nullptr : s.ordered.back();
    if (s.tail_linked != tail) {
      if (s.tail_linked != nullptr) frontier.Erase(*s.tail_linked);
      if (tail != nullptr) frontier.Push(*tail);
      s.tail_linked = tail;
    }
  }

  // After an insert at position `ready`: the prefix before it is unchanged, so the ready prefix
  // only grows from there. The caller keeps `parked` right.
  static void ExtendReady(Sender& s) {
    std::size_t r = s.ready;
    while (r < s.ordered.size() && s.ordered[r]->tx().nonce - s.base == r) ++r;
    s.ready = static_cast<std::uint32_t>(r);
  }

  // Re-derives the ready prefix from the base. O(s). The caller keeps `parked` right.
  static void RecomputeReady(Sender& s) {
    std::size_t r = 0;
    while (r < s.ordered.size() && s.ordered[r]->tx().nonce - s.base == r) ++r;
    s.ready = r;
  }

  // --- removal ---

  // Takes `n` out of every index; its EntryPtr goes to `out`. Leaves an empty sender in place
  // (the caller calls DropIfEmpty when it no longer needs it).
  void RemoveNode(Node* n, RemoveReason reason, Removed& out) {
    Sender& s = *n->sender;
    if (n->ordered()) {
      parked -= s.parked();
      auto it = s.LowerBound(n->tx().nonce);
      const auto pos = static_cast<std::size_t>(it - s.ordered.begin());
      s.ordered.erase(it);
      if (pos < s.ready) s.ready = pos;  // the later ones are parked now
      parked += s.parked();
      Relink(s);
    } else {
      s.unordered->erase(std::find(s.unordered->begin(), s.unordered->end(), n));
      if (s.unordered->empty()) s.unordered.reset();
      heads.erase(heads.iterator_to(*n));
      frontier.Erase(*n);
    }
    by_arrival.erase(by_arrival.iterator_to(*n));
    by_hash.Erase(n->tx().hash);
    --size;
    bytes -= n->tx().bytes().size();
    n->sender = nullptr;
    SetInPool(n, false);
    ++removed[static_cast<std::size_t>(reason)];
    recent.Add(n->tx().hash, reason);
    out.emplace_back(NodeAccess::Adopt(n), reason);
  }

  // Moves the sender's base up to `base` (never down), removing its ordered txs below it.
  void AdvanceBase(Sender& s, std::uint64_t base, Removed& out) {
    if (base <= s.base) return;
    s.base = base;
    while (!s.ordered.empty() && s.ordered.front()->tx().nonce < base) {
      RemoveNode(s.ordered.front(), RemoveReason::kStaleNonce, out);
    }
    parked -= s.parked();
    RecomputeReady(s);
    parked += s.parked();
    Relink(s);
  }

  void PurgeExpired(std::int64_t height, std::int64_t now, Removed& out) {
    const std::int64_t ttl_blocks = config.ttl_blocks;
    const std::int64_t ttl_nanos = config.ttl_nanos;
    if (ttl_blocks <= 0 && ttl_nanos <= 0) return;
    // Arrival order is also height and time order (Insert clamps both), so the expired
    // entries are a prefix of the list.
    while (!by_arrival.empty()) {
      Node& n = by_arrival.front();
      RemoveReason reason;
      if (ttl_blocks > 0 && Exceeds(height, n.entry().arrival_height, ttl_blocks)) {
        reason = RemoveReason::kExpiredBlocks;
      } else if (ttl_nanos > 0 && Exceeds(now, n.entry().arrival_time, ttl_nanos)) {
        reason = RemoveReason::kExpiredTime;
      } else {
        break;
      }
      Sender* s = n.sender;
      RemoveNode(&n, reason, out);
      DropIfEmpty(s);
    }
  }

  // --- eviction planning ---

  struct EvictionPlan {
    std::vector<Node*> victims;  // in eviction order
    bool fits = false;           // enough room once the victims are gone
    std::int64_t needed = 0;     // when !fits: the least priority that would have been accepted
  };

  // Which entries an insert of (`sender`, `ordered`, `nonce`, `priority`) must evict to free
  // `free_count` txs and `free_bytes` bytes. Enumerates the frontier heap in order (a local heap
  // of its positions: the root, then the children of each one taken) merged with a local heap
  // of the predecessors that become sender tails as their successors go, so it sees
  // exactly the order in which evictions would happen, without changing anything. Skips
  // `replaced` and the new tx's own predecessors. It continues past the first entry that is not
  // cheaper than the new tx only to tell the least priority that would have been enough.
  // O(k log k + log n) for k entries walked: about the number of evictions needed.
  EvictionPlan PlanEviction(const Sender* sender, bool ordered, std::uint64_t nonce,
                            std::int64_t priority, const Node* replaced, std::size_t free_count,
                            std::size_t free_bytes) {
    EvictionPlan plan;
    const std::vector<FrontierHeap::Item>& items = frontier.items();
    // std heaps put the greatest first: "greater" here is "evicted earlier".
    auto pos_later = [&](std::size_t a, std::size_t b) {
      return FrontierHeap::EvictsBefore(items[b].key, items[a].key);
    };
    std::vector<std::size_t> positions;  // of the frontier heap, not yet taken
    if (!items.empty()) positions.push_back(0);
    struct Cand {
      ReapKey key;
      Node* node;
      std::size_t index;  // in its sender's `ordered` (ordered nodes only)
    };
    auto cand_later = [](const Cand& a, const Cand& b) {
      return FrontierHeap::EvictsBefore(b.key, a.key);
    };
    std::vector<Cand> preds;  // predecessors that became tails
    std::size_t freed_count = 0, freed_bytes = 0;
    std::int64_t max_victim = std::numeric_limits<std::int64_t>::min();
    bool blocked = false;
    while (freed_count < free_count || freed_bytes < free_bytes) {
      Cand c;
      if (!positions.empty() &&
          (preds.empty() ||
           FrontierHeap::EvictsBefore(items[positions.front()].key, preds.front().key))) {
        std::pop_heap(positions.begin(), positions.end(), pos_later);
        const std::size_t pos = positions.back();
        positions.pop_back();
        for (std::size_t child = FrontierHeap::kArity * pos + 1;
             child <= FrontierHeap::kArity * pos + FrontierHeap::kArity && child < items.size();
             ++child) {
          positions.push_back(child);
          std::push_heap(positions.begin(), positions.end(), pos_later);
        }
        Node* n = items[pos].node;
        c = {items[pos].key, n, n->ordered() ? n->sender->ordered.size() - 1 : 0};
      } else if (!preds.empty()) {
        std::pop_heap(preds.begin(), preds.end(), cand_later);
        c = preds.back();
        preds.pop_back();
      } else {
        break;  // nothing else may be evicted
      }
      Node* n = c.node;
      if (n == replaced) continue;  // goes anyway; its predecessors are the new tx's
      if (ordered && n->ordered() && n->sender == sender && n->tx().nonce < nonce) continue;
      if (n->tx().priority >= priority) blocked = true;
      max_victim = std::max(max_victim, n->tx().priority);
      plan.victims.push_back(n);
      ++freed_count;
      freed_bytes += n->tx().bytes().size();
      if (n->ordered() && c.index > 0) {
        Node* pred = n->sender->ordered[c.index - 1];
        preds.push_back({KeyOf(*pred), pred, c.index - 1});
        std::push_heap(preds.begin(), preds.end(), cand_later);
      }
    }
    const bool enough = freed_count >= free_count && freed_bytes >= free_bytes;
    plan.fits = enough && !blocked;
    if (!plan.fits) {
      plan.needed = enough && max_victim < kNoPriority ? max_victim + 1 : kNoPriority;
      plan.victims.clear();
    }
    return plan;
  }

  // --- reaping ---

  struct ReapSender {  // one reap's view of a sender's ordered txs
    std::uint64_t last_nonce = 0;  // the last nonce put in a chunk
    bool any = false;
    bool dead = false;  // skipped, or a candidate vanished: offer nothing more of this sender
  };
  struct Candidate {
    ReapKey key;     // a copy, so the heap compares without touching the node
    EntryPtr entry;  // keeps `node` alive
    Node* node;
    ReapSender* rs;  // null for unordered txs
  };
  struct ReapCursor {
    bool started = false;
    ReapKey last{};               // position in `heads`
    std::vector<Candidate> heap;  // successors unlocked by (speculatively) taken txs
    std::deque<ReapSender> states;  // stable addresses
    std::unordered_map<std::uint64_t, ReapSender*> by_sender_id;  // looked up once per run

    ReapSender* StateOf(std::uint64_t sender_id) {
      ReapSender*& rs = by_sender_id[sender_id];
      if (rs == nullptr) rs = &states.emplace_back();
      return rs;
    }
  };
  static bool CandidateLater(const Candidate& a, const Candidate& b) {
    return Before(b.key, a.key);
  }

  // Appends up to `n` candidates in reap order, assuming every one of them will be taken (a
  // kSkip only removes the sender's later txs, which does not change the order of the others).
  void FillChunk(ReapCursor& cur, std::size_t n, std::vector<Candidate>& out) {
    auto it = cur.started ? heads.upper_bound(cur.last, ReapOrder()) : heads.begin();
    while (out.size() < n) {
      // Successors in the heap that vanished or were parked meanwhile end their sender's run.
      while (!cur.heap.empty()) {
        const Candidate& top = cur.heap.front();
        if (!top.rs->dead && InPool(top.node, std::memory_order_relaxed) &&
            top.node->sender->ReadyIndex(*top.node) != kNotReady) {
          break;
        }
        top.rs->dead = true;
        std::pop_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
        cur.heap.pop_back();
      }
      Candidate c;
      if (it != heads.end() &&
          (cur.heap.empty() || Before(KeyOf(*it), cur.heap.front().key))) {
        Node* node = &*it++;
        cur.last = KeyOf(*node);
        cur.started = true;
        c = {cur.last, Share(node), node,
             node->ordered() ? cur.StateOf(node->sender->id) : nullptr};
      } else if (!cur.heap.empty()) {
        std::pop_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
        c = std::move(cur.heap.back());
        cur.heap.pop_back();
      } else {
        return;
      }
      if (ReapSender* rs = c.rs) {
        // After concurrent changes the walk of `heads` can meet a sender again.
        if (rs->dead || (rs->any && c.node->tx().nonce <= rs->last_nonce)) continue;
        rs->any = true;
        rs->last_nonce = c.node->tx().nonce;
        const Sender& s = *c.node->sender;
        const std::size_t i = s.ReadyIndex(*c.node);
        if (i != kNotReady && i + 1 < s.ready) {
          Node* next = s.ordered[i + 1];
          cur.heap.push_back({KeyOf(*next), Share(next), next, rs});
          std::push_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
        }
      }
      out.push_back(std::move(c));
    }
  }
};

PriorityMempool::PriorityMempool(Config config)
    : config_(config), state_(std::make_unique<State>(config_)) {}

PriorityMempool::~PriorityMempool() = default;

InsertResult PriorityMempool::Insert(TxInfo tx, std::uint64_t base_nonce, std::int64_t height,
                                     std::int64_t now_nanos) {
  InsertResult r;
  Removed removed;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  State& st = *state_;
  auto reject = [&](RejectReason reason, std::string message) {
    r.ok = false;
    r.reject = reason;
    r.message = std::move(message);
    ++st.rejected[static_cast<std::size_t>(reason)];
    return std::move(r);
  };
  const std::size_t tx_bytes = tx.bytes.size();
  if (tx_bytes > config_.max_tx_bytes) {
    return reject(RejectReason::kTooLarge, "tx too large: " + std::to_string(tx_bytes) +
                                               " bytes, the mempool accepts at most " +
                                               std::to_string(config_.max_tx_bytes));
  }
  if (tx_bytes > std::numeric_limits<std::uint32_t>::max() ||
      tx.sender.size() > std::numeric_limits<std::uint16_t>::max()) {  // what an Entry can hold
    return reject(RejectReason::kTooLarge, "tx or sender address too large for the mempool");
  }
  const bool ordered = !tx.unordered;
  Sender* sender = st.senders.Find(tx.sender);
  std::vector<Node*> parked_before;  // for InsertResult::promoted
  std::uint64_t base = ordered ? base_nonce : 0;
  if (sender != nullptr && ordered) {
    parked_before.assign(sender->ordered.begin() + static_cast<std::ptrdiff_t>(sender->ready),
                         sender->ordered.end());
    if (base_nonce > sender->base) {
      st.AdvanceBase(*sender, base_nonce, removed);
      for (auto& [e, reason] : removed) r.stale.push_back(e);
      if (sender->count() == 0) {
        st.DropIfEmpty(sender);
        sender = nullptr;
      }
    }
    if (sender != nullptr) base = std::max(base, sender->base);
  }
  auto collect_promoted = [&](Sender* s) {
    if (s == nullptr) return;
    for (Node* n : parked_before) {
      if (InPool(n, std::memory_order_relaxed) && n->sender == s &&
          s->ReadyIndex(*n) != kNotReady) {
        r.promoted.push_back(Share(n));
      }
    }
  };

  if (st.by_hash.Find(tx.hash) != nullptr) {
    collect_promoted(sender);
    return reject(RejectReason::kDuplicate, "tx already in mempool");
  }
  if (ordered && tx.nonce < base) {
    collect_promoted(sender);
    return reject(RejectReason::kNonceTooLow,
                  "sequence " + std::to_string(tx.nonce) + " is below the account's sequence " +
                      std::to_string(base));
  }
  Node* replaced = ordered && sender != nullptr ? sender->FindNonce(tx.nonce) : nullptr;
  if (replaced != nullptr) {
    const std::int64_t old = replaced->tx().priority;
    const std::optional<std::int64_t> needed =
        BumpThreshold(old, config_.replace_bump_percent);
    if (!needed || tx.priority < *needed) {
      collect_promoted(sender);
      r.needed_priority = needed.value_or(kNoPriority);
      return reject(RejectReason::kReplacementUnderpriced,
                    needed ? "replacement of sequence " + std::to_string(tx.nonce) +
                                 " needs priority >= " + std::to_string(*needed) + " (+" +
                                 std::to_string(config_.replace_bump_percent) + "%), got " +
                                 std::to_string(tx.priority)
                           : "the tx with sequence " + std::to_string(tx.nonce) +
                                 " has the highest priority possible and cannot be replaced");
    }
  } else if (const std::size_t count = sender != nullptr ? sender->count() : 0;
             count >= config_.max_txs_per_sender) {
    collect_promoted(sender);
    return reject(RejectReason::kSenderCap,
                  "sender has " + std::to_string(count) +
                      " txs in the mempool, the limit is " +
                      std::to_string(config_.max_txs_per_sender));
  }

  // Capacity, decided before anything changes.
  const std::size_t replaced_bytes = replaced ? replaced->tx().bytes().size() : 0;
  const std::size_t count_after = st.size - (replaced ? 1 : 0) + 1;
  const std::size_t bytes_after = st.bytes - replaced_bytes + tx_bytes;
  State::EvictionPlan plan;
  plan.fits = true;
  if (tx_bytes > config_.max_bytes) {
    plan.fits = false;
    plan.needed = kNoPriority;
  } else if (count_after > config_.max_txs || bytes_after > config_.max_bytes) {
    plan = st.PlanEviction(sender, ordered, tx.nonce, tx.priority, replaced,
                           count_after > config_.max_txs ? count_after - config_.max_txs : 0,
                           bytes_after > config_.max_bytes ? bytes_after - config_.max_bytes : 0);
  }
  if (!plan.fits) {
    collect_promoted(sender);
    r.needed_priority = plan.needed;
    std::string message = "mempool is full: " + std::to_string(st.size) + " txs, " +
                          std::to_string(st.bytes) + " bytes; ";
    if (plan.needed == kNoPriority) {
      message += "no priority would make room for this tx (" + std::to_string(tx_bytes) +
                 " bytes)";
    } else {
      message += "a tx needs priority >= " + std::to_string(plan.needed) +
                 " to evict (this one has " + std::to_string(tx.priority) + ")";
    }
    return reject(RejectReason::kFull, std::move(message));
  }

  // Accepted: replace, evict, insert.
  const std::size_t stale_count = removed.size();
  if (replaced != nullptr) st.RemoveNode(replaced, RemoveReason::kReplaced, removed);
  for (Node* victim : plan.victims) {
    Sender* vs = victim->sender;
    st.RemoveNode(victim, RemoveReason::kEvicted, removed);
    st.DropIfEmpty(vs);  // never the new tx's sender while it has a predecessor or `replaced`
  }
  for (std::size_t i = stale_count; i < removed.size(); ++i) {
    if (removed[i].second == RemoveReason::kReplaced) {
      r.replaced = removed[i].first;
    } else {
      r.evicted.push_back(removed[i].first);
    }
  }
  sender = st.GetOrCreateSender(tx.sender);
  if (ordered) sender->base = std::max(sender->base, base);

  Node* node = NodeAccess::Make(tx);  // the pool's reference: handed over when it leaves
  node->entry().arrival = st.next_arrival++;
  st.last_height = std::max(st.last_height, height);
  st.last_time = std::max(st.last_time, now_nanos);
  node->entry().arrival_height = st.last_height;
  node->entry().arrival_time = st.last_time;
  node->sender = sender;
  SetInPool(node, true);
  st.by_hash.Insert(node);
  st.by_arrival.push_back(*node);
  ++st.size;
  st.bytes += tx_bytes;
  st.recent.Forget(node->tx().hash);
  if (ordered) {
    Sender& s = *sender;
    st.parked -= s.parked();
    auto pos = s.ordered.insert(s.LowerBound(node->tx().nonce), node);
    if (static_cast<std::size_t>(pos - s.ordered.begin()) == s.ready) st.ExtendReady(s);
    st.parked += s.parked();
    st.Relink(s);
    r.parked = s.ReadyIndex(*node) == kNotReady;
  } else {
    if (!sender->unordered) sender->unordered = std::make_unique<std::vector<Node*>>();
    sender->unordered->push_back(node);
    st.heads.insert(*node);
    st.frontier.Push(*node);
  }
  collect_promoted(sender);
  r.ok = true;
  return r;
}

EntryPtr PriorityMempool::Find(const Hash& hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = state_->by_hash.Find(hash);
  return n ? Share(n) : nullptr;
}

EntryPtr PriorityMempool::FindOrdered(std::string_view sender, std::uint64_t nonce) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Sender* s = state_->senders.Find(sender);
  const Node* n = s ? s->FindNonce(nonce) : nullptr;
  return n ? Share(n) : nullptr;
}

bool PriorityMempool::IsParked(const Hash& hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = state_->by_hash.Find(hash);
  return n != nullptr && n->ordered() && n->sender->ReadyIndex(*n) == kNotReady;
}

bool PriorityMempool::Remove(const Hash& hash, RemoveReason reason) {
  Removed removed;
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = state_->by_hash.Find(hash);
  if (n == nullptr) return false;
  Sender* s = n->sender;
  state_->RemoveNode(n, reason, removed);
  state_->DropIfEmpty(s);
  return true;
}

std::vector<std::pair<EntryPtr, RemoveReason>> PriorityMempool::Update(
    std::int64_t height, std::int64_t now_nanos, const std::vector<Hash>& included,
    const std::vector<std::pair<std::string, std::uint64_t>>& base_nonces) {
  Removed out;
  std::lock_guard<std::mutex> lock(mu_);
  State& st = *state_;
  for (const Hash& h : included) {
    if (Node* n = st.by_hash.Find(h)) {
      Sender* s = n->sender;
      st.RemoveNode(n, RemoveReason::kIncluded, out);
      st.DropIfEmpty(s);
    }
  }
  for (const auto& [key, base] : base_nonces) {
    if (Sender* s = st.senders.Find(key)) {
      st.AdvanceBase(*s, base, out);
      st.DropIfEmpty(s);
    }
  }
  st.PurgeExpired(height, now_nanos, out);
  return out;
}

std::vector<std::pair<EntryPtr, RemoveReason>> PriorityMempool::PurgeExpired(
    std::int64_t height, std::int64_t now_nanos) {
  Removed out;
  std::lock_guard<std::mutex> lock(mu_);
  state_->PurgeExpired(height, now_nanos, out);
  return out;
}

void PriorityMempool::Reap(const std::function<Verdict(const EntryPtr&)>& visit) const {
  State::ReapCursor cur;
  cur.by_sender_id.reserve(256);
  std::vector<State::Candidate> chunk;
  std::size_t chunk_size = 16;
  for (;;) {
    chunk.clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_->FillChunk(cur, chunk_size, chunk);
    }
    if (chunk.empty()) return;
    for (const State::Candidate& c : chunk) {
      State::ReapSender* rs = c.rs;
      if (rs != nullptr && rs->dead) continue;
      if (!InPool(c.node, std::memory_order_acquire)) {  // removed meanwhile
        if (rs != nullptr) rs->dead = true;
        continue;
      }
      const Verdict v = visit(c.entry);
      if (v == Verdict::kStop) return;
      if (v == Verdict::kSkip && rs != nullptr) rs->dead = true;
    }
    chunk_size = std::min<std::size_t>(chunk_size * 2, 256);
  }
}

std::vector<EntryPtr> PriorityMempool::ReapMax(std::uint64_t max_bytes,
                                               std::uint64_t max_gas) const {
  std::vector<EntryPtr> out;
  std::uint64_t bytes = 0, gas = 0;
  int misses = 0;
  Reap([&](const EntryPtr& e) {
    const std::uint64_t size = e->tx.bytes().size();
    const std::uint64_t g = e->tx.gas_wanted;
    if ((max_bytes != 0 && size > max_bytes - bytes) || (max_gas != 0 && g > max_gas - gas)) {
      return ++misses >= kReapMaxSkips ? Verdict::kStop : Verdict::kSkip;
    }
    misses = 0;
    bytes += size;
    gas += g;
    out.push_back(e);
    return Verdict::kTake;
  });
  return out;
}

std::vector<EntryPtr> PriorityMempool::RecheckOrder() const {
  std::vector<EntryPtr> out;
  std::lock_guard<std::mutex> lock(mu_);
  State& st = *state_;
  out.reserve(st.size);
  const std::uint64_t mark = ++st.mark;
  for (const Node& n : st.by_arrival) {
    Sender& s = *n.sender;
    if (s.mark == mark) continue;
    s.mark = mark;
    for (const Node* o : s.ordered) out.push_back(Share(o));
    if (s.unordered) {
      for (const Node* u : *s.unordered) out.push_back(Share(u));
    }
  }
  return out;
}

std::optional<RemoveReason> PriorityMempool::RemovalReasonOf(const Hash& hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->recent.Find(hash);
}

Stats PriorityMempool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  const State& st = *state_;
  Stats s;
  s.size = st.size;
  s.bytes = st.bytes;
  s.senders = st.senders.size();
  s.parked = st.parked;
  s.rejected = st.rejected;
  s.removed = st.removed;
  return s;
}

}  // namespace kairos::mempool
