// File helpers for the client's small state files (keyring, genesis.json): whole-file read, and
// an atomic replace (write a temp file beside it, fsync, rename, fsync the directory) so a crash
// leaves either the old or the new file. Thread-compatible; processes that may race on the same
// file hold a FileLock around the read-modify-write.
#pragma once

#include <sys/types.h>

#include <string>

#include "store/status.h"

namespace kairos::client {

// NotFound if the file does not exist; IOError for other failures (the message names the path).
Result<std::string> ReadWholeFile(const std::string& path);

// Replaces `path` with `content`; the new file gets `mode` (e.g. 0600) regardless of the umask.
Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode);

// An exclusive flock(2) on `path` (created 0600 if absent), released on destruction.
class FileLock {
 public:
  static Result<FileLock> Acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kairos::client
