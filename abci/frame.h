// ABCI socket framing: each message is a uvarint length followed by that many bytes of a
// protobuf Request (node -> app) or Response (app -> node).
//
// FrameDecoder is an incremental parser over a growing byte buffer: the connection appends
// whatever a read returned, then takes complete frames out one by one. A length above the cap
// is refused before any of the frame is buffered, and the buffer grows by doubling only as
// bytes arrive, so one connection holds at most about twice the cap.
// Not thread-safe: one decoder belongs to one connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <google/protobuf/message_lite.h>

namespace kairos::abci {

class FrameDecoder {
 public:
  enum class Status {
    kFrame,     // Next() produced a frame
    kNeedMore,  // no complete frame buffered: read more
    kError,     // the stream is corrupt or over the cap; error() says why. Sticky.
  };

  explicit FrameDecoder(std::size_t max_frame_bytes);

  // Space for the next read: at least `min_bytes` writable bytes at the end of the buffer.
  // Call Commit(n) after the read with the number of bytes it wrote.
  std::span<std::uint8_t> Prepare(std::size_t min_bytes);
  void Commit(std::size_t n);

  // Convenience for tests and fuzzers: copies `bytes` in.
  void Feed(std::span<const std::uint8_t> bytes);

  // Takes the next complete frame. On kFrame, `*frame` views the message bytes; the view is
  // valid until the next call to Prepare/Feed/Next.
  Status Next(std::span<const std::uint8_t>* frame);

  const std::string& error() const { return error_; }
  std::size_t buffered() const { return end_ - begin_; }

 private:
  void Compact();

  std::size_t max_frame_bytes_;
  std::vector<std::uint8_t> buf_;
  std::size_t begin_ = 0;  // first unconsumed byte
  std::size_t end_ = 0;    // one past the last valid byte
  std::string error_;
};

// Appends `msg` to `out` as one frame (uvarint length + bytes).
void AppendFrame(const google::protobuf::MessageLite& msg, std::string* out);

}  // namespace kairos::abci
