// MerkleStore and the sparse Merkle tree against a reference model: a std::map plus a naive
// full recompute of the root, over random sets, deletes, commits and discarded stages.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "store/branch.h"
#include "store/merkle_store.h"
#include "smt_reference.h"
#include "store_prune_check.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

Hash ModelRoot(const std::map<std::string, std::string>& model) {
  std::vector<std::pair<Hash, Hash>> leaves;
  for (const auto& [k, v] : model) leaves.emplace_back(Sha256Of(k), Sha256Of(v));
  return kairos::test::ReferenceRoot(leaves);
}

StoreOptions Options(const std::string& dir, std::int64_t keep_recent = 0) {
  StoreOptions o;
  o.dir = dir;
  o.keep_recent = keep_recent;
  o.prune_interval = 3;
  o.page_cache_pages = 64;  // small, so pages are read back from LevelDB too
  return o;
}

std::vector<std::pair<std::string, std::string>> Scan(const KvReader& r, std::string_view start = "",
                                                      std::string_view end = "") {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = r.Iterate(start, end); it->Valid(); it->Next()) {
    out.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  return out;
}

// Get of keys prefix + i, i in [0, end) by `step`, against the model (present and absent).
void CheckPointReads(const MerkleStore& store, const std::map<std::string, std::string>& model,
                     const std::string& prefix, int end, int step) {
  for (int i = 0; i < end; i += step) {
    const std::string key = prefix + std::to_string(i);
    std::string value;
    const Status s = store.Get(key, &value);
    if (const auto it = model.find(key); it == model.end()) {
      CHECK(s.IsNotFound());
    } else {
      REQUIRE(s.ok());
      CHECK(value == it->second);
    }
  }
}

void CheckProof(const MerkleStore& store, Version v, const std::string& key,
                const std::map<std::string, std::string>& model, const Hash& root) {
  KeyProof proof;
  const Status s = store.Prove(v, key, &proof);
  INFO(s.ToString());
  REQUIRE(s.ok());
  const auto it = model.find(key);
  if (it != model.end()) {
    REQUIRE(proof.exist);
    CHECK(proof.exist->key == key);
    CHECK(proof.exist->value == it->second);
    CHECK(RootFromPath(proof.exist->path) == root);
    return;
  }
  REQUIRE_FALSE(proof.exist);
  REQUIRE((proof.left || proof.right));
  const Hash kh = Sha256Of(key);
  // The neighbours are the closest present keys in key-hash order, and both prove to the root.
  std::optional<Hash> want_left, want_right;
  for (const auto& [k, val] : model) {
    const Hash h = Sha256Of(k);
    if (h < kh && (!want_left || h > *want_left)) want_left = h;
    if (h > kh && (!want_right || h < *want_right)) want_right = h;
  }
  CHECK(proof.left.has_value() == want_left.has_value());
  CHECK(proof.right.has_value() == want_right.has_value());
  for (const auto* side : {&proof.left, &proof.right}) {
    if (!*side) continue;
    CHECK(RootFromPath((*side)->path) == root);
    CHECK(Sha256Of((*side)->key) == (*side)->path.key_hash);
    CHECK(model.at((*side)->key) == (*side)->value);
  }
  if (proof.left) CHECK(proof.left->path.key_hash == *want_left);
  if (proof.right) CHECK(proof.right->path.key_hash == *want_right);
}

}  // namespace

TEST_CASE("the empty store has the zero root and version 0", "[store]") {
  TempDir dir;
  auto store = OpenStore(Options(dir.path()));
  CHECK(store->version() == 0);
  CHECK(store->root_hash() == kEmptyHash);
  std::string v;
  CHECK(store->Get("a", &v).IsNotFound());
}

TEST_CASE("a one-key tree's root is its leaf; two keys make an inner node", "[store]") {
  TempDir dir;
  auto store = OpenStore(Options(dir.path()));
  ChangeSet c{{"alpha", "1"}};
  auto root = store->Stage(1, c);
  REQUIRE(root.ok());
  CHECK(*root == LeafHash(Sha256Of("alpha"), Sha256Of("1")));
  REQUIRE(store->Commit().ok());
  auto root2 = store->Stage(2, ChangeSet{{"beta", "2"}});
  REQUIRE(root2.ok());
  CHECK(*root2 == ModelRoot({{"alpha", "1"}, {"beta", "2"}}));
}

