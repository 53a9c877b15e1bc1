// PriorityMempool: the indexes and the rules. See priority_mempool.h for the contract and
// mempool/README.md for the design.
//
// Layout. Each entry lives in one allocation: a SingleLink (its hook in `singles`) for an
// unordered tx and for the tx of a lone sender, then a Node (a counted reference to its Sender
// record, or null), then the Entry (with its reference count; the pool holds one reference while
// the tx is in it), then the tx bytes, then for a lone sender's tx its address (and, TTL on, its
// link to the previous node of the lone list). EntryPtr is an intrusive reference-counted handle to the Entry. A sender with
// one tx that arrived ready is "lone": it has no Sender record, the `senders` index points at its
// node, and its base is implied by the tx. A second tx gives it a record (Split), which copies
// the address and takes the first tx over; the record is reference counted (the pool's sender
// index holds one reference, every node one), so `tx.sender()` stays valid for as long as the
// entry is held, whichever holds the address. A sender never goes back to lone.
// Indexes, all guarded by the pool's mutex:
//   by_hash    FlatIndex of Node* keyed by the tx hash;
//   senders    FlatIndex keyed by the sender bytes, of Sender* or (low bit set) a lone sender's
//              Node*; a Sender (one allocation with its address inline) holds its txs in one
//              small array, ordered ones by nonce (the first `ready` of them are contiguous from
//              its base) then unordered ones by arrival, four inline; its own HeadLink for its
//              first ready ordered tx; and the frontier handle of its last ordered tx;
//   heads      intrusive red-black tree of HeadLinks in reap order: each record's first ready
//              ordered tx (the link is in the Sender);
//   singles    intrusive red-black tree of SingleLinks in reap order (in front of their nodes):
//              every unordered tx and every lone sender's tx, each both a head and a tail, so
//              one tree serves the reap (from the front) and eviction (from the back);
//   frontier   8-ary min-heap (indexed_heap.h), in eviction order (parked first, then the reverse
//              of reap order), of each record's last ordered tx. Keys (24 bytes: priority,
//              arrival, parked or not) and 32-bit handles are in parallel arrays laid out so that
//              the eight children of an item fill three adjacent cache lines;
//              positions and owners are dense arrays indexed by handle, so a sift touches only
//              those arrays, never a node. What may be evicted is the frontier and `singles`;
//   expiry     (only when a TTL is configured) 8-ary min-heap of the sender records by the
//              arrival of their oldest tx;
//   lone list  (only when a TTL is configured) the lone senders' nodes in arrival order, doubly
//              linked: next in the node's word (tagged), prev after the address. A lone tx is
//              the newest in the pool when it arrives, so it is appended; it leaves in O(1).
//              The globally oldest tx is the older of the list's first and the heap top's
//              oldest, so expired txs come out in arrival order.
#include "mempool/priority_mempool.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstring>
#include <deque>
#include <limits>
#include <new>
#include <random>
#include <span>
#include <unordered_map>

#include <boost/intrusive/set.hpp>

#include "mempool/flat_index.h"
#include "mempool/indexed_heap.h"

namespace kairos::mempool {

namespace bi = boost::intrusive;

namespace {

constexpr std::size_t kNotReady = std::numeric_limits<std::size_t>::max();
constexpr std::uint32_t kNoHandle = std::numeric_limits<std::uint32_t>::max();

struct Sender;

using TreeHook = bi::set_member_hook<bi::optimize_size<true>>;

// A tx's bookkeeping. One allocation holds, in this order: a SingleLink (unordered txs, and the
// tx of a lone sender), the Node, its Entry, the tx bytes (Entry::tail), and for the tx of a lone
// sender its address and (TTL on) its lone-list link to the previous node. The Entry's reference count includes one for
// the pool while it holds the node; the last EntryPtr frees the allocation (detail::DestroyEntry).
//
// A lone sender is a sender with one tx, made when its first tx arrived ready (an ordered tx at
// its base, or an unordered tx): it has no Sender record; the `senders` index points at the node
// itself, which holds the address, and its base is implied (the nonce of its ordered tx, 0 for an
// unordered one). A second tx (or a base that must be remembered) makes a Sender record for it
// (Split); a sender never goes back to lone: the record lives until its last tx leaves.
struct Node {
  // The sender's record (a counted reference), or null while the node is its lone sender's.
  Sender* record() const {
    const std::uintptr_t w = word_.load(std::memory_order_relaxed);
    return (w & 1) != 0 ? nullptr : reinterpret_cast<Sender*>(w);
  }
  void set_record(Sender* s) {
    word_.store(reinterpret_cast<std::uintptr_t>(s), std::memory_order_relaxed);
  }
  // TTL on, a lone sender's node in the pool: the next newer lone node in arrival order, or null
  // (the lone list, State::lone_oldest; the word is tagged with its low bit, so record() is
  // null).
  Node* next_lone() const {
    return reinterpret_cast<Node*>(word_.load(std::memory_order_relaxed) & ~std::uintptr_t{1});
  }
  void set_next_lone(Node* n) {
    word_.store(reinterpret_cast<std::uintptr_t>(n) | 1, std::memory_order_relaxed);
  }

  Entry& entry() { return *reinterpret_cast<Entry*>(reinterpret_cast<char*>(this) + sizeof(Node)); }
  const Entry& entry() const {
    return *reinterpret_cast<const Entry*>(reinterpret_cast<const char*>(this) + sizeof(Node));
  }
  const EntryTx& tx() const { return entry().tx; }
  bool ordered() const { return !entry().tx.unordered; }
  bool lone() const { return record() == nullptr; }

 private:
  // A Sender* (8-byte aligned), or a tagged next_lone link. Atomic because tx.sender() reads
  // it without the pool's mutex (from an EntryPtr held outside) while the pool may change it.
  std::atomic<std::uintptr_t> word_{0};
};
static_assert(sizeof(Node) == sizeof(void*));
static_assert(sizeof(Node) % alignof(Entry) == 0);

// A member of `heads`, in the Sender record: the hook and the sender's first ready ordered tx.
struct HeadLink {
  TreeHook hook;
  Node* node = nullptr;  // null: not in `heads`
};

// A member of `singles`, in front of the node it stands for: every unordered tx and the ordered tx
// of every lone sender (each is both its sender's head and its tail).
struct SingleLink {
  TreeHook hook;
};
static_assert(sizeof(SingleLink) % alignof(Node) == 0);
SingleLink& LinkOf(Node* n) { return *(reinterpret_cast<SingleLink*>(n) - 1); }
Node* NodeOfLink(const SingleLink& l) {
  return reinterpret_cast<Node*>(const_cast<SingleLink*>(&l) + 1);
}

// A sender's txs: its ordered ones by nonce, then its unordered ones by arrival, in one array
// with room for four inline (most senders have at most a few txs; no allocation until the
// fifth). The capacity is not stored: it is 4 up to 4 txs, else the next power of two.
class SenderTxs {
 public:
  SenderTxs() {}  // NOLINT(modernize-use-equals-default): the union is left uninitialised
  SenderTxs(const SenderTxs&) = delete;
  SenderTxs& operator=(const SenderTxs&) = delete;
  ~SenderTxs() {
    if (size_ > kInline) delete[] heap_;
  }
  std::span<Node* const> ordered() const { return {data(), n_ordered_}; }
  std::span<Node* const> unordered() const { return {data() + n_ordered_, size_ - n_ordered_}; }
  std::size_t size() const { return size_; }
  void InsertOrdered(std::size_t i, Node* v) {
    Insert(i, v);
    ++n_ordered_;
  }
  void EraseOrdered(std::size_t i) {
    Erase(i);
    --n_ordered_;
  }
  void PushUnordered(Node* v) { Insert(size_, v); }
  void EraseUnordered(const Node* v) {
    Node* const* d = data();
    Erase(static_cast<std::size_t>(std::find(d + n_ordered_, d + size_, v) - d));
  }

