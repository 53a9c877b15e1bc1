// `kairosd query method`: see method_query.h.
#include "app/client/method_query.h"

#include <google/protobuf/descriptor.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "app/api/api_backend.h"
#include "app/api/proto_json.h"
#include "app/client/cli_util.h"

namespace kairos::client {

namespace gp = google::protobuf;

namespace {

// The served method named `method` ("pkg.Service/Method" or "/pkg.Service/Method").
Result<const gp::MethodDescriptor*> FindMethod(const std::string& method) {
  const std::string name = method.rfind('/', 0) == 0 ? method.substr(1) : method;
  const std::size_t slash = name.find('/');
  std::string known;
  for (const gp::ServiceDescriptor* s : app::api::ApiBackend::Services()) {
    known += (known.empty() ? "" : ", ") + s->full_name();
    if (slash != std::string::npos && s->full_name() == name.substr(0, slash)) {
      if (const gp::MethodDescriptor* m = s->FindMethodByName(name.substr(slash + 1))) return m;
      std::string methods;
      for (int i = 0; i < s->method_count(); ++i) {
        methods += (i ? ", " : "") + s->method(i)->name();
      }
      return Status::InvalidArgument("service " + s->full_name() + " has no method '" +
                                     name.substr(slash + 1) + "' (its methods: " + methods + ")");
    }
  }
  return Status::InvalidArgument("'" + method +
                                 "' is not a method the node serves: expected SERVICE/METHOD, "
                                 "e.g. cosmos.bank.v1beta1.Query/Balance (services: " +
                                 known + ")");
}

}  // namespace

Result<std::string> EncodeMethodRequest(const std::string& method, const std::string& request_json,
                                        std::string* path) {
  auto m = FindMethod(method);
  if (!m.ok()) return m.status();
  *path = "/" + (*m)->service()->full_name() + "/" + (*m)->name();
  if (request_json.empty()) return std::string();
  return app::api::FromJson((*m)->input_type(), request_json);
}

Result<std::string> DecodeMethodResponse(const std::string& path, const std::string& bytes) {
  auto m = FindMethod(path);
  if (!m.ok()) return m.status();
  app::api::JsonStyle style;
  style.print_defaults = false;  // as gRPC clients print answers
  style.indent = true;
  auto json = app::api::ToJson((*m)->output_type(), bytes, style);
  if (!json.ok()) return Status::Corruption("the node's answer is " + json.status().message());
  return *json;
}

void AddMethodQueryCommand(CLI::App& query) {
  struct Flags {
    std::string method;
    std::string request;
    std::string node;
    std::int64_t height = 0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = query.add_subcommand(
      "method",
      "Any query method the node serves over gRPC and REST, by name, e.g. "
      "cosmos.bank.v1beta1.Query/Balance '{\"address\": \"kairos1...\", \"denom\": \"stake\"}'; "
      "prints the answer as JSON");
  cmd->add_option("method", f->method, "SERVICE/METHOD, e.g. cosmos.auth.v1beta1.Query/Params")
      ->required();
  cmd->add_option("request", f->request, "The request in JSON (default: empty)");
  cmd->add_option("--node", f->node, kNodeFlagHelp);
  cmd->add_option("--height", f->height, "Height to query (0: latest)");
  cmd->callback([f] {
    std::string path;
    const std::string data = Take(EncodeMethodRequest(f->method, f->request, &path), kExitUsage);
    RpcClient rpc = ConnectForQuery(f->node, f->height);
    const AbciQueryResponse answer = Take(rpc.AbciQuery(path, data, f->height));
    if (answer.code != 0) Fail(kExitFailure, CodeAndLog(answer.code, answer.codespace, answer.log));
    std::cout << Take(DecodeMethodResponse(path, answer.value));
  });
}

}  // namespace kairos::client
