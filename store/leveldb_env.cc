#include "store/leveldb_env.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <string_view>

namespace kairos::store {
namespace {

class IncrementalSyncFile final : public leveldb::WritableFile {
 public:
  // `fd`: a read-only descriptor of the same file, for sync_file_range (-1: none, the file is
  // then only forwarded to).
  IncrementalSyncFile(leveldb::WritableFile* file, int fd, std::size_t every)
      : file_(file), fd_(fd), every_(every) {}
  ~IncrementalSyncFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  leveldb::Status Append(const leveldb::Slice& data) override {
    leveldb::Status s = file_->Append(data);
    if (!s.ok()) return s;
    appended_ += data.size();
    if (fd_ >= 0 && appended_ - started_ >= every_) {
      s = file_->Flush();  // LevelDB's buffer to the kernel, so the range is all there
      if (!s.ok()) return s;
      // Advisory: starts the write-back and returns. Should it fail, the final Sync still
      // writes everything, so its result is not an error of the write.
      (void)::sync_file_range(fd_, static_cast<off_t>(started_),
                              static_cast<off_t>(appended_ - started_), SYNC_FILE_RANGE_WRITE);
      started_ = appended_;
    }
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
  const std::size_t every_;
  std::size_t appended_ = 0;
  std::size_t started_ = 0;  // write-back requested for [0, started_)
};

class IncrementalSyncEnv final : public leveldb::EnvWrapper {
 public:
  IncrementalSyncEnv(leveldb::Env* base, std::size_t every) : EnvWrapper(base), every_(every) {}

  leveldb::Status NewWritableFile(const std::string& name,
                                  leveldb::WritableFile** result) override {
    leveldb::Status s = target()->NewWritableFile(name, result);
    if (!s.ok() || every_ == 0 || !std::string_view(name).ends_with(".ldb")) return s;
    // The file exists now (created by the call above). Without a descriptor the file is
    // written as LevelDB would, synced only at its end.
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    *result = new IncrementalSyncFile(*result, fd, every_);
    return s;
  }

 private:
  const std::size_t every_;
};

}  // namespace

std::unique_ptr<leveldb::Env> NewIncrementalSyncEnv(leveldb::Env* base,
                                                    std::size_t bytes_per_sync) {
  return std::make_unique<IncrementalSyncEnv>(base, bytes_per_sync);
}

}  // namespace kairos::store
