// Unit tests for abci/frame: incremental decoding of uvarint-length-prefixed ABCI frames.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "abci/frame.h"
#include "abci/varint.h"
#include "tendermint/abci/types.pb.h"

using kairos::abci::AppendFrame;
using kairos::abci::AppendUvarint;
using kairos::abci::FrameDecoder;
namespace pb = ::tendermint::abci;

namespace {

using Status = FrameDecoder::Status;

std::span<const std::uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void Feed(FrameDecoder& d, const std::string& s) { d.Feed(AsBytes(s)); }

// A length prefix followed by `body`.
std::string Framed(const std::string& body) {
  std::string out;
  AppendUvarint(body.size(), &out);
  return out + body;
}

template <class Msg>
std::string FrameOf(const Msg& msg) {
  std::string out;
  AppendFrame(msg, &out);
  return out;
}

// Takes every complete frame out of `d`; the last status is stored in `*last`.
std::vector<std::string> Drain(FrameDecoder& d, Status* last = nullptr) {
  std::vector<std::string> frames;
  std::span<const std::uint8_t> frame;
  Status s;
  while ((s = d.Next(&frame)) == Status::kFrame) frames.emplace_back(frame.begin(), frame.end());
  if (last != nullptr) *last = s;
  return frames;
}

pb::Request EchoRequest(const std::string& message) {
  pb::Request req;
  req.mutable_echo()->set_message(message);
  return req;
}

// A stream of `n` framed Echo requests whose messages are their index with growing padding.
std::string EchoStream(int n, std::vector<std::string>* bodies) {
  std::string stream;
  for (int i = 0; i < n; ++i) {
    const pb::Request req = EchoRequest(std::to_string(i) + std::string(i * 7 % 300, 'x'));
    bodies->push_back(req.SerializeAsString());
    stream += FrameOf(req);
  }
  return stream;
}

}  // namespace

TEST_CASE("frame test vectors match the CometBFT wire format", "[frame]") {
  pb::Request flush;
  flush.mutable_flush();
  CHECK(FrameOf(flush) == std::string("\x02\x12\x00", 3));

  pb::Response flush_res;
  flush_res.mutable_flush();
  CHECK(FrameOf(flush_res) == std::string("\x02\x1a\x00", 3));

  CHECK(FrameOf(EchoRequest("hi")) == std::string("\x06\x0a\x04\x0a\x02\x68\x69", 7));
}

TEST_CASE("frame test vectors decode to the requests they stand for", "[frame]") {
  FrameDecoder d(1024);
  Feed(d, std::string("\x02\x12\x00\x06\x0a\x04\x0a\x02\x68\x69", 10));
  Status last;
  const auto frames = Drain(d, &last);
  CHECK(last == Status::kNeedMore);
  REQUIRE(frames.size() == 2);
  pb::Request req;
  REQUIRE(req.ParseFromString(frames[0]));
  CHECK(req.value_case() == pb::Request::kFlush);
  REQUIRE(req.ParseFromString(frames[1]));
  REQUIRE(req.value_case() == pb::Request::kEcho);
  CHECK(req.echo().message() == "hi");
}

TEST_CASE("AppendFrame round-trips requests through the decoder", "[frame]") {
  pb::Request check;
  check.mutable_check_tx()->set_tx(std::string("\x00\xff tx", 5));
  check.mutable_check_tx()->set_type(pb::RECHECK);
  pb::Request finalize;
  finalize.mutable_finalize_block()->set_height(42);
  finalize.mutable_finalize_block()->add_txs(std::string(1000, 'a'));
  finalize.mutable_finalize_block()->add_txs("");
  pb::Request info;
  info.mutable_info()->set_version("0.38.25");
  const std::vector<pb::Request> requests = {check, finalize, info, EchoRequest("")};

  std::string stream;
  for (const auto& r : requests) AppendFrame(r, &stream);
  // AppendFrame appends: what was in `out` before is kept.
  std::string prefixed = "keep";
  AppendFrame(info, &prefixed);
  CHECK(prefixed == "keep" + FrameOf(info));

  FrameDecoder d(1 << 20);
  Feed(d, stream);
  const auto frames = Drain(d);
  REQUIRE(frames.size() == requests.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    pb::Request parsed;
    REQUIRE(parsed.ParseFromArray(frames[i].data(), static_cast<int>(frames[i].size())));
    CHECK(parsed.SerializeAsString() == requests[i].SerializeAsString());
    CHECK(parsed.value_case() == requests[i].value_case());
  }
  CHECK(d.buffered() == 0);
}

