// GrpcServer: kairosd's gRPC endpoint (config [grpc], default 127.0.0.1:9090), serving the
// services of ApiBackend::Services() with the Cosmos SDK's names, plus gRPC server reflection
// (grpc.reflection.v1alpha.ServerReflection), so `grpcurl list` and `describe` work.
//
// No generated service stubs: the server registers one grpc::Service per service descriptor,
// with a raw (bytes in, bytes out) callback handler per method that hands the call to the
// backend. The request is parsed and the response written by the backend's implementation,
// which the ABCI query and the REST gateway share. (The SDK names two of its services
// `Service`, which gRPC's C++ code generator cannot compile: a nested class would share its
// enclosing class's name. Registering by descriptor avoids the generator altogether.)
//
// A call's height: the request metadata `x-cosmos-block-height` (decimal, > 0), as in the SDK;
// the answer's initial metadata carries the height it was read at. A bad height is
// INVALID_ARGUMENT naming the header.
//
// Thread-safety: Start, port and Shutdown from one thread. gRPC's own threads receive the
// calls; the backend's workers run them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "app/api/api_backend.h"
#include "store/status.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace kairos::app::api {

struct GrpcOptions {
  std::string address = "127.0.0.1:9090";  // HOST:PORT; port 0 picks a free port
  std::size_t max_recv_msg_bytes = 10u << 20;
  std::size_t max_send_msg_bytes = 64u << 20;
  int max_concurrent_streams = 100;  // per HTTP/2 connection
};

class GrpcServer {
 public:
  // Binds and starts serving. REQUIRES: `backend` outlives the server. An address that cannot
  // be bound is an error naming it (the node does not start).
  static Result<std::unique_ptr<GrpcServer>> Start(ApiBackend& backend, const GrpcOptions& options);
  ~GrpcServer();  // Shutdown()

  int port() const { return port_; }
  // Stops accepting calls and waits for the running ones (the backend answers them).
  void Shutdown();

 private:
  GrpcServer() = default;
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace kairos::app::api
