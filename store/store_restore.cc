// MerkleStore's restore from a state sync snapshot (merkle_store.h, BeginRestore): values
// written as they arrive, the tree built bottom-up from the leaves' hashes at the end.
#include <algorithm>
#include <utility>

#include <leveldb/db.h>
#include <leveldb/iterator.h>

#include "store/big_endian.h"
#include "store/records.h"
#include "store/store_restore.h"
#include "store/varint.h"

namespace kairos::store {

namespace {

// Values batched before a write: large batches, few LevelDB writes.
constexpr std::size_t kRestoreBatchBytes = 8u << 20;

Status WriteBatch(leveldb::DB* db, leveldb::WriteBatch* batch, bool sync, const char* what) {
  leveldb::WriteOptions wo;
  wo.sync = sync;
  const leveldb::Status s = db->Write(wo, batch);
  batch->Clear();
  return FromLevelDb(s, what);
}

using RestoredLeaves = std::span<const MerkleStore::Restore::Leaf>;

// Builds the page at `path` over `leaves` (two or more, all under `path`, in key-hash order),
// its child pages first, and hands each page to `emit`. Returns the page's hash.
template <class Emit>
Hash BuildPage(const NibblePath& path, RestoredLeaves leaves, Version version, Emit& emit) {
  PageDraft draft;
  const int depth = path.size();
  std::size_t begin = 0;
  for (int nibble = 0; nibble < kSlotsPerPage && begin < leaves.size(); ++nibble) {
    std::size_t end = begin;
    while (end < leaves.size() && NibbleAt(leaves[end].key_hash, depth) == nibble) ++end;
    if (end - begin == 1) {
      draft.slots[nibble] =
          Slot::LeafWithHash(leaves[begin].key_hash, leaves[begin].leaf_hash, version);
    } else if (end - begin >= 2) {
      Slot& child = draft.slots[nibble];
      child.kind = Slot::Kind::kPage;
      child.version = version;
      child.hash = BuildPage(path.Child(static_cast<std::uint8_t>(nibble)),
                             leaves.subspan(begin, end - begin), version, emit);
    }
    begin = end;
  }
  draft.Seal();
  std::shared_ptr<const Page> page = Page::Make(draft);
  emit(path, *page);
  return page->hash();
}

}  // namespace

Status MerkleStore::BeginRestore(Version version, const Hash& root, std::string commit_info) {
  if (restore_) return Status::InvalidArgument("a restore is already in progress");
  if (latest_.version != 0 || staged_) {
    return Status::InvalidArgument("a snapshot can only be restored into an empty store (this "
                                   "one is at version " + std::to_string(latest_.version) + ")");
  }
  if (version <= 0) return Status::InvalidArgument("a restored version must be positive");
  {
    // Nothing may lie under the restore: an unfinished one is wiped first (AbortRestore, or
    // Open), and a wipe that failed leaves its marker.
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
    it->SeekToFirst();
    if (it->Valid()) {
      return Status::InvalidArgument("a snapshot can only be restored into an empty store: this "
                                     "one holds records (an unfinished restore that could not "
                                     "be wiped?)");
    }
    if (!it->status().ok()) return FromLevelDb(it->status(), "checking the store is empty");
  }
  leveldb::WriteBatch marker;
  std::string v;
  AppendBigEndian64(static_cast<std::uint64_t>(version), &v);
  marker.Put(kRestoringKey, v);
  if (Status s = WriteBatch(db_.get(), &marker, /*sync=*/true, "beginning a restore"); !s.ok()) {
    return s;
  }
  restore_ = std::make_unique<Restore>();
  restore_->version = version;
  restore_->root = root;
  restore_->commit_info = std::move(commit_info);
  return Status::OK();
}

Status MerkleStore::RestoreLeaves(std::span<const RestoreLeaf> leaves) {
  if (!restore_) return Status::InvalidArgument("no restore in progress");
  Restore& r = *restore_;
  std::string key, record;
  for (const RestoreLeaf& leaf : leaves) {
    if (!r.leaves.empty() && !(r.leaves.back().key_hash < leaf.key_hash)) {
      return Status::InvalidArgument("restored leaves must come in increasing key-hash order");
    }
    r.leaves.push_back({leaf.key_hash, leaf.leaf_hash});
    key.clear();
    AppendValueKey(leaf.key_hash, r.version, &key);
    record.assign(1, '\x01');
    AppendUvarint(leaf.key.size(), &record);
    record.append(leaf.key);
    record.append(leaf.value);
    r.batch.Put(key, record);
    key.clear();
    AppendStateKey(leaf.key, &key);
    r.batch.Put(key, leveldb::Slice());
    if (r.batch.ApproximateSize() >= kRestoreBatchBytes) {
      if (Status s = WriteBatch(db_.get(), &r.batch, true, "writing restored values");
          !s.ok()) {
        return s;
      }
    }
  }
  return Status::OK();
}

Status MerkleStore::FinishRestore() {
  if (!restore_) return Status::InvalidArgument("no restore in progress");
  Restore& r = *restore_;
  const Version version = r.version;
  // The tree: empty, one leaf, or pages, each written as it is made.
  RootRecord root;
  root.version = version;
  std::size_t pages = 0;
  std::string page_key, page_bytes;
  Status failed;
  auto emit = [&](const NibblePath& path, const Page& page) {
    if (!failed.ok()) return;
    page_key.clear();
    AppendPageKey(version, path, &page_key);
    page.EncodeTo(&page_bytes);
    r.batch.Put(page_key, page_bytes);
    ++pages;
    if (r.batch.ApproximateSize() >= kRestoreBatchBytes) {
      failed = WriteBatch(db_.get(), &r.batch, true, "writing restored pages");
    }
  };
  if (r.leaves.size() == 1) {
    root.root = Slot::LeafWithHash(r.leaves[0].key_hash, r.leaves[0].leaf_hash, version);
  } else if (r.leaves.size() >= 2) {
    root.root.kind = Slot::Kind::kPage;
    root.root.version = version;
    root.root.hash = BuildPage(NibblePath(), RestoredLeaves(r.leaves), version, emit);
  }
  if (!failed.ok()) return failed;
  root.hash = RootHashOf(root.root);
  if (root.hash != r.root) {
    // Verified chunks cannot get here; a caller that skipped verification can.
    return Status::Corruption("the restored tree's root does not match the snapshot's");
  }
  const std::string root_record = EncodeRoot(root.root, root.hash);
  r.batch.Put(VersionKey(kRootPrefix, version), root_record);
  r.batch.Put(VersionKey(kCheckpointPrefix, version), root_record);
  std::string marker;
  AppendBigEndian64(static_cast<std::uint64_t>(version), &marker);
  r.batch.Put(kEarliestKey, marker);
  marker.append(AsView(root.hash));
  r.batch.Put(kLatestKey, marker);
  r.batch.Put(kCommitInfoKey, r.commit_info);
  r.batch.Put(kFormatKey, std::to_string(kFormatVersion));
  r.batch.Delete(kRestoringKey);
  // Every batch is synced: a synced write makes only the current log durable, and a memtable
  // switch in between starts a new log without syncing the old one, so an earlier unsynced
  // batch could be lost in a power cut while this one, which drops the marker, survives.
  if (Status s = WriteBatch(db_.get(), &r.batch, true, "finishing a restore"); !s.ok()) {
    return s;
  }
  {
    // As Open would find it: a durable checkpoint at `version` and nothing above.
    absl::WriterMutexLock view_lock(&view_mu_);
    latest_ = root;
    checkpoints_[version] = root;
    durable_ = last_started_ = version;
    earliest_ = version;
    commit_info_ = std::move(r.commit_info);
    prune_cursors_ = PruneCursors{};
  }
  {
    // What reads cached before the restore (an absent key, while the store was empty) is
    // no longer true.
    std::lock_guard lock(value_mu_);
    values_.clear();
    values_by_hash_.clear();
    value_lru_.clear();
    value_cache_used_ = 0;
  }
  restore_.reset();
  return Status::OK();
}

Status MerkleStore::AbortRestore() {
  restore_.reset();
  if (latest_.version != 0) return Status::OK();  // finished: nothing to undo
  return WipeAll();
}

Status MerkleStore::WipeAll() {
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
  leveldb::WriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key() == leveldb::Slice(kRestoringKey)) continue;  // last, once the rest is gone
    batch.Delete(it->key());
    if (batch.ApproximateSize() >= kRestoreBatchBytes) {
      if (Status s = WriteBatch(db_.get(), &batch, true, "wiping an unfinished restore");
          !s.ok()) {
        return s;
      }
    }
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "wiping an unfinished restore");
  it.reset();
  batch.Delete(kRestoringKey);
  return WriteBatch(db_.get(), &batch, true, "wiping an unfinished restore");
}

}  // namespace kairos::store