TEST_CASE("a frame fed one byte at a time is produced once, when complete", "[frame]") {
  const std::string body = EchoRequest(std::string(300, 'z')).SerializeAsString();
  const std::string stream = Framed(body);  // 2-byte length prefix
  FrameDecoder d(1024);
  std::span<const std::uint8_t> frame;
  for (std::size_t i = 0; i + 1 < stream.size(); ++i) {
    Feed(d, stream.substr(i, 1));
    REQUIRE(d.Next(&frame) == Status::kNeedMore);
  }
  Feed(d, stream.substr(stream.size() - 1));
  REQUIRE(d.Next(&frame) == Status::kFrame);
  CHECK(std::string(frame.begin(), frame.end()) == body);
  CHECK(d.Next(&frame) == Status::kNeedMore);
  CHECK(d.buffered() == 0);
}

TEST_CASE("frames fed in random chunk sizes come out whole and in order", "[frame]") {
  std::vector<std::string> bodies;
  const std::string stream = EchoStream(200, &bodies);
  for (const unsigned seed : {1u, 2u, 3u, 42u}) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> chunk(1, 700);
    FrameDecoder d(4096);
    std::vector<std::string> out;
    for (std::size_t pos = 0; pos < stream.size();) {
      const std::size_t n = std::min(chunk(rng), stream.size() - pos);
      Feed(d, stream.substr(pos, n));
      pos += n;
      Status last;
      for (auto& f : Drain(d, &last)) out.push_back(std::move(f));
      REQUIRE(last == Status::kNeedMore);
    }
    CHECK(out == bodies);
    CHECK(d.buffered() == 0);
  }
}

TEST_CASE("several frames in one read are all produced", "[frame]") {
  FrameDecoder d(1024);
  SECTION("two") {
    Feed(d, Framed("ab") + Framed("cde"));
    CHECK(Drain(d) == std::vector<std::string>{"ab", "cde"});
  }
  SECTION("many, with a partial one at the end") {
    std::vector<std::string> bodies;
    const std::string stream = EchoStream(50, &bodies);
    Feed(d, stream + Framed("tail").substr(0, 3));
    Status last;
    CHECK(Drain(d, &last) == bodies);
    CHECK(last == Status::kNeedMore);
    CHECK(d.buffered() == 3);
    Feed(d, Framed("tail").substr(3));
    CHECK(Drain(d) == std::vector<std::string>{"tail"});
  }
}

TEST_CASE("a zero-length frame is an empty frame, and an empty Request parses", "[frame]") {
  FrameDecoder d(1024);
  Feed(d, std::string("\x00\x00", 2) + Framed("x"));
  const auto frames = Drain(d);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].empty());
  CHECK(frames[1].empty());
  CHECK(frames[2] == "x");
  pb::Request req;
  REQUIRE(req.ParseFromArray(frames[0].data(), 0));
  CHECK(req.value_case() == pb::Request::VALUE_NOT_SET);
}

TEST_CASE("a length prefix over the cap is an error naming the cap and the setting", "[frame]") {
  FrameDecoder d(1000);
  std::string prefix;
  AppendUvarint(1001, &prefix);
  Feed(d, prefix);  // the body never needs to arrive
  std::span<const std::uint8_t> frame;
  REQUIRE(d.Next(&frame) == Status::kError);
  CHECK_THAT(d.error(), Catch::Contains("1001 bytes") && Catch::Contains("cap of 1000 bytes") &&
                            Catch::Contains("abci.max_frame_bytes"));
}

