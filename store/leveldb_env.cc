#include "store/leveldb_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>

namespace kairos::store {

class IncrementalSyncFile final : public leveldb::WritableFile {
 public:
  // `fd`: a read-only descriptor of the same file, for sync_file_range (-1: none, the file is
  // then only forwarded to).
  IncrementalSyncFile(leveldb::WritableFile* file, int fd, IncrementalSyncEnv* env)
      : file_(file), fd_(fd), env_(env) {}
  ~IncrementalSyncFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  leveldb::Status Append(const leveldb::Slice& data) override {
    leveldb::Status s = file_->Append(data);
    if (!s.ok()) return s;
    appended_ += data.size();
    const std::size_t every = env_->every_;
    if (fd_ < 0 || appended_ < 2 * every) return s;
    // Up to `every` behind the end, on a page bound: the tail stays in memory while LevelDB
    // fills it, and each range is requested once.
    constexpr std::size_t kPage = 4096;
    const std::size_t end = (appended_ - every) / kPage * kPage;
    if (end < started_ + every) return s;
    // LevelDB's buffer to the kernel, so the range is all there (its table builder flushes
    // every block anyway; this matters only for a writer that does not).
    s = file_->Flush();
    if (!s.ok()) return s;
    env_->requests_.fetch_add(1, std::memory_order_relaxed);
    if (::sync_file_range(fd_, static_cast<off_t>(started_),
                          static_cast<off_t>(end - started_), SYNC_FILE_RANGE_WRITE) != 0) {
      // Advisory: the final Sync still writes everything, so this is not an error of the write.
      env_->failures_.fetch_add(1, std::memory_order_relaxed);
    }
    started_ = end;
    return s;
  }
  leveldb::Status Close() override {
    leveldb::Status s = file_->Close();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return s;
  }
  leveldb::Status Flush() override { return file_->Flush(); }
  leveldb::Status Sync() override { return file_->Sync(); }

 private:
  std::unique_ptr<leveldb::WritableFile> file_;
  int fd_;
  IncrementalSyncEnv* env_;
  std::size_t appended_ = 0;
  std::size_t started_ = 0;  // write-back requested for [0, started_)
};

IncrementalSyncEnv::IncrementalSyncEnv(leveldb::Env* base, std::size_t bytes_per_sync)
    : EnvWrapper(base), every_(bytes_per_sync) {}

leveldb::Status IncrementalSyncEnv::NewWritableFile(const std::string& name,
                                                    leveldb::WritableFile** result) {
  leveldb::Status s = target()->NewWritableFile(name, result);
  if (!s.ok() || every_ == 0 || !std::string_view(name).ends_with(".ldb")) return s;
  // The file exists now (created by the call above). Without a descriptor the file is
  // written as LevelDB would, synced only at its end.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  *result = new IncrementalSyncFile(*result, fd, this);
  return s;
}

}  // namespace kairos::store
