// app/header_time.h: header times to Unix nanoseconds in integer arithmetic, exact up to the
// int64 range and saturated beyond it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "app/header_time.h"

namespace {

std::int64_t Nanos(std::int64_t seconds, std::int32_t nanos) {
  google::protobuf::Timestamp t;
  t.set_seconds(seconds);
  t.set_nanos(nanos);
  return kairos::app::UnixNanosOf(t);
}

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int32_t kMaxNanos = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kMinNanos = std::numeric_limits<std::int32_t>::min();

}  // namespace

TEST_CASE("header times are exact Unix nanoseconds within the int64 range", "[header_time]") {
  CHECK(Nanos(0, 0) == 0);
  CHECK(Nanos(1767225600, 123456789) == 1767225600123456789);
  CHECK(Nanos(-1, 0) == -1'000'000'000);
  CHECK(Nanos(-1, 1) == -999'999'999);  // 1969-12-31T23:59:59.000000001Z
  // nanos outside [0, 1e9) (never from CometBFT) still add exactly.
  CHECK(Nanos(1, -1) == 999'999'999);
  CHECK(Nanos(0, -1) == -1);
  CHECK(Nanos(2, kMinNanos) == 2'000'000'000LL + kMinNanos);
  CHECK(Nanos(-2, kMaxNanos) == -2'000'000'000LL + kMaxNanos);
  // Near the ends, where a long double's rounding once saturated valid times.
  CHECK(Nanos(9200000001, 0) == 9'200'000'001'000'000'000);
  CHECK(Nanos(-9200000001, 5) == -9'200'000'000'999'999'995);
  // The last representable instants, both ends: 2262-04-11T23:47:16.854775807Z and
  // 1677-09-21T00:12:43.145224192Z.
  CHECK(Nanos(9223372036, 854775807) == kMax);
  CHECK(Nanos(-9223372037, 145224192) == kMin);
  // seconds * 1e9 alone is out of range, but the nanos bring it back.
  CHECK(Nanos(9223372037, kMinNanos) == 9'223'372'034'852'516'352);
}

TEST_CASE("header times beyond the int64 range saturate, keeping their order", "[header_time]") {
  CHECK(Nanos(9223372036, 854775808) == kMax);
  CHECK(Nanos(9223372037, 0) == kMax);
  CHECK(Nanos(-9223372037, 145224191) == kMin);
  CHECK(Nanos(-9223372038, 0) == kMin);
  CHECK(Nanos(kMax, 0) == kMax);
  CHECK(Nanos(kMax, kMaxNanos) == kMax);
  CHECK(Nanos(kMax, kMinNanos) == kMax);
  CHECK(Nanos(kMin, 0) == kMin);
  CHECK(Nanos(kMin, kMinNanos) == kMin);
  CHECK(Nanos(kMin, kMaxNanos) == kMin);
}
