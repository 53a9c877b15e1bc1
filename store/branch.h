// Branch: a write cache (and point-read cache) over a parent KvReader. Reads see the branch's own writes first;
// iteration merges the branch with its parent in key order. Nothing reaches the parent until
// the owner takes changes() and applies them (Apply on a parent branch, or Stage on the store).
//
// Uses: the check state (reset at Commit), one branch per tx in FinalizeBlock (applied only when
// the tx succeeds), and scratch branches for PrepareProposal/ProcessProposal (dropped).
//
// Thread-compatible. REQUIRES: the parent outlives the branch and does not change while the
// branch is in use (a branch over the committed store is rebuilt after each Commit).
#pragma once

#include "store/kv.h"

namespace kairos::store {

class Branch final : public KvStore {
 public:
  Branch(const KvReader& parent, KvLimits limits) : parent_(&parent), limits_(limits) {}

  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;
  Status Set(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;

  // Applies a child branch's changes to this one.
  void Apply(const ChangeSet& changes);
  const ChangeSet& changes() const { return writes_; }
  const KvLimits& limits() const { return limits_; }

 private:
  const KvReader* parent_;
  KvLimits limits_;
  ChangeSet writes_;
  // The parent's answers to point reads, kept because the parent does not change while the
  // branch is in use: a tx reads the same account several times, the store only once.
  mutable ChangeSet reads_;
};

}  // namespace kairos::store
