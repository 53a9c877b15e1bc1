// Past trees rebuilt for views (store_view.cc), and the cache that keeps the last few for reuse.
// Internal to store/: included by merkle_store.cc (which owns the cache and prunes it at
// Commit) and store_view.cc (which builds, advances and uses rebuilds).
//
// Thread-safety: a Reconstruction is used by one thread at a time (the cache hands each out to
// one caller, which puts it back when done); the RebuildCache is internally locked.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>

#include <leveldb/db.h>

#include "store/merkle_store.h"

namespace kairos::store {

// A past version's tree rebuilt from a durable checkpoint (or from the empty tree): its pages
// above the base in memory, the base's on disk, read through the snapshot the rebuild began
// with (a later commit may prune the base's pages; the snapshot keeps them readable).
struct MerkleStore::Reconstruction final : PageReader {
  const MerkleStore* store = nullptr;
  Version version = 0;
  Version base = 0;
  bool backward = false;   // undone from a newer checkpoint, not replayed from an older one
  Version next_label = 0;  // backward: the label of the pages the last undo made
  Slot root;
  PageMap pages;
  std::shared_ptr<const leveldb::Snapshot> snapshot;
  // The base's disk reads (LoadDiskPage). It pins LevelDB's tables, so whoever uses the rebuild
  // drops it before a wait and before the rebuild goes back to the cache (Put).
  mutable std::unique_ptr<leveldb::Iterator> cursor;
  // Takes in a tree change of one replayed or undone version (or of a slice of its updates),
  // its new pages labelled `label`. It drops the stale pages before it adds the new ones: a
  // slice may replace a page an earlier slice of the same version made, under the same id.
  void Apply(const TreeUpdate& tree, Version label);
  Result<std::shared_ptr<const Page>> LoadPage(Version v, const NibblePath& path) const override {
    if (v <= base) {
      return store->LoadDiskPage(v, path, /*latest=*/false, snapshot.get(), &cursor);
    }
    if (auto it = pages.find(PageId{v, path}); it != pages.end()) return it->second;
    return Status::Corruption("a replayed tree lacks its page at version " + std::to_string(v));
  }
};

// The last `capacity` rebuilds, most recently used first.
class MerkleStore::RebuildCache {
 public:
  explicit RebuildCache(std::size_t capacity) : capacity_(capacity) {}

  // Takes out the cached rebuild from `base` (in that direction) that can reach `version` with
  // the fewest steps (one that lies between the base and the version); nullptr if none.
  std::unique_ptr<Reconstruction> Take(Version base, bool backward, Version version) {
    std::lock_guard lock(mu_);
    auto best = entries_.end();
    Version best_steps = 0;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const Reconstruction& r = **it;
      if (r.base != base || r.backward != backward) continue;
      if (backward ? r.version < version : r.version > version) continue;
      const Version steps = backward ? r.version - version : version - r.version;
      if (best == entries_.end() || steps < best_steps) {
        best = it;
        best_steps = steps;
      }
    }
    if (best == entries_.end()) return nullptr;
    std::unique_ptr<Reconstruction> r = std::move(*best);
    entries_.erase(best);
    return r;
  }

  // Puts a rebuild back as the most recently used, dropping the least beyond the capacity.
  void Put(std::unique_ptr<Reconstruction> r) {
    r->cursor.reset();
    Entries dropped;  // freed outside the lock
    std::lock_guard lock(mu_);
    entries_.push_front(std::move(r));
    while (entries_.size() > capacity_) {
      dropped.splice(dropped.end(), entries_, std::prev(entries_.end()));
    }
  }

  using Entries = std::list<std::unique_ptr<Reconstruction>>;

  // Takes out the rebuilds `stale` names (their base pruned, or their version below the
  // window), for the caller to free where freeing costs no one a wait.
  Entries TakeIf(const std::function<bool(const Reconstruction&)>& stale) {
    Entries taken;
    std::lock_guard lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      auto next = std::next(it);
      if (stale(**it)) taken.splice(taken.end(), entries_, it);
      it = next;
    }
    return taken;
  }

 private:
  const std::size_t capacity_;
  std::mutex mu_;
  Entries entries_;
};

}  // namespace kairos::store
