// A LevelDB Env that writes table files back to disk as they grow, not all at their final
// sync. Linux (sync_file_range).
//
// LevelDB writes a compaction's or a memtable flush's table (*.ldb, up to hundreds of MB)
// without syncing, then calls fdatasync once at its end. All of it is still dirty then, and on
// ext4 the commit's own fdatasync of the write-ahead log waits behind that flush: at 1M keys a
// commit's log sync took 77 ms instead of ~4 while a table's final sync took 141 ms
// (docs/benchmarks.md, session 10). This Env asks the kernel to start writing a table back
// every `bytes_per_sync` bytes as it grows, staying that far behind the end of the file and on
// page bounds, so a page is not written back while it is still being filled (RocksDB's
// `bytes_per_sync` does the same). sync_file_range with SYNC_FILE_RANGE_WRITE does not wait for
// the writes to finish, though it may wait for room in the device's queue. The final
// fdatasync then finds little left. Durability is unchanged: LevelDB's own Sync still syncs
// the whole file before the table is used.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include <leveldb/env.h>

namespace kairos::store {

// An Env over `base` (which must outlive it). Every call goes to `base`; table files opened
// for writing are wrapped as above, when `base` writes them to the real filesystem under
// their name (a descriptor of that path is opened to request the write-back).
// bytes_per_sync = 0 wraps nothing.
class IncrementalSyncEnv final : public leveldb::EnvWrapper {
 public:
  IncrementalSyncEnv(leveldb::Env* base, std::size_t bytes_per_sync);

  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** result) override;

  // Write-backs requested so far, and how many of those requests the kernel refused (each
  // refusal only means that range waits for the final sync).
  std::size_t write_back_requests() const { return requests_.load(std::memory_order_relaxed); }
  std::size_t write_back_failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  friend class IncrementalSyncFile;
  const std::size_t every_;
  std::atomic<std::size_t> requests_{0};
  std::atomic<std::size_t> failures_{0};
};

}  // namespace kairos::store
