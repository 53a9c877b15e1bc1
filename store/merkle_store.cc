#include "store/merkle_store.h"

#include <algorithm>
#include <filesystem>
#include <set>
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

namespace kairos::store {

namespace {

constexpr char kPagePrefix = 'N';
constexpr char kRootPrefix = 'R';
constexpr char kValuePrefix = 'V';
constexpr char kPreimagePrefix = 'P';
constexpr char kStatePrefix = 'S';
constexpr char kStalePrefix = 'X';
const std::string kLatestKey = "Mlatest";

// Every read checks block checksums, so a corrupt table is reported, never served.
leveldb::ReadOptions VerifiedRead() {
  leveldb::ReadOptions o;
  o.verify_checksums = true;
  return o;
}
const std::string kEarliestKey = "Mearliest";
const std::string kCommitInfoKey = "Mcommit_info";

void AppendBE64(std::uint64_t v, std::string* out) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t ReadBE64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

std::string_view AsView(const Hash& h) {
  return {reinterpret_cast<const char*>(h.data()), h.size()};
}

Hash HashFromView(std::string_view in) {
  Hash h{};
  std::copy_n(reinterpret_cast<const std::uint8_t*>(in.data()), h.size(), h.begin());
  return h;
}

std::string PageKey(Version v, const NibblePath& path) {
  std::string k(1, kPagePrefix);
  AppendBE64(static_cast<std::uint64_t>(v), &k);
  path.AppendTo(&k);
  return k;
}

std::string VersionKey(char prefix, Version v) {
  std::string k(1, prefix);
  AppendBE64(static_cast<std::uint64_t>(v), &k);
  return k;
}

// Newest first: the inverted version makes a Seek land on the latest entry at or below it.
std::string ValueKey(const Hash& key_hash, Version v) {
  std::string k(1, kValuePrefix);
  k.append(AsView(key_hash));
  AppendBE64(~static_cast<std::uint64_t>(v), &k);
  return k;
}

std::string HashKey(char prefix, const Hash& key_hash) {
  std::string k(1, prefix);
  k.append(AsView(key_hash));
  return k;
}

std::string StateKey(std::string_view key) {
  std::string k(1, kStatePrefix);
  k.append(key);
  return k;
}

std::string EncodeRoot(const Slot& root, const Hash& hash) {
  std::string out(1, static_cast<char>(root.kind));
  out.append(AsView(hash));
  if (root.kind == Slot::Kind::kLeaf) {
    out.append(AsView(root.key_hash));  // the hash is the leaf hash
  } else if (root.kind == Slot::Kind::kPage) {
    AppendBE64(static_cast<std::uint64_t>(root.version), &out);
  }
  return out;
}

bool DecodeRoot(std::string_view in, Slot* root, Hash* hash) {
  if (in.size() < 33) return false;
  const auto kind = static_cast<Slot::Kind>(in[0]);
  *hash = HashFromView(in.substr(1, 32));
  in.remove_prefix(33);
  *root = Slot{};
  switch (kind) {
    case Slot::Kind::kEmpty: return in.empty();
    case Slot::Kind::kLeaf:
      if (in.size() != 32) return false;
      *root = Slot::LeafWithHash(HashFromView(in), *hash);
      return true;
    case Slot::Kind::kPage:
      if (in.size() != 8) return false;
      root->kind = Slot::Kind::kPage;
      root->hash = *hash;
      root->version = static_cast<Version>(ReadBE64(in));
      return true;
  }
  return false;
}

Hash RootHashOf(const Slot& root) { return root.kind == Slot::Kind::kEmpty ? kEmptyHash : root.hash; }

// What a version made stale: database keys to delete once it leaves the kept window, and the key
// hashes it deleted (their preimages go too, once no kept version holds them).
struct StaleList {
  std::vector<std::string> keys;
  std::vector<Hash> deleted_key_hashes;

  std::string Encode() const {
    std::string out;
    AppendBE64(keys.size(), &out);
    for (const std::string& k : keys) {
      AppendBE64(k.size(), &out);
      out.append(k);
    }
    AppendBE64(deleted_key_hashes.size(), &out);
    for (const Hash& h : deleted_key_hashes) out.append(AsView(h));
    return out;
  }

