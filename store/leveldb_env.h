// A LevelDB Env that writes table files back to disk as they grow, not all at their final
// sync.
//
// LevelDB writes a compaction's or a memtable flush's table (*.ldb, up to hundreds of MB)
// without syncing, then calls fdatasync once at its end. All of it is still dirty then, and on
// ext4 the commit's own fdatasync of the write-ahead log waits behind that flush: at 1M keys a
// commit's log sync took 77 ms instead of ~4 while a table's final sync took 141 ms
// (docs/benchmarks.md, session 10). This Env asks the kernel to start writing each
// `bytes_per_sync` of a table back as soon as it is appended (sync_file_range with
// SYNC_FILE_RANGE_WRITE, which does not wait; RocksDB's `bytes_per_sync` does the same), so the
// final fdatasync finds little left. Durability is unchanged: LevelDB's own Sync still syncs
// the whole file before the table is used.
#pragma once

#include <cstddef>
#include <memory>

#include <leveldb/env.h>

namespace kairos::store {

// An Env over `base` (which must outlive it). Every call goes to `base`; table files opened for
// writing are wrapped as above. bytes_per_sync = 0 wraps nothing.
std::unique_ptr<leveldb::Env> NewIncrementalSyncEnv(leveldb::Env* base, std::size_t bytes_per_sync);

}  // namespace kairos::store
