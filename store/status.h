// Status and Result<T>: how store/ (and the modules above it) report failure without
// exceptions, in the style of leveldb::Status and absl::StatusOr.
// Value types; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace kairos {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kNotFound, kInvalidArgument, kCorruption, kIOError };

  Status() = default;  // OK
  static Status OK() { return {}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a non-OK Status. REQUIRES: never constructed from an OK status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

inline std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "not found: " + message_;
    case Code::kInvalidArgument: return "invalid argument: " + message_;
    case Code::kCorruption: return "corruption: " + message_;
    case Code::kIOError: return "I/O error: " + message_;
  }
  return message_;
}

}  // namespace kairos
