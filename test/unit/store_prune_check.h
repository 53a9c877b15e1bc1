// Test helpers for MerkleStore's pruning: the oldest kept version a store must report after
// each version (a restatement of the rule in store/README.md), and a check of the raw database
// that nothing pruning should have deleted is left behind. Shared by the store tests and the
// crash test.
#pragma once

#include <catch2/catch.hpp>

#include <leveldb/db.h>
#include <leveldb/iterator.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "store/merkle_store.h"

namespace kairos::test {

// The oldest kept version after committing `version` on a store whose oldest kept version was
// `earliest`: the target (the last multiple of prune_interval, minus keep_recent, plus one) is
// reached by equal steps over the blocks up to the next multiple.
inline store::Version ExpectedEarliest(store::Version version, store::Version earliest,
                                       const store::StoreOptions& o) {
  if (o.keep_recent == 0) return earliest;
  const store::Version into = version % o.prune_interval;
  const store::Version target = version - into - o.keep_recent + 1;
  if (target <= earliest) return earliest;
  const store::Version steps = o.prune_interval - into;
  return earliest + (target - earliest + steps - 1) / steps;
}

inline std::uint64_t BigEndian64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

// Opens the store's directory with plain LevelDB (the store must be closed) and checks that no
// record that pruning to `earliest` must delete is there (REQUIRES: keep_recent > 0):
// - values: per key, at most one record at or below `earliest` (the value that version
//   reads), never a tombstone;
// - no root record below `earliest`;
// - checkpoints: only the newest, and no changeset at or below both it and `earliest`;
// - stale-page lists: none at or below the newest checkpoint once two a block have gone since
//   it completed (on schedule, a checkpoint interval after it): the store's rule restated.
inline void CheckNothingPrunableLeft(const store::StoreOptions& o, store::Version earliest) {
  leveldb::DB* raw = nullptr;
  REQUIRE(leveldb::DB::Open(leveldb::Options(), o.dir, &raw).ok());
  std::unique_ptr<leveldb::DB> db(raw);
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator({}));
  const auto version_of = [&] {
    return static_cast<store::Version>(BigEndian64(it->key().ToString().substr(1, 8)));
  };
  const auto check = static_cast<std::uint64_t>(earliest);
  INFO("earliest kept version " << earliest);
  std::string latest_record;
  REQUIRE(db->Get({}, "Mlatest", &latest_record).ok());
  const auto latest = static_cast<store::Version>(BigEndian64(latest_record));

  std::map<std::string, int> old_values;  // key hash -> records at or below earliest
  for (it->Seek("V"); it->Valid() && it->key()[0] == 'V'; it->Next()) {
    REQUIRE(it->key().size() == 41);
    const std::uint64_t v = ~BigEndian64(it->key().ToString().substr(33, 8));
    if (v > check) continue;
    INFO("a value record of version " << v);
    CHECK(++old_values[it->key().ToString().substr(1, 32)] == 1);
    REQUIRE(it->value().size() > 0);
    CHECK(it->value()[0] == 1);  // not a tombstone
  }
  for (it->Seek("R"); it->Valid() && it->key()[0] == 'R'; it->Next()) {
    INFO("the root record of version " << version_of());
    CHECK(version_of() >= earliest);
  }
  store::Version newest = 0;
  int checkpoints = 0;
  for (it->Seek("K"); it->Valid() && it->key()[0] == 'K'; it->Next()) {
    newest = version_of();
    ++checkpoints;
  }
  CHECK(checkpoints <= 1);
  for (it->Seek("C"); it->Valid() && it->key()[0] == 'C'; it->Next()) {
    INFO("the changeset of version " << version_of() << ", newest checkpoint " << newest);
    CHECK(version_of() > std::min(newest, earliest));
  }
  const store::Version interval = o.checkpoint_interval;
  const store::Version pages_to =
      std::min(newest, newest - interval + 2 * (latest - newest - interval + 1));
  for (it->Seek("Y"); it->Valid() && it->key()[0] == 'Y'; it->Next()) {
    INFO("the stale-page list of version " << version_of() << ", newest checkpoint " << newest
                                           << ", latest " << latest);
    CHECK(version_of() > pages_to);
  }
  REQUIRE(it->status().ok());
}

}  // namespace kairos::test
