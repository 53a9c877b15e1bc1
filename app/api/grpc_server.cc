// GrpcServer: see grpc_server.h.
#include "app/api/grpc_server.h"

#include <deque>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/server_callback_handlers.h>
#include <grpcpp/impl/rpc_service_method.h>
#include <grpcpp/impl/service_type.h>
#include <mutex>
#include <utility>

#include "app/logging.h"

namespace kairos::app::api {

namespace gp = google::protobuf;

namespace {

// One service of the backend, registered by its descriptor: method i of the descriptor is
// method i of this grpc::Service, named "/<service full name>/<method>" as gRPC names it.
class DescriptorService final : public grpc::Service {
 public:
  DescriptorService(const gp::ServiceDescriptor* service, ApiBackend& backend) {
    for (int i = 0; i < service->method_count(); ++i) {
      // gRPC keeps the name's pointer: the deque keeps each string where it is.
      const std::string& name =
          names_.emplace_back("/" + service->full_name() + "/" + service->method(i)->name());
      AddMethod(new grpc::internal::RpcServiceMethod(
          name.c_str(), grpc::internal::RpcMethod::NORMAL_RPC, nullptr));
      MarkMethodRawCallback(
          i, new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
                 [&backend, &name](grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
                   return Handle(backend, name, context, request, response);
                 }));
    }
  }

 private:
  static grpc::ServerUnaryReactor* Handle(ApiBackend& backend, const std::string& method,
                                          grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    std::int64_t height = 0;
    const auto& metadata = context->client_metadata();
    if (auto it = metadata.find(kHeightHeader); it != metadata.end()) {
      std::string why;
      if (!ParseHeightHeader(std::string_view(it->second.data(), it->second.size()), &height,
                             &why)) {
        reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                     std::string(kHeightHeader) + ": " + why));
        return reactor;
      }
    }
    std::string bytes;
    if (grpc::Slice slice; request->DumpToSingleSlice(&slice).ok()) {
      bytes.assign(reinterpret_cast<const char*>(slice.begin()), slice.size());
    } else {
      reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, "cannot read the request"));
      return reactor;
    }
    backend.Call(method, std::move(bytes), height,
                 [reactor, context, response](CallResult result) {
                   if (result.height > 0) {
                     context->AddInitialMetadata(kHeightHeader, std::to_string(result.height));
                   }
                   if (result.code != Code::kOk) {
                     reactor->Finish(grpc::Status(static_cast<grpc::StatusCode>(result.code),
                                                  result.message));
                     return;
                   }
                   grpc::Slice slice(result.response);
                   *response = grpc::ByteBuffer(&slice, 1);
                   reactor->Finish(grpc::Status::OK);
                 });
    return reactor;
  }

  std::deque<std::string> names_;
};

}  // namespace

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(ApiBackend& backend,
                                                      const GrpcOptions& options) {
  static std::once_flag reflection_once;
  std::call_once(reflection_once, [] { grpc::reflection::InitProtoReflectionServerBuilderPlugin(); });
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, grpc::InsecureServerCredentials(), &server->port_);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_recv_msg_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.max_send_msg_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  // gRPC sets SO_REUSEPORT by default: a second node on the same port would then share it and
  // take half the calls. One port, one server: a port in use is an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (const gp::ServiceDescriptor* service : ApiBackend::Services()) {
    server->services_.push_back(std::make_unique<DescriptorService>(service, backend));
    builder.RegisterService(server->services_.back().get());
  }
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return Status::InvalidArgument("grpc.address: cannot listen on " + options.address +
                                   " (in use, or not a HOST:PORT this machine has)");
  }
  Log()->info("gRPC server listening on {} (port {}, {} services and reflection)",
              options.address, server->port_, ApiBackend::Services().size());
  return server;
}

GrpcServer::~GrpcServer() { Shutdown(); }

void GrpcServer::Shutdown() {
  if (!server_) return;
  server_->Shutdown();
  server_->Wait();
  server_.reset();
}

}  // namespace kairos::app::api
