// StoreView and the store's thread-safe read paths: views of committed versions, point reads at
// a version (the V table read newest-first), proofs and whole-version walks (every leaf, in
// key-hash order) from the in-memory trees of the latest and recent versions, and past trees
// rebuilt from a durable checkpoint (and cached for reuse).
//
// Thread-safety: every function here may run on any thread while the executor stages and
// commits. What the executor changes (the latest root, the markers, the in-memory pages) is
// read under view_mu_ (shared); the database through a LevelDB snapshot; the value cache and
// the page cache under their own mutexes, without changing them.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include <leveldb/db.h>
#include <leveldb/iterator.h>

#include "store/big_endian.h"
#include "store/cursor_read.h"
#include "store/merkle_store.h"
#include "store/rebuild_cache.h"
#include "store/records.h"

namespace kairos::store {

namespace {

// How far ReadLeafValue steps an iterator towards a leaf's V record before it seeks: a step
// is a comparison among LevelDB's open tables, a seek a binary search in each.
constexpr int kValueSteps = 8;

// A walk reads this many bytes of keys and values ahead of its visits at most, with one
// iterator, then drops the iterator and visits them: an iterator pins LevelDB's memtables and
// table files, and a visitor may wait (the snapshot writer waits while a block runs, which is
// when commits switch memtables and compactions replace files).
constexpr std::size_t kWalkReadAhead = 1 << 20;

// A rebuild paused by its caller (a snapshot's walk) applies a changeset this many updates at
// a time, with a pause before each slice. At 10M keys a replayed update reads about one tree
// page from disk, so a slice takes ~10 ms, where a whole changeset of 10k updates took ~0.5 s
// and the rebuild before a walk could go on (50 to 100 changesets) ~40 s, beside the blocks.
constexpr std::size_t kRebuildSlice = 256;

// A scan a view cannot serve, reported through the iterator's status.
class ErrorIterator final : public KvIterator {
 public:
  explicit ErrorIterator(Status status) : status_(std::move(status)) {}
  bool Valid() const override { return false; }
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  void Next() override {}
  Status status() const override { return status_; }

