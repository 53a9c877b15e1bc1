// A block header's time (google.protobuf.Timestamp) as the Unix nanoseconds the state machine
// uses (block times, unordered-tx timeouts, PreBlock's purge). Integer arithmetic only: nothing
// in FinalizeBlock may depend on floating point. Thread-safe (a pure function).
#pragma once

#include <google/protobuf/timestamp.pb.h>

#include <cstdint>
#include <limits>

namespace kairos::app {

// seconds * 1e9 + nanos, exact whenever it fits an int64 (every header time from 1677-09-21 to
// 2262-04-11: CometBFT's are), else saturated to INT64_MIN or INT64_MAX, which keeps the order.
// `nanos` may be outside [0, 1e9) (CometBFT never sends that; a hostile frame may).
inline std::int64_t UnixNanosOf(const google::protobuf::Timestamp& t) {
  constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::int64_t seconds = t.seconds();
  std::int64_t nanos = t.nanos();
  // Whole seconds out of nanos (|nanos| < 2.2 s), then the two parts of one sign: a borrow of
  // one second, so that a product just past the range with nanos bringing it back in (for
  // example INT64_MIN = -9223372037 s + 145224192 ns) is computed exactly.
  const bool seconds_overflow = __builtin_add_overflow(seconds, nanos / kNanosPerSecond, &seconds);
  nanos %= kNanosPerSecond;
  if (seconds_overflow) return t.seconds() < 0 ? kMin : kMax;
  if (seconds < 0 && nanos > 0) {
    seconds += 1;
    nanos -= kNanosPerSecond;
  } else if (seconds > 0 && nanos < 0) {
    seconds -= 1;
    nanos += kNanosPerSecond;
  }
  // Now seconds and nanos do not differ in sign: an overflow can only be on seconds' side.
  std::int64_t total = 0;
  if (__builtin_mul_overflow(seconds, kNanosPerSecond, &total) ||
      __builtin_add_overflow(total, nanos, &total)) {
    return (seconds < 0 || (seconds == 0 && nanos < 0)) ? kMin : kMax;
  }
  return total;
}

}  // namespace kairos::app
