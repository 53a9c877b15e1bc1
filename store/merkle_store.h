// MerkleStore: the versioned, authenticated key-value store behind the app hash.
//
// One LevelDB holds, under one-byte prefixes (big-endian integers, so keys sort by number):
//   C | version                   the version's changeset: its key hashes, sorted, each with the
//                                 new leaf hash or a delete, and the version of the value it
//                                 replaced. Enough to replay the tree, and to prune values.
//   V | sha256(key) | ~version    every value written at that version (flag, key, value), or a
//                                 tombstone (deleted at that version): history, and the one read
//                                 a proof needs per leaf (leaf slots carry their value's version)
//   S | key                       the latest version of a present key: the key index, for range
//                                 scans in key order (values come from V; the value cache holds
//                                 the hot ones)
//   N | version | nibble path     a tree page (smt.h), immutable. Written only at checkpoints.
//   K | version                   a durable checkpoint: every page reachable from its root is in N
//   R | version                   the root of that version: kind, hash, leaf or page pointer
//   Y | version                   the on-disk pages that version replaced, for pruning
//   M | "latest" / "earliest" / "format" / "commit_info"   markers
//
// Lifecycle: Stage(version, changes) computes the new root in memory and builds one WriteBatch;
// nothing touches the disk. Commit() writes that batch with sync=true: values, changeset, root
// and markers, but no pages. Pages made since the last durable checkpoint live in memory. Every
// `checkpoint_interval` versions the pages reachable from that version's root that are not on
// disk yet are written, spread over the next versions' batches; the batch with the last of them
// also writes the K record. Open loads the last durable checkpoint and replays the changesets
// above it, and checks the root it gets against the stored one. A crash leaves either the
// previous version or the new one. Pruning (keep at least the N most recent versions; the
// oldest kept version moves a share per commit toward a target that moves every K versions)
// rides in the same batch, so it is atomic and idempotent too; it keeps the checkpoint at or
// below the oldest kept version and everything needed to replay from it.
//
// Thread-safety: Stage, Commit, Get, Iterate and the accessors are called from one thread (the
// ABCI application executor). Inside a call, Stage and Commit may use one helper thread for a
// large block (hashing, half of the tree update, the in-memory update after the write); the
// results do not depend on it. View() (and GetAt, Prove and CheckVersion, which go through a
// view) may be called from any thread at any time, also while the executor stages and commits:
// a StoreView reads one committed version through a LevelDB snapshot, and the in-memory tree
// under a reader lock that Commit takes as a writer only for its own update. So a query on
// another thread never delays a block by more than one tree walk, and never sees half a commit.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "store/kv.h"
#include "store/seeded_hash.h"
#include "store/smt.h"
#include "store/snapshot.h"

namespace leveldb {
class Cache;
class DB;
class Env;
class FilterPolicy;
class Iterator;
class Snapshot;
}  // namespace leveldb