 private:
  Status status_;
};

}  // namespace

// --- the pages of an in-memory version ------------------------------------------------------

struct MerkleStore::RecentReader final : PageReader {
  RecentReader(const MerkleStore* s, Version v, const leveldb::Snapshot* snap)
      : store(s), version(v), snapshot(snap) {}
  // A page of the version's tree: one a later commit replaced (kept in recent_), one of the
  // latest tree's in memory, or one on disk.
  Result<std::shared_ptr<const Page>> LoadPage(Version v, const NibblePath& path) const override {
    const PageId id{v, path};
    // Only the commits after the version replaced pages its tree still had.
    for (auto it = store->recent_.rbegin(); it != store->recent_.rend() && it->first > version;
         ++it) {
      if (auto found = it->second.find(id); found != it->second.end()) return found->second;
    }
    if (v > store->durable_) {
      const PageMap& pages = v > store->last_started_ || !store->pending_
                                 ? store->epoch_
                                 : store->pending_->pages;
      if (auto found = pages.find(id); found != pages.end()) return found->second;
      return Status::Corruption("the tree page at version " + std::to_string(v) + " depth " +
                                std::to_string(path.size()) + " of version " +
                                std::to_string(version) + " is missing from memory");
    }
    return store->LoadDiskPage(v, path, /*latest=*/false, snapshot, &cursor);
  }
  const MerkleStore* store;
  Version version;
  const leveldb::Snapshot* snapshot;
  // The reader's disk reads (LoadDiskPage): a reader lives for one lookup or one walk batch.
  mutable std::unique_ptr<leveldb::Iterator> cursor;
};

bool MerkleStore::InMemory(Version version) const {
  if (version == latest_.version) return true;
  if (version > latest_.version || recent_.empty() || recent_.front().first > version + 1) {
    return false;
  }
  // Its on-disk pages that later commits replaced stay on disk until a checkpoint at or above
  // the replacing version is durable (AddPruning); below the newest checkpoint the version is
  // rebuilt from it instead, as pruning expects.
  return version >= durable_ || options_.keep_recent == 0;
}

// --- views ----------------------------------------------------------------------------------

std::shared_ptr<const leveldb::Snapshot> MerkleStore::NewSnapshot() const {
  leveldb::DB* db = db_.get();
  return std::shared_ptr<const leveldb::Snapshot>(
      db->GetSnapshot(), [db](const leveldb::Snapshot* s) { db->ReleaseSnapshot(s); });
}

Status MerkleStore::CheckVersionLocked(Version version) const {
  if (version > latest_.version) {
    return Status::InvalidArgument("version " + std::to_string(version) +
                                   " is not committed yet; the latest is " +
                                   std::to_string(latest_.version));
  }
  if (version < earliest_ || version <= 0) {
    return Status::InvalidArgument("version " + std::to_string(version) +
                                   " is not kept (pruned, or before the first block); the "
                                   "earliest kept version is " +
                                   std::to_string(std::max<Version>(earliest_, 1)));
  }
  return Status::OK();
}

MerkleStore::Committed MerkleStore::LatestCommitted() const {
  absl::ReaderMutexLock lock(&view_mu_);
  return {latest_.version, latest_.hash};
}

Status MerkleStore::CheckVersion(Version version) const {
  absl::ReaderMutexLock lock(&view_mu_);
  return CheckVersionLocked(version);
}

Result<std::shared_ptr<const StoreView>> MerkleStore::View(Version version) const {
  std::shared_ptr<StoreView> view(new StoreView());
  view->store_ = this;
  {
    absl::ReaderMutexLock lock(&view_mu_);
    // After a failed commit the disk may hold either version: the node is stopping.
    if (!failed_.ok()) return failed_;
    if (latest_.version == 0) return Status::InvalidArgument("no version is committed yet");
    const Version v = version == 0 ? latest_.version : version;
    if (Status s = CheckVersionLocked(v); !s.ok()) return s;
    view->snapshot_ = NewSnapshot();
    view->version_ = v;
    view->latest_when_made_ = latest_.version;
    view->latest_ = v == latest_.version;
    if (view->latest_) {
      view->root_ = latest_.root;
      view->root_hash_ = latest_.hash;
      view->commit_info_ = commit_info_;
    }
  }
  if (!view->latest_) {
    RootRecord r;
    if (Status s = ReadRoot(view->version_, &r, view->snapshot_.get()); !s.ok()) return s;
    view->root_ = r.root;
    view->root_hash_ = r.hash;
  }
  return std::shared_ptr<const StoreView>(std::move(view));
}

Status MerkleStore::GetAt(Version version, std::string_view key, std::string* value) const {
  if (version <= 0) return CheckVersion(version);  // View(0) would mean the latest
  auto view = View(version);
  if (!view.ok()) return view.status();
  return (*view)->Get(key, value);
}

Status MerkleStore::Prove(Version version, std::string_view key, KeyProof* out) const {
  if (version <= 0) return CheckVersion(version);
  auto view = View(version);
  if (!view.ok()) return view.status();
  return (*view)->Prove(key, out);
}

Status StoreView::Get(std::string_view key, std::string* value) const {
  return store_->ViewGet(*this, key, value);
}

std::unique_ptr<KvIterator> StoreView::Iterate(std::string_view start,
                                               std::string_view end) const {
  if (!latest_) {
    return std::make_unique<ErrorIterator>(Status::InvalidArgument(
        "a range scan reads the latest version only (the key index is not versioned); version " +
        std::to_string(version_) + " is not the latest"));
  }
  leveldb::ReadOptions read = ViewRead();
  read.snapshot = snapshot_.get();
  // The key index as it was at this version (the snapshot), each value at the version.
  return std::make_unique<StateIterator>(
      store_->db_->NewIterator(read), start, end,
      [self = shared_from_this()](std::string_view key, std::string* value) {
        const Status s = self->store_->ViewGet(*self, key, value);
        if (s.IsNotFound()) {
          return Status::Corruption("the key index (S) holds a key version " +
                                    std::to_string(self->version_) + " does not");
        }
        return s;
      });
}

Status StoreView::ForEachLeaf(const LeafVisitor& visit, const Hash& from) const {
  return store_->WalkLeaves(
      *this, from,
      [&visit](const StoreLeaf& leaf, const WalkPathOf&) { return visit(leaf); }, {});
}

Status StoreView::ForEachLeafWithPaths(const LeafPathVisitor& visit, const Hash& from,
                                       const WalkPause& pause) const {
  return store_->WalkLeaves(*this, from, visit, pause);
}

Status StoreView::Prove(std::string_view key, KeyProof* out) const {
  if (root_.empty()) {
    return Status::InvalidArgument("the tree at version " + std::to_string(version_) +
                                   " is empty: ICS-23 cannot prove absence in an empty tree");
  }
  TreeLookup lookup;
  if (Status s = store_->ViewLookup(*this, Sha256Of(key), &lookup); !s.ok()) return s;
  *out = KeyProof{};
  auto fill = [&](std::optional<LeafPath>& path, std::optional<ExistenceProof>* dest) {
    if (!path) return Status::OK();
    dest->emplace();
    return store_->ReadProofLeaf(std::move(*path), snapshot_.get(), &**dest);
  };
  if (Status s = fill(lookup.found, &out->exist); !s.ok()) return s;
  if (Status s = fill(lookup.left, &out->left); !s.ok()) return s;
  return fill(lookup.right, &out->right);
}

// --- reads ----------------------------------------------------------------------------------

Status MerkleStore::ViewGet(const StoreView& view, std::string_view key,
                            std::string* value) const {
  // The value cache holds a key's latest record; when it was written at or below the view's
  // version it is the value there (nothing wrote the key since). Looked up only: a query does
  // not decide what the cache keeps.
  std::string record;
  if (CachedStateRecord(key, 0, &record, /*mark=*/false) == CacheAnswer::kPresent &&
      static_cast<Version>(ReadBigEndian64(record)) <= view.version_) {
    value->assign(record, 8);
    return Status::OK();
  }
  // V holds every value under the version that wrote it (and deletions as tombstones), newest
  // first: the first record at or below the view's version is the value there.
  const Hash key_hash = Sha256Of(key);
  leveldb::ReadOptions read = ViewRead();
  read.snapshot = view.snapshot_.get();
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(read));
  const std::string seek = ValueKey(key_hash, view.version_);
  it->Seek(seek);
  if (!it->Valid() || !it->key().starts_with(leveldb::Slice(seek.data(), 33))) {
    if (!it->status().ok()) return FromLevelDb(it->status(), "reading a versioned value");
    return Status::NotFound("absent at version " + std::to_string(view.version_));
  }
  const std::string_view stored(it->value().data(), it->value().size());
  if (!stored.empty() && stored[0] == 0) {
    return Status::NotFound("deleted at or before version " + std::to_string(view.version_));
  }
  std::string_view k, v;
  if (!DecodeValueRecord(stored, &k, &v) || k != key) {
    return Status::Corruption("a value record is malformed");
  }
  value->assign(v);
  return Status::OK();
}

