// The sparse Merkle tree: a binary tree over sha256(key), hashed exactly as ICS-23's SmtSpec,
// stored as pages of 4 binary levels (16 slots each).
//
//   leaf  = sha256(0x00 || sha256(key) || sha256(value))
//   inner = sha256(0x01 || left || right)
//   empty subtree = 32 zero bytes; a subtree holding one key collapses to its leaf.
//
// The root therefore depends only on the set of (key, value) pairs. A page at nibble path P
// holds the 16 subtrees below P: each slot is empty, one leaf (a subtree with one key), or a
// child page (a subtree with two or more keys). Pages are immutable and identified by
// (version, path): an update writes new pages at the new version and reports the old ones as
// stale, so every committed version stays readable until pruned.
//
// Pure functions over a PageReader; no I/O of their own. Thread-compatible; ApplyUpdates may
// use one helper thread of its own (see there).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/sha256.h"
#include "store/status.h"

namespace kairos::store {

using Version = std::int64_t;

inline constexpr int kSlotsPerPage = 16;
inline constexpr int kMaxNibbles = 64;  // 256 bits of key hash

// A position in the tree: the first `size()` nibbles of a key hash, most significant first.
class NibblePath {
 public:
  NibblePath() = default;
  int size() const { return size_; }
  std::uint8_t at(int i) const {
    return i % 2 == 0 ? bytes_[i / 2] >> 4 : bytes_[i / 2] & 0x0f;
  }
  NibblePath Child(std::uint8_t nibble) const;
  // size byte followed by the packed nibbles.
  void AppendTo(std::string* out) const;
  bool operator==(const NibblePath& o) const { return size_ == o.size_ && bytes_ == o.bytes_; }
  // The nibbles packed two a byte, most significant first ((size() + 1) / 2 bytes; an odd
  // path's last low nibble is 0).
  std::span<const std::uint8_t> packed() const {
    return {bytes_.data(), static_cast<std::size_t>((size_ + 1) / 2)};
  }

 private:
  std::array<std::uint8_t, 32> bytes_{};
  int size_ = 0;
};

// The nibble of `key_hash` at depth `i`.
inline std::uint8_t NibbleAt(const Hash& key_hash, int i) {
  return i % 2 == 0 ? key_hash[i / 2] >> 4 : key_hash[i / 2] & 0x0f;
}

struct Slot {
  enum class Kind : std::uint8_t { kEmpty = 0, kLeaf = 1, kPage = 2 };
  Kind kind = Kind::kEmpty;
  Hash hash{};         // leaf hash, or the child page's root hash; zero when empty
  Hash key_hash{};     // kLeaf
  // kPage: the version the child page was written at. kLeaf: the version its value was
  // written at (where the value record lives; not part of any hash).
  Version version = 0;

  // A leaf from its key and value hashes (computes the leaf hash).
  static Slot Leaf(const Hash& key_hash, const Hash& value_hash, Version version = 0);
  // A leaf whose hash is already known.
  static Slot LeafWithHash(const Hash& key_hash, const Hash& leaf_hash, Version version = 0);
  bool operator==(const Slot& o) const {
    return kind == o.kind && hash == o.hash && version == o.version && key_hash == o.key_hash;
  }
  bool empty() const { return kind == Kind::kEmpty; }
};

// A binary node inside a page: its hash and how many keys lie below it, saturated at 2 ("two
// or more"), which is all the collapse rule needs.
struct PageNode {
  Hash hash{};
  std::uint8_t keys = 0;
};

// A page being built or edited: its 16 slots and the 15 binary nodes above them, in fixed
// arrays (~1.8 KB; the updater keeps one on its stack per level it is rebuilding).
struct PageDraft {
  std::array<Slot, kSlotsPerPage> slots;
  // The 15 binary nodes above the slots, in heap order (0 is the page root); heap nodes
  // 15..30 are the slots themselves (Node).
  std::array<PageNode, kSlotsPerPage - 1> inner;

