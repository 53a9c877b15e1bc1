#include "abci/connection.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <google/protobuf/arena.h>

#include "abci/log.h"

namespace kairos::abci {

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
// Requests per trip to the application executor. Large enough to amortise the thread hop,
// small enough that the executor interleaves connections fairly.
constexpr std::size_t kMaxBatch = 128;
// Bytes gathered into one socket write.
constexpr std::size_t kMaxWriteBytes = 1 << 20;

// ResponseFlush as one frame: length 2, field 3 (flush), empty message.
const std::string kFlushFrame("\x02\x1a\x00", 3);

// Waits until `timer` is cancelled (or the connection closes it).
asio::awaitable<void> WaitForWake(asio::steady_timer& timer) {
  boost::system::error_code ec;
  timer.expires_at(asio::steady_timer::time_point::max());
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

template <class Socket>
struct Connection<Socket>::Batch {
  Batch() : arena(ArenaOptions()) {}
  static google::protobuf::ArenaOptions ArenaOptions() {
    google::protobuf::ArenaOptions o;
    o.start_block_size = 16 * 1024;
    return o;
  }
  google::protobuf::Arena arena;
  std::vector<const pb::Request*> requests;
  std::size_t bytes = 0;  // of the request frames: a first guess at the responses' size
};

template <class Socket>
Connection<Socket>::Connection(Socket socket, const ConnectionContext& ctx, std::uint64_t id,
                               std::string peer, OnClosed on_closed)
    : socket_(std::move(socket)),
      ctx_(ctx),
      id_(id),
      peer_(std::move(peer)),
      on_closed_(std::move(on_closed)),
      decoder_(ctx.max_frame_bytes),
      writer_wake_(socket_.get_executor()),
      reader_wake_(socket_.get_executor()) {
  if (ctx.query_executor != nullptr) query_strand_.emplace(asio::make_strand(*ctx.query_executor));
}

template <class Socket>
Connection<Socket>::~Connection() = default;

template <class Socket>
void Connection<Socket>::Start() {
  Log()->info("connection {} opened from {}", id_, peer_);
  auto self = this->shared_from_this();
  asio::co_spawn(socket_.get_executor(), [self] { return self->ReadLoop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self] { return self->WriteLoop(); }, asio::detached);
}

template <class Socket>
asio::awaitable<void> Connection<Socket>::ReadLoop() {
  while (!closed_ && !draining_) {
    while (pending_requests_ >= ctx_.max_pending_requests && !closed_ && !draining_) {
      co_await WaitForWake(reader_wake_);  // backpressure: the writer wakes us
    }
    if (closed_ || draining_) break;
    auto space = decoder_.Prepare(kReadChunk);
    boost::system::error_code ec;
    const std::size_t n = co_await socket_.async_read_some(
        asio::buffer(space.data(), space.size()), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (closed_) break;
      if (ec == asio::error::eof || draining_) {
        if (decoder_.buffered() > 0 && !draining_) {
          Close("peer closed the connection in the middle of a frame (" +
                std::to_string(decoder_.buffered()) + " bytes unread)");
        }
        break;  // answer what was read, then close (WriteLoop)
      }
      Close("read failed: " + ec.message());
      break;
    }
    decoder_.Commit(n);
    if (!TakeFrames()) break;
  }
  reading_done_ = true;
  writer_wake_.cancel();
}

template <class Socket>
bool Connection<Socket>::TakeFrames() {
  auto batch = std::make_unique<Batch>();
  std::span<const std::uint8_t> frame;
  for (;;) {
    const auto status = decoder_.Next(&frame);
    if (status == FrameDecoder::Status::kNeedMore) break;
    if (status == FrameDecoder::Status::kError) {
      Close("bad frame: " + decoder_.error());
      return false;
    }
    auto* req = google::protobuf::Arena::CreateMessage<pb::Request>(&batch->arena);
    if (!req->ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
      Close("a frame of " + std::to_string(frame.size()) +
            " bytes does not parse as an ABCI Request");
      return false;
    }
    ++requests_total_;
    if (req->value_case() == pb::Request::kFlush && batch->requests.empty()) {
      // Nothing of this read waits before it: answer here, queued behind every earlier slot,
      // so a lone Flush never waits for the executor. (Inside a batch it is answered in
      // order by the executor, which saves a round trip per Flush when pipelining.)
      PushReady(kFlushFrame);
      continue;
    }
    batch->requests.push_back(req);
    batch->bytes += frame.size();
    if (batch->requests.size() >= kMaxBatch) Submit(&batch);
  }
  Submit(&batch);
  return true;
}

template <class Socket>
void Connection<Socket>::Submit(std::unique_ptr<Batch>* batch) {
  if ((*batch)->requests.empty()) return;
  const std::uint64_t seq = first_seq_ + slots_.size();
  const std::size_t count = (*batch)->requests.size();
  slots_.push_back(Slot{{}, count, false});
  pending_requests_ += count;
  const std::size_t reserve = std::min<std::size_t>((*batch)->bytes, 1 << 20) + 16 * count;
  std::unique_ptr<Batch> b = std::exchange(*batch, std::make_unique<Batch>());
  const bool read_only =
      ctx_.query_executor != nullptr &&
      std::all_of(b->requests.begin(), b->requests.end(), [](const pb::Request* r) {
        const auto c = r->value_case();
        return c == pb::Request::kQuery || c == pb::Request::kInfo ||
               c == pb::Request::kEcho || c == pb::Request::kFlush ||
               c == pb::Request::kListSnapshots || c == pb::Request::kLoadSnapshotChunk;
      });
  const auto query = static_cast<std::size_t>(Lane::kQuery);
  const auto app = static_cast<std::size_t>(Lane::kApp);
  if (!deferred_.empty() || (!read_only && in_flight_[query] > 0)) {
    deferred_.push_back(Deferred{seq, reserve, std::move(b)});
    return;
  }
  Dispatch(seq, reserve, std::move(b),
           read_only && in_flight_[app] == 0 ? Lane::kQuery : Lane::kApp);
}

template <class Socket>
void Connection<Socket>::Dispatch(std::uint64_t seq, std::size_t reserve,
                                  std::unique_ptr<Batch> batch, Lane lane) {
  ++in_flight_[static_cast<std::size_t>(lane)];
  auto run = [self = this->shared_from_this(), b = std::move(batch), seq, reserve, lane] {
    std::string out;
    out.reserve(reserve);
    for (const pb::Request* req : b->requests) self->ctx_.dispatcher.HandleInto(*req, &out);
    asio::post(self->socket_.get_executor(), [self, seq, lane, out = std::move(out)]() mutable {
      self->Complete(seq, std::move(out), lane);
    });
  };
  if (lane == Lane::kQuery) {
    asio::post(*query_strand_, std::move(run));  // after this connection's earlier queries
  } else {
    asio::post(ctx_.app_executor, std::move(run));
  }
}

template <class Socket>
void Connection<Socket>::DispatchDeferred() {
  while (!deferred_.empty()) {
    Deferred d = std::move(deferred_.front());
    deferred_.pop_front();
    Dispatch(d.seq, d.reserve, std::move(d.batch), Lane::kApp);
  }
}

template <class Socket>
void Connection<Socket>::PushReady(std::string bytes) {
  slots_.push_back(Slot{std::move(bytes), 1, true});
  ++pending_requests_;
  writer_wake_.cancel();
}

template <class Socket>
void Connection<Socket>::Complete(std::uint64_t seq, std::string bytes, Lane lane) {
  --in_flight_[static_cast<std::size_t>(lane)];
  if (closed_) return;
  Slot& slot = slots_[seq - first_seq_];
  slot.bytes = std::move(bytes);
  slot.ready = true;
  if (seq == first_seq_) writer_wake_.cancel();
  if (in_flight_[static_cast<std::size_t>(Lane::kQuery)] == 0) DispatchDeferred();
}

template <class Socket>
asio::awaitable<void> Connection<Socket>::WriteLoop() {
  std::vector<asio::const_buffer> buffers;
  while (!closed_) {
    if (!slots_.empty() && slots_.front().ready) {
      // Gather every ready slot at the front: one write, responses in request order.
      buffers.clear();
      std::size_t count = 0;
      std::size_t bytes = 0;
      while (count < slots_.size() && slots_[count].ready && bytes < kMaxWriteBytes) {
        buffers.emplace_back(asio::buffer(slots_[count].bytes));
        bytes += slots_[count].bytes.size();
        ++count;
      }
      boost::system::error_code ec;
      co_await asio::async_write(socket_, buffers, asio::redirect_error(asio::use_awaitable, ec));
      if (closed_) break;
      if (ec) {
        Close("write failed: " + ec.message());
        break;
      }
      for (std::size_t i = 0; i < count; ++i) {
        pending_requests_ -= slots_.front().requests;
        slots_.pop_front();
        ++first_seq_;
      }
      reader_wake_.cancel();
      continue;
    }
    if (reading_done_ && slots_.empty()) {
      Close(draining_ ? "server shutting down, every response written"
                      : "peer closed the connection");
      break;
    }
    co_await WaitForWake(writer_wake_);
  }
}

template <class Socket>
void Connection<Socket>::Drain() {
  asio::post(socket_.get_executor(), [self = this->shared_from_this()] {
    if (self->closed_ || self->draining_) return;
    self->draining_ = true;
    boost::system::error_code ec;
    // Ends a pending read with EOF without disturbing a write in progress.
    self->socket_.shutdown(Socket::shutdown_receive, ec);
    if (ec) self->Close("server shutting down (" + ec.message() + ")");
    self->reader_wake_.cancel();
  });
}

template <class Socket>
void Connection<Socket>::Abort(std::string reason) {
  asio::post(socket_.get_executor(), [self = this->shared_from_this(), r = std::move(reason)] {
    self->Close(r);
  });
}

template <class Socket>
void Connection<Socket>::Close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
  writer_wake_.cancel();
  reader_wake_.cancel();
  const bool clean = reading_done_ && slots_.empty();
  if (clean || draining_) {
    Log()->info("connection {} from {} closed after {} requests: {}", id_, peer_,
                requests_total_, reason);
  } else {
    Log()->warn("connection {} from {} closed after {} requests: {}", id_, peer_,
                requests_total_, reason);
  }
  slots_.clear();
  deferred_.clear();
  pending_requests_ = 0;
  if (on_closed_) {
    auto cb = std::move(on_closed_);
    cb(this);
  }
}

template class Connection<asio::ip::tcp::socket>;
template class Connection<asio::local::stream_protocol::socket>;

}  // namespace kairos::abci
