#include "store/merkle_store.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/table.h>
#include <leveldb/write_batch.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "store/big_endian.h"
#include "store/cursor_read.h"
#include "store/leveldb_env.h"
#include "store/rebuild_cache.h"
#include "store/records.h"
#include "store/store_restore.h"
#include "store/varint.h"

namespace kairos::store {

namespace {


// Fewer changes than this are hashed on one thread (a thread costs tens of microseconds).
constexpr std::size_t kMinParallelHashes = 512;
constexpr std::size_t kMinParallelPages = 256;

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}


// The manifest CURRENT points to, or "".
std::string CurrentManifest(const std::string& dir) {
  std::ifstream current(dir + "/CURRENT");
  std::string manifest;
  if (!std::getline(current, manifest) || manifest.empty()) return "";
  return dir + "/" + manifest;
}

// The file to blame for a corruption LevelDB reported at open, or "". Its messages from
// recovery do not always name the culprit:
// - "N missing files; e.g.: X.ldb": the manifest lists tables that are not on disk, so the
//   manifest is damaged (or files were deleted by hand), not X.ldb;
// - otherwise the info log (DIR/LOG) says which file recovery choked on.
std::string FileBlamed(const std::string& dir, const leveldb::Status& s) {
  if (s.ToString().find("missing files") != std::string::npos) return CurrentManifest(dir);
  std::ifstream log(dir + "/LOG");
  std::string line, blamed;
  const std::regex file_re(R"(((?:/|\./)?[^\s:]*\d{6}\.(?:log|ldb|sst)|MANIFEST-\d+|CURRENT))");
  while (std::getline(log, line)) {
    std::smatch m;
    if (line.find("Error recovering version set") != std::string::npos) {
      blamed = CurrentManifest(dir);  // the manifest failed to replay
    } else if (line.find("Corruption") != std::string::npos &&
               std::regex_search(line, m, file_re)) {
      blamed = m[1];
    }
  }
  return blamed;
}

// Reads every block of one table file with checksums on.
leveldb::Status VerifyTable(const std::string& path) {
  leveldb::Env* env = leveldb::Env::Default();
  std::uint64_t size = 0;
  leveldb::Status s = env->GetFileSize(path, &size);
  if (!s.ok()) return s;
  leveldb::RandomAccessFile* raw_file = nullptr;
  if (s = env->NewRandomAccessFile(path, &raw_file); !s.ok()) return s;
  std::unique_ptr<leveldb::RandomAccessFile> file(raw_file);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* raw_table = nullptr;
  if (s = leveldb::Table::Open(options, file.get(), size, &raw_table); !s.ok()) return s;
  std::unique_ptr<leveldb::Table> table(raw_table);
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(VerifiedRead()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  return it->status();
}

// Reads the whole database with checksums on. On a failure, finds which live table is bad.
Status VerifyAllTables(leveldb::DB* db, const std::string& dir) {
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(VerifiedRead()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  if (it->status().ok()) return Status::OK();
  std::string live;
  db->GetProperty("leveldb.sstables", &live);
  std::istringstream lines(live);
  std::string line;
  const std::regex number_re(R"(^\s*(\d+):)");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, number_re)) continue;
    char name[32];
    std::snprintf(name, sizeof name, "%06llu", std::stoull(m[1]));
    for (const char* ext : {".ldb", ".sst"}) {
      const std::string path = dir + "/" + name + ext;
      if (!std::filesystem::exists(path)) continue;
      if (leveldb::Status s = VerifyTable(path); !s.ok()) {
        return Status::Corruption(path + ": " + s.ToString());
      }
    }
  }
  return Status::Corruption(dir + ": " + it->status().ToString());
}

}  // namespace

struct MerkleStore::Staged {
  RootRecord root;
  leveldb::WriteBatch batch;
  // The S records this version writes (nullopt: deleted), for the value cache at Commit.
  struct StateRecord {
    Hash key_hash;
    std::string key;
    std::optional<std::string> record;
  };
  std::vector<StateRecord> state_records;
  TreeUpdate tree;
  Version new_earliest = 0;
  std::string commit_info;
  PruneCursors prune_cursors;       // prune_cursors_ once the batch is durable
  std::size_t pending_written = 0;  // pages of pending_ this batch writes
  bool pending_done = false;        // ... and with them its K record
  bool started_done = false;        // the checkpoint this version begins is written whole
};

MerkleStore::MerkleStore(StoreOptions options, std::unique_ptr<leveldb::Env> env,
                         leveldb::DB* db, const leveldb::Cache* cache,
                         const leveldb::FilterPolicy* filter)
    : options_(std::move(options)),
      env_(std::move(env)),
      db_(db),
      block_cache_(cache),
      filter_(filter),
      rebuilds_(std::make_unique<RebuildCache>(options_.rebuild_cache)) {}

MerkleStore::~MerkleStore() {
  if (reaper_.valid()) reaper_.wait();
  rebuilds_.reset();  // their snapshots belong to the database
  db_.reset();        // before the cache and filter it uses
}