namespace kairos::store {

struct StoreOptions {
  std::string dir;
  KvLimits limits;
  std::int64_t keep_recent = 100;    // versions kept for queries and proofs; 0 keeps all
  // The window's target start moves every this many versions (to that version minus
  // keep_recent plus one); every commit moves the oldest kept version an equal share of the
  // way, so it reaches the target at the version before the next move and the deletes are
  // spread over the interval.
  std::int64_t prune_interval = 10;
  // Tree pages reach the disk every this many versions (the writes spread over the following
  // versions' batches); between checkpoints they live in memory and the changesets are what is
  // durable. 1 writes every version's pages in its own batch. Not part of any hash. Longer:
  // fewer page bytes per block (a page replaced inside an interval is never written), more
  // memory, and a longer replay at open and for proofs at past heights. 30 against 10:
  // updates/s +28% and disk -24% at 1M keys, memory +11% (docs/benchmarks.md, session 8); 50
  // against 30 (session 10): updates/s +8-15% at 1M and +1-10% at 10M keys (one run each
  // of two), disk after compaction -8% at 1M and 3.06 -> 2.99x raw at 10M, peak memory level.
  std::int64_t checkpoint_interval = 50;
  // On-disk pages kept in memory (an LRU of the latest tree's pages; a tree has about a third
  // as many pages as keys, ~0.6 KB each with the cache's index). The default holds a 12M-key
  // tree, ~2.5 GB; until session 13 it was 1,000,000 pages of ~1.8 KB. 10M keys with 4M
  // pages instead of 1M: updates/s 38k -> 54k, no page read from disk (docs/benchmarks.md,
  // session 13).
  std::size_t page_cache_pages = 4000000;
  std::size_t block_cache_bytes = 128u << 20;
  // Latest values kept in memory (second chance, write-through at Commit, like the Cosmos
  // SDK's inter-block cache): the accounts and balances a block just wrote are what the next
  // CheckTx and block read, and a proof's leaves found here need no value read (~430 bytes an
  // entry with 32-byte keys and 100-byte values, an estimate). Queries share it with blocks: a
  // leaf a proof at the latest height reads from disk is cached like a Get's. 0 turns it off.
  // 64 MB until session 10.
  std::size_t value_cache_bytes = 256u << 20;
  // LevelDB's memtable. LevelDB stops writes while its level 0 holds 12 files (compiled in);
  // at 10M keys on 2 cores compaction falls behind: 64 MB memtables reached that (a 2.8 s
  // commit) in session 8, and 128 MB ones did too once the store got faster in session 9
  // (3.2 and 9.5 s commits), while with 256 MB level 0 never held more than 5 files (one run
  // each; level at 1M keys; docs/benchmarks.md). Costs up to twice this in memory, and its log
  // is replayed at open after a crash.
  std::size_t write_buffer_bytes = 256u << 20;
  // Read every table with checksums at open, naming a corrupt file. Costs one full read of
  // the database (seconds per GB).
  bool verify_on_open = true;
  // The trees of this many versions below the latest stay readable from memory, for queries
  // and proofs at recent heights (a light client proves at the latest height minus one or two):
  // the in-memory pages a commit replaces are freed this many commits later instead of at once
  // (about a block's changed pages each: ~10 MB for 10k updates). Older versions are rebuilt
  // from the newest checkpoint by replaying or undoing changesets (rebuild_cache). 0: only the
  // latest.
  std::int64_t recent_versions = 4;
  // Past trees rebuilt for queries kept for reuse, most recently used first: a rebuild costs up
  // to a checkpoint interval of changesets, and one rebuild moves forward or back cheaply to a
  // nearby version. Each holds the pages its replay made and pins the database state it read
  // (a LevelDB snapshot); a rebuild whose checkpoint is pruned is dropped at the next commit.
  std::size_t rebuild_cache = 4;
  // Table files (compactions, memtable flushes) are written back to disk every this many bytes
  // as they grow, instead of all at their final sync, which the commit's log sync otherwise
  // waits behind (store/leveldb_env.h). 0: LevelDB's own behaviour.
  std::size_t table_bytes_per_sync = 1u << 20;
  // The Env under LevelDB's file I/O; nullptr is LevelDB's default. The store puts its table
  // write-back (above) on top of it. For tests that inject I/O failures. Must outlive the
  // store.
  leveldb::Env* env = nullptr;
};

// A proof of one key's presence: the ICS-23 ExistenceProof content for SmtSpec.
struct ExistenceProof {
  std::string key;
  std::string value;
  LeafPath path;
};

// Either `exist`, or the absent key's neighbours `left`/`right` (at least one of them).
struct KeyProof {
  std::optional<ExistenceProof> exist;
  std::optional<ExistenceProof> left;
  std::optional<ExistenceProof> right;
};

// One key of a version, as a walk of its tree (StoreView::ForEachLeaf) gives it. The views
// point into the walk's buffers: valid during the visit only.
struct StoreLeaf {
  Hash key_hash;            // sha256(key): the walk's order
  std::string_view key;
  std::string_view value;   // checked against the leaf's hash
  Version value_version;    // the version that wrote the value
};
// Called once per leaf; a non-OK status ends the walk, which returns it (a caller that wants
// to stop early returns a status of its own and recognises it).
using LeafVisitor = std::function<Status(const StoreLeaf&)>;
// During a walk (StoreView::ForEachLeafWithPaths): the authenticated path of a leaf of the
// walked version, looked up in the walk's own tree. Corruption when the key hash has no leaf.
using WalkPathOf = std::function<Status(const Hash& key_hash, LeafPath* path)>;
using LeafPathVisitor = std::function<Status(const StoreLeaf&, const WalkPathOf&)>;
// Called by a walk between units of its own work that no visit covers (rebuilding a version
// that left memory: tens of seconds at 10M keys), so the caller may wait there (the snapshot
// writer waits while a block runs); a non-OK status (cancelled) ends the walk with it.
using WalkPause = std::function<Status()>;
// Leaves a walk collects per step: under the view lock when the tree is in memory, so a commit
// waits for one step's walk at most (a few hundred leaves, their pages mostly in memory).
inline constexpr std::size_t kStoreWalkBatch = 256;

class MerkleStore;

// A read-only view of one committed version: point reads, range scans (of the latest version),
// walks of every key (any kept version) and proofs, from any thread, while the executor goes
// on staging and committing. It reads the database through a LevelDB snapshot taken when the
// view was made, so what it sees never changes, and never fills a cache that blocks use (the value cache is only looked up, the
// page cache only read). A view of a version that has been pruned since it was made still
// answers. Immutable and thread-safe; made by MerkleStore::View. REQUIRES: the store outlives
// its views.
class StoreView final : public KvReader, public std::enable_shared_from_this<StoreView> {
 public:
  Version version() const { return version_; }
  const Hash& root_hash() const { return root_hash_; }
  // The commit info saved with the version (MerkleStore::commit_info) when the view was made
  // of the latest version; "" for an older version.
  const std::string& commit_info() const { return commit_info_; }

