#include "app/state_sync.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/chain_meta.h"
#include "app/hex.h"
#include "app/logging.h"
#include "store/sha256.h"
#include "store/snapshot_writer.h"

namespace kairos::app {

namespace fs = std::filesystem;

namespace {


std::string ChunkFileName(std::uint32_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "chunk-%06u", index);
  return name;
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path.string());
  return out.str();
}

// Writes `bytes` to `path` and syncs it.
Status WriteFileSynced(const fs::path& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create " + path.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Status::IOError("cannot write " + path.string() + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Status::IOError("cannot sync " + path.string() + ": " + why);
  }
  if (::close(fd) != 0) return Status::IOError("cannot close " + path.string());
  return Status::OK();
}

Status SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + dir.string() + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::IOError("cannot sync " + dir.string());
  return Status::OK();
}

std::optional<std::uint64_t> HeightOf(const std::string& name) {
  std::uint64_t h = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), h);
  if (ec != std::errc() || end != name.data() + name.size() || h == 0) return std::nullopt;
  return h;
}

}  // namespace

// --- SnapshotFiles ------------------------------------------------------------------------

Status SnapshotFiles::Init() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IOError("cannot create " + dir_ + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() == ".tmp") {
      Log()->info("deleting an unfinished snapshot: {}", entry.path().string());
      fs::remove_all(entry.path(), ec);
    }
  }
  if (ec) return Status::IOError("cannot read " + dir_ + ": " + ec.message());
  return ReadListing();
}

Status SnapshotFiles::ReadListing() {
  std::vector<Listed> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::optional<std::uint64_t> height = HeightOf(entry.path().filename().string());
    if (!height || !entry.is_directory()) continue;
    Result<std::string> metadata = ReadFile(entry.path() / "manifest");
    store::SnapshotManifest manifest;
    Status s = metadata.ok() ? store::SnapshotManifest::Decode(*metadata, &manifest)
                             : metadata.status();
    if (s.ok() && static_cast<std::uint64_t>(manifest.version) != *height) {
      s = Status::Corruption("its manifest names height " + std::to_string(manifest.version));
    }
    if (!s.ok()) {
      Log()->warn("ignoring the snapshot in {}: {}", entry.path().string(), s.ToString());
      continue;
    }
    Listed l;
    l.height = *height;
    l.chunks = static_cast<std::uint32_t>(manifest.chunk_hashes.size());
    l.hash = store::ToBytes(store::Sha256Of(*metadata));
    l.metadata = std::move(*metadata);
    found.push_back(std::move(l));
  }
  if (ec) return Status::IOError("cannot read " + dir_ + ": " + ec.message());
  std::sort(found.begin(), found.end(),
            [](const Listed& a, const Listed& b) { return a.height > b.height; });
  std::lock_guard lock(mu_);
  listed_ = std::move(found);
  return Status::OK();
}

std::vector<SnapshotFiles::Listed> SnapshotFiles::List() const {
  std::lock_guard lock(mu_);
  return listed_;
}

Result<std::string> SnapshotFiles::LoadChunk(std::uint64_t height, std::uint32_t format,
                                             std::uint32_t index) const {
  if (format != store::kSnapshotFormat) {
    return Status::NotFound("no snapshot of format " + std::to_string(format));
  }
  {
    std::lock_guard lock(mu_);
    const auto it = std::find_if(listed_.begin(), listed_.end(),
                                 [&](const Listed& l) { return l.height == height; });
    if (it == listed_.end()) {
      return Status::NotFound("no snapshot at height " + std::to_string(height));
    }
    if (index >= it->chunks) {
      return Status::NotFound("the snapshot at height " + std::to_string(height) + " has " +
                              std::to_string(it->chunks) + " chunks, not " +
                              std::to_string(index + 1));
    }
  }
  return ReadFile(fs::path(dir_) / std::to_string(height) / ChunkFileName(index));
}

