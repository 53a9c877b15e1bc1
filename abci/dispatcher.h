// Maps an ABCI Request to the Application method that serves it, and the result back to a
// Response. No I/O, so it can be tested without sockets.
//
// Thread-safety: Handle() calls into the Application, on the application executor, or on a
// query thread for Echo, Info, Query and Flush (see application.h). The static helpers are pure.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "abci/application.h"

namespace kairos::abci {

// Told about each request the dispatcher served: how to time requests without this library
// knowing how they are recorded (app/metrics.h implements it with Prometheus).
// Thread: called right after the request was served, on the thread that served it (the
// application executor, or a query thread): implementations must be thread-safe.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // `method`: the request's oneof case (never VALUE_NOT_SET). `elapsed`: the time the dispatcher
  // spent on it (the application call and the response encoding). `failed`: it
  // was answered with a ResponseException. Must be cheap and must not throw.
  virtual void OnRequest(pb::Request::ValueCase method, std::chrono::nanoseconds elapsed,
                         bool failed) noexcept = 0;
};

class Dispatcher {
 public:
  // REQUIRES: `app` and `observer` (if not null) outlive the dispatcher. With no observer the
  // dispatcher reads no clock.
  explicit Dispatcher(Application& app, RequestObserver* observer = nullptr)
      : app_(app), observer_(observer) {}

  // Serves one request, appending the response to `out` as one frame. Never throws:
  // - an empty request, or one whose method this build does not know, gets a
  //   ResponseException and an error log line;
  // - an exception from the application (a broken node) becomes a ResponseException too.
  // The frame is written straight from the method's response, without a Response envelope.
  void HandleInto(const pb::Request& req, std::string* out);

  // As HandleInto(), returning the Response message (for tests and tools).
  pb::Response Handle(const pb::Request& req);

  // "CheckTx", "FinalizeBlock", ..., or "Empty" for an unset oneof.
  static std::string_view MethodName(pb::Request::ValueCase c);

 private:
  // HandleInto() without the observer; false when the answer is a ResponseException.
  bool Serve(const pb::Request& req, std::string* out);

  Application& app_;
  RequestObserver* observer_;
};

// A ResponseException carrying `error`.
pb::Response MakeException(std::string_view error);

}  // namespace kairos::abci
