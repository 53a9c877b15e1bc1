// `kairosd query method SERVICE/METHOD [REQUEST_JSON]`: any query method the node serves over
// gRPC and REST (app/api/api_backend.h's services), sent as a CometBFT abci_query on the
// method's path, with the request and response in the proto3 JSON mapping (protobuf's own
// JSON support, proto field names). For developers and operators: the answer a gRPC or REST
// client gets, without either server. Thread-compatible.
#pragma once

#include <string>

#include "store/status.h"

namespace CLI {
class App;
}

namespace kairos::client {

// The method's request message from `request_json` ("" = an empty request), serialized.
// `method` is "pkg.Service/Method", with or without the leading '/'. Errors name the method,
// the services there are, or the JSON's problem.
Result<std::string> EncodeMethodRequest(const std::string& method, const std::string& request_json,
                                        std::string* path);
// The method's response bytes as JSON (proto field names, Any expanded with "@type").
Result<std::string> DecodeMethodResponse(const std::string& path, const std::string& bytes);

void AddMethodQueryCommand(CLI::App& query);

}  // namespace kairos::client