 private:
  static constexpr std::uint32_t kInline = 4;
  static std::uint32_t Capacity(std::uint32_t size) {
    return size <= kInline ? kInline : std::bit_ceil(size);
  }
  Node** data() { return size_ > kInline ? heap_ : inline_; }
  Node* const* data() const { return size_ > kInline ? heap_ : inline_; }
  void Insert(std::size_t i, Node* v) {
    if (size_ == Capacity(size_)) {  // full: move to a heap array twice as large
      Node** p = new Node*[2 * static_cast<std::size_t>(Capacity(size_))];
      std::memcpy(p, data(), size_ * sizeof(Node*));
      if (size_ > kInline) delete[] heap_;
      heap_ = p;
    }
    ++size_;  // data() is the heap array from here when it holds five or more
    Node** d = data();
    std::memmove(d + i + 1, d + i, (size_ - 1 - i) * sizeof(Node*));
    d[i] = v;
  }
  void Erase(std::size_t i) {
    Node** d = data();
    std::memmove(d + i, d + i + 1, (size_ - i - 1) * sizeof(Node*));
    if (size_ == kInline + 1) {  // back to four: inline again
      Node** heap = heap_;
      std::memcpy(inline_, heap, kInline * sizeof(Node*));
      delete[] heap;
    }
    --size_;
  }

  std::uint32_t size_ = 0;
  std::uint32_t n_ordered_ = 0;
  union {
    Node* inline_[kInline];
    Node** heap_;
  };
};

// A sender's record: 99 bytes and its address bytes (malloc's 128-byte chunk for a 20-byte
// address).
static_assert(sizeof(void*) != 8 || sizeof(SenderTxs) == 40);
struct Sender {
  std::string_view key() const { return {KeyBytes(), key_len}; }
  std::span<Node* const> ordered() const { return txs.ordered(); }
  std::span<Node* const> unordered() const { return txs.unordered(); }

  HeadLink head;  // head.node: the ordered node this sender has in `heads`
  std::uint64_t base = 0;  // the committed sequence as last told; only moves forward
  // One for the pool's sender index while the sender is in it, one per node made for it.
  std::atomic<std::uint32_t> refs{1};
  std::uint32_t ready = 0;          // ordered()[0..ready) have nonces base, base+1, ...
  std::uint32_t expiry = kNoHandle;  // its handle in the expiry heap (TTL on, txs present)
  std::uint32_t tail_handle = kNoHandle;  // the handle of its ordered node in `frontier`
  SenderTxs txs;  // ordered by nonce (all >= base), then unordered by arrival
  std::uint16_t key_len = 0;
  // Whether its frontier item's key says ready (all its ordered txs are): Relink re-keys the item
  // when that changes, without reading the heap.
  bool tail_ready = false;
  // The address: its first bytes fill what would be the struct's tail padding, the rest follow
  // the struct in the same allocation (MakeSender).
  static constexpr std::size_t kKeyHead = 5;
  char key_head[kKeyHead];
  const char* KeyBytes() const { return key_head; }

  std::size_t count() const { return txs.size(); }
  std::size_t parked() const { return ordered().size() - ready; }
  // Index of `n` in `ordered` when it is ready, else npos. (ordered[i] has nonce base + i for
  // i < ready: no other node is read.)
  std::size_t ReadyIndex(const Node& n) const {
    const std::uint64_t i = n.tx().nonce - base;
    return n.tx().nonce >= base && i < ready && ordered()[i] == &n
               ? static_cast<std::size_t>(i)
               : kNotReady;
  }
  // The first index whose nonce is >= `nonce`. With nothing parked the nonces are base, base+1,
  // ... and no node is read; otherwise it checks the last one first: appends and evictions (of
  // tails) are the common cases, and each node looked at is a cache miss in a large pool.
  std::size_t LowerBound(std::uint64_t nonce) const {
    const std::span<Node* const> o = ordered();
    if (ready == o.size()) {
      return nonce <= base ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(
                                     nonce - base, o.size()));
    }
    if (o.back()->tx().nonce < nonce) return o.size();
    if (o.back()->tx().nonce == nonce) return o.size() - 1;
    return static_cast<std::size_t>(
        std::lower_bound(o.begin(), o.end() - 1, nonce,
                         [](const Node* n, std::uint64_t v) { return n->tx().nonce < v; }) -
        o.begin());
  }
  Node* FindNonce(std::uint64_t nonce) const {
    const std::size_t i = LowerBound(nonce);
    const std::span<Node* const> o = ordered();
    return i < o.size() && o[i]->tx().nonce == nonce ? o[i] : nullptr;
  }
};

static_assert(sizeof(void*) != 8 || sizeof(Sender) == 104,
              "99 bytes of fields, then the first 5 address bytes where padding would be");

Sender* MakeSender(std::string_view key) {
  const std::size_t size =
      sizeof(Sender) + (key.size() > Sender::kKeyHead ? key.size() - Sender::kKeyHead : 0);
  char* mem = static_cast<char*>(::operator new(size));
  auto* s = new (mem) Sender;
  // key_head ends the struct (no padding after it), so the address may run on past it.
  assert(s->key_head + Sender::kKeyHead == mem + sizeof(Sender));
  s->key_len = static_cast<std::uint16_t>(key.size());  // Insert rejects longer addresses
  std::memcpy(mem + (sizeof(Sender) - Sender::kKeyHead), key.data(), key.size());
  return s;
}

void RefSender(Sender* s) { s->refs.fetch_add(1, std::memory_order_relaxed); }
void UnrefSender(Sender* s) {
  if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    s->~Sender();
    ::operator delete(static_cast<void*>(s));
  }
}

}  // namespace

namespace detail {
struct NodeAccess {
  // Where the tx bytes start in an Entry: right after its last field, refs_ (Entry::tail).
  static constexpr std::size_t kTailOffset = sizeof(EntryTx) + 3 * sizeof(std::uint64_t) +
                                             sizeof(std::uint32_t);
  static_assert(sizeof(void*) != 8 || (sizeof(EntryTx) == 72 && kTailOffset == 100 &&
                                       sizeof(Entry) == 104),
                "hash 32, nonce 8, priority 16, gas 8, flags, key length and size 8; arrival, "
                "height, time 24; refs 4; the bytes then start in the 4 bytes of tail padding");