Result<std::unique_ptr<MerkleStore>> MerkleStore::Open(const StoreOptions& options) {
  if (options.keep_recent < 0 || options.keep_recent == 1 || options.prune_interval < 1 ||
      options.checkpoint_interval < 1) {
    // keep_recent = 1 would prune the version being committed, whose changeset is still in the
    // batch: the values it replaced would never be pruned. Keeping one past version costs little.
    return Status::InvalidArgument(
        "keep_recent must be 0 (keep all) or >= 2, prune_interval >= 1 and "
        "checkpoint_interval >= 1");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return Status::IOError("cannot create " + options.dir + ": " + ec.message());

  leveldb::Cache* cache = leveldb::NewLRUCache(options.block_cache_bytes);
  const leveldb::FilterPolicy* filter = leveldb::NewBloomFilterPolicy(10);
  leveldb::Options o;
  o.create_if_missing = true;
  o.paranoid_checks = true;
  o.write_buffer_size = options.write_buffer_bytes;
  std::unique_ptr<leveldb::Env> env = std::make_unique<IncrementalSyncEnv>(
      options.env != nullptr ? options.env : leveldb::Env::Default(),
      options.table_bytes_per_sync);
  o.env = env.get();
  // LevelDB's Env starts its one background thread (compactions, memtable flushes) at its first
  // Schedule, and a new thread takes its creator's nice value. Started here, on the opening
  // thread, not by whatever read first asks for a compaction: a query thread runs at nice +10,
  // and compactions at that weight would fall behind the writes until level 0 stalls them.
  env->Schedule([](void*) {}, nullptr);
  o.max_file_size = 32u << 20;
  o.block_cache = cache;
  o.filter_policy = filter;
  o.max_open_files = 1000;
  leveldb::DB* raw = nullptr;
  const leveldb::Status s = leveldb::DB::Open(o, options.dir, &raw);
  if (!s.ok()) {
    delete cache;
    delete filter;
    const std::string blamed = s.IsCorruption() ? FileBlamed(options.dir, s) : "";
    return FromLevelDb(s, "cannot open the store in " + options.dir +
                              (blamed.empty() ? "" : " (corrupt file: " + blamed + ")"));
  }
  std::unique_ptr<MerkleStore> store(new MerkleStore(options, std::move(env), raw, cache, filter));
  if (options.verify_on_open) {
    if (Status st = VerifyAllTables(raw, options.dir); !st.ok()) {
      return Status::Corruption("the store in " + options.dir + " is corrupt: " + st.message());
    }
  }

  std::string value;
  leveldb::Status ls = store->db_->Get(VerifiedRead(), kRestoringKey, &value);
  if (ls.ok()) {
    // A state sync restore stopped before it finished: what it wrote is not a state.
    if (Status st = store->WipeAll(); !st.ok()) return st;
  } else if (!ls.IsNotFound()) {
    return FromLevelDb(ls, "reading the restore marker");
  }
  ls = store->db_->Get(VerifiedRead(), kLatestKey, &value);
  if (ls.IsNotFound()) return store;  // a new store: version 0, the empty tree
  if (!ls.ok()) return FromLevelDb(ls, "reading the latest version");
  {
    std::string format;
    ls = store->db_->Get(VerifiedRead(), kFormatKey, &format);
    if (!ls.ok() && !ls.IsNotFound()) return FromLevelDb(ls, "reading the store format");
    if (!ls.ok() || format != std::to_string(kFormatVersion)) {
      return Status::InvalidArgument(
          "the store in " + options.dir + " has on-disk format " +
          (ls.ok() ? format : std::string("1")) + ", and this build reads only format " +
          std::to_string(kFormatVersion) +
          " (no migration before the first release): reset the node home (delete its data "
          "directory) and sync the chain again");
    }
  }
  if (value.size() != 40) return Status::Corruption("the latest-version record is malformed");
  const auto version = static_cast<Version>(ReadBigEndian64(value));
  {
    std::string info;
    ls = store->db_->Get(VerifiedRead(), kCommitInfoKey, &info);
    if (ls.ok()) {
      store->commit_info_ = std::move(info);
    } else if (!ls.IsNotFound()) {
      return FromLevelDb(ls, "reading the commit info");
    }
  }
  const Hash latest_hash = HashFromView(std::string_view(value).substr(8));
  RootRecord recorded;
  if (Status st = store->ReadRoot(version, &recorded); !st.ok()) return st;
  if (Status st = store->Recover(version); !st.ok()) return st;
  // The root record, the latest marker and the replayed tree must all agree.
  Hash node_hash = RootHashOf(store->latest_.root);
  if (store->latest_.root.kind == Slot::Kind::kPage) {
    auto page = store->LoadPage(store->latest_.root.version, NibblePath());
    if (!page.ok()) return page.status();
    node_hash = (*page)->hash();  // recomputed from the slots when the page was decoded or built
  }
  if (node_hash != recorded.hash || latest_hash != recorded.hash) {
    return Status::Corruption("version " + std::to_string(version) +
                              ": the stored root does not match the tree rebuilt from the "
                              "checkpoint and changesets in " + options.dir);
  }
  ls = store->db_->Get(VerifiedRead(), kEarliestKey, &value);
  if (ls.ok() && value.size() == 8) {
    store->earliest_ = static_cast<Version>(ReadBigEndian64(value));
  } else if (ls.ok()) {
    return Status::Corruption("the earliest-kept-version marker in " + options.dir +
                              " is malformed");
  } else if (!ls.IsNotFound()) {
    return FromLevelDb(ls, "reading the earliest kept version");
  }
  return store;
}

Status MerkleStore::ReadChangeset(Version version, std::vector<KeyUpdate>* out) const {
  std::string value;
  const leveldb::Status s =
      db_->Get(VerifiedRead(), VersionKey(kChangesetPrefix, version), &value);
  if (!s.ok()) {
    return FromLevelDb(s, "reading the changeset of version " + std::to_string(version));
  }
  if (!DecodeChangeset(value, out)) {
    return Status::Corruption("the changeset of version " + std::to_string(version) +
                              " is malformed");
  }
  return Status::OK();
}

Status MerkleStore::Recover(Version latest) {
  // The durable checkpoints.
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
  const std::string kprefix(1, kCheckpointPrefix);
  for (it->Seek(kprefix); it->Valid() && it->key().starts_with(kprefix); it->Next()) {
    if (it->key().size() != 9) return Status::Corruption("a checkpoint record key is malformed");
    RootRecord r;
    r.version = static_cast<Version>(ReadBigEndian64(std::string_view(it->key().data() + 1, 8)));
    if (!DecodeRoot(std::string_view(it->value().data(), it->value().size()), &r.root, &r.hash)) {
      return Status::Corruption("the checkpoint record of version " + std::to_string(r.version) +
                                " is malformed");
    }
    checkpoints_[r.version] = r;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "reading checkpoints");
  if (!checkpoints_.empty()) {
    latest_ = checkpoints_.rbegin()->second;
    durable_ = last_started_ = latest_.version;
  }
  // Replay every changeset above it.
  replayed_at_open_ = 0;
  std::vector<KeyUpdate> updates;
  const std::string cprefix(1, kChangesetPrefix);
  for (it->Seek(VersionKey(kChangesetPrefix, durable_ + 1));
       it->Valid() && it->key().starts_with(cprefix); it->Next()) {
    if (it->key().size() != 9) return Status::Corruption("a changeset record key is malformed");
    const auto v = static_cast<Version>(ReadBigEndian64(std::string_view(it->key().data() + 1, 8)));
    if (v > latest) break;
    // Versions are consecutive heights: a gap is a lost changeset, named here rather than found
    // later as a root mismatch.
    if (latest_.version != 0 && v != latest_.version + 1) {
      return Status::Corruption("the changeset of version " + std::to_string(latest_.version + 1) +
                                " is missing in " + options_.dir + " (the next one is version " +
                                std::to_string(v) + ")");
    }
    if (!DecodeChangeset(std::string_view(it->value().data(), it->value().size()), &updates)) {
      return Status::Corruption("the changeset of version " + std::to_string(v) + " is malformed");
    }
    TreeUpdate tree;
    if (Status s = ApplyUpdates(*this, latest_.root, v, updates, &tree, /*parallel=*/true);
        !s.ok()) {
      return s;
    }
    latest_.version = v;
    latest_.root = tree.root;
    latest_.hash = RootHashOf(tree.root);
    // A checkpoint being written when the process stopped is written again from its start.
    ApplyToMemory(v, tree, 0, false);
    ++replayed_at_open_;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "reading changesets");
  if (latest_.version != latest) {
    return Status::Corruption("the store in " + options_.dir + " is at version " +
                              std::to_string(latest) + " but its changesets from checkpoint " +
                              std::to_string(durable_) + " reach only version " +
                              std::to_string(latest_.version));
  }
  return Status::OK();
}

void MerkleStore::ApplyToMemory(Version version, const TreeUpdate& tree, std::size_t shared,
                                bool done) {
  // The in-memory pages this version replaces stay, for views of the versions before it, until
  // recent_versions more commits have passed (those on disk or in the pending checkpoint are
  // readable from there meanwhile).
  PageMap* kept = nullptr;
  if (options_.recent_versions > 0) {
    while (recent_.size() >= static_cast<std::size_t>(options_.recent_versions)) {
      recent_.pop_front();
    }
    kept = &recent_.emplace_back(version, PageMap()).second;
  }
  {
    std::lock_guard lock(page_cache_mu_);
    for (const auto& [v, path] : tree.stale_pages) {
      const PageId id{v, path};
      if (v > last_started_) {  // never to be written
        if (kept == nullptr) {
          epoch_.erase(id);
        } else if (auto node = epoch_.extract(id); !node.empty()) {
          kept->insert(std::move(node));
        }
      } else if (v > durable_) {
        if (pending_) pending_->replaced.push_back(id);  // written, then dropped
      } else {
        ForgetPage(id);  // on disk, for the past versions that still reach it
      }
    }
  }
  for (const auto& [path, page] : tree.new_pages) epoch_[PageId{version, path}] = page;
  if (pending_) {
    pending_->written += shared;
    std::advance(pending_->next, static_cast<std::ptrdiff_t>(shared));
    if (done) {
      MakeDurable(&*pending_);
      pending_.reset();
    }
  }
  if (version < last_started_ + options_.checkpoint_interval) return;
  // A checkpoint begins: the pages it reaches that are not on disk are this epoch's (and, after
  // a change of interval, those of an unfinished one).
  PendingCheckpoint p;
  p.root = latest_;
  p.pages = std::move(epoch_);
  epoch_ = std::exchange(spare_, PageMap());
  epoch_.reserve(p.pages.size());  // the next interval makes about as many: no rehashing
  if (pending_) {
    p.pages.merge(pending_->pages);
    p.replaced.insert(p.replaced.end(), pending_->replaced.begin(), pending_->replaced.end());
  }
  p.next = p.pages.begin();
  // Written in equal shares over the next checkpoint_interval batches: the last share (and the
  // K record) goes in the batch that begins the next checkpoint, which so carries its share
  // like the others (with interval - 1 shares it carried none, the others a ninth more).
  const auto spread = static_cast<std::size_t>(options_.checkpoint_interval);
  p.chunk = (p.pages.size() + spread - 1) / spread;
  last_started_ = version;
  pending_ = std::move(p);
  pending_->next = pending_->pages.begin();  // (moving a map keeps iterators, but be plain)
}

void MerkleStore::MakeDurable(PendingCheckpoint* done) {
  checkpoints_[done->root.version] = done->root;
  durable_ = done->root.version;
  std::lock_guard lock(page_cache_mu_);
  // The previous checkpoint's replaced pages not dropped yet go first (the shares below drain
  // them within the interval): a replaced page must never reach retired_.
  for (const PageId& id : forget_) ForgetPage(id);
  // Its pages nobody read go to retired_, and from there to the cache a share per commit
  // (moving or freeing tens of thousands of pages at once made this commit the slowest of its
  // interval).
  PageMap unread = std::exchange(written_, std::exchange(done->pages, PageMap()));
  if (!unread.empty()) {
    retired_.push_back(std::move(unread));
    std::size_t total = 0;
    for (const PageMap& m : retired_) total += m.size();
    retire_per_commit_ = (total + 9) / 10;
  }
  // This one's pages replaced since it began leave written_ a share per commit too (dropping
  // them all here, ~140k pages at 1M keys, took ~180 ms in this commit).
  forget_ = std::exchange(done->replaced, {});
  const auto spread = static_cast<std::size_t>(
      std::clamp<Version>(options_.checkpoint_interval - 1, 1, 20));
  forget_per_commit_ = (forget_.size() + spread - 1) / spread;
}

void MerkleStore::FreeRetiredShare() {
  std::lock_guard lock(page_cache_mu_);
  for (std::size_t i = 0; i < forget_per_commit_ && !forget_.empty(); ++i) {
    ForgetPage(forget_.back());
    forget_.pop_back();
  }
  std::size_t n = retire_per_commit_;
  while (n > 0 && !retired_.empty()) {
    PageMap& m = retired_.front();
    for (auto it = m.begin(); n > 0 && it != m.end(); --n) {
      CachePage(it->first, std::move(it->second), /*read=*/false);
      m.erase(it++);  // absl's erase returns nothing; it moves no other entry
    }
    if (m.empty()) {
      if (m.capacity() > spare_.capacity()) spare_ = std::move(m);
      retired_.erase(retired_.begin());
    }
  }
}

void MerkleStore::CachePage(const PageId& id, std::shared_ptr<const Page> page,
                            bool read) const {
  if (pages_.count(id) != 0) return;
  if (read) {
    if (options_.page_cache_pages == 0) return;
    lru_.push_front(id);
    cached_page_bytes_ += page->bytes();
    pages_.emplace(id, std::make_pair(std::move(page), lru_.begin()));
    while (pages_.size() > options_.page_cache_pages) {
      const auto victim = pages_.find(lru_.back());
      cached_page_bytes_ -= victim->second.first->bytes();
      pages_.erase(victim);
      lru_.pop_back();
    }
  } else if (pages_.size() < options_.page_cache_pages) {
    lru_.push_back(id);
    cached_page_bytes_ += page->bytes();
    pages_.emplace(id, std::make_pair(std::move(page), std::prev(lru_.end())));
  }
}

void MerkleStore::ForgetPage(const PageId& id) {
  written_.erase(id);
  for (PageMap& m : retired_) m.erase(id);
  if (auto it = pages_.find(id); it != pages_.end()) {
    lru_.erase(it->second.second);
    cached_page_bytes_ -= it->second.first->bytes();
    pages_.erase(it);
  }
}

Result<std::shared_ptr<const Page>> MerkleStore::LoadPage(Version version,
                                                          const NibblePath& path) const {
  if (version > durable_) {
    const PageMap& pages = version > last_started_ || !pending_ ? epoch_ : pending_->pages;
    if (auto it = pages.find(PageId{version, path}); it != pages.end()) return it->second;
    return Status::Corruption("the tree page at version " + std::to_string(version) + " depth " +
                              std::to_string(path.size()) + " is missing from memory");
  }
  return LoadDiskPage(version, path);
}

Result<std::shared_ptr<const Page>> MerkleStore::LoadDiskPage(Version version,
                                                              const NibblePath& path,
                                                              bool latest,
                                                              const leveldb::Snapshot* snapshot,
                                                              std::unique_ptr<leveldb::Iterator>*
                                                                  cursor) const {
  {
    std::lock_guard lock(page_cache_mu_);
    if (auto it = pages_.find(PageId{version, path}); it != pages_.end()) {
      if (latest) lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
    // A checkpoint's pages wait in written_ and retired_: the latest tree's reads move them
    // to the cache, a view's leave them where they are.
    const auto take = [&](PageMap& m) -> std::shared_ptr<const Page> {
      auto it = m.find(PageId{version, path});
      if (it == m.end()) return nullptr;
      if (!latest) return it->second;
      std::shared_ptr<const Page> page = std::move(it->second);
      m.erase(it);
      CachePage(PageId{version, path}, page, /*read=*/true);
      return page;
    };
    if (auto page = take(written_)) return page;
    for (PageMap& m : retired_) {
      if (auto page = take(m)) return page;
    }
  }
  std::string value;
  (latest ? disk_page_reads_ : stats_of_views_.disk_page_reads)
      .fetch_add(1, std::memory_order_relaxed);
  leveldb::ReadOptions read = latest ? VerifiedRead() : ViewRead();
  read.snapshot = snapshot;
  const std::string key = PageKey(version, path);
  const leveldb::Status s = cursor != nullptr
                               ? ReadThroughCursor(db_.get(), read, cursor, key, 0, &value)
                               : db_->Get(read, key, &value);
  if (s.IsNotFound()) {  // a page the tree points to is gone: the store is damaged
    return Status::Corruption("the tree page at version " + std::to_string(version) +
                              " depth " + std::to_string(path.size()) + " is missing in " +
                              options_.dir);
  }
  if (!s.ok()) {
    return FromLevelDb(s, "reading the tree page at version " + std::to_string(version) +
                              " depth " + std::to_string(path.size()));
  }
  std::shared_ptr<const Page> page = Page::Decode(value);
  if (!page) {
    return Status::Corruption("the tree page at version " + std::to_string(version) +
                              " depth " + std::to_string(path.size()) + " is malformed");
  }
  if (latest) {  // a view's pages are not cached: a query must not evict what blocks read
    std::lock_guard lock(page_cache_mu_);
    CachePage(PageId{version, path}, page, /*read=*/true);
  }
  return page;
}

Status MerkleStore::ReadRoot(Version version, RootRecord* out,
                             const leveldb::Snapshot* snapshot) const {
  std::string value;
  leveldb::ReadOptions read = VerifiedRead();
  read.snapshot = snapshot;
  const leveldb::Status s = db_->Get(read, VersionKey(kRootPrefix, version), &value);
  if (s.IsNotFound()) {  // callers check the version is kept first (CheckVersion)
    return Status::Corruption("the root record of version " + std::to_string(version) +
                              " is missing in " + options_.dir);
  }
  if (!s.ok()) return FromLevelDb(s, "reading the root of version " + std::to_string(version));
  out->version = version;
  if (!DecodeRoot(value, &out->root, &out->hash)) {
    return Status::Corruption("the root record of version " + std::to_string(version) +
                              " is malformed");
  }
  return Status::OK();
}

namespace {
// Bytes a cached record is charged: the key, the record, and an estimate of the rest (the
// map's node ~144 and its slot ~16 at its load, the list node 32, the by-hash index's 41-byte
// slot ~70 at its load, and malloc's overhead on the two strings).
std::size_t CachedSize(std::string_view key, const std::optional<std::string>& record) {
  return key.size() + (record ? record->size() : 0) + 288;
}
}  // namespace

void MerkleStore::CacheStateRecord(const Hash& key_hash, std::string key,
                                   std::optional<std::string> record) const {
  if (options_.value_cache_bytes == 0) return;
  std::lock_guard lock(value_mu_);
  if (auto it = values_.find(key); it != values_.end()) {
    value_cache_used_ -= CachedSize(key, it->second.record);
    value_cache_used_ += CachedSize(key, record);
    it->second.record = std::move(record);
    it->second.referenced = true;
  } else {
    const std::size_t size = CachedSize(key, record);
    // A full cache hands its least recently used entry's nodes to the new record. The list
    // then ends with that entry's node, and the map holds exactly the entries before it.
    decltype(values_)::node_type node;
    while (value_cache_used_ + size > options_.value_cache_bytes && !values_.empty()) {
      // Once a node is taken, its list slot stays last: entries passed over go before it.
      auto victim =
          ValueCacheVictim(node.empty() ? value_lru_.end() : std::prev(value_lru_.end()));
      value_cache_used_ -= CachedSize(victim->first, victim->second.record);
      values_by_hash_.erase(victim->second.key_hash);
      if (node.empty()) {
        node = values_.extract(victim);
        value_lru_.splice(value_lru_.end(), value_lru_, value_lru_.begin());
      } else {
        values_.erase(victim);
        value_lru_.pop_front();
      }
    }
    if (node.empty()) value_lru_.push_back(nullptr);
    const auto lru = std::prev(value_lru_.end());
    ValueMap::value_type* entry;
    if (node.empty()) {
      entry = &*values_.emplace(std::move(key), CachedRecord{std::move(record), lru, key_hash})
                    .first;
    } else {
      node.key() = std::move(key);
      node.mapped() = CachedRecord{std::move(record), lru, key_hash};
      entry = &*values_.insert(std::move(node)).position;
    }
    *lru = &entry->first;
    values_by_hash_[key_hash] = entry;
    value_cache_used_ += size;
  }
  while (value_cache_used_ > options_.value_cache_bytes && !value_lru_.empty()) {
    auto victim = ValueCacheVictim(value_lru_.end());
    value_cache_used_ -= CachedSize(victim->first, victim->second.record);
    values_by_hash_.erase(victim->second.key_hash);
    values_.erase(victim);
    value_lru_.pop_front();
  }
}

MerkleStore::CacheAnswer MerkleStore::CachedStateRecord(std::string_view key, std::size_t skip,
                                                        std::string* out, bool mark) const {
  std::lock_guard lock(value_mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return CacheAnswer::kMiss;
  if (mark) it->second.referenced = true;
  if (!it->second.record) return CacheAnswer::kAbsent;
  out->assign(*it->second.record, skip);
  return CacheAnswer::kPresent;
}

MerkleStore::ValueMap::iterator MerkleStore::ValueCacheVictim(
    std::list<const std::string*>::iterator back) const {
  // Second chance: a referenced entry goes to the back with its flag cleared. Every entry is
  // passed over at most once, so this ends within one turn of the list.
  while (true) {
    auto victim = values_.find(*value_lru_.front());
    if (!victim->second.referenced) return victim;
    victim->second.referenced = false;
    value_lru_.splice(back, value_lru_, value_lru_.begin());
  }
}

Status MerkleStore::ReadStateRecord(std::string_view key, std::string* record) const {
  switch (CachedStateRecord(key, 0, record)) {
    case CacheAnswer::kAbsent: return Status::NotFound("absent");
    case CacheAnswer::kPresent: return Status::OK();
    case CacheAnswer::kMiss: break;
  }
  return LoadStateRecord(key, record);
}

Status MerkleStore::LoadStateRecord(std::string_view key, std::string* record) const {
  const Hash key_hash = Sha256Of(key);
  if (Status s = ReadLatestRecord(key, key_hash, record); !s.ok()) {
    if (s.IsNotFound()) CacheStateRecord(key_hash, std::string(key), std::nullopt);
    return s;
  }
  CacheStateRecord(key_hash, std::string(key), *record);
  return Status::OK();
}

Status MerkleStore::ReadLatestRecord(std::string_view key, const Hash& key_hash,
                                     std::string* record) const {
  // The latest tree's leaf names the version; the value is in V at that version. An absent
  // key costs no LevelDB read (the pages on the walk are in memory, or read like a proof's).
  // After a failed commit the tree's memory may be between two versions.
  if (!failed_.ok()) return failed_;
  Slot leaf;
  if (!latest_.root.empty()) {
    if (Status s = FindLeaf(*this, latest_.root, key_hash, &leaf); !s.ok()) return s;
  }
  if (leaf.empty()) return Status::NotFound("absent");
  if (Status s = ReadValueRecord(key, key_hash, leaf.version, record); !s.ok()) return s;
  std::string version;
  AppendBigEndian64(static_cast<std::uint64_t>(leaf.version), &version);
  record->insert(0, version);
  return Status::OK();
}

Status MerkleStore::ReadValueRecord(std::string_view key, const Hash& key_hash, Version version,
                                    std::string* value) const {
  std::string raw;
  const leveldb::Status s = db_->Get(VerifiedRead(), ValueKey(key_hash, version), &raw);
  if (!s.ok()) {
    return Status::Corruption("the value of a key written at version " + std::to_string(version) +
                              " is missing: " + s.ToString());
  }
  std::string_view k, v;
  if (!DecodeValueRecord(raw, &k, &v) || k != key) {
    return Status::Corruption("the value record of a key written at version " +
                              std::to_string(version) + " is malformed");
  }
  value->assign(v);
  return Status::OK();
}

Status MerkleStore::Get(std::string_view key, std::string* value) const {
  // A cached record is copied once, without its version, into the caller's buffer.
  switch (CachedStateRecord(key, 8, value)) {
    case CacheAnswer::kAbsent: return Status::NotFound("absent");
    case CacheAnswer::kPresent: return Status::OK();
    case CacheAnswer::kMiss: break;
  }
  std::string raw;
  if (Status s = LoadStateRecord(key, &raw); !s.ok()) return s;
  value->assign(raw, 8);
  return Status::OK();
}

std::unique_ptr<KvIterator> MerkleStore::Iterate(std::string_view start,
                                                 std::string_view end) const {
  return std::make_unique<StateIterator>(
      db_->NewIterator(VerifiedRead()), start, end,
      [this, at = latest_.version](std::string_view key, std::string* value) {
        // The key index is the database's as the iterator began; values come from the latest
        // tree, so they match it only until the next commit.
        if (latest_.version != at) {
          return Status::InvalidArgument("a store iterator begun at version " +
                                         std::to_string(at) + " was read after a commit");
        }
        // Read through the cache without filling it: a scan would evict what blocks read.
        if (CachedStateRecord(key, 8, value, /*mark=*/false) == CacheAnswer::kPresent) {
          return Status::OK();
        }
        std::string record;
        const Status s = ReadLatestRecord(key, Sha256Of(key), &record);
        if (s.IsNotFound()) {
          return Status::Corruption("the key index (S) holds a key the tree does not");
        }
        if (!s.ok()) return s;
        value->assign(record, 8);
        return Status::OK();
      });
}

Version MerkleStore::PruneTo(Version version) const {
  if (options_.keep_recent == 0) return earliest_;
  // The window's target moves every prune_interval versions; the oldest kept version follows
  // it by an equal share per block, reaching it at the block before the next move.
  const Version into = version % options_.prune_interval;
  const Version target = version - into - options_.keep_recent + 1;
  if (target <= earliest_) return earliest_;
  const Version blocks_left = options_.prune_interval - into;
  return earliest_ + (target - earliest_ + blocks_left - 1) / blocks_left;
}

Status MerkleStore::AddPruning(Version version, Version completing, void* batch_ptr) {
  auto* batch = static_cast<leveldb::WriteBatch*>(batch_ptr);
  if (options_.keep_recent == 0) return Status::OK();
  // The oldest kept version is the cursor: everything below it that no kept version needs goes
  // in the batch that moves it, so a crash leaves the old cursor and its records, or the new
  // one without them.
  const Version keep_from = PruneTo(version);
  // Every kept version's tree comes from the newest durable checkpoint (the one this batch
  // completes included): replayed forward above it, undone backward below it (Rebuild in
  // store_view.cc). So it stays, with the changesets of the kept versions on either side of
  // it; older checkpoints and every page replaced at or below it go.
  const Version newest =
      std::max(completing, checkpoints_.empty() ? 0 : checkpoints_.rbegin()->first);
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
  // Value records replaced at a version <= keep_from are readable only from pruned versions:
  // the changesets of (earliest, keep_from] name them (the values they replaced, and their
  // tombstones).
  std::vector<KeyUpdate> updates;
  std::vector<Version> previous;
  if (keep_from > earliest_) {
    const std::string values_end = VersionKey(kChangesetPrefix, keep_from + 1);
    for (it->Seek(VersionKey(kChangesetPrefix, earliest_ + 1));
         it->Valid() && it->key().compare(values_end) < 0; it->Next()) {
      if (it->key().size() != 9) return Status::Corruption("a changeset record key is malformed");
      const auto w =
          static_cast<Version>(ReadBigEndian64(std::string_view(it->key().data() + 1, 8)));
      if (!DecodeChangeset(std::string_view(it->value().data(), it->value().size()), &updates,
                           &previous)) {
        return Status::Corruption("the changeset of version " + std::to_string(w) +
                                  " is malformed");
      }
      for (std::size_t i = 0; i < updates.size(); ++i) {
        if (previous[i] > 0) {
          batch->Delete(ValueKey(updates[i].key_hash, previous[i]));
          ++stats_.prune_deletes;
        }
        if (!updates[i].leaf_hash) {
          batch->Delete(ValueKey(updates[i].key_hash, w));
          ++stats_.prune_deletes;
        }
      }
    }
    if (!it->status().ok()) return FromLevelDb(it->status(), "scanning changesets");
  }
  // Pages replaced at a version <= newest are reachable only from older checkpoints. Their
  // lists go two versions a block from the batch that completes it (on schedule, `interval`
  // versions after it), so those it makes prunable are gone half an interval later, with no
  // batch deleting a whole interval's pages at once.
  // (Versions are positive and encoded unsigned: a bound below 1 means none.)
  const Version interval = options_.checkpoint_interval;
  const Version pages_to = std::max<Version>(
      0, std::min(newest, newest - interval + 2 * (version - newest - interval + 1)));
  // Each scan below starts where the last committed one ended (all below it is deleted):
  // from the table's start, it walked every record deleted since the last compaction, and
  // LevelDB reads a deleted record's older value (a changeset: ~0.7 MB at 10k changes) to
  // skip it.
  PruneCursors& next = staged_->prune_cursors;
  next = prune_cursors_;
  const std::string pages_end = VersionKey(kStalePagePrefix, pages_to + 1);
  if (pages_to > 0) next.stale = std::max(next.stale, pages_to + 1);
  for (it->Seek(VersionKey(kStalePagePrefix, prune_cursors_.stale));
       pages_to > 0 && it->Valid() && it->key().compare(pages_end) < 0; it->Next()) {
    StaleList stale;
    if (!StaleList::Decode(std::string_view(it->value().data(), it->value().size()), &stale)) {
      return Status::Corruption("a stale-page list is malformed");
    }
    for (const std::string& k : stale.keys) batch->Delete(k);
    batch->Delete(it->key());
    stats_.prune_deletes += stale.keys.size() + 1;
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "scanning stale pages");
  // Roots of the versions that leave the window, changesets neither a forward replay from
  // the newest checkpoint nor an undo down to the oldest kept version needs (those at or below
  // both), and checkpoints below the newest.
  const Version changesets_to = std::min(keep_from, newest);
  for (const auto& [prefix, stop, from, to] :
       {std::tuple{kRootPrefix, keep_from, prune_cursors_.roots, &next.roots},
        std::tuple{kChangesetPrefix, changesets_to + 1, prune_cursors_.changesets,
                   &next.changesets},
        std::tuple{kCheckpointPrefix, newest, prune_cursors_.checkpoints, &next.checkpoints}}) {
    const std::string end = VersionKey(prefix, stop);
    for (it->Seek(VersionKey(prefix, from)); it->Valid() && it->key().compare(end) < 0;
         it->Next()) {
      batch->Delete(it->key());
      ++stats_.prune_deletes;
    }
    if (!it->status().ok()) return FromLevelDb(it->status(), "scanning pruned records");
    *to = std::max(*to, stop);
  }
  if (keep_from > earliest_) {
    std::string e;
    AppendBigEndian64(static_cast<std::uint64_t>(keep_from), &e);
    batch->Put(kEarliestKey, e);
    staged_->new_earliest = keep_from;
  }
  return Status::OK();
}

Result<Hash> MerkleStore::Stage(Version version, const ChangeSet& changes,
                                std::string commit_info) {
  if (!failed_.ok()) return failed_;
  if (restore_) {
    return Status::InvalidArgument("a state sync restore is in progress: nothing can be staged "
                                   "until it finishes or is abandoned");
  }
  if (version <= latest_.version) {
    return Status::InvalidArgument("cannot stage version " + std::to_string(version) +
                                   " on top of version " + std::to_string(latest_.version));
  }
  staged_ = std::make_unique<Staged>();
  staged_->new_earliest = earliest_;
  stats_ = BlockStats();
  disk_page_reads_.store(0, std::memory_order_relaxed);
  // Checkpoints: this batch writes a share of the pending one's pages (all that is left when a
  // new one begins here), and with the last share its K record.
  const bool begins = version >= last_started_ + options_.checkpoint_interval;
  // With an interval of 1, the checkpoint this version begins is written whole in its batch.
  const bool whole = begins && options_.checkpoint_interval <= 1;
  Version completing = 0;
  if (pending_) {
    const std::size_t left = pending_->pages.size() - pending_->written;
    staged_->pending_written = begins ? left : std::min(left, pending_->chunk);
    staged_->pending_done = staged_->pending_written == left;
    if (staged_->pending_done) completing = pending_->root.version;
  }
  leveldb::WriteBatch& batch = staged_->batch;
  const auto prune_start = std::chrono::steady_clock::now();
  if (earliest_ == 0) {
    // The first version ever written (the chain's initial height): nothing to prune, and no
    // version below it exists.
    staged_->new_earliest = version;
    std::string e;
    AppendBigEndian64(static_cast<std::uint64_t>(version), &e);
    batch.Put(kEarliestKey, e);
  } else if (Status s = AddPruning(version, whole ? version : completing, &batch); !s.ok()) {
    staged_.reset();
    return s;
  }
  stats_.prune_ms = MillisSince(prune_start);

  struct Change {
    const std::string* key;
    const std::string* value;  // nullptr: delete
    KeyUpdate update;          // the key hash, and the leaf hash unless deleted
    std::size_t order;         // its place in `changes` (key order)
  };
  std::vector<Change> work;
  work.reserve(changes.size());
  for (const auto& [key, value] : changes) {
    const std::string_view value_view = value ? std::string_view(*value) : std::string_view();
    if (Status s = options_.limits.Check(key, value ? &value_view : nullptr); !s.ok()) {
      staged_.reset();
      return s;
    }
    work.push_back({&key, value ? &*value : nullptr, {}, work.size()});
  }
  // Key and leaf hashes, on two threads for a large block (each change's own hashes only).
  const auto hash_range = [&work](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      Change& c = work[i];
      c.update.key_hash = Sha256Of(*c.key);
      if (c.value) c.update.leaf_hash = LeafHash(c.update.key_hash, Sha256Of(*c.value));
    }
  };
  if (work.size() >= kMinParallelHashes) {
    const std::size_t half = work.size() / 2;
    auto second = std::async(std::launch::async, hash_range, half, work.size());
    hash_range(0, half);
    second.get();
  } else {
    hash_range(0, work.size());
  }
  std::sort(work.begin(), work.end(), [](const Change& a, const Change& b) {
    return a.update.key_hash < b.update.key_hash;
  });
  std::vector<KeyUpdate> updates;
  updates.reserve(work.size());
  for (const Change& c : work) updates.push_back(c.update);
  TreeUpdate& tree = staged_->tree;
  if (Status s = ApplyUpdates(*this, latest_.root, version, updates, &tree, /*parallel=*/true);
      !s.ok()) {
    staged_.reset();
    return s;
  }

  // The pending checkpoint's share, encoded on a helper thread while the values are batched
  // when it is large. It goes into the batch after the root record either way.
  leveldb::WriteBatch share;
  std::future<void> share_encoded;  // declared after `share`: joined before it is destroyed
  if (pending_) {
    const std::size_t n = staged_->pending_written;
    const auto encode = [&share, first = pending_->next, n] {
      // In key order, like the values (the pages come from a hash map).
      std::vector<std::pair<std::string, const Page*>> pages(n);
      auto it = first;
      for (std::size_t i = 0; i < n; ++i, ++it) {
        AppendPageKey(it->first.version, it->first.path, &pages[i].first);
        pages[i].second = it->second.get();
      }
      std::sort(pages.begin(), pages.end());
      std::string value;
      for (const auto& [key, page] : pages) {
        page->EncodeTo(&value);
        share.Put(key, value);
      }
    };
    if (n >= kMinParallelPages) {
      share_encoded = std::async(std::launch::async, encode);
    } else {
      encode();
    }
    stats_.checkpoint_pages = n;
  }

  // Values, the changeset, and the pages this version makes stale. Each table's records go
  // into the batch in key order (V by key hash, then S by key): LevelDB inserts them one by
  // one into its memtable, a skip list, where an insert next to the previous one finds its
  // path in the CPU cache.
  std::string changeset, record, value_key, state_key, stale_list;
  changeset.reserve(updates.size() * 100);
  // By place in `changes`: what the block does to the key index (S), which lists the present
  // keys and changes only when a key appears or goes.
  enum class KeyIndex : std::uint8_t { kKeep, kPut, kDelete };
  std::vector<KeyIndex> key_index(work.size(), KeyIndex::kKeep);
  for (std::size_t i = 0; i < work.size(); ++i) {
    const Change& c = work[i];
    const Version previous = tree.outcomes[i];
    if (previous == kNoop) continue;  // the same value again, or deleting an absent key
    if (!c.value) {
      key_index[c.order] = KeyIndex::kDelete;
    } else if (previous == kInserted) {
      key_index[c.order] = KeyIndex::kPut;
    }
    AppendChange(updates[i], previous, tree.previous_leaves[i], &changeset);
    value_key.clear();
    AppendValueKey(c.update.key_hash, version, &value_key);
    if (c.value) {
      record.assign(1, '\x01');
      AppendUvarint(c.key->size(), &record);
      record.append(*c.key);
      record.append(*c.value);
      batch.Put(value_key, record);
      record.clear();
      AppendBigEndian64(static_cast<std::uint64_t>(version), &record);
      record.append(*c.value);
      staged_->state_records.push_back({c.update.key_hash, *c.key, record});
    } else {
      // A tombstone: absent from `version` on. Needed only until `version` is pruned.
      batch.Put(value_key, leveldb::Slice("\x00", 1));
      staged_->state_records.push_back({c.update.key_hash, *c.key, std::nullopt});
    }
    // The replaced value stays readable at versions [previous, version): pruning finds it
    // through this changeset.
  }
  std::size_t order = 0;
  for (const auto& change : changes) {
    const KeyIndex op = key_index[order++];
    if (op == KeyIndex::kKeep) continue;
    state_key.clear();
    AppendStateKey(change.first, &state_key);
    if (op == KeyIndex::kPut) {
      batch.Put(state_key, leveldb::Slice());  // the key only: its version is in the tree
    } else {
      batch.Delete(state_key);
    }
  }
  // A replaced page is on disk when the checkpoint begun last (the latest one before this
  // version) could reach it: made at or below that checkpoint and alive after it.
  for (const auto& [v, path] : tree.stale_pages) {
    if (v <= last_started_) StaleList::Append(v, path, &stale_list);
  }
  if (!stale_list.empty()) batch.Put(VersionKey(kStalePagePrefix, version), stale_list);
  batch.Put(VersionKey(kChangesetPrefix, version), changeset);

  staged_->root.version = version;
  staged_->root.root = tree.root;
  staged_->root.hash = RootHashOf(tree.root);
  const std::string root_record = EncodeRoot(tree.root, staged_->root.hash);
  batch.Put(VersionKey(kRootPrefix, version), root_record);

  // The pending checkpoint's share, and its K record with the last share. With an interval
  // of 1, a checkpoint's pages go in its own batch, and a pending one (after a reopen) gets no
  // K record: this batch makes a newer one, the only one pruning keeps (AddPruning deletes
  // older K records from the database, which would not hold this one yet).
  if (pending_) {
    if (share_encoded.valid()) share_encoded.get();  // rethrows what the helper threw
    batch.Append(share);
    if (staged_->pending_done && !whole) {
      batch.Put(VersionKey(kCheckpointPrefix, pending_->root.version),
                EncodeRoot(pending_->root.root, pending_->root.hash));
    }
  }
  if (whole) {
    std::unordered_set<PageId, PageIdHash> stale;
    for (const auto& [v, path] : tree.stale_pages) stale.insert(PageId{v, path});
    for (const auto& [id, page] : epoch_) {
      if (!stale.contains(id)) batch.Put(PageKey(id.version, id.path), page->Encode());
    }
    for (const auto& [path, page] : tree.new_pages) batch.Put(PageKey(version, path), page->Encode());
    batch.Put(VersionKey(kCheckpointPrefix, version), root_record);
    staged_->started_done = true;
  }

  std::string latest;
  AppendBigEndian64(static_cast<std::uint64_t>(version), &latest);
  latest.append(AsView(staged_->root.hash));
  batch.Put(kLatestKey, latest);
  batch.Put(kCommitInfoKey, commit_info);
  batch.Put(kFormatKey, std::to_string(kFormatVersion));
  staged_->commit_info = std::move(commit_info);
  stats_.batch_bytes = batch.ApproximateSize();
  stats_.disk_page_reads = disk_page_reads_.load(std::memory_order_relaxed);
  return staged_->root.hash;
}

Status MerkleStore::Commit() {
  if (!failed_.ok()) return failed_;
  if (!staged_) return Status::InvalidArgument("nothing staged to commit");
  const std::unique_ptr<Staged> staged = std::move(staged_);
  const Version version = staged->root.version;
  RebuildCache::Entries stale_rebuilds;  // handed to the reaper below, after the lock
  // Views wait from here to the new markers: what they read changes in between.
  absl::WriterMutexLock view_lock(&view_mu_);
  // The tree's memory (its pages and checkpoints) and the value cache take the version in.
  // They share nothing with each other or with the batch, so for a large block they run on
  // two helpers while this thread writes the batch (its fsync is mostly waiting); a small
  // block, or one whose helper thread cannot start, updates them here after the write.
  // Should the write fail, or anything throw, the memory may be ahead of the disk or between
  // two versions: the store then refuses every later Stage and Commit (failed_), and the node
  // stops.
  const RootRecord previous = latest_;
  latest_ = staged->root;  // a checkpoint that begins at this version takes it as its root
  const auto update_tree = [this, &staged, version] {
    ApplyToMemory(version, staged->tree, staged->pending_written, staged->pending_done);
    if (staged->started_done) {
      MakeDurable(&*pending_);
      pending_.reset();
    }
    // Pruning keeps only the newest checkpoint on disk (AddPruning).
    if (options_.keep_recent > 0 && !checkpoints_.empty()) {
      checkpoints_.erase(checkpoints_.begin(), std::prev(checkpoints_.end()));
    }
    staged->tree = TreeUpdate();  // the pages it replaced are freed here
    FreeRetiredShare();
  };
  const auto update_values = [this, &staged] {
    for (auto& [key_hash, key, record] : staged->state_records) {
      CacheStateRecord(key_hash, std::move(key), std::move(record));
    }
  };
  const auto launch = [](const auto& work) {
    try {
      return std::async(std::launch::async, work);
    } catch (const std::system_error&) {
      return std::future<void>();  // no thread: the work runs here after the write
    }
  };
  const auto stop = [&](Status status) {
    latest_ = previous;  // version() stays the last version known to be durable
    failed_ = std::move(status);
  };
  try {
    std::future<void> tree_side, value_side;  // joined before `staged` is destroyed
    if (staged->state_records.size() >= kMinParallelHashes) {
      tree_side = launch(update_tree);
      value_side = launch(update_values);
    }
    const bool tree_launched = tree_side.valid(), values_launched = value_side.valid();
    leveldb::WriteOptions wo;
    wo.sync = true;
    const auto write_start = std::chrono::steady_clock::now();
    const leveldb::Status s = db_->Write(wo, &staged->batch);
    stats_.write_ms = MillisSince(write_start);
    const auto memory_start = std::chrono::steady_clock::now();
    // Both are joined before either rethrows what its helper threw.
    std::exception_ptr thrown;
    for (std::future<void>* f : {&tree_side, &value_side}) {
      try {
        if (f->valid()) f->get();
      } catch (...) {
        if (!thrown) thrown = std::current_exception();
      }
    }
    if (thrown) std::rethrow_exception(thrown);
    if (!s.ok()) {
      stop(FromLevelDb(s, "committing version " + std::to_string(version) +
                              " (the store refuses every later call: restart the node)"));
      return failed_;
    }
    if (!tree_launched) update_tree();
    if (!values_launched) update_values();
    stats_.memory_ms = MillisSince(memory_start);
    {
      std::lock_guard lock(page_cache_mu_);
      stats_.cached_pages = pages_.size();
      stats_.cached_page_bytes = cached_page_bytes_;
    }
  } catch (const std::exception& e) {
    stop(Status::IOError("committing version " + std::to_string(version) + " failed: " +
                         e.what() + " (the store refuses every later call: restart the node)"));
    throw;
  } catch (...) {
    stop(Status::IOError("committing version " + std::to_string(version) +
                         " failed (the store refuses every later call: restart the node)"));
    throw;
  }
  earliest_ = staged->new_earliest;
  prune_cursors_ = staged->prune_cursors;
  commit_info_ = std::move(staged->commit_info);
  // Rebuilds of pruned versions, or from a checkpoint pruning no longer keeps, go: each pins
  // the database state it read (its snapshot), which would hold back LevelDB's compaction.
  // A rebuild may hold most of a tree's pages, and a query made it: it is freed on the reaper,
  // not by the block, and not while views wait for this lock.
  stale_rebuilds = rebuilds_->TakeIf([this](const Reconstruction& r) {
    return r.version < earliest_ || (r.base != 0 && !checkpoints_.contains(r.base));
  });
  if (!stale_rebuilds.empty()) FreeLater(std::move(stale_rebuilds));
  return Status::OK();
}

void MerkleStore::FreeLater(RebuildCache::Entries stale) {
  // Rare (a checkpoint completes, or the oldest kept version passes a rebuild), so the previous
  // reaper is long done; should it not be, waiting for it bounds the memory in flight.
  if (reaper_.valid()) reaper_.wait();
  try {
    reaper_ = std::async(std::launch::async, [entries = std::move(stale)]() mutable {
      entries.clear();
    });
  } catch (const std::system_error&) {
    // No thread to be had: `stale` was moved into the failed task and is freed with it, here.
  }
}

std::string MerkleStore::DbProperty(const std::string& name) const {
  std::string value;
  return db_->GetProperty(name, &value) ? value : std::string();
}

std::vector<std::pair<char, std::uint64_t>> MerkleStore::TableBytes() const {
  std::vector<std::pair<char, std::uint64_t>> out;
  for (const char prefix : {kChangesetPrefix, kCheckpointPrefix, 'M', kPagePrefix, kRootPrefix,
                            kStatePrefix, kValuePrefix, kStalePagePrefix}) {
    const std::string start(1, prefix), limit(1, static_cast<char>(prefix + 1));
    const leveldb::Range range(start, limit);
    std::uint64_t size = 0;
    db_->GetApproximateSizes(&range, 1, &size);
    out.emplace_back(prefix, size);
  }
  return out;
}

void MerkleStore::CompactAll() { db_->CompactRange(nullptr, nullptr); }

}  // namespace kairos::store
