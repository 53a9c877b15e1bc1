// The deterministic workload of the store crash test: what version v writes. Shared by the
// child that commits (store_crash_child.cc) and the test that checks what survived.
#pragma once

#include <map>
#include <random>
#include <string>

#include "store/kv.h"
#include "store/merkle_store.h"

namespace kairos::store::crash {

inline ChangeSet ChangesAt(Version v) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(v) * 0x9e3779b97f4a7c15ull);
  ChangeSet c;
  c["counter"] = std::to_string(v);
  for (int i = 0; i < 40; ++i) {
    const std::string key = "key-" + std::to_string(rng() % 2000);
    if (rng() % 5 == 0) {
      c[key] = std::nullopt;
    } else {
      c[key] = "value-" + std::to_string(v) + "-" + std::to_string(i);
    }
  }
  return c;
}

// The whole state after committing versions 1..v of a workload (what `changes_at` writes at
// each version).
inline std::map<std::string, std::string> StateAfter(Version v, ChangeSet (*changes_at)(Version)) {
  std::map<std::string, std::string> state;
  for (Version i = 1; i <= v; ++i) {
    for (const auto& [key, value] : changes_at(i)) {
      if (value) {
        state[key] = *value;
      } else {
        state.erase(key);
      }
    }
  }
  return state;
}

// The whole state after committing versions 1..v of this workload.
inline std::map<std::string, std::string> StateAt(Version v) { return StateAfter(v, ChangesAt); }

inline StoreOptions CrashStoreOptions(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  // Every commit prunes (the window's start moves a share per block toward a target that
  // moves every 4 versions), so crashes land inside pruning commits.
  o.keep_recent = 6;
  o.prune_interval = 4;
  // Pages reach the disk every 3 versions, spread over the next 2 batches: kills land while a
  // checkpoint is half written, and every reopen replays changesets.
  o.checkpoint_interval = 3;
  o.write_buffer_bytes = 256 << 10;  // small memtables: crashes during compactions too
  return o;
}

}  // namespace kairos::store::crash