  // `sender`: the record (null for a lone sender's tx: the address is then stored inline, and
  // with `ttl` room for its lone-list link to the previous node). An unordered tx and a lone
  // sender's tx get a SingleLink in front.
  static Node* Make(const TxInfo& tx, Sender* sender, bool ttl) {
    const bool lone = sender == nullptr;
    Node* node = Allocate(tx.unordered || lone, tx.bytes.size() + (lone ? tx.sender.size() : 0) +
                                                    (lone && ttl ? sizeof(Node*) : 0));
    Entry& e = node->entry();
    CopyTx(tx, static_cast<std::uint32_t>(tx.bytes.size()), e);
    // The fields are set: only now write the tail, which overlaps the struct's padding.
    char* out = reinterpret_cast<char*>(&e) + kTailOffset;
    std::memcpy(out, tx.bytes.data(), tx.bytes.size());
    if (lone) {
      e.tx.inline_key_len_ = static_cast<std::uint16_t>(tx.sender.size());
      std::memcpy(out + tx.bytes.size(), tx.sender.data(), tx.sender.size());
    } else {
      RefSender(sender);
    }
    node->set_record(sender);
    return node;
  }
  // The copy of a lone sender's tx that a Sender record took over: the same entry without the
  // link, address and expiry link. REQUIRES: `n` is ordered and only the pool holds it.
  static Node* Compact(const Node* n, Sender* sender) {
    const Entry& from = n->entry();
    Node* node = Allocate(false, from.tx.bytes_len_);
    Entry& e = node->entry();
    CopyTx(from.tx, from.tx.bytes_len_, e);
    e.arrival = from.arrival;
    e.arrival_height = from.arrival_height;
    e.arrival_time = from.arrival_time;
    std::memcpy(reinterpret_cast<char*>(&e) + kTailOffset, from.tail(), from.tx.bytes_len_);
    RefSender(sender);
    node->set_record(sender);
    return node;
  }
  // One allocation: a SingleLink when `link`, the Node, the Entry, and `tail` bytes after the
  // entry's fields.
  static Node* Allocate(bool link, std::size_t tail) {
    const std::size_t front = link ? sizeof(SingleLink) : 0;
    const std::size_t size = front + sizeof(Node) + std::max(sizeof(Entry), kTailOffset + tail);
    char* mem = static_cast<char*>(::operator new(size));
    if (link) new (mem) SingleLink;
    Node* node = new (mem + front) Node;
    Entry* e = new (mem + front + sizeof(Node)) Entry;
    assert(static_cast<const void*>(&e->tx) == static_cast<const void*>(e));
    assert(e->tail() == reinterpret_cast<const char*>(e) + kTailOffset);
    (void)e;
    return node;
  }
  // The tx's fields, from a TxInfo or from another entry's EntryTx (same names).
  template <class Tx>
  static void CopyTx(const Tx& from, std::uint32_t bytes_len, Entry& to) {
    to.tx.hash = from.hash;
    to.tx.nonce = from.nonce;
    to.tx.priority = from.priority;
    to.tx.gas_wanted = from.gas_wanted;
    to.tx.unordered = from.unordered;
    to.tx.bytes_len_ = bytes_len;
  }
  static Node* NodeOf(const Entry* e) {
    return reinterpret_cast<Node*>(
        const_cast<char*>(reinterpret_cast<const char*>(e)) - sizeof(Node));
  }
  // A lone sender's address, stored after the tx bytes (empty for other nodes).
  static std::string_view InlineKey(const Node* n) {
    const EntryTx& t = n->tx();
    return {n->entry().tail() + t.bytes_len_, t.inline_key_len_};
  }
  // A lone sender's link to the previous (older) node of the lone list, after its address (TTL on only; unaligned: read and written with memcpy).
  static char* PrevLoneSlot(Node* n) {
    const EntryTx& t = n->tx();
    return const_cast<char*>(n->entry().tail()) + t.bytes_len_ + t.inline_key_len_;
  }
  static bool Linked(const Entry& e) { return e.tx.unordered || e.tx.inline_key_len_ != 0; }
  static std::uint32_t Refs(const Node* n) {
    return n->entry().refs_.load(std::memory_order_acquire);
  }
  // A new reference to the node's entry / the pool's own reference, handed over.
  static EntryPtr Share(const Node* n) { return EntryPtr(&n->entry(), false); }
  static EntryPtr Adopt(const Node* n) { return EntryPtr(&n->entry(), true); }
  static std::atomic<bool>& InPool(const Node* n) {
    return const_cast<Entry&>(n->entry()).tx.in_pool_;
  }
  static void Destroy(const Entry* e) {
    Node* n = NodeOf(e);
    Sender* s = n->record();
    void* mem = n;
    if (Linked(*e)) {
      SingleLink& link = LinkOf(n);
      mem = &link;
      link.~SingleLink();
    }
    const_cast<Entry*>(e)->~Entry();
    n->~Node();
    ::operator delete(mem);
    if (s != nullptr) UnrefSender(s);
  }
};

void DestroyEntry(const Entry* e) { NodeAccess::Destroy(e); }
}  // namespace detail

std::string_view EntryTx::sender() const {
  const Node* n = detail::NodeAccess::NodeOf(reinterpret_cast<const Entry*>(this));
  const Sender* s = n->record();
  return s != nullptr ? s->key() : detail::NodeAccess::InlineKey(n);
}

namespace {

using detail::NodeAccess;
bool InPool(const Node* n, std::memory_order order) {
  return NodeAccess::InPool(n).load(order);
}
void SetInPool(const Node* n, bool v) { NodeAccess::InPool(n).store(v, std::memory_order_release); }
EntryPtr Share(const Node* n) { return NodeAccess::Share(n); }

// Reap order: priority descending, then arrival ascending (arrival is unique: a total order).
// 24 bytes: the frontier heap's key.
struct ReapKey {
  Priority priority;
  std::uint64_t arrival;
};
static_assert(sizeof(ReapKey) == 24);
ReapKey KeyOf(const Node& n) { return {n.entry().tx.priority, n.entry().arrival}; }
bool Before(const ReapKey& a, const ReapKey& b) {
  return a.priority != b.priority ? a.priority > b.priority : a.arrival < b.arrival;
}
const Node* NodeOfLink(const HeadLink& l) { return l.node; }
// Compares the links of `heads` or of `singles` (by their node's key) and counts the comparisons.
template <class Link>
struct ReapOrder {
  std::uint64_t* count;
  bool operator()(const Link& a, const Link& b) const {
    ++*count;
    return Before(KeyOf(*NodeOfLink(a)), KeyOf(*NodeOfLink(b)));
  }
  bool operator()(const ReapKey& a, const Link& b) const {
    ++*count;
    return Before(a, KeyOf(*NodeOfLink(b)));
  }
  bool operator()(const Link& a, const ReapKey& b) const {
    ++*count;
    return Before(KeyOf(*NodeOfLink(a)), b);
  }
};

using HeadSet = bi::set<HeadLink, bi::member_hook<HeadLink, TreeHook, &HeadLink::hook>,
                        bi::compare<ReapOrder<HeadLink>>, bi::constant_time_size<false>>;
using SingleSet = bi::set<SingleLink, bi::member_hook<SingleLink, TreeHook, &SingleLink::hook>,
                          bi::compare<ReapOrder<SingleLink>>, bi::constant_time_size<false>>;

// Eviction order: parked txs first (they may never pay), then lowest priority first, newest first
// among equals (the reverse of reap order). The frontier heap's key: 24 bytes.
struct EvictKey {
  Priority priority;
  std::uint64_t arrival : 63;  // an insertion counter: never near 2^63
  std::uint64_t ready : 1;
};
static_assert(sizeof(EvictKey) == 24);
EvictKey EvictKeyOf(const Node& n, bool ready) {
  return {n.entry().tx.priority, n.entry().arrival, ready ? 1u : 0u};
}
struct EvictsFirst {
  bool operator()(const EvictKey& a, const EvictKey& b) const {
    if (a.ready != b.ready) return a.ready == 0;
    return a.priority != b.priority ? a.priority < b.priority : a.arrival > b.arrival;
  }
};

// What the `senders` index holds for a sender: its Sender record, or for a
// lone sender its node, tagged with the low bit (both are 8-byte aligned).
struct SenderSlot;
SenderSlot* SlotOf(Sender* s) { return reinterpret_cast<SenderSlot*>(s); }
SenderSlot* LoneSlotOf(Node* n) {
  return reinterpret_cast<SenderSlot*>(reinterpret_cast<std::uintptr_t>(n) | 1);
}
// A sender in the pool: its record, or its lone node, or neither (not in the pool).
struct SenderRef {
  Sender* rec = nullptr;
  Node* lone = nullptr;
  explicit operator bool() const { return rec != nullptr || lone != nullptr; }
  std::size_t count() const { return rec != nullptr ? rec->count() : lone != nullptr ? 1 : 0; }
  // Whether `n` is one of this sender's txs.
  bool Has(const Node* n) const { return rec != nullptr ? n->record() == rec : n == lone; }
};
SenderRef RefOf(const SenderSlot* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  if (v & 1) return {nullptr, reinterpret_cast<Node*>(v & ~std::uintptr_t{1})};
  return {reinterpret_cast<Sender*>(v), nullptr};
}

using FrontierHeap = IndexedHeap<EvictKey, Node, EvictsFirst>;
using ExpiryHeap = IndexedHeap<std::uint64_t, Sender, std::less<std::uint64_t>>;

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
  static std::string_view KeyOf(const SenderSlot* p) {
    const SenderRef r = RefOf(p);
    return r.rec != nullptr ? r.rec->key() : NodeAccess::InlineKey(r.lone);
  }
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
  void set_probe_counter(std::uint64_t* probes) { index_.set_probe_counter(probes); }
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

// max(ceil(old * (100 + bump) / 100), old + 1) in Q64.64 units, or nullopt when it is above
// Priority::Max(). old * (100 + bump) / 100 = old + (old / 100) * bump + (old % 100) * bump / 100,
// so no product needs more than 128 bits (the last one is below 100 * 2^32).
std::optional<Priority> BumpThreshold(Priority old, std::uint32_t bump_percent) {
  const Uint128 q = old.q64();
  const Uint128 rest = (q % 100) * bump_percent;
  Uint128 needed;
  if (__builtin_mul_overflow(q / 100, static_cast<Uint128>(bump_percent), &needed) ||
      __builtin_add_overflow(needed, q, &needed) ||
      __builtin_add_overflow(needed, rest / 100 + (rest % 100 != 0 ? 1 : 0), &needed)) {
    return std::nullopt;
  }
  if (needed == q) {  // +1 at least
    if (old.is_max()) return std::nullopt;
    ++needed;
  }
  return Priority::FromQ64(needed);
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
    case RejectReason::kParkedCap:
      return "parked_cap";
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
    case RemoveReason::kExpiredParked:
      return "expired_parked";
  }
  return "unknown";
}

