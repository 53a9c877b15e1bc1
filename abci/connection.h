// One ABCI socket connection: reads frames, hands requests to the application executor (or, for
// read-only ones, the query executor) in batches, and writes the responses back strictly in
// request order.
//
// Thread-safety: all state is touched only on the connection's strand. The executors post
// completed batches back to that strand. See abci/README.md for the whole thread model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before asio: awaitable.hpp in Boost 1.74 uses std::exchange

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "abci/dispatcher.h"
#include "abci/frame.h"

namespace kairos::abci {

namespace asio = boost::asio;

// What a connection needs from the server that owns it.
struct ConnectionContext {
  asio::io_context& app_executor;  // the single application executor
  // Where batches of only Info, Query, Echo and Flush requests run (the query connection's);
  // null: on app_executor too.
  asio::io_context* query_executor;
  Dispatcher& dispatcher;  // used on both executors
  std::size_t max_frame_bytes;
  std::size_t max_pending_requests;  // reading pauses while this many await their response
};

// The type-independent face of a connection, for the server's registry.
class ConnectionHandle {
 public:
  virtual ~ConnectionHandle() = default;
  // Stops reading, lets every request already read be answered and written, then closes.
  // Thread-safe.
  virtual void Drain() = 0;
  // Closes now, dropping unwritten responses. Thread-safe.
  virtual void Abort(std::string reason) = 0;
};

template <class Socket>
class Connection final : public ConnectionHandle,
                         public std::enable_shared_from_this<Connection<Socket>> {
 public:
  using OnClosed = std::function<void(ConnectionHandle*)>;

  // REQUIRES: `socket` uses a strand executor; `ctx` outlives the connection.
  Connection(Socket socket, const ConnectionContext& ctx, std::uint64_t id, std::string peer,
             OnClosed on_closed);
  ~Connection() override;  // in connection.cc, where Batch is complete
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts the read and write loops.
  void Start();

  void Drain() override;
  void Abort(std::string reason) override;

 private:
  // A batch of consecutive requests, answered by one trip to the application executor.
  struct Slot {
    std::string bytes;       // framed responses, once ready
    std::size_t requests;    // how many requests this slot answers
    bool ready;
  };

  struct Batch;
  // Which executor runs a batch.
  enum class Lane { kApp, kQuery };
  // A batch waiting for this connection's batches on the query executor to finish.
  struct Deferred {
    std::uint64_t seq;
    std::size_t reserve;
    std::unique_ptr<Batch> batch;
  };

  asio::awaitable<void> ReadLoop();
  asio::awaitable<void> WriteLoop();
  // Parses every complete frame in the decoder. Returns false on a protocol error (then the
  // connection is closing).
  bool TakeFrames();
  // Queues `batch` for an executor behind a new slot; resets it to empty. One connection's
  // batches always run in its request order: a read-only batch goes to the query executor
  // only while none of the connection's batches is on the application executor, and any other
  // batch waits (deferred_) until none is on the query executor.
  void Submit(std::unique_ptr<Batch>* batch);
  void Dispatch(std::uint64_t seq, std::size_t reserve, std::unique_ptr<Batch> batch, Lane lane);
  // Hands the deferred batches, in order, to the application executor.
  void DispatchDeferred();
  // Queues an already-answered slot (Flush) behind every earlier one.
  void PushReady(std::string bytes);
  void Complete(std::uint64_t seq, std::string bytes, Lane lane);
  void Close(const std::string& reason);

  Socket socket_;
  const ConnectionContext& ctx_;
  const std::uint64_t id_;
  const std::string peer_;
  OnClosed on_closed_;

  FrameDecoder decoder_;
  std::deque<Slot> slots_;
  std::uint64_t first_seq_ = 0;  // sequence number of slots_.front()
  std::size_t pending_requests_ = 0;
  std::uint64_t requests_total_ = 0;
  std::size_t in_flight_[2] = {0, 0};  // batches on each executor (by Lane)
  // This connection's read-only batches run one at a time, in order, whichever query thread
  // takes them (none when the server has no query threads).
  std::optional<asio::strand<asio::io_context::executor_type>> query_strand_;
  std::deque<Deferred> deferred_;

  asio::steady_timer writer_wake_;  // cancelled when a slot becomes ready
  asio::steady_timer reader_wake_;  // cancelled when the pending count falls
  bool reading_done_ = false;
  bool draining_ = false;
  bool closed_ = false;
  std::string close_reason_;
};

}  // namespace kairos::abci
