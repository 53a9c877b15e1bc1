// Maps an ABCI Request to the Application method that serves it, and the result back to a
// Response. No I/O, so it can be tested without sockets.
//
// Thread-safety: Handle() calls into the Application and must run on the application executor
// (see application.h). The static helpers are pure.
#pragma once

#include <string>
#include <string_view>

#include "abci/application.h"

namespace kairos::abci {

class Dispatcher {
 public:
  // REQUIRES: `app` outlives the dispatcher.
  explicit Dispatcher(Application& app) : app_(app) {}

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
  Application& app_;
};

// A ResponseException carrying `error`.
pb::Response MakeException(std::string_view error);

}  // namespace kairos::abci