using Removed = std::vector<std::pair<EntryPtr, RemoveReason>>;

struct PriorityMempool::State {
  explicit State(const Config& c)
      : config(c),
        ttl_on(c.ttl_blocks > 0 || c.ttl_nanos > 0),
        by_hash(RandomSeed()),
        senders(RandomSeed()),
        heads(HeadOrder()),
        singles(SingleOrder()),
        frontier(&work),
        expiry(&work),
        recent(c.recent_removals, RandomSeed()) {
    by_hash.set_probe_counter(&work.index_probes);
    senders.set_probe_counter(&work.index_probes);
    recent.set_probe_counter(&work.index_probes);
  }

  ~State() {
    heads.clear();
    singles.clear();
    frontier.Clear();
    expiry.Clear();
    auto release = [](Node* n) {
      SetInPool(n, false);
      EntryPtr ref = NodeAccess::Adopt(n);  // frees the node unless someone still holds it
    };
    senders.ForEach([&](SenderSlot* p) {
      const SenderRef r = RefOf(p);
      if (r.lone != nullptr) {
        release(r.lone);
        return;
      }
      for (Node* n : r.rec->ordered()) release(n);
      for (Node* n : r.rec->unordered()) release(n);
      UnrefSender(r.rec);
    });
  }

  ReapOrder<HeadLink> HeadOrder() { return {&work.tree_compares}; }
  ReapOrder<SingleLink> SingleOrder() { return {&work.tree_compares}; }

  const Config& config;
  const bool ttl_on;  // maintain `expiry` only when a TTL is configured
  WorkCounters work;
  FlatIndex<Node, NodeByHash> by_hash;
  FlatIndex<SenderSlot, SenderByKey> senders;
  HeadSet heads;
  SingleSet singles;
  FrontierHeap frontier;
  ExpiryHeap expiry;
  // TTL on: the lone senders' nodes in arrival order, oldest first, as a doubly linked list
  // (next in the node's word, prev after its address): a lone tx is always the newest when it
  // arrives, so it is appended, and it leaves in O(1).
  Node* lone_oldest = nullptr;
  Node* lone_newest = nullptr;
  RecentRemovals recent;
  std::size_t bytes = 0;
  std::size_t size = 0;
  std::size_t parked = 0;
  std::uint64_t next_arrival = 1;
  std::int64_t last_height = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_time = std::numeric_limits<std::int64_t>::min();
  std::array<std::uint64_t, kRejectReasons> rejected{};
  std::array<std::uint64_t, kRemoveReasons> removed{};

  // --- senders ---

  SenderRef FindSender(std::string_view key) const {
    const SenderSlot* p = senders.Find(key);
    return p != nullptr ? RefOf(p) : SenderRef{};
  }

  // The lone list (TTL on only).
  static Node* PrevLone(Node* n) {
    Node* p;
    std::memcpy(&p, NodeAccess::PrevLoneSlot(n), sizeof p);
    return p;
  }
  static void SetPrevLone(Node* n, Node* p) { std::memcpy(NodeAccess::PrevLoneSlot(n), &p, sizeof p); }
  // Appends `n`, the newest tx in the pool, a lone sender's.
  void LinkLone(Node* n) {
    SetPrevLone(n, lone_newest);
    n->set_next_lone(nullptr);
    if (lone_newest != nullptr) {
      lone_newest->set_next_lone(n);
    } else {
      lone_oldest = n;
    }
    lone_newest = n;
  }
  // Takes `n` out; its word is null again (a lone node with no record).
  void UnlinkLone(Node* n) {
    Node* prev = PrevLone(n);
    Node* next = n->next_lone();
    if (prev != nullptr) {
      prev->set_next_lone(next);
    } else {
      lone_oldest = next;
    }
    if (next != nullptr) {
      SetPrevLone(next, prev);
    } else {
      lone_newest = prev;
    }
    n->set_record(nullptr);
  }

  Sender* MakeRecord(std::string_view key) {
    Sender* s = MakeSender(key);
    senders.Insert(SlotOf(s));
    return s;
  }

  // Gives the lone sender of `l` a record, which takes over its place in `senders` and, TTL on,
  // goes into `expiry` (the tx leaves the lone list), and its tx: an unordered one stays in
  // `singles`; an ordered one becomes the record's first, in `heads` and `frontier`, as a
  // compact copy (no link, no address) when only the pool holds it. O(log n).
  Sender* Split(Node* l) {
    const std::string_view key = NodeAccess::InlineKey(l);
    Sender* s = MakeSender(key);
    s->base = l->ordered() ? l->tx().nonce : 0;
    senders.Replace(SlotOf(s));
    if (ttl_on) {
      UnlinkLone(l);
      s->expiry = expiry.Push(s, l->entry().arrival);
    }
    if (!l->ordered()) {
      RefSender(s);
      l->set_record(s);
      s->txs.PushUnordered(l);
      return s;
    }
    singles.erase(singles.iterator_to(LinkOf(l)));
    Node* n = l;
    if (NodeAccess::Refs(l) == 1) {  // no EntryPtr but the pool's: nobody can see the move
      n = NodeAccess::Compact(l, s);
      by_hash.Replace(n);
      SetInPool(n, true);
      SetInPool(l, false);
      EntryPtr old = NodeAccess::Adopt(l);  // frees it
    } else {
      RefSender(s);
      l->set_record(s);
    }
    s->txs.InsertOrdered(0, n);
    s->ready = 1;
    Relink(*s);
    return s;
  }

  // Takes an empty sender out of the index and drops the index's reference (its record lives on
  // while entries that name it are held). Null (a lone sender's record) does nothing.
  void DropIfEmpty(Sender* s) {
    if (s == nullptr || s->count() != 0) return;
    senders.Erase(s->key());
    UnrefSender(s);
  }

  // Puts the sender's first ready ordered node in `heads` and its last ordered node in
  // `frontier`, taking out the ones it had there before.
  void Relink(Sender& s) {
    Node* head = s.ready > 0 ? s.ordered().front() : nullptr;
    if (s.head.node != head) {
      if (s.head.node != nullptr) heads.erase(heads.iterator_to(s.head));
      s.head.node = head;
      if (head != nullptr) heads.insert(s.head);
    }
    Node* tail = s.ordered().empty() ? nullptr : s.ordered().back();
    const bool tail_ready = s.ready == s.ordered().size();
    if (s.tail_handle == kNoHandle) {
      if (tail != nullptr) s.tail_handle = frontier.Push(tail, EvictKeyOf(*tail, tail_ready));
    } else if (tail == nullptr) {
      frontier.Erase(std::exchange(s.tail_handle, kNoHandle));
    } else if (frontier.OwnerOf(s.tail_handle) != tail || s.tail_ready != tail_ready) {
      // A new tail takes over the handle; a tail parked or promoted is re-keyed.
      frontier.Replace(s.tail_handle, tail, EvictKeyOf(*tail, tail_ready));
    }
    s.tail_ready = tail_ready;
  }

