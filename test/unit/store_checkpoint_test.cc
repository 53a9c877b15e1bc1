// MerkleStore's checkpoints: pages reach the disk only every `checkpoint_interval` versions,
// changesets are replayed on open, past versions are rebuilt on demand (forward from an older
// checkpoint, or undone from a newer one), pruning keeps only the newest checkpoint, and an
// older on-disk format is refused with a clear message. The root never depends on the interval.
#include <catch2/catch.hpp>

#include <leveldb/db.h>
#include <leveldb/iterator.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "store/merkle_store.h"
#include "smt_reference.h"
#include "store_crash_workload.h"
#include "store_prune_check.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

StoreOptions Options(const std::string& dir, std::int64_t interval, std::int64_t keep = 0) {
  StoreOptions o;
  o.dir = dir;
  o.keep_recent = keep;
  o.prune_interval = 3;
  o.checkpoint_interval = interval;
  o.page_cache_pages = 32;
  return o;
}

// Version v of a workload with inserts, overwrites, same-value writes and deletes.
ChangeSet Block(Version v) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(v) * 7919);
  ChangeSet c;
  c["counter"] = std::to_string(v);
  for (int i = 0; i < 30; ++i) {
    const std::string key = "k" + std::to_string(rng() % 400);
    const auto r = rng() % 6;
    if (r == 0) {
      c[key] = std::nullopt;
    } else if (r == 1) {
      c[key] = "same";  // often the value it already has: a no-op
    } else {
      c[key] = "v" + std::to_string(v) + "-" + std::to_string(i);
    }
  }
  return c;
}

std::map<std::string, std::string> StateAt(Version v) {
  return kairos::store::crash::StateAfter(v, Block);
}

Hash RootOf(const std::map<std::string, std::string>& state) {
  std::vector<std::pair<Hash, Hash>> leaves;
  for (const auto& [k, v] : state) leaves.emplace_back(Sha256Of(k), Sha256Of(v));
  return kairos::test::ReferenceRoot(leaves);
}

// How many pages the tree of `state` has: one per nibble prefix that two or more key hashes
// share (a subtree with one key collapses to its leaf).
std::size_t PagesOf(const std::map<std::string, std::string>& state) {
  std::vector<Hash> hashes;
  for (const auto& [k, v] : state) hashes.push_back(Sha256Of(k));
  std::size_t pages = 0;
  for (int depth = 0; depth < kMaxNibbles; ++depth) {
    std::map<std::string, int> below;  // prefix (as nibbles) -> keys
    for (const Hash& h : hashes) {
      std::string prefix;
      for (int i = 0; i < depth; ++i) prefix.push_back(static_cast<char>(NibbleAt(h, i)));
      ++below[prefix];
    }
    std::size_t shared = 0;
    for (const auto& [prefix, n] : below) shared += n >= 2 ? 1 : 0;
    if (shared == 0) break;
    pages += shared;
  }
  return pages;
}

void Commit(MerkleStore& s, Version v) {
  auto root = s.Stage(v, Block(v));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  REQUIRE(s.Commit().ok());
}

// Values and proofs of version v agree with the workload.
void CheckVersion(const MerkleStore& s, Version v) {
  const auto state = StateAt(v);
  const Hash root = RootOf(state);
  for (int i = 0; i < 400; i += 13) {
    const std::string key = "k" + std::to_string(i);
    std::string value;
    const Status got = s.GetAt(v, key, &value);
    KeyProof proof;
    const Status proved = s.Prove(v, key, &proof);
    INFO("version " << v << " key " << key << ": " << proved.ToString());
    REQUIRE(proved.ok());
    if (auto it = state.find(key); it != state.end()) {
      REQUIRE(got.ok());
      CHECK(value == it->second);
      REQUIRE(proof.exist);
      CHECK(proof.exist->value == it->second);
      CHECK(RootFromPath(proof.exist->path) == root);
    } else {
      CHECK(got.IsNotFound());
      REQUIRE_FALSE(proof.exist);
      for (const auto* side : {&proof.left, &proof.right}) {
        if (!*side) continue;
        CHECK(state.at((*side)->key) == (*side)->value);
        CHECK(RootFromPath((*side)->path) == root);
      }
    }
  }
}

