#include "abci/frame.h"

#include <algorithm>
#include <cstring>

#include "store/varint.h"

namespace kairos::abci {

namespace {
constexpr std::size_t kMinBufferBytes = 64 * 1024;
}  // namespace

FrameDecoder::FrameDecoder(std::size_t max_frame_bytes) : max_frame_bytes_(max_frame_bytes) {}

void FrameDecoder::Compact() {
  if (begin_ == 0) return;
  if (begin_ == end_) {
    begin_ = end_ = 0;
    return;
  }
  std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

std::span<std::uint8_t> FrameDecoder::Prepare(std::size_t min_bytes) {
  min_bytes = std::max(min_bytes, std::size_t{1});
  if (buf_.size() - end_ < min_bytes) {
    Compact();
    if (buf_.size() - end_ < min_bytes) {
      buf_.resize(std::max({end_ + min_bytes, buf_.size() * 2, kMinBufferBytes}));
    }
  }
  return {buf_.data() + end_, buf_.size() - end_};
}

void FrameDecoder::Commit(std::size_t n) { end_ += std::min(n, buf_.size() - end_); }

void FrameDecoder::Feed(std::span<const std::uint8_t> bytes) {
  auto dst = Prepare(bytes.size());
  std::memcpy(dst.data(), bytes.data(), bytes.size());
  Commit(bytes.size());
}

FrameDecoder::Status FrameDecoder::Next(std::span<const std::uint8_t>* frame) {
  if (!error_.empty()) return Status::kError;
  const std::span<const std::uint8_t> avail(buf_.data() + begin_, end_ - begin_);
  const UvarintResult len = DecodeUvarint(avail);
  switch (len.status) {
    case UvarintStatus::kTruncated:
      Compact();
      return Status::kNeedMore;
    case UvarintStatus::kOverflow:
      error_ = "malformed length prefix: varint longer than 10 bytes or above 2^64-1";
      return Status::kError;
    case UvarintStatus::kOk:
      break;
  }
  if (len.value > max_frame_bytes_) {
    error_ = "frame of " + std::to_string(len.value) + " bytes exceeds the cap of " +
             std::to_string(max_frame_bytes_) + " bytes (abci.max_frame_bytes)";
    return Status::kError;
  }
  const std::size_t total = len.length + static_cast<std::size_t>(len.value);
  if (avail.size() < total) {
    // The buffer grows by doubling as the bytes arrive (Prepare), so a peer that announces a
    // large frame and sends nothing costs us nothing yet.
    Compact();
    return Status::kNeedMore;
  }
  *frame = avail.subspan(len.length, static_cast<std::size_t>(len.value));
  begin_ += total;
  return Status::kFrame;
}

void AppendFrame(const google::protobuf::MessageLite& msg, std::string* out) {
  const std::size_t size = msg.ByteSizeLong();
  AppendUvarint(size, out);
  const std::size_t offset = out->size();
  out->resize(offset + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out->data() + offset));
}

}  // namespace kairos::abci
