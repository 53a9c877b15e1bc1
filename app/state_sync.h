// State sync (ABCI ListSnapshots, LoadSnapshotChunk, OfferSnapshot, ApplySnapshotChunk):
// snapshots of the committed store taken in the background every `interval` heights and kept
// as files, and the restore of an empty node from one, each chunk verified on arrival against
// the app hash CometBFT's light client trusts (store/snapshot.h has the format and the proof).
//
// On disk (`dir`, config state_sync.snapshot_dir): one directory per snapshot, named by its
// height, holding `manifest` (the ABCI metadata: store::SnapshotManifest) and one file per
// chunk (`chunk-000000`, ...). A snapshot is written into `<height>.tmp` and renamed once
// every file is synced, so a crash leaves no half snapshot listed (a leftover `.tmp` is
// deleted at start).
//
// Thread-safety: SnapshotFiles is thread-safe (ListSnapshots and LoadSnapshotChunk run on a
// query thread, the writer on its own). StateSync's AfterCommit, Offer, Apply and the restore
// state are the executor's; List and LoadChunk may run on any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/block_gate.h"
#include "tendermint/abci/types.pb.h"
#include "store/merkle_store.h"
#include "store/snapshot.h"
#include "store/status.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

struct StateSyncOptions {
  std::string dir;  // where snapshots are kept ("": none taken, none served)
  std::int64_t snapshot_interval = 0;  // heights; 0: no snapshot is taken
  std::size_t keep_recent = 2;        // snapshots kept (the oldest are deleted)
  std::size_t chunk_bytes = 10u << 20;
  // Test only (config state_sync.corrupt_chunks_unsafe): serve every chunk with one byte
  // flipped, to show that a restoring peer rejects this node and goes on from honest ones.
  bool corrupt_chunks = false;
};

// The snapshots on disk.
class SnapshotFiles {
 public:
  struct Listed {
    std::uint64_t height = 0;
    std::uint32_t chunks = 0;
    std::string hash;      // sha256 of the manifest
    std::string metadata;  // the encoded manifest
  };

  explicit SnapshotFiles(std::string dir) : dir_(std::move(dir)) {}
  // Creates the directory, deletes unfinished (.tmp) snapshots, and reads what is there (a
  // snapshot whose manifest is unreadable is skipped, with a warning).
  Status Init();
  // Newest first.
  std::vector<Listed> List() const;
  // A chunk's bytes; NotFound naming what is missing.
  Result<std::string> LoadChunk(std::uint64_t height, std::uint32_t format,
                                std::uint32_t index) const;
  // Writes a snapshot of `view` (a view of the latest version, made right after its commit)
  // and lists it. InvalidArgument when one of that height exists; IOError when `cancel` (may be
  // null) is set before the last chunk. With a `gate`, the write waits between its units of
  // work while the node works on a block (GateWaiter, kSnapshotMaxWaitShare).
  Result<Listed> Write(const store::StoreView& view, std::size_t chunk_bytes,
                       const std::atomic<bool>* cancel = nullptr,
                       const BlockGate* gate = nullptr);
  // Adds a snapshot from elsewhere (`kairosd snapshots load`): its manifest and each chunk in
  // order from `chunk` (REQUIRES: already checked by the caller). InvalidArgument when one of
  // that height exists.
  using ChunkSource = std::function<Result<std::string>(std::uint32_t index)>;
  Result<Listed> Import(const std::string& metadata, const ChunkSource& chunk);
  // Deletes the snapshot of `height`; NotFound when there is none.
  Status Delete(std::uint64_t height);
  // Deletes all but the `keep` newest.
  Status Prune(std::size_t keep);
  const std::string& dir() const { return dir_; }

 private:
  Status ReadListing();
  // Writes a snapshot of `height` into its .tmp directory (`write_chunks` writes the chunks
  // there and returns the manifest), then syncs, renames and lists it.
  Result<Listed> WriteDirectory(std::uint64_t height,
                                const std::function<Result<std::string>(
                                    const std::filesystem::path& dir)>& write_chunks);

  const std::string dir_;
  mutable std::mutex mu_;
  std::vector<Listed> listed_;  // newest first
};

// The largest share of its time a snapshot write spends waiting for blocks (BlockGate): on a
// node whose blocks run back to back it still writes a fifth of the time, beside them.
inline constexpr double kSnapshotMaxWaitShare = 0.8;

// Moves the calling thread to nice +19, where kairosd writes snapshots beside blocks.
void LowerToLowestPriority();