// Keys of the raw database with this one-byte prefix.
std::vector<std::string> RawKeys(const std::string& dir, char prefix) {
  leveldb::DB* raw = nullptr;
  leveldb::Options o;
  REQUIRE(leveldb::DB::Open(o, dir, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::vector<std::string> out;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator({}));
  for (it->Seek(std::string(1, prefix)); it->Valid() && it->key()[0] == prefix; it->Next()) {
    out.push_back(it->key().ToString());
  }
  return out;
}

// Deletes raw records (the store must be closed).
void DeleteRaw(const std::string& dir, const std::vector<std::string>& keys) {
  leveldb::DB* raw = nullptr;
  REQUIRE(leveldb::DB::Open(leveldb::Options(), dir, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  for (const auto& k : keys) REQUIRE(db->Delete(leveldb::WriteOptions(), k).ok());
}

// The key of version v's changeset record: 'C' and the big-endian version (v < 256 here).
std::string ChangesetKey(Version v) {
  std::string key(1, 'C');
  for (int i = 7; i >= 0; --i) key.push_back(static_cast<char>(i == 0 ? v : 0));
  return key;
}

}  // namespace

TEST_CASE("the root does not depend on the checkpoint interval", "[store][checkpoint]") {
  TempDir a, b, c;
  auto s1 = OpenStore(Options(a.path(), 1));
  auto s4 = OpenStore(Options(b.path(), 4));
  auto s9 = OpenStore(Options(c.path(), 9));
  for (Version v = 1; v <= 30; ++v) {
    Commit(*s1, v);
    Commit(*s4, v);
    Commit(*s9, v);
    REQUIRE(s1->root_hash() == RootOf(StateAt(v)));
    REQUIRE(s4->root_hash() == s1->root_hash());
    REQUIRE(s9->root_hash() == s1->root_hash());
  }
}

TEST_CASE("open replays the changesets above the last checkpoint", "[store][checkpoint]") {
  TempDir dir;
  const StoreOptions o = Options(dir.path(), 5);
  auto store = OpenStore(o);
  for (Version v = 1; v <= 23; ++v) {
    Commit(*store, v);
    if (v % 4 == 0 || v == 23) {  // reopen at checkpoints, inside intervals, mid-write
      const Hash root = store->root_hash();
      store.reset();
      Version durable = 0;  // the newest K record: the checkpoint open starts from
      for (const std::string& k : RawKeys(dir.path(), 'K')) {
        durable = std::max(durable, static_cast<Version>(
                                        kairos::test::BigEndian64(std::string_view(k).substr(1))));
      }
      store = OpenStore(o);
      REQUIRE(store->version() == v);
      REQUIRE(store->root_hash() == root);
      REQUIRE(root == RootOf(StateAt(v)));
      // What a restart replays (kairosd logs it): everything above that checkpoint, which is
      // never more than two intervals behind.
      CHECK(store->replayed_at_open() == v - durable);
      CHECK(store->replayed_at_open() < 2 * o.checkpoint_interval);
      CheckVersion(*store, v);
    }
  }
  // Only checkpoints wrote pages: no page of a version that is not a multiple of 5.
  store.reset();
  for (const std::string& k : RawKeys(dir.path(), 'N')) {
    const std::uint64_t v = kairos::test::BigEndian64(std::string_view(k).substr(1));
    INFO("page of version " << v);
    CHECK(v <= 20);
  }
  CHECK_FALSE(RawKeys(dir.path(), 'K').empty());
}

TEST_CASE("a chain that starts above height 1 replays only its own versions before a checkpoint",
          "[store][checkpoint]") {
  TempDir dir;
  const StoreOptions o = Options(dir.path(), 5);
  auto store = OpenStore(o);
  // The checkpoint of version 100 is durable only once 105 is committed (its K record is in
  // that batch): before, open replays from the first version.
  for (Version v = 100; v <= 103; ++v) Commit(*store, v);
  store.reset();
  store = OpenStore(o);
  REQUIRE(store->version() == 103);
  CHECK(store->replayed_at_open() == 4);
  for (Version v = 104; v <= 107; ++v) Commit(*store, v);
  store.reset();
  store = OpenStore(o);
  CHECK(store->replayed_at_open() == 7);  // 101 to 107, above the checkpoint of version 100
}

TEST_CASE("a reopened store with a different interval continues with the same roots",
          "[store][checkpoint]") {
  TempDir dir;
  auto store = OpenStore(Options(dir.path(), 6));
  for (Version v = 1; v <= 14; ++v) Commit(*store, v);
  store.reset();
  store = OpenStore(Options(dir.path(), 2));
  for (Version v = 15; v <= 25; ++v) {
    Commit(*store, v);
    REQUIRE(store->root_hash() == RootOf(StateAt(v)));
  }
  store.reset();
  store = OpenStore(Options(dir.path(), 7));
  REQUIRE(store->root_hash() == RootOf(StateAt(25)));
  CheckVersion(*store, 25);
}

TEST_CASE("with a page cache as large as the tree, updates read no page from disk",
          "[store][checkpoint]") {
  TempDir big_dir, none_dir;
  StoreOptions big = Options(big_dir.path(), 3, /*keep=*/6);
  big.page_cache_pages = 100000;
  StoreOptions none = Options(none_dir.path(), 3, /*keep=*/6);
  none.page_cache_pages = 0;
  auto cached = OpenStore(big);
  auto uncached = OpenStore(none);
  std::size_t reads_without_cache = 0;
  for (Version v = 1; v <= 90; ++v) {
    Commit(*cached, v);
    Commit(*uncached, v);
    if (v <= 12) continue;  // a few checkpoints done, their unread pages moved to the cache
    INFO("version " << v);
    CHECK(cached->last_block().disk_page_reads == 0);
    // The cache holds only pages of the latest tree: a replaced page leaves it.
    CHECK(cached->last_block().cached_pages <= PagesOf(StateAt(v)));
    reads_without_cache += uncached->last_block().disk_page_reads;
    // Proofs at past versions (a rebuilt one, and a checkpoint) read replaced pages from
    // disk: they must not enter the cache (checked at the next version).
    if (v % 5 == 0) CheckVersion(*cached, v - 3);
    if (v % 5 == 1) CheckVersion(*cached, v - 1 - (v - 1) % 3);
  }
  CHECK(reads_without_cache > 0);  // the same blocks without a cache do read pages
  CHECK(cached->root_hash() == uncached->root_hash());
  CheckVersion(*cached, 90);
  CheckVersion(*cached, 86);  // a kept past version reads its replaced pages back from disk
}

TEST_CASE("past versions between checkpoints are rebuilt for proofs", "[store][checkpoint]") {
  TempDir dir;
  const StoreOptions o = Options(dir.path(), 4);
  auto store = OpenStore(o);
  for (Version v = 1; v <= 26; ++v) Commit(*store, v);
  // In order (the cached rebuild is extended), backwards (rebuilt from the checkpoint below),
  // and again after a reopen.
  for (Version v = 1; v <= 26; ++v) CheckVersion(*store, v);
  for (Version v = 26; v >= 1; v -= 3) CheckVersion(*store, v);
  store.reset();
  store = OpenStore(o);
  for (Version v = 26; v >= 1; v -= 5) CheckVersion(*store, v);
}

TEST_CASE("pruning keeps only the newest checkpoint; kept versions below it are undone from it",
          "[store][checkpoint]") {
  for (const std::int64_t interval : {1, 4, 7}) {
    TempDir d;
    const StoreOptions o = Options(d.path(), interval, /*keep=*/5);
    auto store = OpenStore(o);
    Version earliest = 0;
    for (Version v = 1; v <= 62; ++v) {
      Commit(*store, v);
      earliest = v == 1 ? 1 : kairos::test::ExpectedEarliest(v, earliest, o);
      INFO("interval " << interval << " version " << v);
      REQUIRE(store->earliest_version() == earliest);
      if (v % 11 == 0) {
        store.reset();
        kairos::test::CheckNothingPrunableLeft(o, earliest);
        store = OpenStore(o);
      }
      for (Version at = store->earliest_version(); at <= v; at += 2) CheckVersion(*store, at);
    }
    CHECK(store->earliest_version() == 56);  // the target of 60 (keeping 5), reached at 62
    store.reset();
    kairos::test::CheckNothingPrunableLeft(o, 56);
    // What pruning leaves: one checkpoint, the changesets of the kept versions on either side
    // of it (at most those above the older of it and 56), and no root below the window.
    const auto checkpoints = RawKeys(d.path(), 'K');
    REQUIRE(checkpoints.size() == 1);
    const auto newest = static_cast<Version>(kairos::test::BigEndian64(checkpoints[0].substr(1)));
    const auto changesets = RawKeys(d.path(), 'C');
    REQUIRE_FALSE(changesets.empty());
    CHECK(changesets.size() == static_cast<std::size_t>(62 - std::min<Version>(newest, 56)));
    CHECK(RawKeys(d.path(), 'R').size() == 7);
    store = OpenStore(o);
    for (Version at = store->earliest_version(); at <= 62; ++at) CheckVersion(*store, at);
  }
}

TEST_CASE("kept versions far below the newest checkpoint are undone from it", "[store][checkpoint]") {
  // 20 versions kept, a checkpoint every 4: most kept versions lie below the newest durable
  // checkpoint, so they are rebuilt by undoing changesets (from it, or from the latest tree),
  // in both orders (a descending walk extends one rebuild; an ascending one starts anew).
  TempDir d;
  const StoreOptions o = Options(d.path(), 4, /*keep=*/20);
  auto store = OpenStore(o);
  for (Version v = 1; v <= 60; ++v) Commit(*store, v);
  const Version earliest = store->earliest_version();
  REQUIRE(earliest <= 41);
  for (Version at = 60; at >= earliest; --at) CheckVersion(*store, at);
  for (Version at = earliest; at <= 60; ++at) CheckVersion(*store, at);
  store.reset();
  kairos::test::CheckNothingPrunableLeft(o, earliest);
  REQUIRE(RawKeys(d.path(), 'K').size() == 1);
  store = OpenStore(o);
  for (Version at = earliest; at <= 60; at += 3) CheckVersion(*store, at);
}

TEST_CASE("a changeset missing below the newest checkpoint is reported when undoing",
          "[store][checkpoint]") {
  TempDir d;
  const StoreOptions o = Options(d.path(), 4, /*keep=*/20);
  Version earliest = 0;
  {
    auto store = OpenStore(o);
    for (Version v = 1; v <= 60; ++v) Commit(*store, v);
    earliest = store->earliest_version();
  }
  DeleteRaw(d.path(), {ChangesetKey(earliest + 1)});  // the first undo down to `earliest`
  auto store = OpenStore(o);  // open replays only above the newest checkpoint
  KeyProof proof;
  const Status s = store->Prove(earliest, "counter", &proof);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("changeset of version " + std::to_string(earliest + 1) +
                                          " is missing"));
}

TEST_CASE("a pruning store reopened with a checkpoint every version keeps one checkpoint",
          "[store][checkpoint]") {
  // After the reopen the replayed versions form a pending checkpoint, which the first batch
  // completes beside the one it begins: only the newer may stay.
  TempDir d;
  StoreOptions o = Options(d.path(), 4, /*keep=*/6);
  {
    auto store = OpenStore(o);
    for (Version v = 1; v <= 30; ++v) Commit(*store, v);
  }
  o.checkpoint_interval = 1;
  Version earliest = 0;
  {
    auto store = OpenStore(o);
    for (Version v = 31; v <= 40; ++v) Commit(*store, v);
    earliest = store->earliest_version();
  }
  kairos::test::CheckNothingPrunableLeft(o, earliest);
  auto store = OpenStore(o);
  for (Version at = earliest; at <= 40; ++at) CheckVersion(*store, at);
}

TEST_CASE("a store iterator read after a commit reports it", "[store][checkpoint]") {
  TempDir d;
  auto store = OpenStore(Options(d.path(), 4));
  Commit(*store, 1);
  auto it = store->Iterate("", "");
  REQUIRE(it->Valid());
  Commit(*store, 2);
  (void)it->value();
  CHECK(it->status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(it->status().message(), Catch::Contains("after a commit"));
}

TEST_CASE("a store kept whole and reopened with keep_recent prunes its backlog",
          "[store][checkpoint]") {
  TempDir d;
  StoreOptions o = Options(d.path(), 4, /*keep=*/0);  // archive: nothing pruned
  auto store = OpenStore(o);
  for (Version v = 1; v <= 40; ++v) Commit(*store, v);
  CHECK(store->earliest_version() == 1);
  store.reset();
  o.keep_recent = 5;  // prune_interval 3
  store = OpenStore(o);
  Version earliest = 1;
  for (Version v = 41; v <= 50; ++v) {
    Commit(*store, v);
    earliest = kairos::test::ExpectedEarliest(v, earliest, o);
    INFO("version " << v);
    REQUIRE(store->earliest_version() == earliest);
    if (v == 41) CHECK(earliest == 35);  // the whole backlog in the first block: 1 step left
    for (Version at = earliest; at <= v; at += 3) CheckVersion(*store, at);
  }
  store.reset();
  kairos::test::CheckNothingPrunableLeft(o, earliest);
  CHECK(RawKeys(d.path(), 'R').size() == static_cast<std::size_t>(50 - earliest + 1));
}

TEST_CASE("an older on-disk format is refused with a clear message", "[store][checkpoint]") {
  TempDir dir;
  {
    auto store = OpenStore(Options(dir.path(), 3));
    Commit(*store, 1);
  }
  for (const char* format : {"", "1", "2"}) {
    {
      leveldb::DB* raw = nullptr;
      REQUIRE(leveldb::DB::Open(leveldb::Options(), dir.path(), &raw).ok());
      std::unique_ptr<leveldb::DB> db(raw);
      if (*format == 0) {
        REQUIRE(db->Delete(leveldb::WriteOptions(), "Mformat").ok());
      } else {
        REQUIRE(db->Put(leveldb::WriteOptions(), "Mformat", format).ok());
      }
    }
    auto s = MerkleStore::Open(Options(dir.path(), 3));
    REQUIRE_FALSE(s.ok());
    const std::string named = std::string("format ") + (*format == 0 ? "1" : format);
    CHECK_THAT(s.status().message(), Catch::Contains(named) && Catch::Contains("format 3") &&
                                         Catch::Contains("reset the node home") &&
                                         Catch::Contains(dir.path()));
  }
}

TEST_CASE("the key index (S) changes only when a key appears or goes", "[store][checkpoint]") {
  TempDir dir;
  auto raw_index = [&] {
    std::map<std::string, std::string> out;
    leveldb::DB* raw = nullptr;
    REQUIRE(leveldb::DB::Open(leveldb::Options(), dir.path(), &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator({}));
    for (it->Seek("S"); it->Valid() && it->key()[0] == 'S'; it->Next()) {
      out[it->key().ToString().substr(1)] = it->value().ToString();
    }
    return out;
  };
  {
    auto store = OpenStore(Options(dir.path(), 3));
    REQUIRE(store->Stage(1, ChangeSet{{"a", "1"}, {"b", "1"}, {"c", "1"}}).ok());
    REQUIRE(store->Commit().ok());
  }
  using Index = std::map<std::string, std::string>;
  CHECK(raw_index() == Index{{"a", ""}, {"b", ""}, {"c", ""}});  // keys only, no versions
  // Take b out of the index by hand: if updating b wrote its S record, it would come back.
  DeleteRaw(dir.path(), {"Sb"});
  {
    auto store = OpenStore(Options(dir.path(), 3));
    REQUIRE(store->Stage(2, ChangeSet{{"b", "2"}, {"d", "1"}, {"a", std::nullopt}}).ok());
    REQUIRE(store->Commit().ok());
    // Point reads take the version from the tree, not from the index.
    std::string value;
    REQUIRE(store->Get("b", &value).ok());
    CHECK(value == "2");
    CHECK(store->Get("a", &value).IsNotFound());
    REQUIRE(store->GetAt(1, "b", &value).ok());
    CHECK(value == "1");
  }
  CHECK(raw_index() == Index{{"c", ""}, {"d", ""}});
  {
    auto store = OpenStore(Options(dir.path(), 3));
    std::vector<std::pair<std::string, std::string>> seen;
    auto it = store->Iterate("", "");
    for (; it->Valid(); it->Next()) seen.emplace_back(it->key(), it->value());
    REQUIRE(it->status().ok());
    CHECK(seen == std::vector<std::pair<std::string, std::string>>{{"c", "1"}, {"d", "1"}});
  }
  {
    leveldb::DB* raw = nullptr;
    REQUIRE(leveldb::DB::Open(leveldb::Options(), dir.path(), &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    REQUIRE(db->Put(leveldb::WriteOptions(), "Sc", "x").ok());
  }
  auto store = OpenStore(Options(dir.path(), 3));
  auto it = store->Iterate("", "");
  REQUIRE(it->Valid());
  (void)it->value();
  CHECK(it->status().code() == Status::Code::kCorruption);
  CHECK_THAT(it->status().message(), Catch::Contains("(S)"));
}

TEST_CASE("a missing changeset is reported on open", "[store][checkpoint]") {
  TempDir dir;
  {
    auto store = OpenStore(Options(dir.path(), 10));
    for (Version v = 1; v <= 4; ++v) Commit(*store, v);
  }
  DeleteRaw(dir.path(), {ChangesetKey(4)});
  auto s = MerkleStore::Open(Options(dir.path(), 10));
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Status::Code::kCorruption);
  CHECK_THAT(s.status().message(), Catch::Contains("changesets"));
}

TEST_CASE("a changeset missing in the middle is named on open", "[store][checkpoint]") {
  TempDir dir;
  {
    auto store = OpenStore(Options(dir.path(), 10));
    for (Version v = 1; v <= 6; ++v) Commit(*store, v);
  }
  DeleteRaw(dir.path(), {ChangesetKey(3)});
  auto s = MerkleStore::Open(Options(dir.path(), 10));
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Status::Code::kCorruption);
  CHECK_THAT(s.status().message(), Catch::Contains("the changeset of version 3 is missing"));
}

TEST_CASE("a tree page missing from a checkpoint is corruption, not an absent key",
          "[store][checkpoint]") {
  // Interval 1: every version's pages are on disk. Deleting them all makes every proof and
  // every open walk of the tree hit a missing page: it must say corruption (the node stops),
  // never NotFound (which a query would answer as "no proof").
  TempDir dir;
  {
    auto store = OpenStore(Options(dir.path(), 1));
    for (Version v = 1; v <= 3; ++v) Commit(*store, v);
  }
  const auto pages = RawKeys(dir.path(), 'N');
  REQUIRE_FALSE(pages.empty());
  DeleteRaw(dir.path(), pages);
  auto s = MerkleStore::Open(Options(dir.path(), 1));
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == Status::Code::kCorruption);
  CHECK_THAT(s.status().message(), Catch::Contains("tree page") && Catch::Contains("missing"));
}

TEST_CASE("keep_recent = 1 is refused", "[store][checkpoint]") {
  TempDir dir;
  auto s = MerkleStore::Open(Options(dir.path(), 10, /*keep=*/1));
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains("keep_recent must be 0 (keep all) or >= 2"));
}