  // Heap node i (0..30): inner[i], or slot i - 15 as a node.
  PageNode Node(int i) const;
  // Computes `inner` from `slots`.
  void Seal() { Reseal(0xffff); }
  // Recomputes only the nodes above the slots in `changed` (bit i = slot i); the others must be
  // sealed already. A page rebuilt for one changed slot costs 4 hashes instead of 15.
  void Reseal(std::uint16_t changed);
};

// A stored page: immutable and compact. It keeps only its non-empty slots (a leaf as key hash,
// leaf hash and value version, 72 bytes; a child page as its hash and version, 40 bytes) and
// the hashes of the binary nodes with two or more keys below them; the other nodes are empty
// or a leaf's own hash, which the slot masks give. Most pages of a large tree hold two or three
// leaves: ~0.3 KB each in memory instead of the draft's ~1.8 KB. One allocation (the shared_ptr
// control block included), from a pool of free blocks per size class (128-byte steps): a
// block's update frees and makes tens of thousands of pages, and glibc's malloc served those
// slowly (merging scattered free neighbours). The pool keeps up to 128 MB of free blocks for
// reuse and never returns memory to the system; thread-safe.
class Page {
 public:
  // REQUIRES: `draft` sealed, with two or more keys (a smaller subtree collapses).
  static std::shared_ptr<const Page> Make(const PageDraft& draft);
  // Compact encoding of the slots: two 16-bit masks, then each non-empty slot in order (a leaf
  // as key hash, leaf hash and value version, a page as its hash and version; versions as
  // varints). Decode computes the nodes above the slots, so proofs never hash a page again;
  // nullptr when `in` is malformed.
  static std::shared_ptr<const Page> Decode(std::string_view in);
  std::string Encode() const;
  void EncodeTo(std::string* out) const;  // replaces *out, reusing its capacity

  Slot slot(int n) const;
  bool slot_empty(int n) const { return ((leaf_mask_ | page_mask_) >> n & 1) == 0; }
  // Heap node i (0..30), as PageDraft::Node.
  PageNode Node(int i) const;
  // Whether inner node i (0..14) has two or more keys below it (Node(i).keys == 2).
  bool two_keys(int i) const { return (two_mask_ >> i & 1) != 0; }
  Hash hash() const { return Node(0).hash; }
  // The draft this page was made from (sealed).
  void Expand(PageDraft* out) const;
  // Bytes this page takes, its header included (not the control block).
  std::size_t bytes() const { return sizeof(Page) + data_bytes_; }

 private:
  // A page's block of memory: the header and N bytes of data (a size class of 128 bytes).
  template <std::size_t N>
  struct Block;
  template <std::size_t N>
  static std::shared_ptr<const Page> AllocateClass(const Page& header, std::uint8_t** data);
  // A page of `header.data_bytes_` bytes of data; *data points at them.
  static std::shared_ptr<const Page> Allocate(const Page& header, std::uint8_t** data);

  // Private: a copy would not carry the bytes after the header (only Make copies one, into
  // its block).
  Page() = default;
  Page(const Page&) = default;
  Page& operator=(const Page&) = default;
  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(this + 1); }
  std::size_t SlotOffset(int n) const;
  Slot ReadSlot(int n, const std::uint8_t* p) const;
  const std::uint8_t* StoredHash(int i) const;  // REQUIRES: two_mask_ bit i

  std::uint16_t leaf_mask_ = 0;
  std::uint16_t page_mask_ = 0;
  std::uint16_t two_mask_ = 0;  // bit i: heap node i (0..14) has two or more keys below it
  std::uint16_t data_bytes_ = 0;
  // Followed by the slots' bytes, then one 32-byte hash per bit of two_mask_, in node order.
};

Hash LeafHash(const Hash& key_hash, const Hash& value_hash);
Hash InnerHash(const Hash& left, const Hash& right);
inline constexpr Hash kEmptyHash{};

// Where pages come from (the store's cache and database). A reader passed to ApplyUpdates
// with `parallel` has LoadPage called from two threads at once, so it must be thread-safe (the
// store is); a view's readers (RecentReader, Reconstruction) are not: they read through one
// LevelDB iterator.
class PageReader {
 public:
  virtual ~PageReader() = default;
  virtual Result<std::shared_ptr<const Page>> LoadPage(Version version,
                                                      const NibblePath& path) const = 0;
};