  // The value of `key` at this version; NotFound when absent.
  Status Get(std::string_view key, std::string* value) const override;
  // Keys in [start, end) with their values at this version, in key order. Only for a view made
  // of the latest version (the key index is not versioned): any other view returns an
  // iterator whose status is InvalidArgument. The iterator holds the view.
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;
  // The proof of `key` at this version: the tree is in memory for the latest version and the
  // store's recent_versions before it; an older one is rebuilt from a checkpoint (or taken
  // from the store's rebuild cache). InvalidArgument for an empty tree.
  Status Prove(std::string_view key, KeyProof* out) const;
  // Visits every key of this version with its value, in key-hash order (sha256(key), the
  // tree's order: deterministic, not key order), from the first key hash at or above `from`.
  // Works at every kept version, the latest or not: it walks the version's tree (in memory
  // when recent, else rebuilt as for Prove) and reads each leaf's value from V at the leaf's
  // version, checked against the leaf hash (a page that does not hash to its parent's slot, a
  // misplaced leaf or a value that does not match its leaf is Corruption). Memory stays
  // bounded (a batch of leaf slots and one value at a time, plus a rebuild's pages): it walks
  // kStoreWalkBatch leaves at a time, holding the store's view lock for one batch of an
  // in-memory tree at most, so commits go on between batches; a rebuild needs no lock. For an
  // export, or a state sync snapshot streamed leaf by leaf (the order lets key-hash ranges be
  // cut into chunks).
  Status ForEachLeaf(const LeafVisitor& visit, const Hash& from = kEmptyHash) const;
  // As ForEachLeaf; each visit may also ask for the path of any leaf of the version (the
  // snapshot writer proves each chunk's first and last leaf). The path comes from the tree the
  // walk walks: a version that left memory is rebuilt once for the walk and its proofs, where
  // a Prove would rebuild it a second time (the walk keeps its rebuild until it ends).
  // `pause` (may be empty) is called between slices of a rebuild the walk (or a path lookup)
  // makes.
  Status ForEachLeafWithPaths(const LeafPathVisitor& visit, const Hash& from = kEmptyHash,
                              const WalkPause& pause = {}) const;

 private:
  friend class MerkleStore;
  StoreView() = default;

  const MerkleStore* store_ = nullptr;
  std::shared_ptr<const leveldb::Snapshot> snapshot_;
  Version version_ = 0;
  Version latest_when_made_ = 0;  // the store's latest version when the view was made
  bool latest_ = false;           // version_ was that version
  Slot root_;
  Hash root_hash_{};
  std::string commit_info_;
};

class MerkleStore final : public KvReader, private PageReader {
 public:
  // Opens or creates the store. Checks that the latest root record matches its root node.
  static Result<std::unique_ptr<MerkleStore>> Open(const StoreOptions& options);
  ~MerkleStore() override;

  Version version() const { return latest_.version; }  // 0 before the first commit
  const Hash& root_hash() const { return latest_.hash; }
  Version earliest_version() const { return earliest_; }  // oldest version still queryable
  // The commit info saved with the latest version ("" before the first commit).
  const std::string& commit_info() const { return commit_info_; }
  const KvLimits& limits() const { return options_.limits; }

  // The latest committed version. An iterator is valid until the next Commit: read after it,
  // its status is InvalidArgument.
  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;

  // The latest committed version and its root (version 0 and the empty hash before the first
  // commit), read together. Thread-safe (version() and root_hash() are the executor's).
  struct Committed {
    Version version = 0;
    Hash root{};
  };
  Committed LatestCommitted() const;
  // A view of committed `version` (0: the latest) for reads and proofs from any thread (see
  // StoreView). InvalidArgument when the version is pruned, in the future, or was never written
  // (below the chain's initial height), or when nothing is committed yet. Thread-safe.
  Result<std::shared_ptr<const StoreView>> View(Version version = 0) const;
  // One read or proof at a committed version, through a view (the same errors; NotFound when
  // absent). Thread-safe.
  Status GetAt(Version version, std::string_view key, std::string* value) const;
  Status Prove(Version version, std::string_view key, KeyProof* out) const;
  // Whether `version` can be queried, with the reason when not. Thread-safe.
  Status CheckVersion(Version version) const;

