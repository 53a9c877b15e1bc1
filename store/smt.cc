#include "store/smt.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <future>
#include <iterator>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include "store/varint.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define KAIROS_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define KAIROS_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define KAIROS_POISON(p, n) ((void)(p), (void)(n))
#define KAIROS_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace kairos::store {

namespace {

// Free blocks by size (each size a page block with its control block), reused before asking
// malloc. Under ASan a pooled block is poisoned until reused.
class BlockPool {
 public:
  void* Allocate(std::size_t bytes) {
    {
      std::lock_guard lock(mu_);
      if (std::vector<void*>* free = Find(bytes); free != nullptr && !free->empty()) {
        void* p = free->back();
        free->pop_back();
        free_bytes_ -= bytes;
        KAIROS_UNPOISON(p, bytes);
        return p;
      }
    }
    return ::operator new(bytes);
  }
  void Deallocate(void* p, std::size_t bytes) {
    {
      std::lock_guard lock(mu_);
      if (free_bytes_ + bytes <= kMaxFreeBytes) {
        std::vector<void*>* free = Find(bytes);
        if (free == nullptr) {
          sizes_.emplace_back(bytes, std::vector<void*>());
          free = &sizes_.back().second;
        }
        KAIROS_POISON(p, bytes);
        free->push_back(p);
        free_bytes_ += bytes;
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  static constexpr std::size_t kMaxFreeBytes = std::size_t{128} << 20;
  std::vector<void*>* Find(std::size_t bytes) {
    for (auto& [size, free] : sizes_) {
      if (size == bytes) return &free;
    }
    return nullptr;
  }
  std::mutex mu_;
  std::vector<std::pair<std::size_t, std::vector<void*>>> sizes_;  // a few size classes
  std::size_t free_bytes_ = 0;
};

// Never destroyed: pages may be freed by other static objects' destructors.
BlockPool& Pool() {
  static BlockPool* pool = new BlockPool;
  return *pool;
}

template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(Pool().Allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { Pool().Deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

// Fewer updates than this are applied on one thread (a thread costs tens of microseconds).
constexpr std::size_t kMinParallelUpdates = 512;

// sha256(prefix || a || b): both node kinds hash 65 bytes.
Hash HashNode(std::uint8_t prefix, const Hash& a, const Hash& b) {
  std::uint8_t buf[65];
  buf[0] = prefix;
  std::memcpy(buf + 1, a.data(), 32);
  std::memcpy(buf + 33, b.data(), 32);
  return Sha256Of(std::string_view(reinterpret_cast<const char*>(buf), sizeof buf));
}

PageNode ValueOf(const Slot& s) {
  switch (s.kind) {
    case Slot::Kind::kEmpty: return {};
    case Slot::Kind::kLeaf: return {s.hash, 1};
    case Slot::Kind::kPage: return {s.hash, 2};
  }
  return {};
}

PageNode Combine(const PageNode& left, const PageNode& right) {
  const int keys = left.keys + right.keys;
  if (keys == 0) return {};
  if (keys == 1) return left.keys == 1 ? left : right;  // a one-key subtree is its leaf
  return {InnerHash(left.hash, right.hash), 2};
}

bool ReadHash(std::string_view* in, Hash* h) {
  if (in->size() < h->size()) return false;
  std::memcpy(h->data(), in->data(), h->size());
  in->remove_prefix(h->size());
  return true;
}

// Calls fn(nibble, group) for each run of updates sharing the nibble at `depth`.
template <class Fn>
Status ForEachGroup(std::span<const KeyUpdate> updates, int depth, Fn&& fn) {
  std::size_t begin = 0;
  while (begin < updates.size()) {
    const std::uint8_t nibble = NibbleAt(updates[begin].key_hash, depth);
    std::size_t end = begin + 1;
    while (end < updates.size() && NibbleAt(updates[end].key_hash, depth) == nibble) ++end;
    if (Status s = fn(nibble, updates.subspan(begin, end - begin)); !s.ok()) return s;
    begin = end;
  }
  return Status::OK();
}

// The new slots of a page whose children were rebuilt: slot n changed when its bit is set.
struct ChildResults {
  std::array<Slot, kSlotsPerPage> next;
  std::uint16_t changed = 0;
};

class Updater {
 public:
  // Outcomes go to `outcomes` (indexed from `base`), pages made and replaced to `out`. Two
  // updaters may share `outcomes` when their updates are disjoint.
  Updater(const PageReader& reader, Version version, const KeyUpdate* base,
          std::vector<Version>* outcomes, std::vector<Hash>* previous_leaves, TreeUpdate* out)
      : reader_(reader),
        version_(version),
        base_(base),
        outcomes_(outcomes),
        previous_leaves_(previous_leaves),
        out_(out) {}

  // The new content of the subtree at `path`, which holds `existing` today.
  Status Rebuild(const Slot& existing, const NibblePath& path,
                 std::span<const KeyUpdate> updates, Slot* result) {
    if (updates.empty()) {
      *result = existing;
      return Status::OK();
    }
    if (path.size() >= kMaxNibbles) {
      return Status::Corruption("two different keys share all 256 bits of their hash");
    }
    if (existing.kind == Slot::Kind::kPage) {
      auto loaded = reader_.LoadPage(existing.version, path);
      if (!loaded.ok()) return loaded.status();
      const Page& old = **loaded;
      std::optional<PageDraft> page;  // expanded on the first change: only changed slots rehash
      std::uint16_t changed = 0;
      Status s = ForEachGroup(updates, path.size(), [&](std::uint8_t n, auto group) {
        const Slot before = old.slot(n);
        Slot next;
        if (Status st = Rebuild(before, path.Child(n), group, &next); !st.ok()) return st;
        if (next == before) return Status::OK();
        if (!page) old.Expand(&page.emplace());
        page->slots[n] = next;
        changed = static_cast<std::uint16_t>(changed | 1u << n);
        return Status::OK();
      });
      if (!s.ok()) return s;
      if (changed == 0) {  // every update below was a no-op
        *result = existing;
        return Status::OK();
      }
      out_->stale_pages.emplace_back(existing.version, path);
      return Finish(&*page, changed, path, result);
    }
    // An empty slot or a single leaf: the keys below are the leaf (unless updated) plus the
    // updates' present keys.
    // `present` holds their leaf slots, in key-hash order.
    present_.clear();
    bool leaf_pending = existing.kind == Slot::Kind::kLeaf;
    bool any = false;
    for (const KeyUpdate& u : updates) {
      const auto index = static_cast<std::size_t>(&u - base_);
      Version& outcome = (*outcomes_)[index];
      outcome = u.leaf_hash ? kInserted : kNoop;
      if (leaf_pending && existing.key_hash <= u.key_hash) {
        if (existing.key_hash < u.key_hash) {
          present_.push_back(existing);
        } else if (u.leaf_hash && *u.leaf_hash == existing.hash) {
          present_.push_back(existing);  // the same value again: keeps its version
          outcome = kNoop;
        } else {
          outcome = existing.version;  // replaced or deleted
          (*previous_leaves_)[index] = existing.hash;
        }
        leaf_pending = false;
      }
      if (u.leaf_hash && outcome != kNoop) {
        present_.push_back(Slot::LeafWithHash(u.key_hash, *u.leaf_hash,
                                              u.leaf_version > 0 ? u.leaf_version : version_));
      }
      any = any || outcome != kNoop;
    }
    if (!any) {
      *result = existing;
      return Status::OK();
    }
    if (leaf_pending) present_.push_back(existing);
    return Place(present_, path, result);  // Place never calls Rebuild
  }

  // The two halves of the page case of Rebuild, for the parallel root (ApplyUpdates): rebuilds
  // child `n` of the page `old` at `path` for `updates` (all below that child).
  Status RebuildChild(const Page& old, const NibblePath& path, std::uint8_t n,
                      std::span<const KeyUpdate> updates, ChildResults* children) {
    Slot& next = children->next[n];
    const Slot before = old.slot(n);
    if (Status st = Rebuild(before, path.Child(n), updates, &next); !st.ok()) return st;
    if (!(next == before)) {
      children->changed = static_cast<std::uint16_t>(children->changed | 1u << n);
    }
    return Status::OK();
  }

  // The page `existing` (holding `old`) at `path` with its rebuilt children.
  Status Assemble(const Slot& existing, const Page& old, const ChildResults& children,
                  const NibblePath& path, Slot* result) {
    if (children.changed == 0) {  // every update below was a no-op
      *result = existing;
      return Status::OK();
    }
    PageDraft page;  // sealed: only the changed slots rehash
    old.Expand(&page);
    for (int n = 0; n < kSlotsPerPage; ++n) {
      if (children.changed >> n & 1) page.slots[n] = children.next[n];
    }
    out_->stale_pages.emplace_back(existing.version, path);
    return Finish(&page, children.changed, path, result);
  }

 private:
  // Builds the subtree at `path` holding exactly the leaves `leaves` (sorted by key hash).
  Status Place(std::span<const Slot> leaves, const NibblePath& path, Slot* result) {
    if (leaves.empty()) {
      *result = Slot{};
      return Status::OK();
    }
    if (leaves.size() == 1) {
      *result = leaves[0];
      return Status::OK();
    }
    if (path.size() >= kMaxNibbles) {
      return Status::Corruption("two different keys share all 256 bits of their hash");
    }
    PageDraft page;
    std::size_t begin = 0;
    while (begin < leaves.size()) {
      const std::uint8_t n = NibbleAt(leaves[begin].key_hash, path.size());
      std::size_t end = begin + 1;
      while (end < leaves.size() && NibbleAt(leaves[end].key_hash, path.size()) == n) ++end;
      if (Status s = Place(leaves.subspan(begin, end - begin), path.Child(n), &page.slots[n]);
          !s.ok()) {
        return s;
      }
      begin = end;
    }
    return Finish(&page, 0xffff, path, result);
  }

  // Stores `page` at `path` unless it holds fewer than two keys, in which case it collapses.
  // `changed`: the slots that differ from the page's sealed nodes.
  Status Finish(PageDraft* page, std::uint16_t changed, const NibblePath& path, Slot* result) {
    int leaves = 0, pages = 0;
    const Slot* only = nullptr;
    for (const Slot& s : page->slots) {
      if (s.kind == Slot::Kind::kLeaf) ++leaves, only = &s;
      if (s.kind == Slot::Kind::kPage) ++pages;
    }
    if (leaves + pages == 0) {
      *result = Slot{};
    } else if (pages == 0 && leaves == 1) {
      *result = *only;
    } else {
      page->Reseal(changed);
      result->kind = Slot::Kind::kPage;
      result->hash = page->inner[0].hash;
      result->version = version_;
      result->key_hash = {};
      out_->new_pages.emplace_back(path, Page::Make(*page));
    }
    return Status::OK();
  }

  const PageReader& reader_;
  const Version version_;
  const KeyUpdate* base_;
  std::vector<Version>* outcomes_;
  std::vector<Hash>* previous_leaves_;
  TreeUpdate* out_;
  std::vector<Slot> present_;  // scratch for the leaf case
};

// The pages on the way from the root to a leaf, each with the slot taken.
using PageStack = std::vector<std::pair<std::shared_ptr<const Page>, std::uint8_t>>;

// Walks from `root` towards `key_hash`, recording each page passed and the nibble taken, and
// the nearest non-empty slot on each side of the walk (the deepest page that has one).
struct Descent {
  PageStack pages;
  Slot end;  // the slot where the walk stopped: empty, or a leaf
  struct Side {
    std::size_t level;  // index in `pages`
    std::uint8_t nibble;
  };
  std::optional<Side> left, right;
};

Status Descend(const PageReader& reader, const Slot& root, const Hash& key_hash, Descent* d) {
  Slot slot = root;
  NibblePath path;
  d->pages.reserve(8);
  while (slot.kind == Slot::Kind::kPage) {
    auto page = reader.LoadPage(slot.version, path);
    if (!page.ok()) return page.status();
    const Page& p = **page;
    const std::uint8_t n = NibbleAt(key_hash, path.size());
    const std::size_t level = d->pages.size();
    for (int j = n - 1; j >= 0; --j) {
      if (!p.slot_empty(j)) {
        d->left = Descent::Side{level, static_cast<std::uint8_t>(j)};
        break;
      }
    }
    for (int j = n + 1; j < kSlotsPerPage; ++j) {
      if (!p.slot_empty(j)) {
        d->right = Descent::Side{level, static_cast<std::uint8_t>(j)};
        break;
      }
    }
    slot = p.slot(n);
    d->pages.emplace_back(std::move(*page), n);
    path = path.Child(n);
  }
  d->end = slot;
  return Status::OK();
}

// The Merkle path of `leaf`, reached through `pages` (leaf to root).
LeafPath PathOf(const PageStack& pages, const Slot& leaf) {
  LeafPath path{leaf.key_hash, leaf.hash, {}, leaf.version};
  path.steps.reserve(pages.size() * 4);
  for (auto it = pages.rbegin(); it != pages.rend(); ++it) {
    const Page& page = *it->first;
    int idx = kSlotsPerPage - 1 + it->second;
    while (idx > 0) {
      const int parent = (idx - 1) / 2;
      const bool right = idx % 2 == 0;  // heap: left children are odd
      if (page.two_keys(parent)) {
        path.steps.push_back({right, page.Node(right ? idx - 1 : idx + 1).hash});
      }
      idx = parent;
    }
  }
  return path;
}

// Extends `pages` (which ends with the page holding `slot`, at `path`) down to the rightmost
// (or leftmost) leaf below `slot`.
Status EdgeLeaf(const PageReader& reader, Slot slot, NibblePath path, bool rightmost,
                PageStack* pages, Slot* leaf) {
  while (slot.kind == Slot::Kind::kPage) {
    auto page = reader.LoadPage(slot.version, path);
    if (!page.ok()) return page.status();
    int pick = -1;
    for (int i = 0; i < kSlotsPerPage; ++i) {
      const int j = rightmost ? kSlotsPerPage - 1 - i : i;
      if (!(*page)->slot_empty(j)) {
        pick = j;
        break;
      }
    }
    if (pick < 0) return Status::Corruption("a stored page has no keys");
    slot = (*page)->slot(pick);
    path = path.Child(static_cast<std::uint8_t>(pick));
    pages->emplace_back(std::move(*page), static_cast<std::uint8_t>(pick));
  }
  *leaf = slot;
  return Status::OK();
}

// The neighbour on one side of a descent: down from the slot beside the walk at side.level.
Status NeighbourPath(const PageReader& reader, const Descent& d, const Descent::Side& side,
                     bool rightmost, LeafPath* out) {
  PageStack pages;
  pages.reserve(side.level + 8);
  NibblePath path;
  for (std::size_t i = 0; i < side.level; ++i) {
    pages.push_back(d.pages[i]);
    path = path.Child(d.pages[i].second);
  }
  const std::shared_ptr<const Page>& beside = d.pages[side.level].first;
  pages.emplace_back(beside, side.nibble);
  path = path.Child(side.nibble);
  Slot leaf;
  if (Status s = EdgeLeaf(reader, beside->slot(side.nibble), path, rightmost, &pages, &leaf);
      !s.ok()) {
    return s;
  }
  // A leaf lies where its key hash leads: the slots taken are its first nibbles.
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (leaf.kind != Slot::Kind::kLeaf ||
        NibbleAt(leaf.key_hash, static_cast<int>(i)) != pages[i].second) {
      return Status::Corruption("a neighbour leaf is not where its key hash leads");
    }
  }
  *out = PathOf(pages, leaf);
  return Status::OK();
}

}  // namespace

NibblePath NibblePath::Child(std::uint8_t nibble) const {
  NibblePath c = *this;
  if (size_ % 2 == 0) {
    c.bytes_[size_ / 2] = static_cast<std::uint8_t>(nibble << 4);
  } else {
    c.bytes_[size_ / 2] = static_cast<std::uint8_t>(c.bytes_[size_ / 2] | (nibble & 0x0f));
  }
  ++c.size_;
  return c;
}

void NibblePath::AppendTo(std::string* out) const {
  out->push_back(static_cast<char>(size_));
  out->append(reinterpret_cast<const char*>(bytes_.data()), (size_ + 1) / 2);
}

Slot Slot::Leaf(const Hash& key_hash, const Hash& value_hash, Version version) {
  return LeafWithHash(key_hash, LeafHash(key_hash, value_hash), version);
}

Slot Slot::LeafWithHash(const Hash& key_hash, const Hash& leaf_hash, Version version) {
  Slot s;
  s.kind = Kind::kLeaf;
  s.key_hash = key_hash;
  s.hash = leaf_hash;
  s.version = version;
  return s;
}

Hash LeafHash(const Hash& key_hash, const Hash& value_hash) {
  return HashNode(0x00, key_hash, value_hash);
}

Hash InnerHash(const Hash& left, const Hash& right) { return HashNode(0x01, left, right); }

namespace {

constexpr std::size_t kLeafBytes = 32 + 32 + 8;  // key hash, leaf hash, value version
constexpr std::size_t kChildBytes = 32 + 8;      // page hash, page version

// The slots below heap node i (0..14) as a mask: node i is at depth d = floor(log2(i + 1)),
// j-th from the left on it, over 16 >> d slots.
constexpr std::array<std::uint16_t, kSlotsPerPage - 1> kNodeSlots = [] {
  std::array<std::uint16_t, kSlotsPerPage - 1> m{};
  for (int i = 0; i < kSlotsPerPage - 1; ++i) {
    int d = 0;
    while ((2 << d) <= i + 1) ++d;
    const int span = kSlotsPerPage >> d, j = i + 1 - (1 << d);
    m[i] = static_cast<std::uint16_t>(((1u << span) - 1) << (j * span));
  }
  return m;
}();

Version LoadVersion(const std::uint8_t* p) {
  std::int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Hash LoadHash(const std::uint8_t* p) {
  Hash h;
  std::memcpy(h.data(), p, h.size());
  return h;
}

std::uint16_t Below(int n) { return static_cast<std::uint16_t>((1u << n) - 1); }

// Bits set in a 16-bit mask, by table: the build targets baseline x86-64, where std::popcount
// is a call into libgcc (no POPCNT instruction), and proofs count bits at every node they read.
constexpr std::array<std::uint8_t, 256> kBits = [] {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(static_cast<unsigned>(i)));
  return t;
}();
std::size_t Pop16(unsigned mask) { return kBits[mask & 0xff] + kBits[mask >> 8 & 0xff]; }

}  // namespace

template <std::size_t N>
struct Page::Block {
  Page header;
  std::uint8_t data[N];
};

template <std::size_t N>
std::shared_ptr<const Page> Page::AllocateClass(const Page& header, std::uint8_t** data) {
  static_assert(offsetof(Block<N>, data) == sizeof(Page), "data() is right after the header");
  auto block = std::allocate_shared_for_overwrite<Block<N>>(PoolAllocator<Block<N>>());
  block->header = header;
  *data = block->data;
  const Page* page = &block->header;
  return std::shared_ptr<const Page>(std::move(block), page);
}

namespace {

// Page sizes come in steps of 128 data bytes, up to the largest page (16 leaves and 15 node
// hashes: 1,632 bytes).
constexpr std::size_t kSizeStep = 128;
constexpr std::size_t kSizeClasses = (16 * kLeafBytes + 15 * 32 + kSizeStep - 1) / kSizeStep;

}  // namespace

std::shared_ptr<const Page> Page::Allocate(const Page& header, std::uint8_t** data) {
  using Allocator = std::shared_ptr<const Page> (*)(const Page&, std::uint8_t**);
  static constexpr auto kTable = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Allocator, sizeof...(I)>{&AllocateClass<(I + 1) * kSizeStep>...};
  }(std::make_index_sequence<kSizeClasses>());
  const std::size_t size_class = header.data_bytes_ == 0 ? 0 : (header.data_bytes_ - 1) / kSizeStep;
  return kTable[size_class](header, data);
}

std::shared_ptr<const Page> Page::Make(const PageDraft& draft) {
  Page header;
  std::size_t bytes = 0;
  for (int n = 0; n < kSlotsPerPage; ++n) {
    if (draft.slots[n].kind == Slot::Kind::kLeaf) {
      header.leaf_mask_ |= static_cast<std::uint16_t>(1u << n);
      bytes += kLeafBytes;
    } else if (draft.slots[n].kind == Slot::Kind::kPage) {
      header.page_mask_ |= static_cast<std::uint16_t>(1u << n);
      bytes += kChildBytes;
    }
  }
  for (int i = 0; i < kSlotsPerPage - 1; ++i) {
    if (draft.inner[i].keys >= 2) {
      header.two_mask_ |= static_cast<std::uint16_t>(1u << i);
      bytes += 32;
    }
  }
  header.data_bytes_ = static_cast<std::uint16_t>(bytes);
  std::uint8_t* out = nullptr;
  std::shared_ptr<const Page> page = Allocate(header, &out);
  for (const Slot& s : draft.slots) {
    if (s.kind == Slot::Kind::kLeaf) {
      std::memcpy(out, s.key_hash.data(), 32);
      std::memcpy(out + 32, s.hash.data(), 32);
      std::memcpy(out + 64, &s.version, 8);
      out += kLeafBytes;
    } else if (s.kind == Slot::Kind::kPage) {
      std::memcpy(out, s.hash.data(), 32);
      std::memcpy(out + 32, &s.version, 8);
      out += kChildBytes;
    }
  }
  for (int i = 0; i < kSlotsPerPage - 1; ++i) {
    if (draft.inner[i].keys >= 2) {
      std::memcpy(out, draft.inner[i].hash.data(), 32);
      out += 32;
    }
  }
  return page;
}

std::size_t Page::SlotOffset(int n) const {
  return kLeafBytes * Pop16(leaf_mask_ & Below(n)) + kChildBytes * Pop16(page_mask_ & Below(n));
}

const std::uint8_t* Page::StoredHash(int i) const {
  const std::size_t slots = SlotOffset(kSlotsPerPage);
  return data() + slots + 32 * Pop16(two_mask_ & Below(i));
}

// The slot whose bytes start at `p` (a leaf's or a child page's, as the masks say).
Slot Page::ReadSlot(int n, const std::uint8_t* p) const {
  Slot s;
  if (leaf_mask_ >> n & 1) {
    s.kind = Slot::Kind::kLeaf;
    std::memcpy(s.key_hash.data(), p, 32);
    std::memcpy(s.hash.data(), p + 32, 32);
    s.version = LoadVersion(p + 64);
  } else if (page_mask_ >> n & 1) {
    s.kind = Slot::Kind::kPage;
    std::memcpy(s.hash.data(), p, 32);
    s.version = LoadVersion(p + 32);
  }
  return s;
}

Slot Page::slot(int n) const { return ReadSlot(n, data() + SlotOffset(n)); }

PageNode Page::Node(int i) const {
  if (i >= kSlotsPerPage - 1) {
    const int n = i - (kSlotsPerPage - 1);
    if (leaf_mask_ >> n & 1) return {LoadHash(data() + SlotOffset(n) + 32), 1};
    if (page_mask_ >> n & 1) return {LoadHash(data() + SlotOffset(n)), 2};
    return {};
  }
  if (two_mask_ >> i & 1) return {LoadHash(StoredHash(i)), 2};
  // Fewer than two keys below: none, or one leaf (a child page would make two).
  const std::uint16_t leaves = leaf_mask_ & kNodeSlots[i];
  if (leaves == 0) return {};
  return {LoadHash(data() + SlotOffset(std::countr_zero(leaves)) + 32), 1};
}

void Page::Expand(PageDraft* out) const {
  const std::uint8_t* p = data();
  for (int n = 0; n < kSlotsPerPage; ++n) {
    out->slots[n] = ReadSlot(n, p);
    p += (leaf_mask_ >> n & 1) ? kLeafBytes : (page_mask_ >> n & 1) ? kChildBytes : 0;
  }
  for (int i = 0; i < kSlotsPerPage - 1; ++i) {
    if (two_mask_ >> i & 1) {
      out->inner[i] = {LoadHash(p), 2};
      p += 32;
    } else {
      out->inner[i] = Node(i);
    }
  }
}

std::string Page::Encode() const {
  std::string out;
  EncodeTo(&out);
  return out;
}

void Page::EncodeTo(std::string* out_ptr) const {
  std::string& out = *out_ptr;
  out.clear();
  out.reserve(4 + kSlotsPerPage * 75);
  out.push_back(static_cast<char>(leaf_mask_ >> 8));
  out.push_back(static_cast<char>(leaf_mask_));
  out.push_back(static_cast<char>(page_mask_ >> 8));
  out.push_back(static_cast<char>(page_mask_));
  const std::uint8_t* p = data();
  for (int n = 0; n < kSlotsPerPage; ++n) {
    if (leaf_mask_ >> n & 1) {
      out.append(reinterpret_cast<const char*>(p), 64);  // key hash, leaf hash
      AppendUvarint(static_cast<std::uint64_t>(LoadVersion(p + 64)), &out);
      p += kLeafBytes;
    } else if (page_mask_ >> n & 1) {
      out.append(reinterpret_cast<const char*>(p), 32);
      AppendUvarint(static_cast<std::uint64_t>(LoadVersion(p + 32)), &out);
      p += kChildBytes;
    }
  }
}

std::shared_ptr<const Page> Page::Decode(std::string_view in) {
  if (in.size() < 4) return nullptr;
  const auto b = [&](int i) { return static_cast<std::uint8_t>(in[i]); };
  const std::uint16_t leaf_mask = static_cast<std::uint16_t>(b(0) << 8 | b(1));
  const std::uint16_t page_mask = static_cast<std::uint16_t>(b(2) << 8 | b(3));
  if ((leaf_mask & page_mask) != 0) return nullptr;
  in.remove_prefix(4);
  PageDraft draft;
  for (int i = 0; i < kSlotsPerPage; ++i) {
    Slot& s = draft.slots[i];
    if (leaf_mask & (1u << i)) {
      Hash kh, leaf;
      std::uint64_t v = 0;
      if (!ReadHash(&in, &kh) || !ReadHash(&in, &leaf) || !ReadUvarint(&in, &v)) return nullptr;
      s = Slot::LeafWithHash(kh, leaf, static_cast<Version>(v));
    } else if (page_mask & (1u << i)) {
      std::uint64_t v = 0;
      s.kind = Slot::Kind::kPage;
      if (!ReadHash(&in, &s.hash) || !ReadUvarint(&in, &v)) return nullptr;
      s.version = static_cast<Version>(v);
    }
  }
  if (!in.empty()) return nullptr;
  draft.Seal();
  return Make(draft);
}

PageNode PageDraft::Node(int i) const {
  return i < kSlotsPerPage - 1 ? inner[i] : ValueOf(slots[i - (kSlotsPerPage - 1)]);
}

void PageDraft::Reseal(std::uint16_t changed) {
  // Bit i: heap node i must be recomputed (the slots' level, 15..30, from `changed`).
  std::uint32_t dirty = static_cast<std::uint32_t>(changed) << (kSlotsPerPage - 1);
  for (int i = kSlotsPerPage - 2; i >= 0; --i) {
    if ((dirty >> (2 * i + 1) & 3) == 0) continue;
    inner[i] = Combine(Node(2 * i + 1), Node(2 * i + 2));
    dirty |= 1u << i;
  }
}

Status ApplyUpdates(const PageReader& reader, const Slot& root, Version version,
                    std::span<const KeyUpdate> updates, TreeUpdate* out, bool parallel) {
  out->outcomes.assign(updates.size(), kNoop);
  out->previous_leaves.assign(updates.size(), Hash{});
  Updater updater(reader, version, updates.data(), &out->outcomes, &out->previous_leaves, out);
  // Two threads when the root is a page and the updates fall under more than one of its
  // slots: the root's children are split in two runs of slots, in order, with about half the
  // updates each. The second run is rebuilt on a helper thread into its own page lists, which
  // are appended after the first run's: every list comes out exactly as one thread makes it
  // (children in slot order, then the root), whatever the timing.
  if (!parallel || root.kind != Slot::Kind::kPage || updates.size() < kMinParallelUpdates ||
      NibbleAt(updates.front().key_hash, 0) == NibbleAt(updates.back().key_hash, 0)) {
    return updater.Rebuild(root, NibblePath(), updates, &out->root);
  }
  auto loaded = reader.LoadPage(root.version, NibblePath());
  if (!loaded.ok()) return loaded.status();
  const Page& old = **loaded;
  // The first update of the second run: the start of the root slot holding the middle update,
  // or of the slot after it when that slot starts the whole span.
  const auto nibble = [&](std::size_t i) { return NibbleAt(updates[i].key_hash, 0); };
  std::size_t cut = updates.size() / 2;
  while (cut > 0 && nibble(cut - 1) == nibble(cut)) --cut;
  if (cut == 0) {
    cut = updates.size() / 2;
    while (cut < updates.size() && nibble(cut) == nibble(0)) ++cut;
  }
  const auto first = updates.first(cut), second = updates.subspan(cut);
  // The helper writes the second run's slots into `children` and its pages into
  // `second_pages` (both declared before the future, which joins in its destructor); this
  // thread writes the first run's into `first_children` and `out`. Each writes only its own
  // updates' entries of out->outcomes and out->previous_leaves (sized before either starts).
  ChildResults children;
  TreeUpdate second_pages;
  auto rebuild_second = std::async(std::launch::async, [&] {
    Updater helper(reader, version, updates.data(), &out->outcomes, &out->previous_leaves,
                   &second_pages);
    return ForEachGroup(second, 0, [&](std::uint8_t n, auto group) {
      return helper.RebuildChild(old, NibblePath(), n, group, &children);
    });
  });
  ChildResults first_children;
  Status s = ForEachGroup(first, 0, [&](std::uint8_t n, auto group) {
    return updater.RebuildChild(old, NibblePath(), n, group, &first_children);
  });
  const Status s2 = rebuild_second.get();  // rethrows what the helper threw
  if (!s.ok()) return s;
  if (!s2.ok()) return s2;
  for (int n = 0; n < kSlotsPerPage; ++n) {
    if (first_children.changed >> n & 1) children.next[n] = first_children.next[n];
  }
  children.changed = static_cast<std::uint16_t>(children.changed | first_children.changed);
  out->new_pages.insert(out->new_pages.end(),
                        std::make_move_iterator(second_pages.new_pages.begin()),
                        std::make_move_iterator(second_pages.new_pages.end()));
  out->stale_pages.insert(out->stale_pages.end(), second_pages.stale_pages.begin(),
                          second_pages.stale_pages.end());
  return updater.Assemble(root, old, children, NibblePath(), &out->root);
}

Status Lookup(const PageReader& reader, const Slot& root, const Hash& key_hash,
              TreeLookup* out) {
  *out = TreeLookup{};
  Descent d;
  if (Status s = Descend(reader, root, key_hash, &d); !s.ok()) return s;
  if (d.end.kind == Slot::Kind::kLeaf) {
    // Present, or the only key in the subtree the target falls in: then the nearest on its
    // side, and the walk itself is its path.
    const bool found = d.end.key_hash == key_hash;
    (found ? out->found : d.end.key_hash < key_hash ? out->left : out->right) =
        PathOf(d.pages, d.end);
    if (found) return Status::OK();
  }
  if (!out->left && d.left) {
    out->left.emplace();
    if (Status s = NeighbourPath(reader, d, *d.left, true, &*out->left); !s.ok()) return s;
  }
  if (!out->right && d.right) {
    out->right.emplace();
    if (Status s = NeighbourPath(reader, d, *d.right, false, &*out->right); !s.ok()) return s;
  }
  return Status::OK();
}

Status FindLeaf(const PageReader& reader, const Slot& root, const Hash& key_hash, Slot* leaf) {
  Slot slot = root;
  NibblePath path;
  while (slot.kind == Slot::Kind::kPage) {
    auto page = reader.LoadPage(slot.version, path);
    if (!page.ok()) return page.status();
    const std::uint8_t n = NibbleAt(key_hash, path.size());
    slot = (*page)->slot(n);
    path = path.Child(n);
  }
  *leaf = slot.kind == Slot::Kind::kLeaf && slot.key_hash == key_hash ? slot : Slot{};
  return Status::OK();
}

namespace {

// CollectLeaves' depth-first walk: slots left to right, skipping the subtrees wholly below
// `from` (only the slots on from's own path can hold key hashes on both sides of it).
class LeafCollector {
 public:
  LeafCollector(const PageReader& reader, const Hash& from, std::size_t limit,
                std::vector<Slot>* out)
      : reader_(reader), from_(from), limit_(limit), out_(out) {}

  // `on_from_path`: the path is a prefix of from_ (below it, key hashes may be under from_).
  Status Visit(const Slot& slot, const NibblePath& path, bool on_from_path) {
    if (slot.kind == Slot::Kind::kEmpty || out_->size() >= limit_) return Status::OK();
    if (slot.kind == Slot::Kind::kLeaf) {
      for (int i = 0; i < path.size(); ++i) {
        if (NibbleAt(slot.key_hash, i) != path.at(i)) {
          return Status::Corruption("a leaf at depth " + std::to_string(path.size()) +
                                    " is not where its key hash leads");
        }
      }
      if (!on_from_path || slot.key_hash >= from_) out_->push_back(slot);
      return Status::OK();
    }
    auto page = reader_.LoadPage(slot.version, path);
    if (!page.ok()) return page.status();
    const Page& p = **page;
    if (p.hash() != slot.hash) {
      return Status::Corruption("the tree page at version " + std::to_string(slot.version) +
                                " depth " + std::to_string(path.size()) +
                                " does not hash to what its parent names");
    }
    const int first = on_from_path ? NibbleAt(from_, path.size()) : 0;
    for (int j = first; j < kSlotsPerPage && out_->size() < limit_; ++j) {
      if (p.slot_empty(j)) continue;
      const auto nibble = static_cast<std::uint8_t>(j);
      if (Status s = Visit(p.slot(j), path.Child(nibble), on_from_path && j == first); !s.ok()) {
        return s;
      }
    }
    return Status::OK();
  }

 private:
  const PageReader& reader_;
  const Hash& from_;
  const std::size_t limit_;
  std::vector<Slot>* out_;
};

}  // namespace

Status CollectLeaves(const PageReader& reader, const Slot& root, const Hash& from,
                     std::size_t limit, std::vector<Slot>* out) {
  LeafCollector collector(reader, from, limit, out);
  return collector.Visit(root, NibblePath(), /*on_from_path=*/true);
}

bool NextKeyHash(Hash* h) {
  Hash next = *h;
  for (auto it = next.rbegin(); it != next.rend(); ++it) {
    if (++*it != 0) {  // no carry out of this byte
      *h = next;
      return true;
    }
  }
  return false;  // every byte was 0xff
}

Hash RootFromPath(const LeafPath& path) {
  Hash h = path.leaf_hash;
  for (const PathStep& step : path.steps) {
    h = step.we_are_right ? InnerHash(step.sibling, h) : InnerHash(h, step.sibling);
  }
  return h;
}

}  // namespace kairos::store