Status MerkleStore::ReadProofLeaf(LeafPath path, const leveldb::Snapshot* snapshot,
                                  ExistenceProof* out) const {
  const Slot leaf = Slot::LeafWithHash(path.key_hash, path.leaf_hash, path.leaf_version);
  if (Status s = ReadLeafValue(leaf, snapshot, &out->key, &out->value); !s.ok()) return s;
  out->path = std::move(path);
  return Status::OK();
}

Status MerkleStore::ReadLeafValue(const Slot& leaf, const leveldb::Snapshot* snapshot,
                                  std::string* key_out, std::string* value_out,
                                  std::unique_ptr<leveldb::Iterator>* values_slot) const {
  // The leaf slot says which version wrote the value. The value cache holds the key's latest
  // record: when that is the leaf's version, it is the leaf's key and value (V records never
  // change), read with checksums or written by a commit.
  {
    std::lock_guard lock(value_mu_);
    if (auto it = values_by_hash_.find(leaf.key_hash); it != values_by_hash_.end()) {
      const auto& [key, cached] = *it->second;
      if (cached.record &&
          ReadBigEndian64(*cached.record) == static_cast<std::uint64_t>(leaf.version)) {
        *key_out = key;
        value_out->assign(*cached.record, 8);
        return Status::OK();
      }
    }
  }
  // Otherwise one exact read of V gives key and value (not cached: a query must not evict
  // what blocks read).
  std::string record;
  const std::string want = ValueKey(leaf.key_hash, leaf.version);
  leveldb::ReadOptions read = ViewRead();
  read.snapshot = snapshot;
  // With an iterator, the record is usually a few steps ahead (past the older versions of the
  // last key read): it steps there, and seeks only when it is further.
  const leveldb::Status s =
      values_slot != nullptr
          ? ReadThroughCursor(db_.get(), read, values_slot, want, kValueSteps, &record)
          : db_->Get(read, want, &record);
  if (s.IsNotFound()) {
    return Status::Corruption("a leaf written at version " + std::to_string(leaf.version) +
                              " has no value");
  }
  if (!s.ok()) {
    return FromLevelDb(s, "reading the value of a leaf written at version " +
                              std::to_string(leaf.version));
  }
  std::string_view key, value;
  if (!DecodeValueRecord(record, &key, &value)) {
    return Status::Corruption("a leaf's value record is malformed or a tombstone");
  }
  if (LeafHash(leaf.key_hash, Sha256Of(value)) != leaf.hash || Sha256Of(key) != leaf.key_hash) {
    return Status::Corruption("a stored value does not match its leaf (written at version " +
                              std::to_string(leaf.version) + ")");
  }
  key_out->assign(key);
  value_out->assign(value);
  return Status::OK();
}