TEST_CASE("random operations agree with the reference model at every version", "[store]") {
  TempDir dir;
  StoreOptions options = Options(dir.path());
  // The value cache off, smaller than one record, evicting all the time, and holding
  // everything.
  options.value_cache_bytes = GENERATE(as<std::size_t>(), 0, 100, 4096, 64u << 20);
  const int seed = GENERATE(1, 2, 3);
  // Pages every version, a short checkpoint interval, and a longer one (6 checkpoints in the
  // 60 blocks; the default, 30, would make 2).
  options.checkpoint_interval = seed == 1 ? 1 : seed == 2 ? 3 : 10;
  auto store = OpenStore(options);
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  std::map<std::string, std::string> model;
  std::map<Version, std::map<std::string, std::string>> history;
  std::map<Version, Hash> roots;
  auto random_key = [&] {
    // A small key space so sets, overwrites and deletes all hit existing keys.
    return "k" + std::to_string(rng() % 300);
  };
  Version version = 0;
  for (int block = 0; block < 60; ++block) {
    ChangeSet changes;
    auto next = model;
    const int ops = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < ops; ++i) {
      const std::string key = random_key();
      if (rng() % 4 == 0) {
        changes[key] = std::nullopt;
        next.erase(key);
      } else {
        const std::string value = "v" + std::to_string(rng() % 1000);
        changes[key] = value;
        next[key] = value;
      }
    }
    ++version;
    auto root = store->Stage(version, changes);
    REQUIRE(root.ok());
    CHECK(*root == ModelRoot(next));
    if (rng() % 5 == 0) {  // a discarded stage (a proposal that lost) changes nothing
      --version;
      continue;
    }
    if (rng() % 7 == 0) {  // and a re-stage of the same version gives the same root
      auto again = store->Stage(version, changes);
      REQUIRE(again.ok());
      CHECK(*again == *root);
    }
    REQUIRE(store->Commit().ok());
    model = std::move(next);
    // Each version, while it is the latest: the same values in the same iteration order.
    REQUIRE(Scan(*store) == std::vector<std::pair<std::string, std::string>>(model.begin(),
                                                                             model.end()));
    // Point reads (through the value cache) agree too, present and absent keys alike.
    CheckPointReads(*store, model, "k", 300, 11);
    history[version] = model;
    roots[version] = *root;
    // Proofs at the latest version take their leaves from the value cache or put them there;
    // a proof at an older version must still get that version's values, and later reads the
    // latest ones.
    for (int i = static_cast<int>(rng() % 17); i < 300; i += 17) {
      CheckProof(*store, version, "k" + std::to_string(i), model, *root);
    }
    if (history.size() >= 2) {
      const auto pick = static_cast<std::ptrdiff_t>(rng() % (history.size() - 1));
      const auto& [past, snapshot] = *std::next(history.begin(), pick);
      if (!snapshot.empty() && past >= store->earliest_version()) {
        for (int i = static_cast<int>(rng() % 23); i < 300; i += 23) {
          CheckProof(*store, past, "k" + std::to_string(i), snapshot, roots[past]);
        }
      }
    }
    if (rng() % 10 == 0) {  // reopen from disk
      store.reset();
      store = OpenStore(options);
      REQUIRE(store->version() == version);
      REQUIRE(store->root_hash() == roots[version]);
    }
  }
  // Latest: flat reads and iteration order equal the model's.
  std::vector<std::pair<std::string, std::string>> want(model.begin(), model.end());
  CHECK(Scan(*store) == want);
  // Every kept version: values and proofs.
  for (const auto& [v, snapshot] : history) {
    for (int i = 0; i < 300; i += 7) {
      const std::string key = "k" + std::to_string(i);
      std::string value;
      const Status s = store->GetAt(v, key, &value);
      const auto it = snapshot.find(key);
      if (it == snapshot.end()) {
        CHECK(s.IsNotFound());
      } else {
        REQUIRE(s.ok());
        CHECK(value == it->second);
      }
      if (!snapshot.empty()) CheckProof(*store, v, key, snapshot, roots[v]);
    }
  }
}