  // After an insert at position `ready`: the prefix before it is unchanged, so the ready prefix
  // only grows from there. The caller keeps `parked` right.
  static void ExtendReady(Sender& s) {
    std::size_t r = s.ready;
    while (r < s.ordered().size() && s.ordered()[r]->tx().nonce - s.base == r) ++r;
    s.ready = static_cast<std::uint32_t>(r);
  }

  // Re-derives the ready prefix from the base. O(s). The caller keeps `parked` right.
  static void RecomputeReady(Sender& s) {
    std::size_t r = 0;
    while (r < s.ordered().size() && s.ordered()[r]->tx().nonce - s.base == r) ++r;
    s.ready = static_cast<std::uint32_t>(r);
  }

  // The arrival of the sender's oldest tx. O(s). REQUIRES: s.count() > 0.
  static std::uint64_t OldestArrival(const Sender& s) {
    std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
    for (const Node* n : s.ordered()) oldest = std::min(oldest, n->entry().arrival);
    if (!s.unordered().empty()) {  // in arrival order
      oldest = std::min(oldest, s.unordered().front()->entry().arrival);
    }
    return oldest;
  }

  // --- removal ---

  // Takes `n` out of every index; its EntryPtr goes to `out`. A lone sender leaves with its tx;
  // an empty record stays in place (the caller calls DropIfEmpty when it no longer needs it).
  void RemoveNode(Node* n, RemoveReason reason, Removed& out) {
    Sender* s = n->record();
    if (s == nullptr) {
      singles.erase(singles.iterator_to(LinkOf(n)));
      if (ttl_on) UnlinkLone(n);
      senders.Erase(NodeAccess::InlineKey(n));
    } else if (n->ordered()) {
      parked -= s->parked();
      const std::size_t pos = s->LowerBound(n->tx().nonce);
      s->txs.EraseOrdered(pos);
      if (pos < s->ready) s->ready = static_cast<std::uint32_t>(pos);  // the later ones park
      parked += s->parked();
      Relink(*s);
    } else {
      s->txs.EraseUnordered(n);
      singles.erase(singles.iterator_to(LinkOf(n)));
    }
    if (s != nullptr && ttl_on && expiry.KeyOf(s->expiry) == n->entry().arrival) {
      if (s->count() == 0) {  // it was the sender's oldest
        expiry.Erase(std::exchange(s->expiry, kNoHandle));
      } else {
        expiry.Replace(s->expiry, s, OldestArrival(*s));
      }
    }
    by_hash.Erase(n->tx().hash);
    --size;
    bytes -= n->tx().bytes().size();
    SetInPool(n, false);
    ++removed[static_cast<std::size_t>(reason)];
    recent.Add(n->tx().hash, reason);
    out.emplace_back(NodeAccess::Adopt(n), reason);
  }

  // Moves the sender's base up to `base` (never down), removing its ordered txs below it.
  void AdvanceBase(Sender& s, std::uint64_t base, Removed& out) {
    if (base <= s.base) return;
    parked -= s.parked();
    s.ready = 0;  // `ready` counts from the base: none until it is re-derived below
    parked += s.parked();
    s.base = base;
    while (!s.ordered().empty() && s.ordered().front()->tx().nonce < base) {
      RemoveNode(s.ordered().front(), RemoveReason::kStaleNonce, out);
    }
    parked -= s.parked();
    RecomputeReady(s);
    parked += s.parked();
    Relink(s);
  }

  // The same for a lone sender, whose base is implied: its ordered tx's nonce, or 0 beside an
  // unordered tx. A higher base removes the ordered tx (the sender leaves), or gives the
  // unordered tx's sender a record to remember the base in. Returns the sender afterwards.
  SenderRef AdvanceLoneBase(Node* l, std::uint64_t base, Removed& out) {
    if (l->ordered()) {
      if (base <= l->tx().nonce) return {nullptr, l};
      RemoveNode(l, RemoveReason::kStaleNonce, out);
      return {};
    }
    if (base == 0) return {nullptr, l};
    Sender* s = Split(l);
    AdvanceBase(*s, base, out);
    return {s, nullptr};
  }

  void PurgeExpired(std::int64_t height, std::int64_t now, Removed& out) {
    const std::int64_t ttl_blocks = config.ttl_blocks;
    const std::int64_t ttl_nanos = config.ttl_nanos;
    if (!ttl_on) return;
    // Arrival order is also height and time order (Insert clamps both), so the expired entries
    // are the oldest ones: the oldest tx is the oldest lone sender's or the top record's oldest.
    for (;;) {
      Node* n = lone_oldest;
      Sender* rec = nullptr;
      if (!expiry.empty() && (n == nullptr || expiry.KeyAt(0) < n->entry().arrival)) {
        rec = expiry.OwnerAt(0);
        const std::uint64_t oldest = expiry.KeyAt(0);
        n = nullptr;
        for (Node* o : rec->ordered()) {
          if (o->entry().arrival == oldest) n = o;
        }
        if (n == nullptr) n = rec->unordered().front();
      }
      if (n == nullptr) break;
      RemoveReason reason;
      if (ttl_blocks > 0 && Exceeds(height, n->entry().arrival_height, ttl_blocks)) {
        reason = RemoveReason::kExpiredBlocks;
      } else if (ttl_nanos > 0 && Exceeds(now, n->entry().arrival_time, ttl_nanos)) {
        reason = RemoveReason::kExpiredTime;
      } else {
        break;
      }
      RemoveNode(n, reason, out);
      DropIfEmpty(rec);
    }
  }
  // --- eviction planning ---

  struct EvictionPlan {
    std::vector<Node*> victims;  // in eviction order
    bool fits = false;  // enough room once the victims are gone
    Priority needed;    // when !fits: the least priority that would have been accepted
  };

  // What is known of the new tx when planning room for it.
  struct Newcomer {
    SenderRef sender;
    bool ordered = false;
    std::uint64_t nonce = 0;
    Priority priority;
    bool parked = false;  // it will be parked: it may evict only parked txs strictly cheaper
    const Node* replaced = nullptr;
    // When it fills its sender's gap: that record, and the end of the ordered txs it makes
    // ready (ordered()[ready, promoted_end) are parked now but will not be).
    const Sender* promoting = nullptr;
    std::size_t promoted_end = 0;
  };