Result<SnapshotFiles::Listed> SnapshotFiles::WriteDirectory(
    std::uint64_t height,
    const std::function<Result<std::string>(const fs::path& dir)>& write_chunks) {
  const std::string name = std::to_string(height);
  const fs::path final_dir = fs::path(dir_) / name;
  const fs::path tmp_dir = fs::path(dir_) / (name + ".tmp");
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    return Status::InvalidArgument("a snapshot at height " + name + " exists already");
  }
  fs::remove_all(tmp_dir, ec);
  fs::create_directories(tmp_dir, ec);
  if (ec) return Status::IOError("cannot create " + tmp_dir.string() + ": " + ec.message());
  Result<std::string> metadata = write_chunks(tmp_dir);
  Status s = metadata.ok() ? WriteFileSynced(tmp_dir / "manifest", *metadata)
                           : metadata.status();
  if (s.ok()) s = SyncDirectory(tmp_dir);
  if (s.ok()) {
    fs::rename(tmp_dir, final_dir, ec);
    if (ec) s = Status::IOError("cannot rename " + tmp_dir.string() + ": " + ec.message());
  }
  if (s.ok()) s = SyncDirectory(dir_);
  if (!s.ok()) {
    fs::remove_all(tmp_dir, ec);
    return s;
  }
  store::SnapshotManifest manifest;
  if (Status d = store::SnapshotManifest::Decode(*metadata, &manifest); !d.ok()) return d;
  Listed l;
  l.height = height;
  l.chunks = static_cast<std::uint32_t>(manifest.chunk_hashes.size());
  l.hash = store::ToBytes(store::Sha256Of(*metadata));
  l.metadata = std::move(*metadata);
  std::lock_guard lock(mu_);
  listed_.insert(std::find_if(listed_.begin(), listed_.end(),
                              [&](const Listed& o) { return o.height < l.height; }),
                 l);
  return l;
}

Result<SnapshotFiles::Listed> SnapshotFiles::Write(const store::StoreView& view,
                                                   std::size_t chunk_bytes,
                                                   const std::atomic<bool>* cancel,
                                                   const BlockGate* gate) {
  return WriteDirectory(
      static_cast<std::uint64_t>(view.version()),
      [&](const fs::path& dir) -> Result<std::string> {
        store::SnapshotManifest manifest;
        GateWaiter waiter(gate, kSnapshotMaxWaitShare);
        const Status s = store::WriteSnapshot(
            view, chunk_bytes,
            [&](std::uint32_t index, std::string_view chunk) {
              return WriteFileSynced(dir / ChunkFileName(index), chunk);
            },
            &manifest, [&]() -> Status {
              waiter.Wait(cancel);
              if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
                return Status::IOError("cancelled: the node is stopping");
              }
              return Status::OK();
            });
        if (!s.ok()) return s;
        return manifest.Encode();
      });
}

Result<SnapshotFiles::Listed> SnapshotFiles::Import(const std::string& metadata,
                                                    const ChunkSource& chunk) {
  store::SnapshotManifest manifest;
  if (Status s = store::SnapshotManifest::Decode(metadata, &manifest); !s.ok()) return s;
  return WriteDirectory(
      static_cast<std::uint64_t>(manifest.version),
      [&](const fs::path& dir) -> Result<std::string> {
        for (std::uint32_t i = 0; i < manifest.chunk_hashes.size(); ++i) {
          Result<std::string> bytes = chunk(i);
          if (!bytes.ok()) return bytes.status();
          if (Status s = WriteFileSynced(dir / ChunkFileName(i), *bytes); !s.ok()) return s;
        }
        return metadata;
      });
}

Status SnapshotFiles::Delete(std::uint64_t height) {
  {
    std::lock_guard lock(mu_);
    const auto it = std::find_if(listed_.begin(), listed_.end(),
                                 [&](const Listed& l) { return l.height == height; });
    if (it == listed_.end()) {
      return Status::NotFound("no snapshot at height " + std::to_string(height));
    }
    listed_.erase(it);  // unlisted first: nobody is served a chunk being deleted
  }
  std::error_code ec;
  fs::remove_all(fs::path(dir_) / std::to_string(height), ec);
  if (ec) return Status::IOError("cannot delete the snapshot at height " +
                                 std::to_string(height) + ": " + ec.message());
  return Status::OK();
}