TEST_CASE("the root does not depend on the order of writes", "[store]") {
  TempDir a, b;
  auto sa = OpenStore(Options(a.path()));
  auto sb = OpenStore(Options(b.path()));
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back("key-" + std::to_string(i));
  // a: all at once. b: in three blocks, in another order, with detours that are undone.
  ChangeSet all;
  for (const auto& k : keys) all[k] = "v-" + k;
  REQUIRE(sa->Stage(1, all).ok());
  REQUIRE(sa->Commit().ok());
  std::mt19937 rng(7);
  std::shuffle(keys.begin(), keys.end(), rng);
  Version v = 0;
  for (std::size_t start = 0; start < keys.size(); start += 200) {
    ChangeSet part;
    for (std::size_t i = start; i < std::min(keys.size(), start + 200); ++i) {
      part[keys[i]] = "v-" + keys[i];
    }
    part["temporary-" + std::to_string(start)] = "x";
    REQUIRE(sb->Stage(++v, part).ok());
    REQUIRE(sb->Commit().ok());
  }
  ChangeSet cleanup;
  for (std::size_t start = 0; start < keys.size(); start += 200) {
    cleanup["temporary-" + std::to_string(start)] = std::nullopt;
  }
  REQUIRE(sb->Stage(++v, cleanup).ok());
  REQUIRE(sb->Commit().ok());
  CHECK(sa->root_hash() == sb->root_hash());
}