  // Computes the root of `changes` applied to the latest version, as `version`
  // (REQUIRES: version > version()). Replaces any earlier staged version. No disk writes.
  // `commit_info` is saved with the version, outside the tree (not part of the root): the app
  // keeps there what it needs after a restart but must not hash, e.g. the last block time.
  Result<Hash> Stage(Version version, const ChangeSet& changes, std::string commit_info = {});
  // Writes the staged version durably. A failure (a returned error, or an exception) means the
  // disk or the process is broken: stop the node. The store then refuses every later Stage and
  // Commit, and version() names the version before; reads may see either version, and a
  // reopen finds one of the two, whole.
  Status Commit();

  // State sync: restores a snapshot's leaves into this store, which must be empty
  // (version() == 0, nothing staged), as version `version` with root `root` and the app's
  // `commit_info`. The executor's, like Stage and Commit; RestoreLeaves may run on another
  // thread while the executor waits for it or checks the next chunk (app::RestoreWriter), never
  // beside another call of this store's restore, Stage or Commit. BeginRestore writes (synced) a
  // marker that makes any later Open wipe the database: a restore that does not finish leaves
  // an empty store, never half a state. RestoreLeaves takes leaves in strictly increasing
  // key-hash order (each call's after the last), already verified by the caller (a snapshot
  // chunk's VerifyChunk): their values go to LevelDB in synced batches of a few MB (the V and
  // S records), their hashes stay in memory (64 bytes a leaf); Stage is refused meanwhile. FinishRestore builds the tree's
  // pages bottom-up from those hashes, checks that its root is `root` (else Corruption and the
  // store stays empty), and writes the pages as a durable checkpoint at `version` with the root
  // record and markers in one synced batch that also drops the marker: from then on the store
  // is at `version`, as after a restart at a checkpoint (no version below it is kept).
  // AbortRestore wipes what was written. InvalidArgument when misused (out of order, not
  // empty, not begun).
  // A verified chunk's leaf (store/snapshot.h): restored as VerifyChunk returns it.
  using RestoreLeaf = VerifiedLeaf;
  Status BeginRestore(Version version, const Hash& root, std::string commit_info);
  Status RestoreLeaves(std::span<const RestoreLeaf> leaves);
  Status FinishRestore();
  Status AbortRestore();
  bool restoring() const { return restore_ != nullptr; }
  struct Restore;  // a restore's state (store_restore.h, internal)

  // What the last Stage and Commit did, for benchmarks and logs (no effect on anything).
  struct BlockStats {
    double prune_ms = 0;               // Stage: finding what pruning deletes
    std::size_t prune_deletes = 0;     // records the batch deletes
    std::size_t checkpoint_pages = 0;  // checkpoint pages the batch writes
    std::size_t batch_bytes = 0;       // the WriteBatch's size
    double write_ms = 0;               // Commit: the synced LevelDB write
    double memory_ms = 0;              // Commit: the in-memory update (or the wait for it
                                       // after the write, when it ran beside the write)
    std::size_t disk_page_reads = 0;   // Stage: tree pages read from LevelDB (not in memory)
    std::size_t cached_pages = 0;      // Commit: pages in the page cache after it
    std::size_t cached_page_bytes = 0;  // Commit: their bytes (Page::bytes, no map overhead)
  };
  const BlockStats& last_block() const { return stats_; }
  // Key comparisons the value cache's table has made so far (a debug statistic: keys crafted to
  // collide must not cost more of them than random keys). Read it between calls.
  std::uint64_t value_cache_key_comparisons() const { return value_cache_key_comparisons_; }
  // What views have done (thread-safe counters, for tests and benchmarks): past trees rebuilt
  // from a checkpoint (a cached rebuild moved is not counted), and the changesets replayed or
  // undone for them (moves of cached rebuilds included); each counted once its replay is done
  // (a rebuild stopped by its walk's pause, or by an error, is not).
  struct ViewStats {
    std::uint64_t rebuilds = 0;
    std::uint64_t rebuild_steps = 0;
    // Tree pages views (and rebuilds for them) read from LevelDB: those no longer in the
    // latest tree, so neither in memory nor in the page cache.
    std::uint64_t disk_page_reads = 0;
  };
  ViewStats view_stats() const {
    return {stats_of_views_.rebuilds.load(std::memory_order_relaxed),
            stats_of_views_.rebuild_steps.load(std::memory_order_relaxed),
            stats_of_views_.disk_page_reads.load(std::memory_order_relaxed)};
  }
  // The versions Open replayed above the newest durable checkpoint (or from the first
  // version, before any checkpoint is durable; fewer than twice the checkpoint interval):
  // what a restart's open time grows with.
  Version replayed_at_open() const { return replayed_at_open_; }
  // A LevelDB property of the database ("leveldb.stats", "leveldb.num-files-at-level0", ...),
  // or "" when LevelDB does not know it.
  std::string DbProperty(const std::string& name) const;
  // LevelDB's estimate of the bytes on disk of each table (C, V, S, ...; see the top of this
  // file), in prefix order: what the files hold, obsolete entries not yet compacted included.
  std::vector<std::pair<char, std::uint64_t>> TableBytes() const;
  // Compacts the whole database (LevelDB CompactRange): drops overwritten and deleted entries.
  // Slow; for measurements and tools, never called by the node.
  void CompactAll();

