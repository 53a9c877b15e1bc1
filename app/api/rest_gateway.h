// RestGateway: the REST (LCD) mapping of the served gRPC services, as grpc-gateway maps them
// for the Cosmos SDK, without any networking (RestServer carries it over HTTP).
//
// At construction every method of ApiBackend::Services() is read for its (google.api.http)
// rule (get/put/post/delete/patch/custom, and additional_bindings), whose path template
// (grpc-gateway syntax: literal segments, `*`, `**`, `{field}`, `{field=segments}`) becomes a
// route. Handle then:
//   - matches the request path against the routes of every method; among the templates that
//     match, a literal segment beats a `*` beats a `**`, position by position (as grpc-gateway
//     prefers the more specific pattern); a path that matches only other HTTP methods' routes
//     gets 405, a path that matches none 404;
//   - builds the request message from the generated pool: the path variables (percent-decoded)
//     into their fields; then, unless the rule's body is "*", the query parameters into fields
//     by proto (or JSON) name, nested with dots (`pagination.limit=5`), typed by the field;
//     then the body (body "*": the whole message; body "field": that field) through protobuf's
//     own JSON parser with unknown fields refused;
//   - asks the backend for the method at the height of the `x-cosmos-block-height` header
//     (absent: the latest);
//   - answers 200 with the response in the proto3 JSON mapping as the SDK prints it (proto
//     field names, default values printed, 64-bit integers as strings, bytes as base64, Any
//     with "@type"), or an error as grpc-gateway writes one: {"code", "message", "details"}
//     with the HTTP status of HttpStatusFor(code).
// JSON both ways is proto_json.h's (protobuf's own, with the Cosmos type URLs).
//
// Thread-safety: immutable after construction; Handle and HandleNow may be called from any
// number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "app/api/api_backend.h"
#include "store/status.h"

namespace kairos::app::api {

// The headers the SDK answers a query's height with: its own (cosmos-sdk v0.53) and the one
// grpc-gateway makes of the gRPC header metadata (what older clients read).
inline constexpr char kHeightResponseHeader[] = "X-Cosmos-Block-Height";
inline constexpr char kGatewayHeightResponseHeader[] = "Grpc-Metadata-X-Cosmos-Block-Height";

struct HttpResponse {
  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
  std::string body;                                          // JSON
  std::string content_type = "application/json";
};

// One HTTP request as the gateway needs it. The views only need to live during the call.
struct RestRequest {
  std::string_view method;  // "GET", "POST", ... (upper case)
  std::string_view target;  // the origin-form target: "/path?query"
  std::string_view body;
  // The value of the x-cosmos-block-height header, when the request has one.
  std::optional<std::string_view> height_header;
};

// grpc-gateway's error body: {"code": <code>, "message": "...", "details": []}, with the HTTP
// status of HttpStatusFor(code) unless `http_status` is given (routing errors: 404, 405).
HttpResponse ErrorResponse(Code code, std::string_view message, unsigned http_status = 0);

class RestGateway {
 public:
  // Builds the routes of `services` (by default ApiBackend::Services()). Fails on a rule the
  // gateway cannot serve (a bad template, a variable or body naming no field, a verb).
  // REQUIRES: `backend` outlives the gateway.
  static Result<std::unique_ptr<RestGateway>> Create(
      ApiBackend& backend,
      const std::vector<const google::protobuf::ServiceDescriptor*>& services =
          ApiBackend::Services());
  ~RestGateway();
  RestGateway(const RestGateway&) = delete;
  RestGateway& operator=(const RestGateway&) = delete;

  // Answers `request` through the backend's worker threads: `done` runs exactly once, on a
  // backend worker thread, or on the caller's thread when the request is refused before it
  // reaches the backend (routing, parameters, body, height; a full backend queue).
  void Handle(const RestRequest& request, std::function<void(HttpResponse)> done) const;

  // The same on the caller's thread (tests; ApiBackend::CallNow).
  HttpResponse HandleNow(const RestRequest& request) const;

  // The backend call a request maps to (what Handle then runs), or the answer refusing it
  // (routing, parameters, body, height). Tests read the request message from here.
  struct Route;
  struct Call {
    const Route* route;
    std::string method;   // "/pkg.Service/Method"
    std::string request;  // the serialized request message
    std::int64_t height;  // 0: the latest
  };
  std::variant<Call, HttpResponse> Prepare(const RestRequest& request) const;

  // The routes, one line each ("GET /cosmos/bank/v1beta1/balances/{address} -> /cosmos.bank.
  // v1beta1.Query/AllBalances"), in the order they are tried: for the README and logs.
  std::vector<std::string> DescribeRoutes() const;

 private:
  RestGateway(ApiBackend& backend, std::vector<Route> routes);
  static HttpResponse Answer(const Route& route, const CallResult& result);

  ApiBackend& backend_;
  std::vector<Route> routes_;
};

}  // namespace kairos::app::api