// One key's change: a new leaf hash (LeafHash(key_hash, sha256(value))), or nullopt to delete.
struct KeyUpdate {
  Hash key_hash;
  std::optional<Hash> leaf_hash;
  // The version the new leaf's value was written at; 0: the update's own version. Undoing a
  // change (rebuilding an older tree from a newer one) restores a leaf of an earlier version.
  Version leaf_version = 0;
};

// What an update did: kNoop (deleting an absent key, or the same value again), kInserted (the
// key was absent), or the version its previous value was written at (> 0).
inline constexpr Version kNoop = -1;
inline constexpr Version kInserted = 0;

struct TreeUpdate {
  Slot root;  // the new root: empty, a single leaf, or the root page
  std::vector<std::pair<NibblePath, std::shared_ptr<const Page>>> new_pages;  // at the version
  std::vector<std::pair<Version, NibblePath>> stale_pages;  // replaced or removed
  std::vector<Version> outcomes;  // one per update, in order: kNoop, kInserted or a version
  // One per update: the leaf hash it replaced where its outcome is a version (else zero).
  std::vector<Hash> previous_leaves;
};

// Applies `updates` (REQUIRES: sorted by key_hash, no duplicates) to the tree whose root slot is
// `root`, writing new pages and leaves at `version` (REQUIRES: at or above every existing
// page's version; a page at `version` that the update replaces is reported stale under the id
// its replacement gets, so a holder of pages by id must drop the stale ones before it adds the
// new ones: how a rebuild applies one version's updates in slices). A no-op update (see kNoop)
// changes nothing: a subtree whose updates are all no-ops keeps its page. With `parallel`, the root page's children are rebuilt on two threads (the
// calling one and one more); the result is the same in every field and order.
Status ApplyUpdates(const PageReader& reader, const Slot& root, Version version,
                    std::span<const KeyUpdate> updates, TreeUpdate* out, bool parallel = false);

// One step of a Merkle path, leaf to root: the sibling's hash and which side we are on.
struct PathStep {
  bool we_are_right;  // true: parent = H(0x01 || sibling || us); false: H(0x01 || us || sibling)
  Hash sibling;
};

struct LeafPath {
  Hash key_hash;
  Hash leaf_hash;               // LeafHash(key_hash, sha256(value))
  std::vector<PathStep> steps;  // leaf to root
  Version leaf_version = 0;     // where the leaf's value record lives (not hashed)
};

// The answer to "where is this key hash" in one version of the tree.
struct TreeLookup {
  std::optional<LeafPath> found;  // the key is present
  // When absent: its neighbours in key-hash order (either may be missing at an edge).
  std::optional<LeafPath> left;
  std::optional<LeafPath> right;
};

Status Lookup(const PageReader& reader, const Slot& root, const Hash& key_hash, TreeLookup* out);

// The leaf slot of `key_hash` (its leaf hash and the version its value was written at), or an
// empty slot when the key is absent. One walk down, no paths: what a point read needs.
Status FindLeaf(const PageReader& reader, const Slot& root, const Hash& key_hash, Slot* leaf);

// Appends to `out` the leaf slots of the tree at `root` whose key hash is `from` or above, in
// key-hash order, until `out` holds `limit` slots (the walk loads only the pages it goes
// through). Checks that every page it loads hashes to what its parent slot names and that every
// leaf lies where its key hash leads, so the leaves of a trusted root are authenticated (each
// leaf's value is checked against its leaf hash by whoever reads it). To go on, call again
// from the key hash after the last one (NextKeyHash).
Status CollectLeaves(const PageReader& reader, const Slot& root, const Hash& from,
                     std::size_t limit, std::vector<Slot>* out);

// The key hash after `*h` as a 256-bit big-endian number; false (and *h unchanged) when *h is
// the largest.
bool NextKeyHash(Hash* h);

// Recomputes the root from a path (for tests and self-checks).
Hash RootFromPath(const LeafPath& path);

}  // namespace kairos::store
