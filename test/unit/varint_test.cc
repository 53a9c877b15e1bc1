// Unit tests for abci/varint: the ABCI frame length prefix.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "abci/varint.h"

using kairos::abci::AppendUvarint;
using kairos::abci::DecodeUvarint;
using kairos::abci::UvarintStatus;

namespace {
std::vector<std::uint8_t> Bytes(std::initializer_list<int> b) {
  std::vector<std::uint8_t> v;
  for (int x : b) v.push_back(static_cast<std::uint8_t>(x));
  return v;
}
std::vector<std::uint8_t> Encode(std::uint64_t v) {
  std::string s;
  AppendUvarint(v, &s);
  return {s.begin(), s.end()};
}
}  // namespace

TEST_CASE("uvarint encodes the protobuf way", "[varint]") {
  CHECK(Encode(0) == Bytes({0x00}));
  CHECK(Encode(127) == Bytes({0x7f}));
  CHECK(Encode(128) == Bytes({0x80, 0x01}));
  CHECK(Encode(300) == Bytes({0xac, 0x02}));
  CHECK(Encode(1ull << 31) == Bytes({0x80, 0x80, 0x80, 0x80, 0x08}));
  CHECK(Encode(UINT64_MAX) ==
        Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST_CASE("uvarint round-trips boundary values", "[varint]") {
  for (std::uint64_t v : std::initializer_list<std::uint64_t>{0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, (1ull << 31),
                          (1ull << 32) - 1, (1ull << 63), UINT64_MAX}) {
    const auto enc = Encode(v);
    const auto r = DecodeUvarint(enc);
    REQUIRE(r.status == UvarintStatus::kOk);
    CHECK(r.value == v);
    CHECK(r.length == enc.size());
  }
}

TEST_CASE("uvarint decodes only the prefix it needs", "[varint]") {
  const auto in = Bytes({0x80, 0x01, 0xff, 0xff});
  const auto r = DecodeUvarint(in);
  REQUIRE(r.status == UvarintStatus::kOk);
  CHECK(r.value == 128);
  CHECK(r.length == 2);
}

TEST_CASE("uvarint reports truncated input", "[varint]") {
  CHECK(DecodeUvarint({}).status == UvarintStatus::kTruncated);
  CHECK(DecodeUvarint(Bytes({0x80})).status == UvarintStatus::kTruncated);
  CHECK(DecodeUvarint(Bytes({0xff, 0xff, 0xff})).status == UvarintStatus::kTruncated);
}

TEST_CASE("uvarint rejects overlong encodings", "[varint]") {
  // 10th byte above 1 would overflow 64 bits.
  CHECK(DecodeUvarint(Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}))
            .status == UvarintStatus::kOverflow);
  // 11 bytes.
  CHECK(DecodeUvarint(Bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}))
            .status == UvarintStatus::kOverflow);
}
