// RestServer: kairosd's REST (LCD) endpoint: HTTP/1.1 over TCP (Boost.Beast), each request
// answered by a RestGateway.
//
// One listener and one session per connection, each on its own strand, written as C++20
// coroutines (as abci/'s connections are). A session reads one request at a time (HTTP/1.1
// keep-alive; pipelined requests are answered in order), hands it to the gateway, and writes
// the answer when the backend's callback comes back (the callback runs on a backend worker
// thread and posts the answer to the session's strand): the io threads never run a query.
//
// Bounds, so a client costs itself and not the node: at most `max_connections` sessions (a
// connection beyond is closed at once), request headers up to `max_header_bytes` (431 beyond),
// bodies up to `max_body_bytes` (413 beyond, then the connection is closed), and
// `read_timeout` for a whole request (or the next one on a kept-alive connection): an idle or
// slowloris client is dropped. Writes have `write_timeout`.
//
// CORS (the Cosmos SDK's `enabled-unsafe-cors`): off by default. On, every answer carries
// `Access-Control-Allow-Origin: *` and an OPTIONS preflight is answered (200) with the allowed
// methods and headers (Content-Type and x-cosmos-block-height, which browsers may then send);
// the height header of answers is exposed to scripts.
//
// Thread-safety: Start, Stop and port may be called from any thread (Start once); everything
// else runs on the server's own io threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "app/api/rest_gateway.h"
#include "store/status.h"

namespace kairos::app::api {

struct RestServerOptions {
  std::string address = "127.0.0.1:1317";  // HOST:PORT; port 0 picks a free port
  // kairosd's [api] defaults (max_open_connections, max_body_bytes); the read timeout is the
  // Cosmos SDK's rpc-read-timeout.
  std::size_t max_connections = 1000;
  std::size_t max_body_bytes = 10u << 20;
  std::size_t max_header_bytes = 16 * 1024;
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};
  bool enabled_unsafe_cors = false;
  std::size_t io_threads = 1;
};

class RestServer {
 public:
  // REQUIRES: `gateway` outlives the server.
  RestServer(const RestGateway& gateway, RestServerOptions options);
  ~RestServer();  // Stop()
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Binds, listens and starts the io threads. Fails on a bad address or a port in use, with
  // the reason.
  Status Start();

  // The bound port (the real one when the configured port was 0); 0 before Start.
  std::uint16_t port() const;

  // Stops accepting, closes idle connections, lets each request already read be answered
  // (with "Connection: close"), then joins the io threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kairos::app::api
