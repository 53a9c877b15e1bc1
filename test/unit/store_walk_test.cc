// StoreView::ForEachLeaf, the walk of every key of a committed version (kairosd export of a past
// height; state sync's snapshots): at every kept version, recent (the tree in memory) or old
// (rebuilt from a checkpoint), it visits exactly the keys and values that version holds (a model
// kept beside the store, and the store's own point reads), in strictly increasing key-hash
// order, across more than one walk batch; it resumes from a key hash; a visitor's error stops
// it; commits made in the middle of a walk (its version leaving memory) do not change what it
// visits; an old version's walk reads past the records later versions wrote; a value record
// that does not match its leaf, or missing, is reported, and so is a page a rebuild needs and
// its checkpoint lost; a pruned version has no view; a rebuild the walk makes pauses between
// slices of each changeset when asked, and a pause's error drops the half-made rebuild.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <leveldb/db.h>

#include "store/merkle_store.h"
#include "store/records.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

constexpr int kKeys = 1000;  // ~750 present: about three walk batches (kStoreWalkBatch)

StoreOptions WalkOptions(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  o.keep_recent = 24;
  o.prune_interval = 3;
  o.checkpoint_interval = 4;  // several checkpoints, so old versions are rebuilt from one
  o.page_cache_pages = 64;
  o.recent_versions = 2;  // only the latest and the two before it are in memory
  o.rebuild_cache = 2;
  return o;
}

// Version 1 writes 800 of the keys; each later one inserts, overwrites and deletes some.
ChangeSet WalkBlock(Version v) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(v) * 7919);
  ChangeSet c;
  const int writes = v == 1 ? 800 : 40;
  for (int i = 0; i < writes; ++i) {
    const int n = v == 1 ? i : static_cast<int>(rng() % kKeys);
    const std::string key = "key/" + std::to_string(n);
    c[key] = v > 1 && rng() % 4 == 0 ? std::optional<std::string>()
                                     : std::optional<std::string>("value " + std::to_string(v) +
                                                                  "." + std::to_string(i));
  }
  return c;
}

using State = std::map<std::string, std::string>;

void Apply(const ChangeSet& c, State* state) {
  for (const auto& [key, value] : c) {
    if (value) {
      (*state)[key] = *value;
    } else {
      state->erase(key);
    }
  }
}

struct Walked {
  State state;
  std::vector<Hash> order;  // the key hashes as visited
  std::vector<Version> value_versions;
  std::size_t misnamed = 0;  // leaves whose key hash is not their key's
};

Walked Walk(const StoreView& view, const Hash& from = kEmptyHash) {
  Walked w;
  const Status s = view.ForEachLeaf(
      [&w](const StoreLeaf& leaf) {
        w.state.emplace(leaf.key, leaf.value);
        w.order.push_back(leaf.key_hash);
        w.value_versions.push_back(leaf.value_version);
        if (Sha256Of(leaf.key) != leaf.key_hash) ++w.misnamed;
        return Status::OK();
      },
      from);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return w;
}

// The walk of `view` against the model of its version and the store's point reads there.
void CheckWalk(const MerkleStore& store, const StoreView& view, const State& want) {
  INFO("version " << view.version());
  const Walked w = Walk(view);
  REQUIRE(w.state.size() == w.order.size());  // no key twice
  CHECK(w.misnamed == 0);
  CHECK(w.state == want);
  for (std::size_t i = 0; i < w.order.size(); ++i) {
    if (i > 0) REQUIRE(w.order[i - 1] < w.order[i]);
    REQUIRE(w.value_versions[i] <= view.version());
  }
  for (const auto& [key, value] : want) {
    std::string got;
    REQUIRE(store.GetAt(view.version(), key, &got).ok());
    REQUIRE(got == value);
  }
}

}  // namespace

