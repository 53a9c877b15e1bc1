// HttpStatusFor: grpc-gateway's runtime.HTTPStatusFromCode table (grpc-gateway v2
// runtime/errors.go), so the REST gateway answers a gRPC code with the status a grpc-gateway
// node (the Cosmos SDK's LCD) would.
//
// Thread-safety: a pure function.
#include "app/api/api_backend.h"

namespace kairos::app::api {

int HttpStatusFor(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kCancelled: return 499;  // nginx's "client closed request"
    case Code::kUnknown: return 500;
    case Code::kInvalidArgument: return 400;
    case Code::kDeadlineExceeded: return 504;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists: return 409;
    case Code::kPermissionDenied: return 403;
    case Code::kUnauthenticated: return 401;
    case Code::kResourceExhausted: return 429;
    case Code::kFailedPrecondition: return 400;  // not 412: the client must change state first
    case Code::kAborted: return 409;
    case Code::kOutOfRange: return 400;
    case Code::kUnimplemented: return 501;
    case Code::kInternal: return 500;
    case Code::kUnavailable: return 503;
    case Code::kDataLoss: return 500;
  }
  return 500;  // a code outside the enum
}

}  // namespace kairos::app::api