 private:
  struct RootRecord {
    Version version = 0;
    Slot root;
    Hash hash{};
  };
  struct Staged;
  struct PageId {
    Version version;
    NibblePath path;
    bool operator==(const PageId& o) const { return version == o.version && path == o.path; }
  };
  struct PageIdHash {
    // Seeded (store/seeded_hash.h): a path is a prefix of key hashes, which senders can grind.
    // Uniform in all bits, as an open-addressing table needs (its probe start and its tag come
    // from different bits).
    std::size_t operator()(const PageId& id) const {
      std::array<std::uint8_t, sizeof(Version) + 1 + kMaxNibbles / 2> bytes;
      std::memcpy(bytes.data(), &id.version, sizeof(Version));
      bytes[sizeof(Version)] = static_cast<std::uint8_t>(id.path.size());
      const auto packed = id.path.packed();
      std::memcpy(bytes.data() + sizeof(Version) + 1, packed.data(), packed.size());
      return SeededHashOf(bytes.data(), sizeof(Version) + 1 + packed.size());
    }
  };
  // Open addressing (absl's SwissTable): the tree update looks up, inserts and erases tens of
  // thousands of pages a block, and std::unordered_map's node per entry cost a cache miss and
  // an allocation each (13% of the CPU of a 1M-key run was in its lookups and erases).
  // Erasing keeps other iterators valid; an insert may move every entry.
  using PageMap = absl::flat_hash_map<PageId, std::shared_ptr<const Page>, PageIdHash>;
  // A checkpoint whose pages are being written: the pages it reaches that are not on disk yet
  // (never modified once made, so `next` stays valid), and where the next share starts.
  struct PendingCheckpoint {
    RootRecord root;
    PageMap pages;
    PageMap::const_iterator next;
    std::size_t written = 0;
    std::size_t chunk = 0;  // pages per batch
    // Its pages that later versions replaced: written all the same (the checkpoint needs
    // them), but not kept in memory once it is durable.
    std::vector<PageId> replaced;
  };
  // A past version's tree rebuilt from a durable checkpoint (store_view.cc), and the cache of
  // the last few (StoreOptions::rebuild_cache).
  struct Reconstruction;
  class RebuildCache;
  // Reads the pages of a version whose tree is in memory (the latest, or one of the recent
  // ones) for a view: REQUIRES view_mu_ held (shared) while it is used.
  struct RecentReader;
  // Where pruning's scans of each table start: every record below is deleted (and none is
  // written there again, versions only grow). 0 after open: the table's start.
  struct PruneCursors {
    Version roots = 0;
    Version changesets = 0;
    Version checkpoints = 0;
    Version stale = 0;
  };

  friend class StoreView;