  // Which entries an insert of `in` must evict to free `free_count` txs and `free_bytes` bytes.
  // Enumerates the frontier heap in order (a local heap of its positions: the root, then the
  // children of each one taken) merged with `singles` from its end and with a local heap of the
  // predecessors that become sender tails as their successors go, so it sees exactly the order
  // in which evictions would happen, without changing anything. Parked txs come first, and go
  // whatever they offer when the new tx is ready; ready ones must be strictly cheaper, and a
  // parked new tx takes parked ones only, strictly cheaper. Skips `replaced` and the new tx's
  // own predecessors; a tail that the new tx promotes is ready, not parked (it goes back into
  // the order with that key). It continues past the first entry that is not cheaper than the
  // new tx only to tell the least priority that would have been enough. O(k log k + log n) for
  // k entries walked: about the number of evictions needed.
  EvictionPlan PlanEviction(const Newcomer& in, std::size_t free_count, std::size_t free_bytes) {
    EvictionPlan plan;
    // std heaps put the greatest first: "greater" here is "evicted earlier".
    auto pos_later = [&](std::size_t a, std::size_t b) {
      ++work.heap_compares;
      return EvictsFirst()(frontier.KeyAt(b), frontier.KeyAt(a));
    };
    std::vector<std::size_t> positions;  // of the frontier heap, not yet taken
    if (!frontier.empty()) positions.push_back(0);
    struct Cand {
      EvictKey key;
      Node* node;
      std::size_t index;  // in its sender's `ordered` (nodes with a record only)
    };
    auto cand_later = [this](const Cand& a, const Cand& b) {
      ++work.heap_compares;
      return EvictsFirst()(b.key, a.key);
    };
    std::vector<Cand> preds;  // predecessors that became tails, and promoted tails
    auto push_pred = [&](Cand c) {
      preds.push_back(c);
      std::push_heap(preds.begin(), preds.end(), cand_later);
    };
    // Ready once the new tx is in: a ready tx, or one it promotes.
    auto ready_after = [&](const Node* n, std::size_t index, bool ready_now) {
      return ready_now || (in.promoting != nullptr && n->record() == in.promoting &&
                           index < in.promoted_end);
    };
    auto single = singles.rbegin();  // `singles` in eviction order
    // What the last victim adds to the candidates is added only when another one is needed
    // (most inserts evict one tx): the children of its heap position, its predecessor.
    std::size_t expand = kNotReady;
    const Node* pred_of = nullptr;
    std::size_t pred_index = 0;
    std::size_t freed_count = 0, freed_bytes = 0;
    Priority max_victim;  // the dearest victim that had to be cheaper than the new tx
    bool blocked = false;  // such a victim is not cheaper
    bool impossible = false;  // a parked new tx would need a ready victim
    while (freed_count < free_count || freed_bytes < free_bytes) {
      if (expand != kNotReady) {
        const std::size_t first = FrontierHeap::kArity * expand + 1;
        for (std::size_t child = first;
             child < first + FrontierHeap::kArity && child < frontier.size(); ++child) {
          positions.push_back(child);
          std::push_heap(positions.begin(), positions.end(), pos_later);
        }
        expand = kNotReady;
      }
      if (pred_of != nullptr) {
        const Sender* rec = pred_of->record();
        Node* pred = rec->ordered()[pred_index];
        push_pred({EvictKeyOf(*pred, ready_after(pred, pred_index, pred_index < rec->ready)),
                   pred, pred_index});
        pred_of = nullptr;
      }
      // The first to go of the three sources' fronts.
      enum class From { kNone, kHeap, kPred, kSingle } from = From::kNone;
      EvictKey first{};
      if (!positions.empty()) {
        from = From::kHeap;
        first = frontier.KeyAt(positions.front());
      }
      if (!preds.empty() && (from == From::kNone || EvictsFirst()(preds.front().key, first))) {
        from = From::kPred;
        first = preds.front().key;
      }
      if (single != singles.rend()) {
        const EvictKey k = EvictKeyOf(*NodeOfLink(*single), true);
        if (from == From::kNone || EvictsFirst()(k, first)) {
          from = From::kSingle;
          first = k;
        }
      }
      Cand c;
      if (from == From::kHeap) {
        std::pop_heap(positions.begin(), positions.end(), pos_later);
        const std::size_t pos = positions.back();
        positions.pop_back();
        expand = pos;
        Node* n = frontier.OwnerAt(pos);
        c = {first, n, n->record()->ordered().size() - 1};
        if (first.ready == 0 && ready_after(n, c.index, false)) {
          // The new tx promotes it: it comes in the order of ready txs.
          push_pred({EvictKeyOf(*n, true), n, c.index});
          continue;
        }
      } else if (from == From::kPred) {
        std::pop_heap(preds.begin(), preds.end(), cand_later);
        c = preds.back();
        preds.pop_back();
      } else if (from == From::kSingle) {
        c = {first, NodeOfLink(*single), 0};
        ++single;
      } else {
        break;  // nothing else may be evicted
      }
      Node* n = c.node;
      ++work.plan_steps;
      if (n == in.replaced) continue;  // goes anyway; its predecessors are the new tx's
      if (in.ordered && n->ordered() && in.sender.Has(n) && n->tx().nonce < in.nonce) continue;
      if (in.parked && c.key.ready != 0) {
        // Every parked candidate came first: what is left is ready, which a parked tx never
        // evicts.
        impossible = true;
        break;
      }
      if (in.parked || c.key.ready != 0) {  // a ready victim, or a parked one for a parked tx
        if (n->tx().priority >= in.priority) blocked = true;
        max_victim = std::max(max_victim, n->tx().priority);
      }
      plan.victims.push_back(n);
      ++freed_count;
      freed_bytes += n->tx().bytes().size();
      if (c.index > 0) {
        pred_of = n;
        pred_index = c.index - 1;
        // It becomes the sender's tail when `n` goes: its key is read then.
        __builtin_prefetch(n->record()->ordered()[pred_index]);
      }
    }
    const bool enough = !impossible && freed_count >= free_count && freed_bytes >= free_bytes;
    plan.fits = enough && !blocked;
    if (!plan.fits) {
      plan.needed = enough ? max_victim.Next() : Priority::Max();  // Next(Max) is Max: none
      plan.victims.clear();
    }
    return plan;
  }

  // --- reaping ---

  // One reap's view of a sender's ordered txs.
  struct ReapSender {
    EntryPtr lone;  // when first met lone: its tx, which holds the address `by_address` views
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
    ReapKey last{};               // position in `heads` and `singles`
    std::vector<Candidate> heap;  // successors unlocked by (speculatively) taken txs
    std::deque<ReapSender> states;  // stable addresses
    // Looked up once per run of a sender. Records by address (each held, so that no other record
    // takes its address during the reap); senders first met lone by their address bytes, so
    // that a lone tx replaced, or a lone sender given a record, during the reap is still the
    // same sender (offered nonces keep increasing).
    std::unordered_map<const Sender*, ReapSender*> by_record;
    std::unordered_map<std::string_view, ReapSender*> by_address;
    std::vector<Sender*> held;  // counted references

    ReapCursor() = default;
    ReapCursor(const ReapCursor&) = delete;
    ReapCursor& operator=(const ReapCursor&) = delete;
    ~ReapCursor() {
      for (Sender* s : held) UnrefSender(s);
    }
    // Under the pool's mutex. REQUIRES: `n` is ordered.
    ReapSender* StateOf(Node* n) {
      if (Sender* s = n->record()) {
        auto [it, fresh] = by_record.try_emplace(s, nullptr);
        if (fresh) {
          RefSender(s);
          held.push_back(s);
          auto a = by_address.empty() ? by_address.end() : by_address.find(s->key());
          it->second = a != by_address.end() ? a->second : &states.emplace_back();
        }
        return it->second;
      }
      auto [it, fresh] = by_address.try_emplace(NodeAccess::InlineKey(n), nullptr);
      if (fresh) {
        ReapSender& rs = states.emplace_back();
        rs.lone = Share(n);
        it->second = &rs;
      }
      return it->second;
    }
  };
  static bool CandidateLater(const Candidate& a, const Candidate& b) {
    return Before(b.key, a.key);
  }