  static bool Decode(std::string_view in, StaleList* out) {
    auto take = [&](std::size_t n, std::string_view* part) {
      if (in.size() < n) return false;
      *part = in.substr(0, n);
      in.remove_prefix(n);
      return true;
    };
    std::string_view part;
    if (!take(8, &part)) return false;
    for (std::uint64_t n = ReadBE64(part); n > 0; --n) {
      if (!take(8, &part)) return false;
      const std::uint64_t len = ReadBE64(part);
      if (!take(len, &part)) return false;
      out->keys.emplace_back(part);
    }
    if (!take(8, &part)) return false;
    for (std::uint64_t n = ReadBE64(part); n > 0; --n) {
      if (!take(32, &part)) return false;
      out->deleted_key_hashes.push_back(HashFromView(part));
    }
    return in.empty();
  }
};

Status FromLevelDb(const leveldb::Status& s, std::string_view context) {
  if (s.ok()) return Status::OK();
  std::string msg = std::string(context) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::IOError(msg);
}

// Iterates the flat latest-value table (S), stripping the prefix and the version.
class StateIterator final : public KvIterator {
 public:
  StateIterator(leveldb::Iterator* it, std::string_view start, std::string_view end)
      : it_(it), end_(end.empty() ? std::string(1, kStatePrefix + 1) : StateKey(end)) {
    it_->Seek(StateKey(start));
  }
  bool Valid() const override {
    return it_->Valid() && it_->key().compare(leveldb::Slice(end_)) < 0;
  }
  std::string_view key() const override {
    return {it_->key().data() + 1, it_->key().size() - 1};
  }
  std::string_view value() const override {
    return {it_->value().data() + 8, it_->value().size() - 8};
  }
  void Next() override { it_->Next(); }
  Status status() const override { return FromLevelDb(it_->status(), "iterating state"); }