  MerkleStore(StoreOptions options, std::unique_ptr<leveldb::Env> env, leveldb::DB* db,
              const leveldb::Cache* cache, const leveldb::FilterPolicy* filter);
  // Pages above the durable checkpoint come from memory, the others from the cache or disk.
  Result<std::shared_ptr<const Page>> LoadPage(Version version,
                                               const NibblePath& path) const override;
  // `latest`: the read is for the executor's latest tree (the page goes to the cache as its
  // most recently used), not a view's (nothing is cached or moved). `snapshot` (may be null):
  // the database state to read. With `cursor` (a view's reads), a page not in memory is read
  // by a LevelDB iterator in `snapshot` (made at the first such read and kept in *cursor for
  // the next, so always used with the same snapshot; its owner drops it before any wait), not
  // by a Get: every Get that consults more than one table counts towards a seek compaction,
  // an iterator only through its read sampling (about once per MB read), and a snapshot's walk
  // reads hundreds of thousands of pages (docs/benchmarks.md, session 22). A Seek checks a
  // block in every level, so a damaged table that does not hold the page fails the read too.
  Result<std::shared_ptr<const Page>> LoadDiskPage(
      Version version, const NibblePath& path, bool latest = true,
      const leveldb::Snapshot* snapshot = nullptr,
      std::unique_ptr<leveldb::Iterator>* cursor = nullptr) const;
  Status ReadRoot(Version version, RootRecord* out,
                  const leveldb::Snapshot* snapshot = nullptr) const;
  // CheckVersion's answer. REQUIRES: view_mu_ held (either way) or the executor's thread.
  Status CheckVersionLocked(Version version) const;
  std::shared_ptr<const leveldb::Snapshot> NewSnapshot() const;
  // A view's reads (store_view.cc). ViewLookup finds the key's leaf or neighbours in the
  // view's tree: in memory under view_mu_ when the version is recent, else in a rebuild.
  Status ViewLookup(const StoreView& view, const Hash& key_hash, TreeLookup* out) const;
  Status ViewGet(const StoreView& view, std::string_view key, std::string* value) const;
  // `pause` (may be empty): called before each slice of kRebuildSlice updates of a replayed
  // or undone changeset (then the rebuild holds no LevelDB iterator).
  Status Rebuild(const StoreView& view, std::unique_ptr<Reconstruction>* out,
                 const WalkPause& pause = {}) const;
  // Frees `stale` on the reaper thread (here, should no thread start).
  void FreeLater(std::list<std::unique_ptr<Reconstruction>> stale);
  // `r` replayed forward to `version` (r->version <= version), or undone backward to it
  // (r->version >= version), reading changesets in `snapshot`.
  Status ReplayTo(Version version, Reconstruction* r, const leveldb::Snapshot* snapshot,
                  const WalkPause& pause) const;
  Status UndoTo(Version version, Reconstruction* r, const leveldb::Snapshot* snapshot,
                const WalkPause& pause) const;
  // One changeset's updates applied to `r`, its new pages labelled `label`: at once, or with
  // `pause` in slices (see Rebuild).
  Status ApplyChangeset(Reconstruction* r, Version label, std::span<const KeyUpdate> updates,
                        const WalkPause& pause) const;
  // The first changeset record at or above version `from` in `snapshot`, read by an iterator
  // (not a Get: see LoadDiskPage): its version in *version and its bytes in *record; *version
  // 0 when there is none.
  Status NextChangeset(Version from, const leveldb::Snapshot* snapshot, Version* version,
                       std::string* record) const;
  // A proof leaf's key and value: from the value cache when it holds the leaf's version (only
  // looked up), else from V in `snapshot` (checked against the leaf).
  Status ReadProofLeaf(LeafPath path, const leveldb::Snapshot* snapshot,
                       ExistenceProof* out) const;
  // The key and value of a leaf slot (leaf hash, key hash, value version), as ReadProofLeaf.
  // With `values`, the V record is found by an iterator in `snapshot` (made at the first read
  // the value cache cannot serve, kept in *values for the next), not by a Get: a walk reads
  // leaves in key-hash order, as V is sorted, so one iterator reads each table block once, and
  // its reads reach LevelDB's seek compactions only through its read sampling (about one per
  // MB read), where a million Gets of a snapshot each counted.
  Status ReadLeafValue(const Slot& leaf, const leveldb::Snapshot* snapshot, std::string* key,
                       std::string* value,
                       std::unique_ptr<leveldb::Iterator>* values = nullptr) const;
  // StoreView::ForEachLeafWithPaths (and ForEachLeaf).
  Status WalkLeaves(const StoreView& view, Hash from, const LeafPathVisitor& visit,
                    const WalkPause& pause) const;
  // ViewLookup's search: in the in-memory tree when the version is there, else in `*rebuilt`
  // (rebuilt first when null; the caller keeps it for its next lookups or offers it to the
  // rebuild cache).
  Status LookupIn(const StoreView& view, const Hash& key_hash,
                  std::unique_ptr<Reconstruction>* rebuilt, TreeLookup* out,
                  const WalkPause& pause = {}) const;
  // Whether the tree of `version` is in memory: the latest, or one whose later versions'
  // replaced pages are all still in recent_. REQUIRES: view_mu_ held.
  bool InMemory(Version version) const;
  // The oldest version kept once `version` is committed (pruning moves it a share per block).
  Version PruneTo(Version version) const;
  // Adds to `batch` (a leveldb::WriteBatch*) the deletes that moving the oldest kept version
  // to PruneTo(version) allows. `completing`: the newest checkpoint whose K record the same
  // batch writes (0: none), which becomes the only one kept.
  Status AddPruning(Version version, Version completing, void* batch);
  // REQUIRES (both): page_cache_mu_ held. CachePage adds a page the latest tree read (`read`)
  // as the most recently used, evicting the least; or one of a past checkpoint's pages nobody
  // read as the least recently used, only while the cache has room. ForgetPage drops a
  // replaced page from memory.
  void CachePage(const PageId& id, std::shared_ptr<const Page> page, bool read) const;
  void ForgetPage(const PageId& id);
  // The latest version of `key` (BE64) then its value, through the value cache. NotFound
  // when absent.
  Status ReadStateRecord(std::string_view key, std::string* record) const;
  // The same from LevelDB, kept in the value cache. REQUIRES: the cache does not hold `key`.
  Status LoadStateRecord(std::string_view key, std::string* record) const;
  // The same without the cache: the latest tree's leaf, then V.
  Status ReadLatestRecord(std::string_view key, const Hash& key_hash, std::string* record) const;
  // The value cache's answer for `key`, marked most recently used when `mark`: kPresent copies
  // the record from byte `skip` on (8: the value without its version) into `*out`.
  enum class CacheAnswer { kMiss, kAbsent, kPresent };
  CacheAnswer CachedStateRecord(std::string_view key, std::size_t skip, std::string* out,
                                bool mark = true) const;
  // The value `key` got at `version`, from its V record.
  Status ReadValueRecord(std::string_view key, const Hash& key_hash, Version version,
                         std::string* value) const;
  void CacheStateRecord(const Hash& key_hash, std::string key,
                        std::optional<std::string> record) const;
  // The changeset of `version` as tree updates.
  Status ReadChangeset(Version version, std::vector<KeyUpdate>* out) const;
  // Deletes every record (a restore that did not finish), in batches.
  Status WipeAll();
  // Loads the durable checkpoint and replays the changesets up to the latest version (Open).
  Status Recover(Version latest);
  // Applies a committed (or replayed) version's tree change to the in-memory state; `shared`
  // pages of the pending checkpoint that the batch wrote, `done` whether that completed it.
  void ApplyToMemory(Version version, const TreeUpdate& tree, std::size_t shared, bool done);
  void MakeDurable(PendingCheckpoint* done);
  // Drops the next forget_per_commit_ pages of forget_, then moves the next
  // retire_per_commit_ pages of retired_ to the page cache while it has room and frees the
  // others (Commit).
  void FreeRetiredShare();