TEST_CASE("pruning moves the window a share per block and keeps at least keep_recent versions",
          "[store]") {
  TempDir dir;
  StoreOptions options = Options(dir.path(), /*keep_recent=*/4);  // prune_interval 3
  options.checkpoint_interval = 2;
  auto store = OpenStore(options);
  // The oldest kept version after each version 1..14: the target moves at 6 (to 3), 9 (to 6)
  // and 12 (to 9), and the window's start follows it one version per block.
  const Version want[] = {0, 1, 1, 1, 1, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9};
  for (Version v = 1; v <= 14; ++v) {
    ChangeSet c{{"counter", std::to_string(v)}, {"k" + std::to_string(v % 3), "x"}};
    if (v % 4 == 0) c["k1"] = std::nullopt;
    REQUIRE(store->Stage(v, c).ok());
    REQUIRE(store->Commit().ok());
    INFO("version " << v);
    REQUIRE(store->earliest_version() == want[v]);
    CHECK(v - store->earliest_version() + 1 >= std::min<Version>(v, 4));  // never fewer kept
  }
  std::string value;
  for (Version v = 9; v <= 14; ++v) {
    REQUIRE(store->GetAt(v, "counter", &value).ok());
    CHECK(value == std::to_string(v));
    KeyProof p;
    CHECK(store->Prove(v, "counter", &p).ok());
  }
  const Status pruned = store->GetAt(8, "counter", &value);
  CHECK(pruned.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(pruned.message(), Catch::Contains("not kept") && Catch::Contains("9"));
  const Status future = store->GetAt(15, "counter", &value);
  CHECK_THAT(future.message(), Catch::Contains("not committed yet"));
  store.reset();
  kairos::test::CheckNothingPrunableLeft(options, 9);
}

TEST_CASE("branches read their own writes and merge iteration in key order", "[store]") {
  TempDir dir;
  auto store = OpenStore(Options(dir.path()));
  REQUIRE(store->Stage(1, ChangeSet{{"a", "1"}, {"c", "3"}, {"e", "5"}}).ok());
  REQUIRE(store->Commit().ok());
  Branch block(*store, store->limits());
  REQUIRE(block.Set("b", "2").ok());
  REQUIRE(block.Delete("c").ok());
  Branch tx(block, store->limits());
  REQUIRE(tx.Set("d", "4").ok());
  REQUIRE(tx.Set("a", "1b").ok());
  std::string v;
  REQUIRE(tx.Get("a", &v).ok());
  CHECK(v == "1b");
  CHECK(tx.Get("c", &v).IsNotFound());
  using KV = std::vector<std::pair<std::string, std::string>>;
  CHECK(Scan(tx) == KV{{"a", "1b"}, {"b", "2"}, {"d", "4"}, {"e", "5"}});
  CHECK(Scan(tx, "b", "e") == KV{{"b", "2"}, {"d", "4"}});
  CHECK(Scan(block) == KV{{"a", "1"}, {"b", "2"}, {"e", "5"}});
  block.Apply(tx);
  CHECK(Scan(block) == KV{{"a", "1b"}, {"b", "2"}, {"d", "4"}, {"e", "5"}});
  // The committed store is untouched until the block is staged and committed.
  CHECK(Scan(*store) == KV{{"a", "1"}, {"c", "3"}, {"e", "5"}});
  REQUIRE(store->Stage(2, block.changes()).ok());
  REQUIRE(store->Commit().ok());
  CHECK(Scan(*store) == KV{{"a", "1b"}, {"b", "2"}, {"d", "4"}, {"e", "5"}});
}

TEST_CASE("size limits and empty values are refused with the limit named", "[store]") {
  TempDir dir;
  StoreOptions o = Options(dir.path());
  o.limits.max_key_bytes = 8;
  o.limits.max_value_bytes = 16;
  auto store = OpenStore(o);
  Branch b(*store, store->limits());
  CHECK_THAT(b.Set("123456789", "v").message(), Catch::Contains("store.max_key_bytes"));
  CHECK_THAT(b.Set("k", std::string(17, 'x')).message(), Catch::Contains("store.max_value_bytes"));
  CHECK_THAT(b.Set("k", "").message(), Catch::Contains("empty value"));
  CHECK_THAT(b.Set("", "v").message(), Catch::Contains("empty key"));
  CHECK(store->Stage(1, ChangeSet{{"123456789", "v"}}).status().code() ==
        Status::Code::kInvalidArgument);
}

TEST_CASE("a first version on a pruning height keeps only itself, in memory and on disk",
          "[store]") {
  TempDir dir;
  const StoreOptions options = Options(dir.path(), /*keep_recent=*/4);  // prune_interval 3
  auto store = OpenStore(options);
  REQUIRE(store->Stage(12, ChangeSet{{"k", "v"}}).ok());  // e.g. a chain's initial height
  REQUIRE(store->Commit().ok());
  CHECK(store->earliest_version() == 12);
  std::string value;
  CHECK_THAT(store->GetAt(10, "k", &value).message(), Catch::Contains("not kept"));
  REQUIRE(store->GetAt(12, "k", &value).ok());
  store.reset();
  store = OpenStore(options);
  CHECK(store->earliest_version() == 12);
}

TEST_CASE("a branch iterates an empty range when end is not after start", "[store]") {
  TempDir dir;
  auto store = OpenStore(Options(dir.path()));
  REQUIRE(store->Stage(1, ChangeSet{{"a", "1"}, {"c", "3"}}).ok());
  REQUIRE(store->Commit().ok());
  Branch b(*store, store->limits());
  REQUIRE(b.Set("b", "2").ok());
  REQUIRE(b.Set("d", "4").ok());
  CHECK(Scan(b, "d", "b").empty());
  CHECK(Scan(b, "c", "c").empty());
  CHECK(Scan(*store, "c", "a").empty());
}

namespace {

// Pages in memory by (version, path), for driving the tree functions without a store. Read
// from two threads by a parallel update: only const lookups.
bool SameUpdate(const TreeUpdate& a, const TreeUpdate& b) {
  if (!(a.root == b.root) || a.outcomes != b.outcomes || a.previous_leaves != b.previous_leaves ||
      a.stale_pages.size() != b.stale_pages.size() || a.new_pages.size() != b.new_pages.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.stale_pages.size(); ++i) {
    if (a.stale_pages[i].first != b.stale_pages[i].first ||
        !(a.stale_pages[i].second == b.stale_pages[i].second)) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.new_pages.size(); ++i) {
    if (!(a.new_pages[i].first == b.new_pages[i].first) ||
        a.new_pages[i].second->Encode() != b.new_pages[i].second->Encode() ||
        a.new_pages[i].second->hash() != b.new_pages[i].second->hash()) {
      return false;
    }
  }
  return true;
}

// Pages by (version, path) as a rebuild keeps them (MerkleStore::Reconstruction::Apply): a tree
// change's stale pages are dropped before its new ones are added.
class MapPageReader final : public PageReader {
 public:
  kairos::Result<std::shared_ptr<const Page>> LoadPage(Version version,
                                                       const NibblePath& path) const override {
    if (auto it = pages_.find(Id(version, path)); it != pages_.end()) return it->second;
    return Status::Corruption("no such page");
  }
  void Apply(Version label, const TreeUpdate& tree) {
    for (const auto& [version, path] : tree.stale_pages) pages_.erase(Id(version, path));
    for (const auto& [path, page] : tree.new_pages) pages_[Id(label, path)] = page;
  }
  // Every page, encoded, by its id.
  std::map<std::string, std::string> Encoded() const {
    std::map<std::string, std::string> out;
    for (const auto& [id, page] : pages_) out[id] = page->Encode();
    return out;
  }

 private:
  static std::string Id(Version version, const NibblePath& path) {
    std::string id = std::to_string(version) + ":";
    path.AppendTo(&id);
    return id;
  }
  std::map<std::string, std::shared_ptr<const Page>> pages_;
};

// A key hash whose first byte is `first` and the rest random.
Hash KeyHashFrom(std::uint8_t first, std::mt19937_64& rng) {
  Hash kh{};
  for (auto& b : kh) b = static_cast<std::uint8_t>(rng());
  kh[0] = first;
  return kh;
}

}  // namespace

TEST_CASE("a tree update on two threads equals the one-thread update in every field and order",
          "[store]") {
  std::mt19937_64 rng(42);
  MapPageReader reader;
  Slot root;
  std::map<Hash, Hash> model;  // key hash -> value hash
  for (Version v = 1; v <= 6; ++v) {
    // Inserts, replacements, deletes of present keys, deletes of absent keys and rewrites of
    // the same value (no-ops), sorted by key hash as ApplyUpdates requires.
    std::map<Hash, std::optional<Hash>> batch;  // key hash -> value hash, or delete
    const int n = v == 1 ? 3000 : 1500;
    for (int i = 0; i < n; ++i) {
      Hash kh{};
      const auto kind = rng() % 6;
      if (kind == 0 || model.empty()) {
        for (auto& b : kh) b = static_cast<std::uint8_t>(rng());
      } else {
        kh = std::next(model.begin(), static_cast<std::ptrdiff_t>(rng() % model.size()))->first;
      }
      Hash value{};
      for (auto& b : value) b = static_cast<std::uint8_t>(rng());
      if (kind == 1) {
        batch[kh] = std::nullopt;
      } else if (kind == 2 && model.contains(kh)) {
        batch[kh] = model.at(kh);  // the same value again
      } else {
        batch[kh] = value;
      }
    }
    std::vector<KeyUpdate> updates;
    for (const auto& [kh, value] : batch) {
      updates.push_back({kh, value ? std::optional<Hash>(LeafHash(kh, *value)) : std::nullopt});
    }
    TreeUpdate serial, parallel;
    REQUIRE(ApplyUpdates(reader, root, v, updates, &serial).ok());
    REQUIRE(ApplyUpdates(reader, root, v, updates, &parallel, /*parallel=*/true).ok());
    REQUIRE(SameUpdate(serial, parallel));
    // Repeated: the same answer whatever the threads' timing.
    for (int again = 0; again < 3; ++again) {
      TreeUpdate other;
      REQUIRE(ApplyUpdates(reader, root, v, updates, &other, /*parallel=*/true).ok());
      REQUIRE(SameUpdate(serial, other));
    }
    reader.Apply(v, serial);
    root = serial.root;
    for (const auto& [kh, value] : batch) {
      if (value) {
        model[kh] = *value;
      } else {
        model.erase(kh);
      }
    }
    // The root is the reference root of the resulting key set.
    const std::vector<std::pair<Hash, Hash>> leaves(model.begin(), model.end());
    REQUIRE(root.kind == Slot::Kind::kPage);
    CHECK(root.hash == kairos::test::ReferenceRoot(leaves));
    CHECK(model.size() > 1000);
  }
  std::vector<Hash> present;
  for (const auto& [kh, value] : model) present.push_back(kh);
  // A block whose keys all fall under one root slot runs on one thread, and agrees too.
  std::vector<KeyUpdate> one_slot;
  for (const Hash& kh : present) {
    if (NibbleAt(kh, 0) == 3) one_slot.push_back({kh, std::nullopt});
  }
  REQUIRE(one_slot.size() > 10);
  TreeUpdate serial, parallel;
  REQUIRE(ApplyUpdates(reader, root, 7, one_slot, &serial).ok());
  REQUIRE(ApplyUpdates(reader, root, 7, one_slot, &parallel, true).ok());
  CHECK(SameUpdate(serial, parallel));
  CHECK(serial.stale_pages.size() >= 2);
}

TEST_CASE("a version's updates applied in slices under one label make the pages one update makes",
          "[store]") {
  // How a paused rebuild applies a changeset (MerkleStore::ApplyChangeset): slices of the
  // sorted list, each an ApplyUpdates at the same version, so a slice rewrites pages an
  // earlier slice made under the same id. After the last slice the root and every page must
  // be those of one ApplyUpdates of the whole list. The versions go through the edge cases:
  // the empty tree growing, a tree collapsing to one leaf in the middle of a version and
  // growing again in its later slices, everything deleted, and an undo's updates (leaf
  // versions named, labels above every page).
  std::mt19937_64 rng(7);
  MapPageReader whole, sliced;
  Slot whole_root, sliced_root;
  std::map<Hash, Hash> model;  // key hash -> value hash
  const auto random_hash = [&rng] {
    Hash h{};
    for (auto& b : h) b = static_cast<std::uint8_t>(rng());
    return h;
  };
  for (Version v = 1; v <= 8; ++v) {
    INFO("version " << v);
    std::map<Hash, std::optional<Hash>> batch;
    Version leaf_version = 0;
    if (v == 1) {  // from the empty tree: 60 keys below 0x80
      for (int i = 0; i < 60; ++i) {
        batch[KeyHashFrom(static_cast<std::uint8_t>(rng() % 0x80), rng)] = random_hash();
      }
    } else if (v == 2 || v == 6) {
      // Every key but one deleted (they sort first), then 40 new keys from 0xf0: the slices
      // collapse the tree to one leaf, then grow it again.
      auto keep = model.begin();
      for (auto it = std::next(keep); it != model.end(); ++it) batch[it->first] = std::nullopt;
      const Hash last = model.rbegin()->first;  // the new keys sort after every present one
      while (batch.size() < model.size() - 1 + 40) {
        const Hash kh = KeyHashFrom(static_cast<std::uint8_t>(0xf0 + rng() % 16), rng);
        if (last < kh) batch[kh] = random_hash();
      }
    } else if (v == 4) {  // everything deleted
      for (const auto& [kh, value] : model) batch[kh] = std::nullopt;
    } else {
      // Inserts, replacements and deletes; version 7's as an undo makes them: each leaf names
      // the version that wrote it (here 3) and the pages are labelled 7.
      for (int i = 0; i < 80; ++i) {
        const bool existing = !model.empty() && rng() % 2 == 0;
        const Hash kh = existing ? std::next(model.begin(),
                                             static_cast<std::ptrdiff_t>(rng() % model.size()))
                                       ->first
                                 : KeyHashFrom(static_cast<std::uint8_t>(rng()), rng);
        batch[kh] = existing && rng() % 3 == 0 ? std::nullopt : std::optional(random_hash());
      }
      if (v == 7) leaf_version = 3;
    }
    std::vector<KeyUpdate> updates;
    for (const auto& [kh, value] : batch) {
      updates.push_back({kh, value ? std::optional<Hash>(LeafHash(kh, *value)) : std::nullopt,
                         leaf_version});
    }
    TreeUpdate one;
    REQUIRE(ApplyUpdates(whole, whole_root, v, updates, &one).ok());
    whole.Apply(v, one);
    whole_root = one.root;
    bool collapsed = false;  // a slice left a single leaf (or nothing) before the last
    // Versions 2 and 6: one slice ends with the last delete (the first present key's update
    // begins the next).
    std::size_t cut = updates.size();
    if (v == 2 || v == 6) {
      cut = 0;
      while (cut < updates.size() && !updates[cut].leaf_hash) ++cut;
    }
    for (std::size_t begin = 0; begin < updates.size();) {
      std::size_t n = std::min<std::size_t>(1 + rng() % 5, updates.size() - begin);
      if (begin < cut) n = std::min(n, cut - begin);
      TreeUpdate part;
      REQUIRE(ApplyUpdates(sliced, sliced_root, v,
                           std::span<const KeyUpdate>(updates).subspan(begin, n), &part)
                  .ok());
      sliced.Apply(v, part);
      sliced_root = part.root;
      begin += n;
      if (begin < updates.size() && sliced_root.kind != Slot::Kind::kPage) collapsed = true;
    }
    if (v == 2 || v == 6) CHECK(collapsed);
    for (const auto& [kh, value] : batch) {
      if (value) {
        model[kh] = *value;
      } else {
        model.erase(kh);
      }
    }
    CHECK(whole_root == sliced_root);
    CHECK(whole.Encoded() == sliced.Encoded());
    const std::vector<std::pair<Hash, Hash>> leaves(model.begin(), model.end());
    CHECK(whole_root.hash == (model.empty() ? kEmptyHash : kairos::test::ReferenceRoot(leaves)));
    if (v == 4) CHECK(model.empty());
    if (v == 7) CHECK(whole.Encoded().size() > 1);
  }
}

TEST_CASE("large blocks hashed and updated on two threads agree with the reference",
          "[store]") {
  TempDir dir;
  StoreOptions options = Options(dir.path());
  options.checkpoint_interval = 2;  // a share of several hundred pages every other version
  options.value_cache_bytes = 64u << 10;  // full after the first block: entries are reused
  auto store = OpenStore(options);
  std::mt19937_64 rng(5);
  std::map<std::string, std::string> model;
  std::map<Version, std::map<std::string, std::string>> history;
  std::map<Version, Hash> roots;
  for (Version version = 1; version <= 6; ++version) {
    ChangeSet changes;
    for (int i = 0; i < 1500; ++i) {
      const std::string key = "key" + std::to_string(rng() % 5000);
      const auto kind = rng() % 8;
      if (kind == 0) {
        changes[key] = std::nullopt;
      } else if (kind == 1 && model.contains(key)) {
        changes[key] = model.at(key);  // the same value again
      } else {
        changes[key] = "value" + std::to_string(rng());
      }
    }
    for (const auto& [key, value] : changes) {
      if (value) {
        model[key] = *value;
      } else {
        model.erase(key);
      }
    }
    auto root = store->Stage(version, changes);
    REQUIRE(root.ok());
    REQUIRE(*root == ModelRoot(model));
    REQUIRE(store->Commit().ok());
    history[version] = model;
    roots[version] = *root;
    CheckPointReads(*store, model, "key", 5000, 37);
  }
  CHECK(Scan(*store) == std::vector<std::pair<std::string, std::string>>(model.begin(),
                                                                         model.end()));
  // Reopened: the checkpoint written in shares and the changesets give the same tree.
  store.reset();
  store = OpenStore(options);
  REQUIRE(store->root_hash() == roots[6]);
  for (const auto& [v, snapshot] : history) {
    for (int i = 0; i < 5000; i += 211) {
      CheckProof(*store, v, "key" + std::to_string(i), snapshot, roots[v]);
    }
  }
}