Status MerkleStore::WalkLeaves(const StoreView& view, Hash from, const LeafPathVisitor& visit,
                               const WalkPause& pause) const {
  if (view.root_.empty()) return Status::OK();
  // Once the version has left memory (later commits freed its replaced pages), the walk goes
  // on in a rebuild of it, kept to the end and then offered to the rebuild cache.
  std::unique_ptr<Reconstruction> rebuilt;
  // A path lookup may make the rebuild (the version left memory since the last batch); the
  // walk's next batch then walks it too.
  const WalkPathOf path_of = [&](const Hash& key_hash, LeafPath* path) -> Status {
    TreeLookup lookup;
    if (Status s = LookupIn(view, key_hash, &rebuilt, &lookup, pause); !s.ok()) return s;
    if (!lookup.found) {
      return Status::Corruption("a walk asked for the path of a key hash its version lacks");
    }
    *path = std::move(*lookup.found);
    return Status::OK();
  };
  std::vector<Slot> batch;
  batch.reserve(kStoreWalkBatch);
  // A batch's keys and values (their strings' buffers reused from batch to batch).
  std::vector<std::pair<std::string, std::string>> read_ahead(kStoreWalkBatch);
  Status result;
  for (;;) {
    batch.clear();
    bool walked = false;
    Status s;
    if (rebuilt == nullptr) {
      // As ViewLookup: the in-memory tree under the reader lock, its on-disk pages in a
      // snapshot as recent as the in-memory state. One batch per hold: a commit waits for one
      // batch's walk at most.
      absl::ReaderMutexLock lock(&view_mu_);
      if (InMemory(view.version_)) {
        std::shared_ptr<const leveldb::Snapshot> now = view.snapshot_;
        if (latest_.version != view.latest_when_made_) now = NewSnapshot();
        const RecentReader reader(this, view.version_, now.get());
        s = CollectLeaves(reader, view.root_, from, kStoreWalkBatch, &batch);
        walked = true;
      }
    }
    if (!walked) {
      if (rebuilt == nullptr) {
        if (Status r = Rebuild(view, &rebuilt, pause); !r.ok()) return r;
      }
      s = CollectLeaves(*rebuilt, rebuilt->root, from, kStoreWalkBatch, &batch);
      rebuilt->cursor.reset();  // the visits may wait
    }
    if (!s.ok()) {
      result = s;
      break;
    }
    // The values, outside the lock: V records at or below the view's version are in its
    // snapshot, whatever was committed or pruned since. Read ahead of the visits, up to
    // kWalkReadAhead bytes with one iterator, dropped before the visits.
    for (std::size_t next = 0; result.ok() && next < batch.size();) {
      const std::size_t first = next;
      std::size_t bytes = 0;
      {
        std::unique_ptr<leveldb::Iterator> values;
        for (; next < batch.size() && bytes < kWalkReadAhead; ++next) {
          auto& [k, v] = read_ahead[next];
          if (Status r = ReadLeafValue(batch[next], view.snapshot_.get(), &k, &v, &values);
              !r.ok()) {
            result = r;
            break;
          }
          bytes += k.size() + v.size();
        }
      }
      for (std::size_t i = first; i < next && result.ok(); ++i) {
        auto& [k, v] = read_ahead[i];
        result = visit(StoreLeaf{batch[i].key_hash, k, v, batch[i].version}, path_of);
        // A large value's buffer is not kept for the next batch.
        if (k.capacity() + v.capacity() > kWalkReadAhead / kStoreWalkBatch) {
          std::string().swap(k);
          std::string().swap(v);
        }
      }
    }
    if (!result.ok() || batch.size() < kStoreWalkBatch) break;
    from = batch.back().key_hash;
    if (!NextKeyHash(&from)) break;  // the last key hash there can be
  }
  if (rebuilt != nullptr) rebuilds_->Put(std::move(rebuilt));
  return result;
}