 private:
  std::unique_ptr<leveldb::Iterator> it_;
  std::string end_;
};

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
  std::vector<std::pair<std::string, std::optional<std::string>>> state_records;
  std::vector<std::pair<NibblePath, std::shared_ptr<const Page>>> new_pages;
  Version new_earliest = 0;
  std::string commit_info;
};

MerkleStore::MerkleStore(StoreOptions options, leveldb::DB* db, const leveldb::Cache* cache,
                         const leveldb::FilterPolicy* filter)
    : options_(std::move(options)), db_(db), block_cache_(cache), filter_(filter) {}

MerkleStore::~MerkleStore() {
  db_.reset();  // before the cache and filter it uses
}

Result<std::unique_ptr<MerkleStore>> MerkleStore::Open(const StoreOptions& options) {
  if (options.keep_recent < 0 || options.prune_interval < 1) {
    return Status::InvalidArgument("keep_recent must be >= 0 and prune_interval >= 1");
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
  std::unique_ptr<MerkleStore> store(new MerkleStore(options, raw, cache, filter));
  if (options.verify_on_open) {
    if (Status st = VerifyAllTables(raw, options.dir); !st.ok()) {
      return Status::Corruption("the store in " + options.dir + " is corrupt: " + st.message());
    }
  }

  std::string value;
  leveldb::Status ls = store->db_->Get(VerifiedRead(), kLatestKey, &value);
  if (ls.IsNotFound()) return store;  // a new store: version 0, the empty tree
  if (!ls.ok()) return FromLevelDb(ls, "reading the latest version");
  if (value.size() != 40) return Status::Corruption("the latest-version record is malformed");
  const auto version = static_cast<Version>(ReadBE64(value));
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
  if (Status st = store->ReadRoot(version, &store->latest_); !st.ok()) return st;
  // The root record, the latest marker and the root node must all agree.
  Hash node_hash = RootHashOf(store->latest_.root);
  if (store->latest_.root.kind == Slot::Kind::kPage) {
    auto page = store->LoadPage(store->latest_.root.version, NibblePath());
    if (!page.ok()) return page.status();
    node_hash = (*page)->hash();  // recomputed from the slots when the page was decoded
  }
  if (node_hash != store->latest_.hash || latest_hash != store->latest_.hash) {
    return Status::Corruption("version " + std::to_string(version) +
                              ": the stored root does not match the root node in " + options.dir);
  }
  ls = store->db_->Get(VerifiedRead(), kEarliestKey, &value);
  if (ls.ok() && value.size() == 8) {
    store->earliest_ = static_cast<Version>(ReadBE64(value));
  } else if (!ls.IsNotFound()) {
    return FromLevelDb(ls, "reading the earliest kept version");
  }
  return store;
}

void MerkleStore::CachePage(Version version, const NibblePath& path,
                            std::shared_ptr<const Page> page) const {
  if (options_.page_cache_pages == 0) return;
  PageId id{version, path};
  if (pages_.count(id) != 0) return;
  lru_.push_front(id);
  pages_.emplace(id, std::make_pair(std::move(page), lru_.begin()));
  while (pages_.size() > options_.page_cache_pages) {
    pages_.erase(lru_.back());
    lru_.pop_back();
  }
}

Result<std::shared_ptr<const Page>> MerkleStore::LoadPage(Version version,
                                                          const NibblePath& path) const {
  if (auto it = pages_.find(PageId{version, path}); it != pages_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  std::string value;
  const leveldb::Status s = db_->Get(VerifiedRead(), PageKey(version, path), &value);
  if (!s.ok()) {
    return FromLevelDb(s, "reading the tree page at version " + std::to_string(version) +
                              " depth " + std::to_string(path.size()));
  }
  auto page = std::make_shared<Page>();
  if (!Page::Decode(value, page.get())) {
    return Status::Corruption("the tree page at version " + std::to_string(version) +
                              " depth " + std::to_string(path.size()) + " is malformed");
  }
  CachePage(version, path, page);
  return std::shared_ptr<const Page>(std::move(page));
}

Status MerkleStore::ReadRoot(Version version, RootRecord* out) const {
  std::string value;
  const leveldb::Status s = db_->Get(VerifiedRead(), VersionKey(kRootPrefix, version), &value);
  if (!s.ok()) return FromLevelDb(s, "reading the root of version " + std::to_string(version));
  out->version = version;
  if (!DecodeRoot(value, &out->root, &out->hash)) {
    return Status::Corruption("the root record of version " + std::to_string(version) +
                              " is malformed");
  }
  return Status::OK();
}

namespace {
// Bytes a cached record is charged: the key twice (map and list), the record, and the nodes.
std::size_t CachedSize(std::string_view key, const std::optional<std::string>& record) {
  return 2 * key.size() + (record ? record->size() : 0) + 160;
}
}  // namespace

void MerkleStore::CacheStateRecord(std::string_view key,
                                   std::optional<std::string> record) const {
  if (options_.value_cache_bytes == 0) return;
  auto it = values_.find(key);
  if (it != values_.end()) {
    value_cache_used_ -= CachedSize(key, it->second.record);
    it->second.record = std::move(record);
    value_lru_.splice(value_lru_.end(), value_lru_, it->second.lru);
  } else {
    value_lru_.emplace_back(key);
    it = values_
             .emplace(std::string(key),
                      CachedRecord{std::move(record), std::prev(value_lru_.end())})
             .first;
  }
  value_cache_used_ += CachedSize(key, it->second.record);
  while (value_cache_used_ > options_.value_cache_bytes && !value_lru_.empty()) {
    auto victim = values_.find(value_lru_.front());
    value_cache_used_ -= CachedSize(victim->first, victim->second.record);
    values_.erase(victim);
    value_lru_.pop_front();
  }
}

Status MerkleStore::ReadStateRecord(std::string_view key, std::string* record) const {
  if (auto it = values_.find(key); it != values_.end()) {
    value_lru_.splice(value_lru_.end(), value_lru_, it->second.lru);
    if (!it->second.record) return Status::NotFound("absent");
    *record = *it->second.record;
    return Status::OK();
  }
  const leveldb::Status s = db_->Get(VerifiedRead(), StateKey(key), record);
  if (s.ok()) {
    if (record->size() <= 8) return Status::Corruption("a state record is malformed");
    CacheStateRecord(key, *record);
    return Status::OK();
  }
  if (s.IsNotFound()) CacheStateRecord(key, std::nullopt);
  return FromLevelDb(s, "reading state");
}

Status MerkleStore::Get(std::string_view key, std::string* value) const {
  std::string raw;
  if (Status s = ReadStateRecord(key, &raw); !s.ok()) return s;
  value->assign(raw, 8);
  return Status::OK();
}

std::unique_ptr<KvIterator> MerkleStore::Iterate(std::string_view start,
                                                 std::string_view end) const {
  return std::make_unique<StateIterator>(db_->NewIterator(VerifiedRead()), start, end);
}

Status MerkleStore::CheckVersion(Version version) const {
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

Status MerkleStore::ReadValueAt(Version version, std::string_view key, const Hash& key_hash,
                                std::string* value) const {
  // The latest value lives in S; V holds the values it replaced (and deletion tombstones),
  // each under the version it was written at.
  std::string raw;
  const Status s = ReadStateRecord(key, &raw);
  if (s.ok()) {
    if (static_cast<Version>(ReadBE64(raw)) <= version) {
      value->assign(raw, 8);
      return Status::OK();
    }
  } else if (!s.IsNotFound()) {
    return s;
  } else if (version == latest_.version) {
    return Status::NotFound("absent at version " + std::to_string(version));
  }
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
  const std::string seek = ValueKey(key_hash, version);
  it->Seek(seek);
  if (!it->Valid() || !it->key().starts_with(leveldb::Slice(seek.data(), 33))) {
    if (!it->status().ok()) return FromLevelDb(it->status(), "reading a versioned value");
    return Status::NotFound("absent at version " + std::to_string(version));
  }
  const leveldb::Slice v = it->value();
  if (v.empty()) return Status::Corruption("a versioned value record is empty");
  if (v[0] == 0) return Status::NotFound("deleted at or before version " + std::to_string(version));
  value->assign(v.data() + 1, v.size() - 1);
  return Status::OK();
}

Status MerkleStore::GetAt(Version version, std::string_view key, std::string* value) const {
  if (Status s = CheckVersion(version); !s.ok()) return s;
  return ReadValueAt(version, key, Sha256Of(key), value);
}

Status MerkleStore::ReadProofLeaf(Version version, const LeafPath& path,
                                  ExistenceProof* out) const {
  std::string key;
  leveldb::Status s = db_->Get(VerifiedRead(), HashKey(kPreimagePrefix, path.key_hash), &key);
  if (!s.ok()) return FromLevelDb(s, "reading a key preimage");
  if (Status st = ReadValueAt(version, key, path.key_hash, &out->value); !st.ok()) {
    return Status::Corruption("a leaf of version " + std::to_string(version) +
                              " has no value: " + st.message());
  }
  if (LeafHash(path.key_hash, Sha256Of(out->value)) != path.leaf_hash) {
    return Status::Corruption("a stored value does not match its leaf");
  }
  out->key = std::move(key);
  out->path = path;
  return Status::OK();
}

Status MerkleStore::Prove(Version version, std::string_view key, KeyProof* out) const {
  if (Status s = CheckVersion(version); !s.ok()) return s;
  RootRecord root;
  if (Status s = ReadRoot(version, &root); !s.ok()) return s;
  if (root.root.empty()) {
    return Status::InvalidArgument("the tree at version " + std::to_string(version) +
                                   " is empty: ICS-23 cannot prove absence in an empty tree");
  }
  TreeLookup lookup;
  const Hash key_hash = Sha256Of(key);
  if (Status s = Lookup(*this, root.root, key_hash, &lookup); !s.ok()) return s;
  *out = KeyProof{};
  auto fill = [&](const std::optional<LeafPath>& path, std::optional<ExistenceProof>* dest) {
    if (!path) return Status::OK();
    dest->emplace();
    return ReadProofLeaf(version, *path, &**dest);
  };
  if (Status s = fill(lookup.found, &out->exist); !s.ok()) return s;
  if (Status s = fill(lookup.left, &out->left); !s.ok()) return s;
  return fill(lookup.right, &out->right);
}

Status MerkleStore::AddPruning(Version version, void* batch_ptr) {
  auto* batch = static_cast<leveldb::WriteBatch*>(batch_ptr);
  if (options_.keep_recent == 0 || version % options_.prune_interval != 0) return Status::OK();
  const Version keep_from = version - options_.keep_recent + 1;
  if (keep_from <= earliest_) return Status::OK();

  // Everything made stale at a version <= keep_from is reachable only from pruned versions.
  std::set<std::string, std::less<>> deleted;
  std::vector<Hash> candidates;
  std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(VerifiedRead()));
  const std::string stop = VersionKey(kStalePrefix, keep_from + 1);
  for (it->Seek(std::string(1, kStalePrefix)); it->Valid() && it->key().compare(stop) < 0;
       it->Next()) {
    StaleList stale;
    if (!StaleList::Decode(std::string_view(it->value().data(), it->value().size()), &stale)) {
      return Status::Corruption("a stale-node record is malformed");
    }
    for (std::string& k : stale.keys) {
      batch->Delete(k);
      deleted.insert(std::move(k));
    }
    candidates.insert(candidates.end(), stale.deleted_key_hashes.begin(),
                      stale.deleted_key_hashes.end());
    batch->Delete(it->key());
  }
  if (!it->status().ok()) return FromLevelDb(it->status(), "scanning stale records");
  // Roots of the versions that leave the window.
  const std::string root_stop = VersionKey(kRootPrefix, keep_from);
  for (it->Seek(std::string(1, kRootPrefix)); it->Valid() && it->key().compare(root_stop) < 0;
       it->Next()) {
    batch->Delete(it->key());
  }
  // A deleted key's preimage goes once no kept version holds the key: it was not re-created
  // (no S record) and none of its versioned values survives.
  std::string key, ignored;
  for (const Hash& kh : candidates) {
    const std::string preimage = HashKey(kPreimagePrefix, kh);
    leveldb::Status ps = db_->Get(VerifiedRead(), preimage, &key);
    if (ps.IsNotFound()) continue;
    if (!ps.ok()) return FromLevelDb(ps, "reading a key preimage");
    ps = db_->Get(VerifiedRead(), StateKey(key), &ignored);
    if (ps.ok()) continue;
    if (!ps.IsNotFound()) return FromLevelDb(ps, "reading state");
    const std::string prefix = HashKey(kValuePrefix, kh);
    bool survives = false;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      if (deleted.find(std::string_view(it->key().data(), it->key().size())) == deleted.end()) {
        survives = true;
        break;
      }
    }
    if (!survives) batch->Delete(preimage);
  }
  std::string e;
  AppendBE64(static_cast<std::uint64_t>(keep_from), &e);
  batch->Put(kEarliestKey, e);
  staged_->new_earliest = keep_from;
  return Status::OK();
}

Result<Hash> MerkleStore::Stage(Version version, const ChangeSet& changes,
                                std::string commit_info) {
  if (version <= latest_.version) {
    return Status::InvalidArgument("cannot stage version " + std::to_string(version) +
                                   " on top of version " + std::to_string(latest_.version));
  }
  staged_ = std::make_unique<Staged>();
  staged_->new_earliest = earliest_;
  leveldb::WriteBatch& batch = staged_->batch;
  if (earliest_ == 0) {
    // The first version ever written (the chain's initial height): nothing to prune, and no
    // version below it exists.
    staged_->new_earliest = version;
    std::string e;
    AppendBE64(static_cast<std::uint64_t>(version), &e);
    batch.Put(kEarliestKey, e);
  } else if (Status s = AddPruning(version, &batch); !s.ok()) {
    // Pruning goes first: a key re-created in this version must not lose the preimage it
    // re-writes.
    staged_.reset();
    return s;
  }

  struct Change {
    const std::string* key;
    const std::string* value;  // nullptr: delete
    Hash key_hash;
    std::optional<Version> previous;  // the version of the value it replaces, if any
    std::string previous_value;
  };
  std::vector<Change> work;
  work.reserve(changes.size());
  std::string current;
  for (const auto& [key, value] : changes) {
    const std::string_view value_view = value ? std::string_view(*value) : std::string_view();
    if (Status s = options_.limits.Check(key, value ? &value_view : nullptr); !s.ok()) {
      staged_.reset();
      return s;
    }
    std::optional<Version> previous;
    const Status s = ReadStateRecord(key, &current);
    if (s.ok()) {
      if (value && std::string_view(current).substr(8) == *value) continue;  // unchanged
      previous = static_cast<Version>(ReadBE64(current));
      current.erase(0, 8);
    } else if (s.IsNotFound()) {
      if (!value) continue;  // deleting an absent key
    } else {
      staged_.reset();
      return s;
    }
    work.push_back({&key, value ? &*value : nullptr, Sha256Of(key), previous,
                    previous ? std::move(current) : std::string()});
  }
  std::sort(work.begin(), work.end(),
            [](const Change& a, const Change& b) { return a.key_hash < b.key_hash; });

  std::vector<KeyUpdate> updates;
  updates.reserve(work.size());
  for (const Change& c : work) {
    updates.push_back({c.key_hash, c.value ? std::optional<Hash>(Sha256Of(*c.value)) : std::nullopt});
  }
  TreeUpdate tree;
  if (Status s = ApplyUpdates(*this, latest_.root, version, updates, &tree); !s.ok()) {
    staged_.reset();
    return s;
  }

  StaleList stale;
  for (const auto& [v, path] : tree.stale_pages) stale.keys.push_back(PageKey(v, path));
  for (const auto& [path, page] : tree.new_pages) batch.Put(PageKey(version, path), page->Encode());
  std::string record;
  for (const Change& c : work) {
    if (c.previous) {
      // The replaced value becomes history: readable at versions [previous, version) until
      // `version` leaves the kept window.
      const std::string old_key = ValueKey(c.key_hash, *c.previous);
      record.assign(1, '\x01');
      record.append(c.previous_value);
      batch.Put(old_key, record);
      stale.keys.push_back(old_key);
    }
    if (c.value) {
      record.clear();
      AppendBE64(static_cast<std::uint64_t>(version), &record);
      record.append(*c.value);
      batch.Put(StateKey(*c.key), record);
      staged_->state_records.emplace_back(*c.key, record);
      if (!c.previous) batch.Put(HashKey(kPreimagePrefix, c.key_hash), *c.key);
    } else {
      batch.Delete(StateKey(*c.key));
      staged_->state_records.emplace_back(*c.key, std::nullopt);
      // A tombstone: absent from `version` on. Needed only until `version` is pruned.
      const std::string tombstone = ValueKey(c.key_hash, version);
      batch.Put(tombstone, std::string(1, '\x00'));
      stale.keys.push_back(tombstone);
      stale.deleted_key_hashes.push_back(c.key_hash);
    }
  }
  if (!stale.keys.empty()) batch.Put(VersionKey(kStalePrefix, version), stale.Encode());

  staged_->root.version = version;
  staged_->root.root = tree.root;
  staged_->root.hash = RootHashOf(tree.root);
  staged_->new_pages = std::move(tree.new_pages);
  batch.Put(VersionKey(kRootPrefix, version), EncodeRoot(tree.root, staged_->root.hash));
  std::string latest;
  AppendBE64(static_cast<std::uint64_t>(version), &latest);
  latest.append(AsView(staged_->root.hash));
  batch.Put(kLatestKey, latest);
  batch.Put(kCommitInfoKey, commit_info);
  staged_->commit_info = std::move(commit_info);
  return staged_->root.hash;
}

Status MerkleStore::Commit() {
  if (!staged_) return Status::InvalidArgument("nothing staged to commit");
  leveldb::WriteOptions wo;
  wo.sync = true;
  const leveldb::Status s = db_->Write(wo, &staged_->batch);
  if (!s.ok()) {
    return FromLevelDb(s, "committing version " + std::to_string(staged_->root.version));
  }
  latest_ = staged_->root;
  earliest_ = staged_->new_earliest;
  commit_info_ = std::move(staged_->commit_info);
  for (auto& [path, page] : staged_->new_pages) {
    CachePage(latest_.version, path, std::move(page));
  }
  for (auto& [key, record] : staged_->state_records) CacheStateRecord(key, std::move(record));
  staged_.reset();
  return Status::OK();
}

}  // namespace kairos::store
