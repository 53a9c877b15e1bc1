// The ABCI socket server: a listener on tcp://HOST:PORT or unix:///PATH, one Connection per
// accepted socket, I/O threads for the sockets, one application executor thread that runs
// every Application call except the read-only ones, and query threads (query_threads) that run
// Info, Query and Echo beside it at a lower CPU priority.
//
// Thread-safety: Listen() and Run() are called from one thread (main); Stop() may be called
// from any thread, including a signal handler's completion. See abci/README.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "abci/application.h"
#include "abci/dispatcher.h"

namespace kairos::abci {

struct ServerOptions {
  std::string address = "tcp://127.0.0.1:26658";
  std::size_t max_frame_bytes = 256u << 20;  // 256 MiB
  std::size_t max_pending_requests = 4096;   // per connection, before reading pauses
  std::size_t io_threads = 1;
  // Threads that serve batches of only Info, Query, Echo and Flush (CometBFT's query
  // connection) beside the application executor, at a lower CPU priority (nice +10), so that
  // a heavy query never delays a block. The Application's Info, Query and Echo must then be
  // safe to call concurrently with its other methods. 0: they run on the application executor.
  std::size_t query_threads = 0;
  std::chrono::milliseconds drain_timeout{5000};  // on shutdown, then connections are cut
  bool handle_signals = true;                     // SIGINT/SIGTERM -> graceful Stop()
  // Told about each request served, on the executor that served it (metrics); null: none.
  // REQUIRES: outlives the server, and is thread-safe when query_threads > 0.
  RequestObserver* observer = nullptr;
};

// A parsed listen address.
struct ListenAddress {
  enum class Kind { kTcp, kUnix } kind;
  std::string host;  // kTcp
  std::uint16_t port = 0;
  std::string path;  // kUnix
};

// Parses "tcp://HOST:PORT" (HOST may be a name, an IPv4 address or [IPv6]) or
// "unix:///absolute/or/relative/path". On failure returns false and sets `*error` to a message
// that names the expected form.
bool ParseListenAddress(const std::string& text, ListenAddress* out, std::string* error);

class Server {
 public:
  // REQUIRES: `app` outlives the server.
  Server(Application& app, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens. On failure returns false with a reason in `*error`.
  bool Listen(std::string* error);

  // The bound address, with the real port when the configured one was 0.
  std::string local_address() const;

  // Serves until Stop() (or a signal) and the drain complete. Blocks.
  // REQUIRES: Listen() succeeded.
  void Run();

  // Runs `task` on the application executor, after the calls already queued there, as an
  // Application call runs (kairosd's gRPC and REST BroadcastTx hand a tx to the app mempool
  // this way). Thread-safe. Returns false, and drops `task`, when the executor does not run:
  // before Run(), and from the moment the server begins to stop.
  bool RunOnExecutor(std::function<void()> task);

  // Stops accepting, lets every connection answer what it has read, then closes them
  // (or cuts them after drain_timeout). Thread-safe and idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kairos::abci