// --- trees ----------------------------------------------------------------------------------

Status MerkleStore::ViewLookup(const StoreView& view, const Hash& key_hash,
                               TreeLookup* out) const {
  std::unique_ptr<Reconstruction> rebuilt;
  const Status s = LookupIn(view, key_hash, &rebuilt, out);
  if (rebuilt != nullptr) rebuilds_->Put(std::move(rebuilt));
  return s;
}

Status MerkleStore::LookupIn(const StoreView& view, const Hash& key_hash,
                             std::unique_ptr<Reconstruction>* rebuilt, TreeLookup* out,
                             const WalkPause& pause) const {
  if (*rebuilt == nullptr) {
    // The latest and recent trees are walked in place: a commit waits for this walk at most.
    // Their on-disk pages are read in a snapshot as recent as the in-memory state: the view's
    // own while nothing was committed since, else a new one (a checkpoint completed since may
    // have moved pages from memory to the disk after the view's snapshot).
    absl::ReaderMutexLock lock(&view_mu_);
    if (InMemory(view.version_)) {
      std::shared_ptr<const leveldb::Snapshot> now = view.snapshot_;
      if (latest_.version != view.latest_when_made_) now = NewSnapshot();
      const RecentReader reader(this, view.version_, now.get());
      return Lookup(reader, view.root_, key_hash, out);
    }
  }
  if (*rebuilt == nullptr) {
    if (Status s = Rebuild(view, rebuilt, pause); !s.ok()) return s;
  }
  const Status s = Lookup(**rebuilt, (*rebuilt)->root, key_hash, out);
  (*rebuilt)->cursor.reset();  // the caller may wait before its next lookup
  return s;
}