TEST_CASE("a walk visits exactly the keys and values of any kept version, in key-hash order",
          "[store][walk]") {
  constexpr Version kLast = 40;
  std::vector<State> states(kLast + 1);
  TempDir d;
  auto store = OpenStore(WalkOptions(d.path()));
  for (Version v = 1; v <= kLast; ++v) {
    const ChangeSet c = WalkBlock(v);
    states[v] = states[v - 1];
    Apply(c, &states[v]);
    REQUIRE(store->Stage(v, c).ok());
    REQUIRE(store->Commit().ok());
  }
  REQUIRE(states[kLast].size() > 2 * kStoreWalkBatch);
  const Version earliest = store->earliest_version();
  REQUIRE(earliest > 1);  // pruning has run
  REQUIRE(earliest < kLast - 10);

  // The latest and the recent versions: from memory, no rebuild.
  for (Version v = kLast; v >= kLast - 2; --v) {
    auto view = store->View(v);
    REQUIRE(view.ok());
    CheckWalk(*store, **view, states[v]);
  }
  CHECK(store->view_stats().rebuilds == 0);

  // Every older kept version: rebuilt from a checkpoint.
  for (Version v = earliest; v < kLast - 2; ++v) {
    auto view = store->View(v);
    REQUIRE(view.ok());
    CheckWalk(*store, **view, states[v]);
  }
  CHECK(store->view_stats().rebuilds > 0);
  // Their base checkpoints' pages that later versions replaced are read from LevelDB.
  CHECK(store->view_stats().disk_page_reads > 0);

  // Resuming from a key hash visits exactly the suffix of the order.
  auto view = store->View(earliest);
  REQUIRE(view.ok());
  const Walked whole = Walk(**view);
  for (const std::size_t at : {std::size_t{0}, std::size_t{1}, std::size_t{kStoreWalkBatch},
                               whole.order.size() - 1}) {
    const Walked rest = Walk(**view, whole.order[at]);
    CHECK(rest.order == std::vector<Hash>(whole.order.begin() + static_cast<long>(at),
                                          whole.order.end()));
  }
  Hash last = whole.order.back();
  REQUIRE(NextKeyHash(&last));
  CHECK(Walk(**view, last).order.empty());

  // A visitor's error ends the walk and is its result.
  int visits = 0;
  const Status stopped = (*view)->ForEachLeaf([&visits](const StoreLeaf&) {
    ++visits;
    return visits == 3 ? Status::NotFound("enough") : Status::OK();
  });
  CHECK(stopped.IsNotFound());
  CHECK(stopped.message() == "enough");
  CHECK(visits == 3);

  // A pruned version has no view to walk.
  auto pruned = store->View(earliest - 1);
  REQUIRE(!pruned.ok());
  CHECK(pruned.status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("commits in the middle of a walk do not change what it visits", "[store][walk]") {
  TempDir d;
  auto store = OpenStore(WalkOptions(d.path()));
  State state;
  Version v = 1;
  for (; v <= 9; ++v) {
    const ChangeSet c = WalkBlock(v);
    Apply(c, &state);
    REQUIRE(store->Stage(v, c).ok());
    REQUIRE(store->Commit().ok());
  }
  auto view = store->View(0);  // the latest: its tree in memory when the walk begins
  REQUIRE(view.ok());
  const Version walked_version = (*view)->version();
  const std::uint64_t rebuilds_before = store->view_stats().rebuilds;
  // After the first leaf, five more commits (more than recent_versions, past a checkpoint):
  // the rest of the walk finds its version no longer in memory and rebuilds it.
  State visited;
  Status commit_status;
  const Status s = (*view)->ForEachLeaf([&](const StoreLeaf& leaf) {
    visited.emplace(leaf.key, leaf.value);
    if (visited.size() == 1) {
      for (int i = 0; i < 5 && commit_status.ok(); ++i, ++v) {
        auto staged = store->Stage(v, WalkBlock(v));
        commit_status = staged.ok() ? store->Commit() : staged.status();
      }
    }
    return Status::OK();
  });
  INFO(s.ToString() << " " << commit_status.ToString());
  REQUIRE(s.ok());
  REQUIRE(commit_status.ok());
  CHECK(store->version() == walked_version + 5);
  CHECK(visited == state);
  CHECK(store->view_stats().rebuilds == rebuilds_before + 1);
}

TEST_CASE("a walk of an old version reads past the records later versions wrote",
          "[store][walk]") {
  // V keeps a key's records newest first, so in an old version's walk every key that later
  // versions rewrote has their records between it and the last key read: here 20 of them for
  // every other key, more than the walk's iterator steps over before it seeks. Half the values
  // are 8 KiB, so a batch's values pass the walk's read-ahead (1 MiB) and are read in rounds.
  TempDir d;
  auto store = OpenStore(WalkOptions(d.path()));
  ChangeSet first;
  for (int i = 0; i < 600; ++i) {
    first["key/" + std::to_string(i)] =
        i % 2 == 0 ? std::string(8192, static_cast<char>('a' + i % 26))
                   : "small " + std::to_string(i);
  }
  State v1;
  Apply(first, &v1);
  REQUIRE(store->Stage(1, first).ok());
  REQUIRE(store->Commit().ok());
  State latest = v1;
  for (Version v = 2; v <= 21; ++v) {
    ChangeSet c;
    for (int i = 0; i < 600; i += 2) c["key/" + std::to_string(i)] = "v" + std::to_string(v);
    Apply(c, &latest);
    REQUIRE(store->Stage(v, c).ok());
    REQUIRE(store->Commit().ok());
  }
  auto old_view = store->View(1);
  REQUIRE(old_view.ok());
  CheckWalk(*store, **old_view, v1);
  auto latest_view = store->View();
  REQUIRE(latest_view.ok());
  CheckWalk(*store, **latest_view, latest);
}

TEST_CASE("a paused walk rebuilds its version a slice at a time; a cancelled one is dropped",
          "[store][walk]") {
  // Changesets of over 512 updates, so a paused rebuild applies each in three slices or more
  // (kRebuildSlice = 256), with a pause before each; its tree is checked against the stored
  // root, and its walk against the model. Checkpoints every 8 versions, and pruning keeps
  // 16 as the base of every kept version below it: version 10 is undone from it (6
  // changesets), version 20 replayed forward (4), version 13 undone (3).
  StoreOptions options = WalkOptions("");
  options.checkpoint_interval = 8;
  constexpr Version kLast = 26;
  constexpr int kSpace = 3000;
  std::vector<State> states(kLast + 1);
  TempDir d;
  options.dir = d.path();
  auto store = OpenStore(options);
  for (Version v = 1; v <= kLast; ++v) {
    ChangeSet c;
    const int writes = v == 1 ? 2000 : 700;
    for (int k = 0; k < writes; ++k) {
      // Distinct keys (13 is prime to kSpace); every fifth later write a delete.
      const int n = v == 1 ? k : static_cast<int>((v * 7 + k * 13) % kSpace);
      c["key/" + std::to_string(n)] =
          v > 1 && k % 5 == 0 ? std::optional<std::string>()
                              : std::optional<std::string>(std::to_string(v) + "/" +
                                                           std::to_string(k));
    }
    states[v] = states[v - 1];
    Apply(c, &states[v]);
    REQUIRE(store->Stage(v, c).ok());
    REQUIRE(store->Commit().ok());
  }
  REQUIRE(store->earliest_version() <= 10);

  for (const Version v : {Version{10}, Version{20}}) {
    INFO("version " << v);
    auto view = store->View(v);
    REQUIRE(view.ok());
    const std::uint64_t rebuilds = store->view_stats().rebuilds;
    const std::uint64_t steps = store->view_stats().rebuild_steps;
    int pauses = 0;
    State visited;
    const Status s = (*view)->ForEachLeafWithPaths(
        [&](const StoreLeaf& leaf, const WalkPathOf&) {
          visited.emplace(leaf.key, leaf.value);
          return Status::OK();
        },
        kEmptyHash, [&pauses] {
          ++pauses;
          return Status::OK();
        });
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(visited == states[v]);
    REQUIRE(store->view_stats().rebuilds == rebuilds + 1);
    const std::uint64_t replayed = store->view_stats().rebuild_steps - steps;
    CHECK(replayed > 0);
    CHECK(static_cast<std::uint64_t>(pauses) >= 3 * replayed);
  }

  // A pause that answers with an error (the snapshot was cancelled) ends the walk with it in
  // the middle of the rebuild; the half-replayed tree is not kept, and the next walk of the
  // version rebuilds it whole.
  auto view = store->View(13);
  REQUIRE(view.ok());
  int pauses = 0, visits = 0;
  const Status cancelled = (*view)->ForEachLeafWithPaths(
      [&visits](const StoreLeaf&, const WalkPathOf&) {
        ++visits;
        return Status::OK();
      },
      kEmptyHash, [&pauses] {
        return ++pauses == 5 ? Status::NotFound("cancelled") : Status::OK();
      });
  CHECK(cancelled.IsNotFound());
  CHECK(cancelled.message() == "cancelled");
  CHECK(pauses == 5);
  CHECK(visits == 0);
  const std::uint64_t rebuilds = store->view_stats().rebuilds;
  const std::uint64_t steps = store->view_stats().rebuild_steps;
  CheckWalk(*store, **view, states[13]);
  // A new rebuild, all three undos (a kept half rebuild would have been moved fewer steps).
  CHECK(store->view_stats().rebuilds == rebuilds + 1);
  CHECK(store->view_stats().rebuild_steps == steps + 3);
}

TEST_CASE("a walk whose rebuild finds a page of its checkpoint missing names the page",
          "[store][walk]") {
  // Versions 2-12 change only keys whose hash begins with a nibble other than 0, 13-16 only
  // keys whose hash begins with 0. Under the other nibbles, the pages of checkpoint 12 are
  // then read by no later version's replay (the store opens without them), but by the rebuild
  // of version 5 that the walk makes, which undoes 12 to 6 on that checkpoint's tree (through
  // the rebuild's cursor, LoadDiskPage).
  const auto first_nibble_zero = [](const std::string& key) {
    return NibbleAt(Sha256Of(key), 0) == 0;
  };
  TempDir d;
  {
    auto store = OpenStore(WalkOptions(d.path()));
    for (Version v = 1; v <= 16; ++v) {
      ChangeSet c;
      if (v <= 12) {
        for (const auto& [key, value] : WalkBlock(v)) {
          if (v == 1 || !first_nibble_zero(key)) c[key] = value;
        }
      } else {
        for (int i = 0; i < kKeys && c.size() < 10; ++i) {
          const std::string key = "key/" + std::to_string(i);
          if (first_nibble_zero(key)) c[key] = "late " + std::to_string(v);
        }
      }
      REQUIRE(store->Stage(v, c).ok());
      REQUIRE(store->Commit().ok());
    }
  }
  {
    leveldb::DB* raw = nullptr;
    REQUIRE(leveldb::DB::Open(leveldb::Options(), d.path(), &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    std::string value;
    REQUIRE(db->Get(leveldb::ReadOptions(), VersionKey(kCheckpointPrefix, 12), &value).ok());
    // The pages version 12 wrote below the root, under a first nibble other than 0 (a page
    // key: 'N', the version, the path's length, its nibbles packed two a byte).
    const std::string prefix = VersionKey(kPagePrefix, 12);
    std::vector<std::string> doomed;
    std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      const std::string key = it->key().ToString();
      if (key.size() > 10 && key[9] >= 1 && (static_cast<std::uint8_t>(key[10]) >> 4) != 0) {
        doomed.push_back(key);
      }
    }
    it.reset();
    REQUIRE(!doomed.empty());
    for (const std::string& key : doomed) {
      REQUIRE(db->Delete(leveldb::WriteOptions(), key).ok());
    }
  }
  auto store = OpenStore(WalkOptions(d.path()));
  auto view = store->View(5);
  REQUIRE(view.ok());
  const Status s = (*view)->ForEachLeaf([](const StoreLeaf&) { return Status::OK(); });
  INFO(s.ToString());
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK(s.message().starts_with("the tree page at version 12 depth "));
  CHECK(s.message().ends_with(" is missing in " + d.path()));
}

TEST_CASE("a walk reports a value record that does not match its leaf", "[store][walk]") {
  TempDir d;
  // A key of version 1 that versions 2 and 3 do not write: its leaf at version 3 names the
  // value version 1 wrote.
  std::string tampered;
  for (int i = 0; i < 500 && tampered.empty(); ++i) {
    const std::string key = "key/" + std::to_string(i);
    if (WalkBlock(2).count(key) == 0 && WalkBlock(3).count(key) == 0) tampered = key;
  }
  REQUIRE(!tampered.empty());
  std::string expected;
  std::size_t all = 0;  // the keys version 3 holds
  {
    auto store = OpenStore(WalkOptions(d.path()));
    for (Version v = 1; v <= 3; ++v) {
      REQUIRE(store->Stage(v, WalkBlock(v)).ok());
      REQUIRE(store->Commit().ok());
    }
    auto view = store->View(3);  // untampered, the same walk succeeds
    REQUIRE(view.ok());
    REQUIRE((*view)->ForEachLeaf([&](const StoreLeaf&) {
                       ++all;
                       return Status::OK();
                     }).ok());
  }
  {
    // That value record, one byte changed: a well-formed record of another value.
    leveldb::DB* raw = nullptr;
    REQUIRE(leveldb::DB::Open(leveldb::Options(), d.path(), &raw).ok());
    std::unique_ptr<leveldb::DB> db(raw);
    const std::string record_key = ValueKey(Sha256Of(tampered), 1);
    std::string record;
    REQUIRE(db->Get(leveldb::ReadOptions(), record_key, &record).ok());
    std::string_view key, value;
    REQUIRE(DecodeValueRecord(record, &key, &value));
    REQUIRE(key == tampered);
    SECTION("a byte changed") {
      record.back() = static_cast<char>(record.back() ^ 1);
      REQUIRE(db->Put(leveldb::WriteOptions(), record_key, record).ok());
      expected = "a stored value does not match its leaf (written at version 1)";
    }
    SECTION("the record gone (the walk's iterator finds the next key's instead)") {
      REQUIRE(db->Delete(leveldb::WriteOptions(), record_key).ok());
      expected = "a leaf written at version 1 has no value";
    }
  }
  auto store = OpenStore(WalkOptions(d.path()));
  auto view = store->View(3);
  REQUIRE(view.ok());
  std::size_t visited = 0;
  const Status s = (*view)->ForEachLeaf([&](const StoreLeaf&) {
    ++visited;
    return Status::OK();
  });
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK(s.message() == expected);
  CHECK(visited < all);  // the walk stopped there
}