  StoreOptions options_;
  std::unique_ptr<leveldb::Env> env_;  // LevelDB's I/O (leveldb_env.h); outlives db_
  std::unique_ptr<leveldb::DB> db_;
  std::unique_ptr<const leveldb::Cache> block_cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  RootRecord latest_;
  Version earliest_ = 0;
  PruneCursors prune_cursors_;
  std::string commit_info_;
  std::unique_ptr<Staged> staged_;
  std::unique_ptr<Restore> restore_;
  BlockStats stats_;
  // Set by a Commit that failed (its write, or its memory update): every later Stage and
  // Commit returns it.
  Status failed_;

  // Durable checkpoints (K records): version -> root. The largest is `durable_`.
  std::map<Version, RootRecord> checkpoints_;
  Version durable_ = 0;
  Version last_started_ = 0;  // the latest checkpoint begun (durable, or pending)
  // Pages above last_started_ that the latest root reaches (the next checkpoint's pages).
  PageMap epoch_;
  // Pages in (durable_, last_started_]: the checkpoint being written.
  std::optional<PendingCheckpoint> pending_;
  // The pages the last durable checkpoint wrote, now on disk (those later versions replaced
  // leave through forget_): a page moves to the LRU cache when the latest tree reads it, and
  // those never read move to retired_ when the next checkpoint completes (moving them all at
  // once would stall that commit).
  mutable PageMap written_;
  // Unread pages of checkpoints before the last durable one, a share per commit going to the
  // cache (as its least recently used) while it has room, the rest freed. A page replaced by
  // a later version leaves written_, retired_ and the cache at that version's commit, so with
  // a cache as large as the tree every page of the latest version stays in memory.
  mutable std::vector<PageMap> retired_;
  std::size_t retire_per_commit_ = 0;
  // Pages of the last durable checkpoint that later versions replaced, dropped from written_
  // (or the cache) forget_per_commit_ per commit, all gone before the next checkpoint is
  // durable.
  std::vector<PageId> forget_;
  std::size_t forget_per_commit_ = 0;
  // The table of the last retired map drained, empty, kept for the next epoch_: a map erased
  // entry by entry keeps its table, whose memory the process has already touched. A fresh
  // table as large (~34 MB at 1M keys) cost the first block of each interval ~100 ms of page
  // faults in its first 20k inserts (session 11, on this machine's VM). Touched by the commit's
  // tree update only.
  PageMap spare_;
  Version replayed_at_open_ = 0;