Status MerkleStore::Rebuild(const StoreView& view, std::unique_ptr<Reconstruction>* out,
                            const WalkPause& pause) const {
  // Everything comes from the view's snapshot, a committed state in which the version was
  // kept: pruning leaves every kept version rebuildable from the newest checkpoint there (its
  // K record and pages, and the changesets between it and each kept version). So a view
  // proves its version even after later commits pruned it.
  const Version version = view.version_;
  const leveldb::Snapshot* snapshot = view.snapshot_.get();
  // The base, whichever is fewest versions away: the nearest durable checkpoint at or below
  // the version, replayed forward; the nearest one above it, undone backward; with no
  // checkpoint at or below it and none pruned (no checkpoint at all yet, or archive mode),
  // the empty tree replayed forward from the first version.
  struct Base {
    Version version = 0;
    Slot root;
    bool backward = false;
    Version cost = std::numeric_limits<Version>::max();
  };
  Base below, above;
  bool any_checkpoint = false;
  {
    leveldb::ReadOptions read = ViewRead();
    read.snapshot = snapshot;
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(read));
    const std::string kprefix(1, kCheckpointPrefix);
    const auto take = [&](Base* b, bool backward) -> Status {
      if (it->key().size() != 9) return Status::Corruption("a checkpoint record key is malformed");
      b->version = static_cast<Version>(ReadBigEndian64(std::string_view(it->key().data() + 1, 8)));
      Hash hash;
      if (!DecodeRoot(std::string_view(it->value().data(), it->value().size()), &b->root,
                      &hash)) {
        return Status::Corruption("the checkpoint record of version " +
                                  std::to_string(b->version) + " is malformed");
      }
      b->backward = backward;
      b->cost = backward ? b->version - version : version - b->version;
      return Status::OK();
    };
    it->Seek(VersionKey(kCheckpointPrefix, version + 1));
    if (it->Valid() && it->key().starts_with(kprefix)) {
      any_checkpoint = true;
      if (Status s = take(&above, true); !s.ok()) return s;
    }
    // The last key before the version's successor: the nearest checkpoint at or below it, if
    // that key is in the K table.
    if (it->Valid()) {
      it->Prev();
    } else {
      it->SeekToLast();
    }
    if (it->Valid() && it->key().starts_with(kprefix)) {
      any_checkpoint = true;
      if (Status s = take(&below, false); !s.ok()) return s;
    }
    if (!it->status().ok()) return FromLevelDb(it->status(), "reading checkpoints");
  }
  Base base = below;
  if (below.cost == std::numeric_limits<Version>::max() &&
      (!any_checkpoint || options_.keep_recent == 0)) {
    base = Base{0, Slot{}, false, version};
  }
  if (above.cost < base.cost) base = above;
  if (base.cost == std::numeric_limits<Version>::max()) {
    return Status::Corruption("version " + std::to_string(version) +
                              " has no checkpoint to be rebuilt from in " + options_.dir);
  }
  std::unique_ptr<Reconstruction> r = rebuilds_->Take(base.version, base.backward, version);
  bool made = false;
  if (r == nullptr) {
    r = std::make_unique<Reconstruction>();
    r->store = this;
    r->base = r->version = r->next_label = base.version;
    r->root = base.root;
    r->backward = base.backward;
    r->snapshot = view.snapshot_;  // the base's pages: pruning may delete them later
    made = true;
  }
  // The stats count a rebuild and its steps once it is done: one stopped by its pause (or an
  // error) counts nothing.
  Version steps = 0;
  if (r->version != version) {
    steps = r->backward ? r->version - version : version - r->version;
    // A rebuild stopped by its pause is half a version: it is dropped, never cached.
    const Status replayed = r->backward ? UndoTo(version, r.get(), snapshot, pause)
                                        : ReplayTo(version, r.get(), snapshot, pause);
    r->cursor.reset();
    if (!replayed.ok()) return replayed;
    RootRecord want;
    if (Status s = ReadRoot(version, &want, snapshot); !s.ok()) return s;
    if (RootHashOf(r->root) != want.hash) {
      return Status::Corruption("version " + std::to_string(version) + ": the tree " +
                                (r->backward ? "undone from" : "replayed from") +
                                " checkpoint " + std::to_string(r->base) +
                                " does not match the stored root");
    }
  }
  if (made) stats_of_views_.rebuilds.fetch_add(1, std::memory_order_relaxed);
  stats_of_views_.rebuild_steps.fetch_add(static_cast<std::uint64_t>(steps),
                                          std::memory_order_relaxed);
  *out = std::move(r);
  return Status::OK();
}

void MerkleStore::Reconstruction::Apply(const TreeUpdate& tree, Version label) {
  for (const auto& [sv, path] : tree.stale_pages) {
    if (sv > base) pages.erase(PageId{sv, path});
  }
  for (auto& [path, page] : tree.new_pages) pages[PageId{label, path}] = page;
  root = tree.root;
}

