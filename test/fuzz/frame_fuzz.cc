// libFuzzer target for the ABCI socket path up to the application: the input is a byte stream
// from an untrusted peer. It is fed to abci::FrameDecoder in chunks whose sizes are derived from
// the input itself (covering frames and varints split at every point), each frame is parsed as
// a tendermint.abci.Request, and every Request that parses is served by abci::Dispatcher with
// the real app::KairosApp, whose responses must frame and parse back.
//
// Checked properties, beyond "no crash, no sanitizer report":
// - decoding in chunks gives the same frames, in the same order, and the same final status as
//   decoding the whole stream at once;
// - no frame is larger than the cap;
// - the dispatcher answers every request with exactly one framed Response.
//
// Commit is skipped: KairosApp::Commit writes a synced (fsync) LevelDB batch, which would make
// each execution cost a disk flush and grow the store across the run. Without Commit the app
// holds only in-memory state: every input starts with a fixed InitChain, which replaces any
// pending genesis or block, and the app is re-created now and then to drop what CheckTx has
// accumulated (a CheckTx answer does not depend on it). A FinalizeBlock at a wrong height
// throws, which the dispatcher turns into a ResponseException: an expected outcome.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "abci/dispatcher.h"
#include "abci/frame.h"
#include "abci/varint.h"
#include "app/kairos_app.h"
#include "app/logging.h"
#include "store/merkle_store.h"

