// MerkleStore: the versioned, authenticated key-value store behind the app hash.
//
// One LevelDB holds, under one-byte prefixes (big-endian integers, so keys sort by number):
//   N | version | nibble path     a tree page (smt.h), immutable
//   R | version                   the root of that version: kind, hash, leaf or page pointer
//   V | sha256(key) | ~version    history: a value written at that version and since replaced,
//                                 or a tombstone (deleted at that version)
//   P | sha256(key)               the key itself (the preimage, for absence proofs)
//   S | key                       the latest value (with its version): one read per lookup,
//                                 range scans in key order. Not repeated in V.
//   X | version                   what that version made stale (pages, values), for pruning
//   M | "latest" / "earliest"     the last committed version and root; the oldest kept version
//
// Lifecycle: Stage(version, changes) computes the new root in memory and builds one WriteBatch;
// nothing touches the disk. Commit() writes that batch with sync=true. A crash leaves either the
// previous version or the new one. Pruning (keep the N most recent versions, every K versions)
// rides in the same batch, so it is atomic and idempotent too.
//
// Thread-safety: none. All calls come from the ABCI application executor.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/kv.h"
#include "store/smt.h"

namespace leveldb {
class DB;
class Cache;
class FilterPolicy;
}  // namespace leveldb

namespace kairos::store {

struct StoreOptions {
  std::string dir;
  KvLimits limits;
  std::int64_t keep_recent = 100;    // versions kept for queries and proofs; 0 keeps all
  std::int64_t prune_interval = 10;  // prune every this many versions
  std::size_t page_cache_pages = 200000;
  std::size_t block_cache_bytes = 128u << 20;
  // Latest values kept in memory (an LRU, write-through at Commit, like the Cosmos SDK's
  // inter-block cache): the accounts and balances a block just wrote are what the next CheckTx
  // and block read. 0 turns it off.
  std::size_t value_cache_bytes = 64u << 20;
  std::size_t write_buffer_bytes = 64u << 20;
  // Read every table with checksums at open, naming a corrupt file. Costs one full read of
  // the database (seconds per GB).
  bool verify_on_open = true;
};

// A proof of one key's presence: the ICS-23 ExistenceProof content for SmtSpec.
struct ExistenceProof {
  std::string key;
  std::string value;
  LeafPath path;
};

// Either `exist`, or the absent key's neighbours `left`/`right` (at least one of them).
struct KeyProof {
  std::optional<ExistenceProof> exist;
  std::optional<ExistenceProof> left;
  std::optional<ExistenceProof> right;
};

class MerkleStore final : public KvReader, private PageReader {
 public:
  // Opens or creates the store. Checks that the latest root record matches its root node.
  static Result<std::unique_ptr<MerkleStore>> Open(const StoreOptions& options);
  ~MerkleStore() override;

  Version version() const { return latest_.version; }  // 0 before the first commit
  const Hash& root_hash() const { return latest_.hash; }
  Version earliest_version() const { return earliest_; }  // oldest version still queryable
  // The commit info saved with the latest version ("" before the first commit).
  const std::string& commit_info() const { return commit_info_; }
  const KvLimits& limits() const { return options_.limits; }

  // The latest committed version.
  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;

  // A committed version inside the kept window. InvalidArgument when the version is pruned, in
  // the future, or was never written (below the chain's initial height); NotFound when absent.
  Status GetAt(Version version, std::string_view key, std::string* value) const;
  Status Prove(Version version, std::string_view key, KeyProof* out) const;
  // Whether `version` can be queried, with the reason when not.
  Status CheckVersion(Version version) const;

  // Computes the root of `changes` applied to the latest version, as `version`
  // (REQUIRES: version > version()). Replaces any earlier staged version. No disk writes.
  // `commit_info` is saved with the version, outside the tree (not part of the root): the app
  // keeps there what it needs after a restart but must not hash, e.g. the last block time.
  Result<Hash> Stage(Version version, const ChangeSet& changes, std::string commit_info = {});
  // Writes the staged version durably. A failure means the disk is broken: stop the node.
  Status Commit();

 private:
  struct RootRecord {
    Version version = 0;
    Slot root;
    Hash hash{};
  };
  struct Staged;

  MerkleStore(StoreOptions options, leveldb::DB* db, const leveldb::Cache* cache,
              const leveldb::FilterPolicy* filter);
  Result<std::shared_ptr<const Page>> LoadPage(Version version,
                                               const NibblePath& path) const override;
  Status ReadRoot(Version version, RootRecord* out) const;
  Status ReadValueAt(Version version, std::string_view key, const Hash& key_hash,
                     std::string* value) const;
  Status ReadProofLeaf(Version version, const LeafPath& path, ExistenceProof* out) const;
  Status AddPruning(Version version, void* batch);  // leveldb::WriteBatch*
  void CachePage(Version version, const NibblePath& path,
                 std::shared_ptr<const Page> page) const;
  // The S record of `key` (BE64 version, then the value), through the value cache. NotFound
  // when absent.
  Status ReadStateRecord(std::string_view key, std::string* record) const;
  void CacheStateRecord(std::string_view key, std::optional<std::string> record) const;

  StoreOptions options_;
  std::unique_ptr<leveldb::DB> db_;
  std::unique_ptr<const leveldb::Cache> block_cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  RootRecord latest_;
  Version earliest_ = 0;
  std::string commit_info_;
  std::unique_ptr<Staged> staged_;

  // LRU page cache: pages are immutable, so a cached page never goes stale.
  struct PageId {
    Version version;
    NibblePath path;
    bool operator==(const PageId& o) const { return version == o.version && path == o.path; }
  };
  struct PageIdHash {
    std::size_t operator()(const PageId& id) const {
      return id.path.Hash() ^ (static_cast<std::size_t>(id.version) * 0xff51afd7ed558ccdull);
    }
  };
  // The value cache: S records (nullopt = absent) by key, least recently used first in
  // value_lru_. Updated only with committed data (reads, and Commit's writes).
  struct CachedRecord {
    std::optional<std::string> record;
    std::list<std::string>::iterator lru;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::list<std::string> value_lru_;
  mutable std::unordered_map<std::string, CachedRecord, StringHash, std::equal_to<>> values_;
  mutable std::size_t value_cache_used_ = 0;

  mutable std::list<PageId> lru_;
  mutable std::unordered_map<PageId, std::pair<std::shared_ptr<const Page>, std::list<PageId>::iterator>,
                             PageIdHash>
      pages_;
};

}  // namespace kairos::store