  // Appends up to `n` candidates in reap order, assuming every one of them will be taken (a
  // kSkip only removes the sender's later txs, which does not change the order of the others).
  void FillChunk(ReapCursor& cur, std::size_t n, std::vector<Candidate>& out) {
    auto it = cur.started ? heads.upper_bound(cur.last, HeadOrder()) : heads.begin();
    auto jt = cur.started ? singles.upper_bound(cur.last, SingleOrder()) : singles.begin();
    while (out.size() < n) {
      // Successors in the heap that vanished or were parked meanwhile end their sender's run.
      while (!cur.heap.empty()) {
        const Candidate& top = cur.heap.front();
        if (!top.rs->dead && InPool(top.node, std::memory_order_relaxed) &&
            top.node->record()->ReadyIndex(*top.node) != kNotReady) {
          break;
        }
        top.rs->dead = true;
        std::pop_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
        cur.heap.pop_back();
      }
      // The earlier of the two trees' next nodes.
      Node* node = nullptr;
      if (it != heads.end()) node = it->node;
      if (jt != singles.end() &&
          (node == nullptr || Before(KeyOf(*NodeOfLink(*jt)), KeyOf(*node)))) {
        node = NodeOfLink(*jt);
      }
      Candidate c;
      if (node != nullptr && (cur.heap.empty() || Before(KeyOf(*node), cur.heap.front().key))) {
        if (it != heads.end() && it->node == node) {
          ++it;
        } else {
          ++jt;
        }
        cur.last = KeyOf(*node);
        cur.started = true;
        c = {cur.last, Share(node), node, node->ordered() ? cur.StateOf(node) : nullptr};
      } else if (!cur.heap.empty()) {
        std::pop_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
        c = std::move(cur.heap.back());
        cur.heap.pop_back();
      } else {
        return;
      }
      if (ReapSender* rs = c.rs) {
        // After concurrent changes the walk can meet a sender again.
        if (rs->dead || (rs->any && c.node->tx().nonce <= rs->last_nonce)) continue;
        rs->any = true;
        rs->last_nonce = c.node->tx().nonce;
        if (const Sender* s = c.node->record()) {  // a lone sender's tx has no successor
          const std::size_t i = s->ReadyIndex(*c.node);
          if (i != kNotReady && i + 1 < s->ready) {
            Node* next = s->ordered()[i + 1];
            cur.heap.push_back({KeyOf(*next), Share(next), next, rs});
            std::push_heap(cur.heap.begin(), cur.heap.end(), CandidateLater);
          }
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
  // The lookups below are cache misses in a large pool: start them together. In a full pool the
  // first of the frontier heap or the last of `singles` is the likely victim: start loading
  // their nodes too.
  st.by_hash.Prefetch(tx.hash);
  st.senders.Prefetch(tx.sender);
  const bool full = st.size >= config_.max_txs;
  const Node* heap_victim = full && !st.frontier.empty() ? st.frontier.OwnerAt(0) : nullptr;
  const Node* single_victim =
      full && !st.singles.empty() ? NodeOfLink(*st.singles.rbegin()) : nullptr;
  if (heap_victim != nullptr) __builtin_prefetch(heap_victim);
  if (single_victim != nullptr) __builtin_prefetch(single_victim);
  const bool ordered = !tx.unordered;
  SenderRef sender = st.FindSender(tx.sender);
  // The victim's node has had the sender lookup's time to arrive: start loading what its
  // removal reads next (its sender record and its hash-index slot), and the frontier item the
  // new tx's sender will re-key.
  const Node* likely_victim = heap_victim;
  if (single_victim != nullptr &&
      (heap_victim == nullptr ||
       EvictsFirst()(EvictKeyOf(*single_victim, true), st.frontier.KeyAt(0)))) {
    likely_victim = single_victim;
  }
  if (likely_victim != nullptr) {
    if (likely_victim->record() != nullptr) __builtin_prefetch(likely_victim->record());
    st.by_hash.Prefetch(likely_victim->tx().hash);
  }
  if (sender.rec != nullptr && sender.rec->tail_handle != kNoHandle) {
    st.frontier.PrefetchHandle(sender.rec->tail_handle);
  }
  // A lone sender is likely split: its compact copy takes the tx's hash slot.
  if (sender.lone != nullptr) st.by_hash.Prefetch(sender.lone->tx().hash);
  std::vector<Node*> parked_before;  // for InsertResult::promoted
  std::uint64_t base = ordered ? base_nonce : 0;
  if (ordered && sender.lone != nullptr) {
    sender = st.AdvanceLoneBase(sender.lone, base_nonce, removed);
    if (sender.lone != nullptr && sender.lone->ordered()) {
      base = std::max(base, sender.lone->tx().nonce);  // its implied base
    }
  }
  if (ordered && sender.rec != nullptr) {
    Sender* s = sender.rec;
    parked_before.assign(s->ordered().begin() + s->ready, s->ordered().end());
    if (base_nonce > s->base) {
      st.AdvanceBase(*s, base_nonce, removed);
      if (s->count() == 0) {
        st.DropIfEmpty(s);
        sender = {};
      }
    }
    if (sender.rec != nullptr) base = std::max(base, sender.rec->base);
  }
  for (auto& [e, reason] : removed) r.stale.push_back(e);
  auto collect_promoted = [&](Sender* s) {
    if (s == nullptr) return;
    for (Node* n : parked_before) {
      if (InPool(n, std::memory_order_relaxed) && n->record() == s &&
          s->ReadyIndex(*n) != kNotReady) {
        r.promoted.push_back(Share(n));
      }
    }
  };

  if (st.by_hash.Find(tx.hash) != nullptr) {
    collect_promoted(sender.rec);
    return reject(RejectReason::kDuplicate, "tx already in mempool");
  }
  if (ordered && tx.nonce < base) {
    collect_promoted(sender.rec);
    return reject(RejectReason::kNonceTooLow,
                  "sequence " + std::to_string(tx.nonce) + " is below the account's sequence " +
                      std::to_string(base));
  }
  Node* replaced = nullptr;
  if (ordered && sender.rec != nullptr) {
    replaced = sender.rec->FindNonce(tx.nonce);
  } else if (ordered && sender.lone != nullptr && sender.lone->ordered() &&
             sender.lone->tx().nonce == tx.nonce) {
    replaced = sender.lone;
  }
  if (replaced != nullptr) {
    const std::optional<Priority> needed =
        BumpThreshold(replaced->tx().priority, config_.replace_bump_percent);
    if (!needed || tx.priority < *needed) {
      collect_promoted(sender.rec);
      r.needed_priority = needed.value_or(Priority::Max());
      return reject(RejectReason::kReplacementUnderpriced,
                    needed ? "replacement of sequence " + std::to_string(tx.nonce) +
                                 " needs a fee per gas of at least " +
                                 needed->ToDecimal(Priority::Rounding::kUp) + " (+" +
                                 std::to_string(config_.replace_bump_percent) + "%), got " +
                                 tx.priority.ToDecimal()
                           : "the tx with sequence " + std::to_string(tx.nonce) +
                                 " has the highest priority possible and cannot be replaced");
    }
  } else if (const std::size_t count = sender.count(); count >= config_.max_txs_per_sender) {
    collect_promoted(sender.rec);
    return reject(RejectReason::kSenderCap,
                  "sender has " + std::to_string(count) +
                      " txs in the mempool, the limit is " +
                      std::to_string(config_.max_txs_per_sender));
  }

  // Whether the tx will be parked, the first sequence its sender is missing, and (when it fills
  // the gap) how many parked txs it promotes. Nothing below changes that: evictions take tails,
  // never its predecessors.
  State::Newcomer in;
  in.sender = sender;
  in.ordered = ordered;
  in.nonce = tx.nonce;
  in.priority = tx.priority;
  in.replaced = replaced;
  std::uint64_t missing = base;  // the first sequence the sender's ready txs lack
  std::size_t promotes = 0;
  if (ordered) {
    if (const Sender* s = sender.rec) {
      missing = s->base + s->ready;
      if (replaced != nullptr) {
        in.parked = s->ReadyIndex(*replaced) == kNotReady;
      } else if (tx.nonce == missing) {
        const std::span<Node* const> o = s->ordered();
        std::size_t end = s->ready;
        while (end < o.size() && o[end]->tx().nonce == tx.nonce + 1 + (end - s->ready)) ++end;
        promotes = end - s->ready;
        in.promoting = s;
        in.promoted_end = end;
      } else {
        in.parked = true;
      }
    } else if (sender.lone != nullptr && sender.lone->ordered()) {
      missing = sender.lone->tx().nonce + 1;
      in.parked = replaced == nullptr && tx.nonce != missing;
    } else {
      in.parked = tx.nonce != base;
    }
  }
  // For messages only (built when one is: not on the accepting path).
  const auto waits = [missing] {
    return " (this tx waits for sequence " + std::to_string(missing) + ")";
  };
  const std::size_t sender_parked = sender.rec != nullptr ? sender.rec->parked() : 0;
  if (in.parked && replaced == nullptr && sender_parked >= config_.max_parked_per_sender) {
    collect_promoted(sender.rec);
    return reject(RejectReason::kParkedCap,
                  "sender has " + std::to_string(sender_parked) +
                      " txs parked behind a sequence gap in the mempool, the limit is " +
                      std::to_string(config_.max_parked_per_sender) + waits());
  }

  // Room, decided before anything changes.
  const std::size_t replaced_bytes = replaced ? replaced->tx().bytes().size() : 0;
  const std::size_t count_after = st.size - (replaced ? 1 : 0) + 1;
  const std::size_t bytes_after = st.bytes - replaced_bytes + tx_bytes;
  const std::size_t parked_after =
      st.parked - promotes + (in.parked && replaced == nullptr ? 1 : 0);
  std::size_t free_count = count_after > config_.max_txs ? count_after - config_.max_txs : 0;
  // A parked tx takes a parked one's place when there are max_parked (each victim is parked).
  const bool parked_full = in.parked && parked_after > config_.max_parked;
  if (parked_full) free_count = std::max(free_count, parked_after - config_.max_parked);
  State::EvictionPlan plan;
  plan.fits = true;
  if (tx_bytes > config_.max_bytes) {
    plan.fits = false;
    plan.needed = Priority::Max();
  } else if (free_count > 0 || bytes_after > config_.max_bytes) {
    plan = st.PlanEviction(
        in, free_count, bytes_after > config_.max_bytes ? bytes_after - config_.max_bytes : 0);
  }
  if (!plan.fits) {
    collect_promoted(sender.rec);
    r.needed_priority = plan.needed;
    std::string message =
        parked_full ? "mempool holds " + std::to_string(st.parked) +
                          " txs parked behind sequence gaps, its limit (mempool.max_parked); "
                    : "mempool is full: " + std::to_string(st.size) + " txs, " +
                          std::to_string(st.bytes) + " bytes; ";
    if (plan.needed.is_max()) {
      message += in.parked ? "a tx behind a sequence gap evicts only parked txs, and none would "
                             "make room" + waits() + ": send that sequence first"
                           : "no priority would make room for this tx (" +
                                 std::to_string(tx_bytes) + " bytes)";
    } else {
      // needed is the least priority strictly above the dearest victim's.
      message += std::string(in.parked ? "a parked tx" : "a tx") + " needs a fee per gas above " +
                 Priority::FromQ64(plan.needed.q64() - 1).ToDecimal() +
                 " to evict (this one offers " + tx.priority.ToDecimal() + ")" +
                 (in.parked ? waits() : "");
    }
    return reject(parked_full ? RejectReason::kParkedCap : RejectReason::kFull,
                  std::move(message));
  }

  // Accepted: replace, evict, insert.
  const std::size_t stale_count = removed.size();
  if (replaced != nullptr) st.RemoveNode(replaced, RemoveReason::kReplaced, removed);
  for (Node* victim : plan.victims) {
    Sender* vs = victim->record();
    st.RemoveNode(victim, RemoveReason::kEvicted, removed);
    st.DropIfEmpty(vs);  // may be the new tx's sender when it had only unordered txs
  }
  for (std::size_t i = stale_count; i < removed.size(); ++i) {
    if (removed[i].second == RemoveReason::kReplaced) {
      r.replaced = removed[i].first;
    } else {
      r.evicted.push_back(removed[i].first);
    }
  }
  // The sender as it is now (a replaced lone tx or the last victim took it out): a record, or a
  // new lone sender when this tx is its first and ready (and it has an address to store).
  sender = st.FindSender(tx.sender);
  Sender* rec = sender.rec;
  if (sender.lone != nullptr) {
    rec = st.Split(sender.lone);
  } else if (rec == nullptr && ((ordered && tx.nonce != base) || tx.sender.empty())) {
    rec = st.MakeRecord(tx.sender);
  }
  if (rec != nullptr && ordered) rec->base = std::max(rec->base, base);

  // The pool's reference: handed over when it leaves.
  Node* node = NodeAccess::Make(tx, rec, st.ttl_on);
  node->entry().arrival = st.next_arrival++;
  st.last_height = std::max(st.last_height, height);
  st.last_time = std::max(st.last_time, now_nanos);
  node->entry().arrival_height = st.last_height;
  node->entry().arrival_time = st.last_time;
  SetInPool(node, true);
  st.by_hash.Insert(node);
  ++st.size;
  st.bytes += tx_bytes;
  st.recent.Forget(node->tx().hash);
  if (rec == nullptr) {
    st.senders.Insert(LoneSlotOf(node));
    st.singles.insert(LinkOf(node));
    if (st.ttl_on) st.LinkLone(node);
  } else {
    // The newest tx: it is the sender's oldest only when the sender had none.
    if (st.ttl_on && rec->expiry == kNoHandle) {
      rec->expiry = st.expiry.Push(rec, node->entry().arrival);
    }
    if (ordered) {
      Sender& s = *rec;
      st.parked -= s.parked();
      const std::size_t pos = s.LowerBound(node->tx().nonce);
      s.txs.InsertOrdered(pos, node);
      if (pos == s.ready) st.ExtendReady(s);
      st.parked += s.parked();
      st.Relink(s);
      r.parked = s.ReadyIndex(*node) == kNotReady;
      if (r.parked) r.waiting_for = s.base + s.ready;
    } else {
      rec->txs.PushUnordered(node);
      st.singles.insert(LinkOf(node));
    }
  }
  assert(r.parked == in.parked);
  collect_promoted(rec);
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
  const SenderRef s = state_->FindSender(sender);
  const Node* n = nullptr;
  if (s.rec != nullptr) {
    n = s.rec->FindNonce(nonce);
  } else if (s.lone != nullptr && s.lone->ordered() && s.lone->tx().nonce == nonce) {
    n = s.lone;
  }
  return n ? Share(n) : nullptr;
}

bool PriorityMempool::IsParked(const Hash& hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = state_->by_hash.Find(hash);
  // A lone sender's tx is always ready.
  return n != nullptr && n->ordered() && n->record() != nullptr &&
         n->record()->ReadyIndex(*n) == kNotReady;
}

bool PriorityMempool::Remove(const Hash& hash, RemoveReason reason) {
  Removed removed;
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = state_->by_hash.Find(hash);
  if (n == nullptr) return false;
  Sender* s = n->record();
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
      Sender* s = n->record();
      st.RemoveNode(n, RemoveReason::kIncluded, out);
      st.DropIfEmpty(s);
    }
  }
  for (const auto& [key, base] : base_nonces) {
    const SenderRef s = st.FindSender(key);
    if (s.lone != nullptr) {
      st.AdvanceLoneBase(s.lone, base, out);
    } else if (s.rec != nullptr) {
      st.AdvanceBase(*s.rec, base, out);
      st.DropIfEmpty(s.rec);
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
  State::ReapCursor cur;  // before `chunk`: the candidates' entries go first
  cur.by_record.reserve(256);
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
  // Senders by the arrival of their oldest tx (unique, so the order is deterministic).
  std::vector<std::pair<std::uint64_t, const SenderSlot*>> order;
  order.reserve(st.senders.size());
  st.senders.ForEach([&](const SenderSlot* p) {
    const SenderRef s = RefOf(p);
    order.emplace_back(s.lone != nullptr ? s.lone->entry().arrival : State::OldestArrival(*s.rec),
                       p);
  });
  std::sort(order.begin(), order.end());
  for (const auto& [oldest, p] : order) {
    const SenderRef s = RefOf(p);
    if (s.lone != nullptr) {
      out.push_back(Share(s.lone));
      continue;
    }
    for (const Node* o : s.rec->ordered()) out.push_back(Share(o));
    for (const Node* u : s.rec->unordered()) out.push_back(Share(u));
  }
  return out;
}

SenderView PriorityMempool::SenderTxs(std::string_view sender) const {
  SenderView out;
  std::lock_guard<std::mutex> lock(mu_);
  const SenderRef s = state_->FindSender(sender);
  if (s.lone != nullptr) {
    out.base = s.lone->ordered() ? s.lone->tx().nonce : 0;
    out.next_ready = s.lone->ordered() ? out.base + 1 : out.base;
    out.txs.push_back({Share(s.lone), false});
  } else if (s.rec != nullptr) {
    out.base = s.rec->base;
    out.next_ready = s.rec->base + s.rec->ready;
    for (std::size_t i = 0; i < s.rec->ordered().size(); ++i) {
      out.txs.push_back({Share(s.rec->ordered()[i]), i >= s.rec->ready});
    }
    for (const Node* u : s.rec->unordered()) out.txs.push_back({Share(u), false});
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

WorkCounters PriorityMempool::work_counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_->work;
}

}  // namespace kairos::mempool