namespace {

namespace pb = ::tendermint::abci;
using kairos::abci::FrameDecoder;

// Small enough that inputs of a few KiB reach the "frame over the cap" path.
constexpr std::size_t kMaxFrameBytes = 1024;

// Stops the fuzzer with a message: libFuzzer saves the input that got here.
void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "frame_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

// The KairosApp under test, over a MerkleStore in a temp dir made once per process and removed
// at exit. Nothing is ever committed, so the store stays empty; the app is re-created every
// kInputsPerApp inputs because CheckTx keeps what it accepted in memory until a Commit.
class Fixture {
 public:
  Fixture() {
    kairos::app::SetupLogging("off", "plain");  // the dispatcher logs bad requests at error
    std::string pattern = (std::filesystem::temp_directory_path() / "frame_fuzz.XXXXXX").string();
    Check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    dir_ = pattern;
  }
  ~Fixture() {
    dispatcher_.reset();
    app_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // The dispatcher for the next input, over an app in the same state as for every input.
  kairos::abci::Dispatcher& Begin() {
    if (dispatcher_ == nullptr || ++inputs_ % kInputsPerApp == 0) Reopen();
    // Nothing is committed, so InitChain is always accepted, and it replaces whatever block
    // or genesis a previous input left pending.
    pb::Request init;
    init.mutable_init_chain()->set_chain_id("fuzz-chain");
    init.mutable_init_chain()->set_initial_height(1);
    Check(dispatcher_->Handle(init).has_init_chain(), "the reset InitChain was refused");
    return *dispatcher_;
  }

 private:
  static constexpr std::uint64_t kInputsPerApp = 10000;

  void Reopen() {
    dispatcher_.reset();
    app_.reset();
    kairos::store::StoreOptions options;
    options.dir = dir_;
    options.verify_on_open = false;
    options.page_cache_pages = 1024;
    options.block_cache_bytes = 1u << 20;
    options.write_buffer_bytes = 1u << 20;
    auto store = kairos::store::MerkleStore::Open(options);
    Check(store.ok(), "cannot open the store");
    auto app = kairos::app::KairosApp::Open(std::move(*store), kairos::app::AppOptions{});
    Check(app.ok(), "cannot open KairosApp");
    app_ = std::move(*app);
    dispatcher_ = std::make_unique<kairos::abci::Dispatcher>(*app_);
  }

  std::string dir_;
  std::uint64_t inputs_ = 0;
  std::unique_ptr<kairos::app::KairosApp> app_;
  std::unique_ptr<kairos::abci::Dispatcher> dispatcher_;
};

Fixture& TheFixture() {
  static Fixture fixture;
  return fixture;
}

struct Decoded {
  std::vector<std::string> frames;
  FrameDecoder::Status last = FrameDecoder::Status::kNeedMore;
};

// Takes every complete frame out of `decoder` into `out`; stops at kNeedMore or kError.
void Drain(FrameDecoder& decoder, Decoded* out) {
  std::span<const std::uint8_t> frame;
  while ((out->last = decoder.Next(&frame)) == FrameDecoder::Status::kFrame) {
    Check(frame.size() <= kMaxFrameBytes, "a frame is larger than the cap");
    out->frames.emplace_back(reinterpret_cast<const char*>(frame.data()), frame.size());
  }
}

// Feeds `stream` in chunks of 1..64 bytes chosen by `sizes` (cycled), alternating between
// Feed() and the Prepare()/Commit() path the connection uses.
Decoded DecodeInChunks(std::span<const std::uint8_t> stream, std::span<const std::uint8_t> sizes) {
  FrameDecoder decoder(kMaxFrameBytes);
  Decoded out;
  std::size_t pos = 0;
  for (std::size_t i = 0; pos < stream.size() && out.last != FrameDecoder::Status::kError; ++i) {
    const std::uint8_t size_byte = sizes.empty() ? 0 : sizes[i % sizes.size()];
    const std::size_t n = std::min<std::size_t>(stream.size() - pos, 1 + (size_byte & 0x3f));
    const auto chunk = stream.subspan(pos, n);
    if (size_byte & 0x80) {
      auto space = decoder.Prepare(n);
      std::memcpy(space.data(), chunk.data(), n);
      decoder.Commit(n);
    } else {
      decoder.Feed(chunk);
    }
    pos += n;
    Drain(decoder, &out);
  }
  return out;
}

Decoded DecodeAtOnce(std::span<const std::uint8_t> stream) {
  FrameDecoder decoder(kMaxFrameBytes);
  Decoded out;
  decoder.Feed(stream);
  Drain(decoder, &out);
  return out;
}

// Serves `frame` if it parses as a Request, and checks that the answer is one Response frame.
void Serve(kairos::abci::Dispatcher& dispatcher, const std::string& frame) {
  pb::Request req;
  if (!req.ParseFromString(frame)) return;  // the connection would close here
  if (req.value_case() == pb::Request::kCommit) return;  // see the file comment
  std::string out;
  dispatcher.HandleInto(req, &out);
  // One frame, exactly: a length prefix and that many bytes. (Not a FrameDecoder: a response may
  // be larger than kMaxFrameBytes, e.g. the Echo of a large message.)
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(out.data()),
                                            out.size());
  const kairos::abci::UvarintResult len = kairos::abci::DecodeUvarint(bytes);
  Check(len.status == kairos::abci::UvarintStatus::kOk && len.length + len.value == out.size(),
        "the answer is not exactly one frame");
  pb::Response res;
  Check(res.ParseFromArray(out.data() + len.length, static_cast<int>(len.value)),
        "the response does not parse");
  Check(res.value_case() != pb::Response::VALUE_NOT_SET, "the response is empty");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte says how many of the following bytes choose the chunk sizes (0..7); the
  // rest is the stream.
  if (size == 0) return 0;
  const std::size_t n_sizes = std::min<std::size_t>(data[0] & 0x07, size - 1);
  const std::span<const std::uint8_t> sizes(data + 1, n_sizes);
  const std::span<const std::uint8_t> stream(data + 1 + n_sizes, size - 1 - n_sizes);

  const Decoded chunked = DecodeInChunks(stream, sizes);
  const Decoded whole = DecodeAtOnce(stream);
  Check(chunked.frames == whole.frames, "chunked and one-shot decoding give different frames");
  Check(chunked.last == whole.last, "chunked and one-shot decoding end in different states");

  kairos::abci::Dispatcher& dispatcher = TheFixture().Begin();
  for (const std::string& frame : chunked.frames) Serve(dispatcher, frame);
  return 0;
}