  // Views read the state above (the latest root, earliest_, checkpoints_, the in-memory pages)
  // under this lock, shared; Commit takes it exclusively for its whole update, from the
  // LevelDB write to the new markers, so a view never sees half a commit and a view's
  // snapshot always agrees with the markers it reads. The executor's own reads take nothing:
  // only Commit, on the same thread, changes what they read. absl::Mutex makes new readers
  // wait behind a waiting writer, so queries cannot starve a commit.
  mutable absl::Mutex view_mu_;
  // The in-memory pages each of the last recent_versions commits replaced (version of the
  // commit, pages), oldest first: with the live pages they are the trees of those versions.
  std::deque<std::pair<Version, PageMap>> recent_;
  std::unique_ptr<RebuildCache> rebuilds_;
  // Frees rebuilds that commits dropped, on a thread of its own (FreeLater).
  std::future<void> reaper_;
  mutable struct {
    std::atomic<std::uint64_t> rebuilds{0};
    std::atomic<std::uint64_t> rebuild_steps{0};
    std::atomic<std::uint64_t> disk_page_reads{0};
  } stats_of_views_;

  // The value cache: S records (nullopt = absent) by key, in value_lru_ oldest first, evicted
  // by second chance (CLOCK): a hit only sets `referenced` in the entry it has just found, and
  // eviction moves a referenced entry to the back (clearing the flag) instead of dropping it.
  // A hit thus writes no list links (a move to the back touched three more cache lines per
  // read: CheckTx reads two keys). Updated only with committed data (reads, Commit's writes).
  // Views look entries up without marking or adding any (value_mu_).
  struct CachedRecord {
    std::optional<std::string> record;
    std::list<const std::string*>::iterator lru;
    Hash key_hash;  // sha256(key): the entry's name in values_by_hash_
    bool referenced = false;
  };
  mutable std::list<const std::string*> value_lru_;  // the keys in values_
  // A node per entry (the list and values_by_hash_ point into it), in an open-addressing
  // table: a lookup misses the cache once less than std::unordered_map's bucket list. Keyed
  // by the per-process seeded hash: keys hold addresses that senders choose (issue 20).
  using ValueMap = absl::node_hash_map<std::string, CachedRecord, SeededHash, CountingKeyEqual>;
  mutable std::uint64_t value_cache_key_comparisons_ = 0;  // before values_, which counts into it
  mutable ValueMap values_{0, SeededHash{}, CountingKeyEqual{&value_cache_key_comparisons_}};
  // Every entry of values_ by its key's hash: a proof's leaf names its key by hash only, and
  // a cached record at the leaf's version is the leaf's key and value without a V read. Seeded
  // too: a SHA-256's first bytes would do as a hash only if nobody could grind the key.
  mutable absl::flat_hash_map<Hash, ValueMap::value_type*, SeededHash> values_by_hash_;
  // The entry to evict next (second chance), left at the front of value_lru_; referenced
  // entries passed over go before `back` (the list's end, or a slot kept at its tail).
  // REQUIRES: the cache is not empty.
  ValueMap::iterator ValueCacheVictim(std::list<const std::string*>::iterator back) const;
  mutable std::size_t value_cache_used_ = 0;
  // Guards the value cache (values_, value_lru_, values_by_hash_, value_cache_used_): the
  // executor reads and fills it, views on other threads look it up.
  mutable std::mutex value_mu_;

  // Guards the page cache (lru_, pages_), written_, retired_ and forget_: a parallel tree
  // update loads pages from two threads.
  mutable std::mutex page_cache_mu_;
  mutable std::atomic<std::size_t> disk_page_reads_{0};  // since the last Stage began
  // LRU cache of on-disk pages: pages are immutable, so a cached page never goes stale; one
  // that a later version replaced is dropped (past versions read it back from disk).
  mutable std::list<PageId> lru_;
  mutable absl::flat_hash_map<PageId,
                              std::pair<std::shared_ptr<const Page>, std::list<PageId>::iterator>,
                              PageIdHash>
      pages_;
  mutable std::size_t cached_page_bytes_ = 0;  // Page::bytes of the pages in pages_
};

}  // namespace kairos::store