Status SnapshotFiles::Prune(std::size_t keep) {
  for (const Listed& l : List()) {
    if (keep > 0) {
      --keep;
      continue;
    }
    if (Status s = Delete(l.height); !s.ok()) return s;
  }
  return Status::OK();
}

Status VerifySnapshotChunks(const store::SnapshotManifest& manifest,
                            const SnapshotFiles::ChunkSource& chunk,
                            const VerifiedChunkVisitor& visit) {
  const auto count = static_cast<std::uint32_t>(manifest.chunk_hashes.size());
  std::optional<store::LeafPath> previous;
  for (std::uint32_t i = 0; i < count; ++i) {
    Result<std::string> bytes = chunk(i);
    if (!bytes.ok()) return bytes.status();
    if (store::Sha256Of(*bytes) != manifest.chunk_hashes[i]) {
      return Status::InvalidArgument("snapshot chunk " + std::to_string(i) +
                                     ": its bytes are not the ones its manifest lists");
    }
    auto verified = std::make_unique<store::VerifiedChunk>();
    if (Status s = store::VerifyChunk(*bytes, manifest.root, manifest.version, i, count,
                                      previous ? &*previous : nullptr, verified.get());
        !s.ok()) {
      return s;
    }
    previous = std::move(verified->last);
    if (visit) {
      if (Status s = visit(std::move(verified)); !s.ok()) return s;
    }
  }
  return Status::OK();
}

// --- RestoreWriter ------------------------------------------------------------------------

RestoreWriter::RestoreWriter(store::MerkleStore* store)
    : store_(store), thread_([this] { Loop(); }) {}

RestoreWriter::~RestoreWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (!failed_.ok() && !failure_reported_) {
    Log()->error("state sync: writing the restored values failed: {}", failed_.ToString());
  }
}

Status RestoreWriter::Push(std::unique_ptr<store::VerifiedChunk> chunk) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return waiting_ == nullptr || !failed_.ok(); });
  if (!failed_.ok()) {
    failure_reported_ = true;
    return failed_;
  }
  waiting_ = std::move(chunk);
  cv_.notify_all();
  return Status::OK();
}

Status RestoreWriter::Finish() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return waiting_ == nullptr && !busy_; });
  if (!failed_.ok()) failure_reported_ = true;
  return failed_;
}

void RestoreWriter::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || waiting_ != nullptr; });
    if (stopping_) {
      waiting_.reset();  // dropped: the restore is being abandoned
      cv_.notify_all();
      return;
    }
    std::unique_ptr<store::VerifiedChunk> chunk = std::move(waiting_);
    const bool write = failed_.ok();  // after a failure, chunks are dropped
    busy_ = true;
    cv_.notify_all();  // room for the next chunk
    lock.unlock();
    Status s;
    try {
      if (write) s = store_->RestoreLeaves(chunk->leaves);
    } catch (const std::exception& e) {
      s = Status::IOError(std::string("writing restored values: ") + e.what());
    }
    chunk.reset();  // freed outside the lock
    lock.lock();
    if (!s.ok() && failed_.ok()) failed_ = std::move(s);
    busy_ = false;
    cv_.notify_all();
  }
}

Status RestoreSnapshot(store::MerkleStore* store, const store::SnapshotManifest& manifest,
                       const SnapshotFiles::ChunkSource& chunk) {
  // The writer's thread first: nothing is begun if it cannot start.
  auto writer = std::make_unique<RestoreWriter>(store);
  if (Status s = store->BeginRestore(manifest.version, manifest.root, manifest.commit_info);
      !s.ok()) {
    return s;
  }
  Status s = VerifySnapshotChunks(manifest, chunk, [&](std::unique_ptr<store::VerifiedChunk> c) {
    return writer->Push(std::move(c));
  });
  if (Status written = writer->Finish(); s.ok()) s = std::move(written);
  writer.reset();
  if (s.ok()) s = store->FinishRestore();
  if (!s.ok()) {
    if (Status wiped = store->AbortRestore(); !wiped.ok()) {
      return Status::IOError(s.ToString() + "; wiping the restore: " + wiped.ToString());
    }
  }
  return s;
}

// --- StateSync ----------------------------------------------------------------------------