// Checks every chunk of a snapshot, in order, against its manifest: its bytes' hash, then its
// proof against the manifest's root (store::VerifyChunk); hands each verified chunk to `visit`
// (may be empty), which may keep it (its `last` path is moved out first: the next chunk's check
// needs it). The first failure is returned, naming the chunk.
using VerifiedChunkVisitor = std::function<Status(std::unique_ptr<store::VerifiedChunk>)>;
Status VerifySnapshotChunks(const store::SnapshotManifest& manifest,
                            const SnapshotFiles::ChunkSource& chunk,
                            const VerifiedChunkVisitor& visit = {});

// Writes verified chunks' leaves into a store being restored (MerkleStore::RestoreLeaves) on a
// thread of its own, so that the next chunk is checked while this one's values go to LevelDB.
// At most one chunk waits besides the one being written, so with the one the caller checks,
// three chunks are in memory at most (one before). The restore's other calls (BeginRestore
// before the first Push, FinishRestore or AbortRestore after Finish or the destructor) stay the
// caller's; the handover orders them with the writes. An exception from the store (e.g. out of
// memory) is a failed write, not the end of the process.
class RestoreWriter {
 public:
  explicit RestoreWriter(store::MerkleStore* store);
  // Waits for the chunk being written; drops one still waiting; logs a write error nobody
  // asked for (the restore was abandoned for another reason).
  ~RestoreWriter();
  RestoreWriter(const RestoreWriter&) = delete;
  RestoreWriter& operator=(const RestoreWriter&) = delete;

  // Hands `chunk` over (the next in key-hash order), waiting while one is waiting already.
  // Once a write failed, returns that error and drops `chunk`.
  Status Push(std::unique_ptr<store::VerifiedChunk> chunk);
  // Waits until every chunk handed over is written: the first write error, if any.
  Status Finish();

 private:
  void Loop();

  store::MerkleStore* const store_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<store::VerifiedChunk> waiting_;  // guarded by mu_
  bool busy_ = false;                              // a chunk is being written
  bool stopping_ = false;
  Status failed_;  // the first write error
  bool failure_reported_ = false;  // Push or Finish returned failed_
  std::thread thread_;
};

// Restores a snapshot into `store` (empty) from its verified chunks (`kairosd snapshots
// restore`); on failure the store is wiped back to empty.
Status RestoreSnapshot(store::MerkleStore* store, const store::SnapshotManifest& manifest,
                       const SnapshotFiles::ChunkSource& chunk);

class StateSync {
 public:
  // `store`: the app's (REQUIRES: outlives this). Snapshots are taken and served only with a
  // `dir`.
  StateSync(store::MerkleStore* store, StateSyncOptions options);
  ~StateSync();  // waits for a snapshot being written
  Status Init();

  // After each Commit (executor): at every snapshot_interval-th height, hands a view of the
  // version to the writer thread, unless it is still writing the last one (then this height
  // is skipped, with a warning).
  void AfterCommit();
  // Blocks until no snapshot is being written (tests, the CLI).
  void WaitIdle();
  // Closed by the executor while it works on a block: the snapshot writer waits meanwhile.
  BlockGate& block_gate() { return gate_; }

  pb::ResponseListSnapshots List() const;
  pb::ResponseLoadSnapshotChunk LoadChunk(const pb::RequestLoadSnapshotChunk& req) const;
  // Restore (executor). Offer accepts a snapshot of the known format whose manifest matches
  // the offer and whose root is the trusted app hash, into an empty store; Apply verifies each
  // chunk on arrival (store::VerifyChunk) before anything of it is written. `restored` is set
  // when the last chunk made the store whole: the caller reloads what it keeps from the state.
  pb::ResponseOfferSnapshot Offer(const pb::RequestOfferSnapshot& req);
  pb::ResponseApplySnapshotChunk Apply(const pb::RequestApplySnapshotChunk& req, bool* restored);

  SnapshotFiles* files() { return files_ ? files_.get() : nullptr; }

 private:
  void WriterLoop();
  // Drops a restore in progress (its records are wiped); false when the wipe failed.
  bool AbortRestore(const char* why);

  store::MerkleStore* store_;
  const StateSyncOptions options_;
  std::unique_ptr<SnapshotFiles> files_;

  // The writer thread and its one pending job.
  std::mutex writer_mu_;
  std::condition_variable writer_cv_;
  std::shared_ptr<const store::StoreView> job_;
  bool writing_ = false;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};
  BlockGate gate_;
  std::thread writer_;

  // The restore in progress.
  struct Restore {
    store::SnapshotManifest manifest;
    std::uint32_t count = 0;  // chunks
    // The offered state is already the store's (restored, but CometBFT had not recorded it
    // when the process stopped): chunks are accepted, nothing is written.
    bool already_restored = false;
    std::uint32_t next = 0;  // the chunk expected next
    std::optional<store::LeafPath> previous_last;
    // Writes the verified chunks while the next ones arrive (none when already_restored).
    std::unique_ptr<RestoreWriter> writer;
  };
  std::optional<Restore> restore_;
};

}  // namespace kairos::app
