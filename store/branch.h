// Branch: a write cache (and point-read cache) over a parent KvReader. Reads see the branch's own writes first;
// iteration merges the branch with its parent in key order. Nothing reaches the parent until
// the owner takes changes() and applies them (Apply on a parent branch, or Stage on the store).
//
// Uses: the check state (reset at Commit; each CheckTx's ante writes into it under an undo
// journal, below), the block's state in FinalizeBlock (each tx's ante, then its messages, under
// a journal: kept when they succeed), and scratch branches for PrepareProposal/ProcessProposal
// (dropped).
//
// Thread-compatible. REQUIRES: the parent outlives the branch and does not change while the
// branch is in use (a branch over the committed store is rebuilt after each Commit).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/kv.h"
#include "store/seeded_hash.h"

namespace kairos::store {

class Branch final : public KvStore {
 public:
  // Parent reads are kept only when the parent is not itself a branch: a branch answers a
  // point read with a hash lookup, as cheap as this one's own cache, so keeping its answers
  // again (key, value and node copied per key in every per-tx branch) would only cost.
  Branch(const KvReader& parent, KvLimits limits)
      : parent_(&parent),
        limits_(limits),
        cache_reads_(dynamic_cast<const Branch*>(&parent) == nullptr) {}
  // Not copyable: order_ points into entries_.
  Branch(const Branch&) = delete;
  Branch& operator=(const Branch&) = delete;

  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;
  Status Set(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;

  // The parent's value of `key`, ignoring this branch's writes (through the same read cache).
  Status GetFromParent(std::string_view key, std::string* value) const;

  // Applies a child branch's changes to this one.
  void Apply(const Branch& child);
  void Apply(const ChangeSet& changes);
  // Every write of this branch (deletes as nullopt), in key order.
  ChangeSet changes() const;
  const KvLimits& limits() const { return limits_; }
  // How many keys this branch knows (written, or read from the parent and kept).
  std::size_t size() const { return entries_.size(); }
  // Sizes the table for `keys` keys, so that it does not rehash while it grows to that many.
  void Reserve(std::size_t keys) { entries_.reserve(keys); }
  // Key comparisons its table has made so far (a debug statistic: a workload of keys crafted to
  // collide must not cost more of them than random keys).
  std::uint64_t key_comparisons() const { return key_comparisons_; }

  // An undo journal: while one is open, every write keeps what it replaced, so that
  // RollBackJournal() puts the branch's writes back as they were at BeginJournal(). It does the
  // work of a child branch that is applied on success and dropped on failure, without the child
  // (no second table, no copy of the writes into this one): for writes that usually stand, such
  // as a CheckTx's ante on the check state. Reads are unaffected; parent answers cached while
  // the journal was open stay cached (they are true either way). Not nested: BeginJournal on an
  // open journal stops the process (a programming error that would lose the outer undo log).
  // An iterator must not live across a write to its range nor across a rollback (a rollback
  // may remove keys from the sorted index the iterator walks).
  void BeginJournal();
  void CommitJournal();    // keeps the writes
  void RollBackJournal();  // undoes them
  bool journal_open() const { return journal_open_; }

 private:
  // Written keys in order, each with its value in entries_ (node-based: neither moves once
  // inserted, and nothing is ever erased: a delete is a nullopt value).
  using OrderIndex = std::map<std::string_view, const std::optional<std::string>*>;

  // One entry per key this branch has written or read: one hash probe answers either.
  struct Entry {
    std::optional<std::string> value;   // this branch's write (nullopt: a delete), if `written`
    std::optional<std::string> parent;  // the parent's answer (nullopt: absent), if `parent_known`
    bool written = false;
    bool parent_known = false;
  };
  // Keyed by the per-process seeded hash: keys hold addresses that senders choose (issue 20).
  using Entries = std::unordered_map<std::string, Entry, SeededHash, CountingKeyEqual>;

  void Write(std::string_view key, std::optional<std::string_view> value);
  // Marks an entry written, queueing it for order_ the first time.
  void MarkWritten(Entries::value_type* entry);
  // What one write replaced (a journal record).
  struct Undo {
    Entries::value_type* entry;
    std::optional<std::string> value;
    bool written;
  };
  // Sets `*value` from the parent's answer in `e`.
  static Status ParentAnswer(const Entry& e, std::string* value);
  // Asks the parent and keeps its answer (when cache_reads_) in `it`'s entry, or in a new one
  // when `it` is end(). REQUIRES: `it` is find(key)'s result, and knows no parent answer.
  Status ReadParent(std::string_view key, Entries::iterator it, std::string* value) const;
  // Adds the keys written since the last call to order_. Existing iterators stay valid.
  void SortPending() const;

  const KvReader* parent_;
  KvLimits limits_;
  bool cache_reads_;
  mutable std::uint64_t key_comparisons_ = 0;  // before entries_, which counts into it
  // Hash-based: the check state holds thousands of writes, and a point read or a write must
  // not walk a tree of long keys with shared prefixes. Order is built only when asked for, over
  // the written entries. The parent's answers to point reads are kept in the same entries (when
  // cache_reads_), because the parent does not change while the branch is in use: a tx reads the
  // same account several times, the store only once. Entries are never erased (a delete is a
  // written nullopt), and node-based storage keeps their addresses stable for order_/pending_.
  mutable Entries entries_{0, SeededHash{}, CountingKeyEqual{&key_comparisons_}};
  mutable OrderIndex order_;
  mutable std::vector<const Entries::value_type*> pending_;
  bool journal_open_ = false;
  // pending_'s size at BeginJournal, and whether SortPending moved pending_ into order_ since.
  std::size_t journal_pending_mark_ = 0;
  mutable bool journal_sorted_ = false;
  std::vector<Undo> journal_;  // kept between journals for its capacity
};

// An open journal on a branch (Branch::BeginJournal) that rolls back when it goes out of scope
// unless committed: an early return or an exception cannot leave a failed tx's writes behind.
class BranchJournal {
 public:
  explicit BranchJournal(Branch& branch) : branch_(&branch) { branch.BeginJournal(); }
  ~BranchJournal() { RollBack(); }
  BranchJournal(const BranchJournal&) = delete;
  BranchJournal& operator=(const BranchJournal&) = delete;

  // Each closes the journal; later calls (and the destructor) do nothing.
  void Commit() {
    if (branch_ != nullptr) branch_->CommitJournal();
    branch_ = nullptr;
  }
  void RollBack() {
    if (branch_ != nullptr) branch_->RollBackJournal();
    branch_ = nullptr;
  }

 private:
  Branch* branch_;
};

}  // namespace kairos::store