StateSync::StateSync(store::MerkleStore* store, StateSyncOptions options)
    : store_(store), options_(std::move(options)) {
  if (!options_.dir.empty()) files_ = std::make_unique<SnapshotFiles>(options_.dir);
}

StateSync::~StateSync() {
  cancel_ = true;  // a snapshot being written stops at its next leaf
  {
    std::lock_guard lock(writer_mu_);
    stopping_ = true;
  }
  writer_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

Status StateSync::Init() {
  if (!files_) return Status::OK();
  if (Status s = files_->Init(); !s.ok()) return s;
  if (options_.snapshot_interval > 0) writer_ = std::thread([this] { WriterLoop(); });
  return Status::OK();
}

void StateSync::AfterCommit() {
  const std::int64_t height = store_->version();
  if (!files_ || options_.snapshot_interval <= 0 || height % options_.snapshot_interval != 0) {
    return;
  }
  Result<std::shared_ptr<const store::StoreView>> view = store_->View(height);
  if (!view.ok()) {
    Log()->warn("no snapshot at height {}: {}", height, view.status().ToString());
    return;
  }
  {
    std::lock_guard lock(writer_mu_);
    if (writing_ || job_) {
      Log()->warn("no snapshot at height {}: the last one is still being written", height);
      return;
    }
    job_ = std::move(*view);
  }
  writer_cv_.notify_all();
}

void StateSync::WaitIdle() {
  std::unique_lock lock(writer_mu_);
  writer_cv_.wait(lock, [this] { return (!writing_ && !job_) || stopping_; });
}

void LowerToLowestPriority() {
  // A snapshot being written must not take the CPU from blocks: nice +19, the lowest weight
  // that still runs. Not SCHED_IDLE, though it slowed blocks less in snapshot_bench: the walk
  // holds the store's view lock for a batch at a time, and a SCHED_IDLE thread preempted there
  // on a saturated node could hold up a Commit for as long as the CPU stays busy.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
}

void StateSync::WriterLoop() {
  LowerToLowestPriority();
  std::unique_lock lock(writer_mu_);
  while (true) {
    writer_cv_.wait(lock, [this] { return job_ != nullptr || stopping_; });
    if (stopping_) return;
    std::shared_ptr<const store::StoreView> view = std::move(job_);
    job_.reset();
    writing_ = true;
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    Result<SnapshotFiles::Listed> written =
        files_->Write(*view, options_.chunk_bytes, &cancel_, &gate_);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    view.reset();  // unpins the version
    if (written.ok()) {
      Log()->info("snapshot at height {}: {} chunks in {:.2f} s, hash {}", written->height,
                  written->chunks, seconds, HexEncode(written->hash, true));
      if (Status s = files_->Prune(options_.keep_recent); !s.ok()) {
        Log()->warn("pruning snapshots: {}", s.ToString());
      }
    } else {
      Log()->error("snapshot failed: {}", written.status().ToString());
    }
    lock.lock();
    writing_ = false;
    writer_cv_.notify_all();
  }
}

pb::ResponseListSnapshots StateSync::List() const {
  pb::ResponseListSnapshots res;
  if (!files_) return res;
  for (const SnapshotFiles::Listed& l : files_->List()) {
    pb::Snapshot* s = res.add_snapshots();
    s->set_height(l.height);
    s->set_format(store::kSnapshotFormat);
    s->set_chunks(l.chunks);
    s->set_hash(l.hash);
    s->set_metadata(l.metadata);
  }
  return res;
}

pb::ResponseLoadSnapshotChunk StateSync::LoadChunk(
    const pb::RequestLoadSnapshotChunk& req) const {
  pb::ResponseLoadSnapshotChunk res;
  if (!files_) return res;
  Result<std::string> chunk = files_->LoadChunk(req.height(), req.format(), req.chunk());
  if (!chunk.ok()) {
    // An empty chunk: CometBFT takes it as "this peer does not have it". (Debug only: any
    // peer may ask for snapshots this node pruned, as often as it likes.)
    Log()->debug("LoadSnapshotChunk: {}", chunk.status().ToString());
    return res;
  }
  if (options_.corrupt_chunks && !chunk->empty()) (*chunk)[chunk->size() / 2] ^= 0x01;
  res.set_chunk(std::move(*chunk));
  return res;
}

bool StateSync::AbortRestore(const char* why) {
  if (!restore_) return true;
  Log()->warn("state sync: abandoning the snapshot at height {}: {}", restore_->manifest.version,
              why);
  const bool written = !restore_->already_restored;
  restore_.reset();  // its writer finishes the chunk it is writing first
  if (!written) return true;
  if (Status s = store_->AbortRestore(); !s.ok()) {
    Log()->error("state sync: wiping the abandoned restore: {}", s.ToString());
    return false;
  }
  return true;
}

pb::ResponseOfferSnapshot StateSync::Offer(const pb::RequestOfferSnapshot& req) {
  pb::ResponseOfferSnapshot res;
  using R = pb::ResponseOfferSnapshot;
  const pb::Snapshot& offered = req.snapshot();
  if (!AbortRestore("another snapshot is offered")) {
    res.set_result(R::ABORT);  // what it wrote is still there: nothing can go on top
    return res;
  }
  if (store_->version() != 0 && static_cast<std::uint64_t>(store_->version()) == offered.height() &&
      store::ToBytes(store_->root_hash()) == req.app_hash()) {
    // This very state was restored, but the process stopped before CometBFT recorded it:
    // accept the snapshot again and every chunk without writing anything.
    Log()->info("state sync: height {} is restored already (app hash {}): accepting its chunks "
                "again without writing them", store_->version(), HexEncode(req.app_hash(), true));
    restore_.emplace();
    restore_->already_restored = true;
    restore_->manifest.version = store_->version();
    restore_->count = offered.chunks();
    res.set_result(R::ACCEPT);
    return res;
  }
  if (store_->version() != 0) {
    Log()->error("state sync: offered a snapshot, but this node has state at height {}",
                 store_->version());
    res.set_result(R::ABORT);
    return res;
  }
  if (offered.format() != store::kSnapshotFormat) {
    Log()->info("state sync: refusing a snapshot of format {} (this build reads format {})",
                offered.format(), store::kSnapshotFormat);
    res.set_result(R::REJECT_FORMAT);
    return res;
  }
  store::SnapshotManifest manifest;
  Status s = store::SnapshotManifest::Decode(offered.metadata(), &manifest);
  if (s.ok() && static_cast<std::uint64_t>(manifest.version) != offered.height()) {
    s = Status::InvalidArgument("its manifest names height " + std::to_string(manifest.version));
  }
  if (s.ok() && manifest.chunk_hashes.size() != offered.chunks()) {
    s = Status::InvalidArgument("its manifest lists " +
                                std::to_string(manifest.chunk_hashes.size()) + " chunks, not " +
                                std::to_string(offered.chunks()));
  }
  if (s.ok() && store::ToBytes(store::Sha256Of(offered.metadata())) != offered.hash()) {
    s = Status::InvalidArgument("its hash is not the hash of its manifest");
  }
  if (s.ok() && manifest.commit_info.size() != 8) {
    // The app's commit info is the last block time, 8 bytes; it is outside the tree, so the
    // app hash does not vouch for it: anything else would stop the node once restored.
    s = Status::InvalidArgument("its commit info is " + std::to_string(manifest.commit_info.size()) +
                                " bytes, not an 8-byte block time");
  }
  if (s.ok() && store::ToBytes(manifest.root) != req.app_hash()) {
    s = Status::InvalidArgument("its root " + HexEncode(store::ToBytes(manifest.root), true) +
                                " is not the trusted app hash " +
                                HexEncode(req.app_hash(), true));
  }
  if (!s.ok()) {
    Log()->warn("state sync: refusing the snapshot at height {}: {}", offered.height(),
                s.message());
    res.set_result(R::REJECT);
    return res;
  }
  // Its thread first: nothing is begun if it cannot start (an exception to the dispatcher).
  auto writer = std::make_unique<RestoreWriter>(store_);
  if (Status b = store_->BeginRestore(manifest.version, manifest.root, manifest.commit_info);
      !b.ok()) {
    Log()->error("state sync: cannot begin a restore: {}", b.ToString());
    res.set_result(R::ABORT);
    return res;
  }
  Log()->info("state sync: restoring the snapshot at height {} ({} chunks, {} keys, app hash {})",
              manifest.version, manifest.chunk_hashes.size(), manifest.leaves,
              HexEncode(store::ToBytes(manifest.root), true));
  restore_.emplace();
  restore_->count = static_cast<std::uint32_t>(manifest.chunk_hashes.size());
  restore_->manifest = std::move(manifest);
  restore_->writer = std::move(writer);
  res.set_result(R::ACCEPT);
  return res;
}

pb::ResponseApplySnapshotChunk StateSync::Apply(const pb::RequestApplySnapshotChunk& req,
                                                bool* restored) {
  using R = pb::ResponseApplySnapshotChunk;
  pb::ResponseApplySnapshotChunk res;
  *restored = false;
  if (!restore_) {
    Log()->error("state sync: a chunk arrived with no snapshot accepted");
    res.set_result(R::ABORT);
    return res;
  }
  Restore& r = *restore_;
  const std::uint32_t count = r.count;
  if (r.already_restored) {
    if (req.index() + 1 == count) {
      restore_.reset();
      *restored = true;
    }
    res.set_result(R::ACCEPT);
    return res;
  }
  if (req.index() < r.next) {  // applied already (a refetch): nothing to do
    res.set_result(R::ACCEPT);
    return res;
  }
  if (req.index() != r.next) {
    Log()->warn("state sync: chunk {} arrived before chunk {}", req.index(), r.next);
    res.set_result(R::RETRY);
    res.add_refetch_chunks(r.next);
    return res;
  }
  // A chunk that is not the manifest's is its sender's fault: fetch it from someone else.
  if (store::Sha256Of(req.chunk()) != r.manifest.chunk_hashes[req.index()]) {
    Log()->warn("state sync: chunk {} of the snapshot at height {} from peer {} is not the one "
                "its manifest lists (bad sender): fetching it again from another peer",
                req.index(), r.manifest.version, Printable(req.sender()));
    res.set_result(R::RETRY);
    res.add_refetch_chunks(req.index());
    if (!req.sender().empty()) res.add_reject_senders(req.sender());
    return res;
  }
  auto chunk = std::make_unique<store::VerifiedChunk>();
  Status s = store::VerifyChunk(req.chunk(), r.manifest.root, r.manifest.version, req.index(),
                                count, r.previous_last ? &*r.previous_last : nullptr,
                                chunk.get());
  if (!s.ok()) {
    // The manifest lists this very chunk, so the snapshot itself is bad.
    Log()->warn("state sync: the snapshot at height {} is bad: {}", r.manifest.version,
                s.message());
    AbortRestore("a chunk it lists does not verify");
    res.set_result(R::REJECT_SNAPSHOT);
    if (!req.sender().empty()) res.add_reject_senders(req.sender());
    return res;
  }
  // Its values are written while the next chunk arrives and is checked; a write error
  // comes back from the next Push or from Finish.
  const std::size_t keys = chunk->leaves.size();
  r.previous_last = chunk->last;
  if (s = r.writer->Push(std::move(chunk)); s.ok() && r.next + 1 == count) {
    s = r.writer->Finish();
  }
  if (!s.ok()) {
    Log()->error("state sync: writing the snapshot's values: {}", s.ToString());
    AbortRestore("the store refused its leaves");
    res.set_result(R::ABORT);
    return res;
  }
  ++r.next;
  Log()->info("state sync: chunk {} ({} of {}) verified and handed to the writer: {} keys",
              req.index(), req.index() + 1, count, keys);
  if (r.next == count) {
    r.writer.reset();
    if (s = store_->FinishRestore(); !s.ok()) {
      Log()->error("state sync: finishing the restore: {}", s.ToString());
      AbortRestore("the tree could not be finished");
      res.set_result(R::REJECT_SNAPSHOT);
      return res;
    }
    Log()->info("state sync: restored height {}, app hash {}", store_->version(),
                HexEncode(store::ToBytes(store_->root_hash()), true));
    restore_.reset();
    *restored = true;
  }
  res.set_result(R::ACCEPT);
  return res;
}

}  // namespace kairos::app