TEST_CASE("a huge length prefix is refused before any body is buffered", "[frame]") {
  FrameDecoder d(1 << 20);
  std::string prefix;
  AppendUvarint(UINT64_MAX, &prefix);
  Feed(d, prefix);
  std::span<const std::uint8_t> frame;
  REQUIRE(d.Next(&frame) == Status::kError);
  CHECK_THAT(d.error(), Catch::Contains("18446744073709551615"));
}

TEST_CASE("a frame exactly at the cap is accepted", "[frame]") {
  const std::string body(1000, 'q');
  FrameDecoder d(body.size());
  Feed(d, Framed(body));
  std::span<const std::uint8_t> frame;
  REQUIRE(d.Next(&frame) == Status::kFrame);
  CHECK(frame.size() == body.size());
  CHECK(std::string(frame.begin(), frame.end()) == body);
}

TEST_CASE("an overlong or garbage length prefix is an error", "[frame]") {
  std::string bad;
  SECTION("11 continuation bytes") { bad = std::string(11, '\x80'); }
  SECTION("10 bytes with a last byte above 1") { bad = std::string(9, '\xff') + '\x02'; }
  SECTION("garbage") { bad = std::string(16, '\xff'); }
  FrameDecoder d(1 << 20);
  Feed(d, bad);
  std::span<const std::uint8_t> frame;
  REQUIRE(d.Next(&frame) == Status::kError);
  CHECK_THAT(d.error(), Catch::Contains("malformed length prefix"));
}

TEST_CASE("a varint shorter than 10 bytes is not yet an error", "[frame]") {
  FrameDecoder d(1 << 20);
  Feed(d, std::string(9, '\x80'));
  std::span<const std::uint8_t> frame;
  CHECK(d.Next(&frame) == Status::kNeedMore);
  CHECK(d.error().empty());
}

TEST_CASE("a decoder error is sticky", "[frame]") {
  FrameDecoder d(100);
  std::string prefix;
  AppendUvarint(101, &prefix);
  Feed(d, prefix);
  std::span<const std::uint8_t> frame;
  REQUIRE(d.Next(&frame) == Status::kError);
  const std::string first = d.error();
  Feed(d, Framed("fine"));
  CHECK(d.Next(&frame) == Status::kError);
  CHECK(d.Next(&frame) == Status::kError);
  CHECK(d.error() == first);
}

TEST_CASE("a 5 MiB frame is reassembled from 64 KiB reads via Prepare/Commit", "[frame]") {
  constexpr std::size_t kBody = 5u << 20;
  constexpr std::size_t kRead = 64u << 10;
  std::string body(kBody, '\0');
  for (std::size_t i = 0; i < kBody; ++i) body[i] = static_cast<char>(i * 131 % 251);
  const std::string stream = Framed(body) + Framed("next");

  FrameDecoder d(kBody);
  std::vector<std::string> frames;
  std::size_t reads = 0;
  for (std::size_t pos = 0; pos < stream.size(); ++reads) {
    auto space = d.Prepare(kRead);
    REQUIRE(space.size() >= kRead);
    const std::size_t n = std::min(kRead, stream.size() - pos);
    std::copy_n(stream.data() + pos, n, reinterpret_cast<char*>(space.data()));
    d.Commit(n);
    pos += n;
    Status last;
    for (auto& f : Drain(d, &last)) frames.push_back(std::move(f));
    REQUIRE(last == Status::kNeedMore);
    if (pos < kBody) REQUIRE(frames.empty());  // nothing before the whole body is in
  }
  CHECK(reads == (stream.size() + kRead - 1) / kRead);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0] == body);
  CHECK(frames[1] == "next");
}

TEST_CASE("Commit after a short read keeps only the bytes written", "[frame]") {
  FrameDecoder d(1024);
  const std::string stream = Framed("abc");
  auto space = d.Prepare(16);
  std::copy_n(stream.data(), 2, reinterpret_cast<char*>(space.data()));
  d.Commit(2);
  CHECK(d.buffered() == 2);
  std::span<const std::uint8_t> frame;
  CHECK(d.Next(&frame) == Status::kNeedMore);
  Feed(d, stream.substr(2));
  REQUIRE(d.Next(&frame) == Status::kFrame);
  CHECK(std::string(frame.begin(), frame.end()) == "abc");
}