Status MerkleStore::NextChangeset(Version from, const leveldb::Snapshot* snapshot,
                                  Version* version, std::string* record) const {
  leveldb::ReadOptions read = ViewRead();
  read.snapshot = snapshot;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(read));
  it->Seek(VersionKey(kChangesetPrefix, from));
  *version = 0;
  if (it->Valid() && !it->key().empty() && it->key()[0] == kChangesetPrefix) {
    if (it->key().size() != 9) return Status::Corruption("a changeset record key is malformed");
    *version = static_cast<Version>(ReadBigEndian64(std::string_view(it->key().data() + 1, 8)));
    record->assign(it->value().data(), it->value().size());
  }
  if (!it->status().ok()) {
    return FromLevelDb(it->status(), "reading the changeset of version " + std::to_string(from));
  }
  return Status::OK();
}

Status MerkleStore::ApplyChangeset(Reconstruction* r, Version label,
                                   std::span<const KeyUpdate> updates,
                                   const WalkPause& pause) const {
  // Slices of a sorted update list share only the pages above them, which each slice rewrites
  // under the same label (Apply drops the page a slice replaced before it adds the new one),
  // and a tree's shape depends on its keys alone: the last slice leaves the tree one
  // ApplyUpdates of the whole list makes, page for page.
  const std::size_t slice = pause ? kRebuildSlice : updates.size();
  for (std::size_t begin = 0; begin < updates.size(); begin += slice) {
    if (pause) {
      r->cursor.reset();  // the pause may wait: an iterator pins LevelDB's tables
      if (Status s = pause(); !s.ok()) return s;
    }
    TreeUpdate tree;
    // On this thread alone: a query takes one core at most, leaving the other to the block.
    if (Status s = ApplyUpdates(*r, r->root, label,
                                updates.subspan(begin, std::min(slice, updates.size() - begin)),
                                &tree, /*parallel=*/false);
        !s.ok()) {
      return s;
    }
    r->Apply(tree, label);
  }
  return Status::OK();
}

Status MerkleStore::ReplayTo(Version version, Reconstruction* r,
                             const leveldb::Snapshot* snapshot, const WalkPause& pause) const {
  std::vector<KeyUpdate> updates;
  std::string record;
  while (r->version < version) {
    Version v = 0;
    if (Status s = NextChangeset(r->version + 1, snapshot, &v, &record); !s.ok()) return s;
    // From the empty tree, the first changeset is the chain's initial height's.
    if (v == 0 || v > version || (r->version != 0 && v != r->version + 1)) {
      return Status::Corruption("version " + std::to_string(version) +
                                ": the changeset of version " + std::to_string(r->version + 1) +
                                " is missing (replaying from checkpoint " +
                                std::to_string(r->base) + ")");
    }
    if (!DecodeChangeset(record, &updates)) {
      return Status::Corruption("the changeset of version " + std::to_string(v) +
                                " is malformed");
    }
    if (Status s = ApplyChangeset(r, v, updates, pause); !s.ok()) return s;
    r->version = v;
  }
  return Status::OK();
}

Status MerkleStore::UndoTo(Version version, Reconstruction* r,
                           const leveldb::Snapshot* snapshot, const WalkPause& pause) const {
  // Undoing version w turns the tree of w into that of w - 1. The pages it makes are labelled
  // above every page of the base (and of earlier undos), so they stay in memory.
  std::vector<KeyUpdate> updates, undo;
  std::string record;
  while (r->version > version) {
    const Version w = r->version;
    Version found = 0;
    if (Status s = NextChangeset(w, snapshot, &found, &record); !s.ok()) return s;
    if (found != w) {
      return Status::Corruption("version " + std::to_string(version) + ": the changeset of "
                                "version " + std::to_string(w) + " is missing (undoing from " +
                                std::to_string(r->base) + ")");
    }
    if (!DecodeChangeset(record, &updates, /*previous=*/nullptr, &undo)) {
      return Status::Corruption("the changeset of version " + std::to_string(w) +
                                " is malformed");
    }
    if (Status s = ApplyChangeset(r, ++r->next_label, undo, pause); !s.ok()) return s;
    r->version = w - 1;
  }
  return Status::OK();
}

}  // namespace kairos::store
