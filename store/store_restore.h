// The state of a restore in progress (MerkleStore::BeginRestore ... FinishRestore). Internal to
// store/ (merkle_store.cc destroys it, store_restore.cc uses it).
// Thread-compatible: the executor's, like the store's Stage and Commit.
#pragma once

#include <string>
#include <vector>

#include <leveldb/write_batch.h>

#include "store/merkle_store.h"

namespace kairos::store {

struct MerkleStore::Restore {
  Version version = 0;
  Hash root{};
  std::string commit_info;
  // Every leaf restored so far, in key-hash order: the tree is built from them at the end.
  struct Leaf {
    Hash key_hash;
    Hash leaf_hash;
  };
  std::vector<Leaf> leaves;
  leveldb::WriteBatch batch;  // values not yet written
};

// The marker a restore leaves until it finishes: a store that has it is wiped on open.
inline const std::string kRestoringKey = "Mrestoring";

}  // namespace kairos::store
