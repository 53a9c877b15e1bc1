// The params commands every module with params shares, and x/auth's and x/bank's own:
//
//   kairosd tx <module> update-params AUTHORITY KEY=VALUE...   (auth, bank, locks, poa)
//   kairosd query auth params
//   kairosd query bank params
//
// update-params reads the chain's current params (the module's Params query), changes the named
// fields and sends the module's MsgUpdateParams (the SDK's shape: the whole params message), so
// the fields not named keep their values. Only the chain's authority may send it (code 4); the
// change applies from the next block on every node. KEY is the params field's proto name
// (`kairosd query <module> params` lists them); VALUE is parsed by the field's type.
//
// Thread-compatible (CLI commands run on the main thread).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "ante/msg.h"
#include "app/client/cli_util.h"
#include "store/status.h"

namespace CLI {
class App;
}

namespace kairos::client {

// Sets the fields of `params` that `assignments` name ("max_memo_characters=10"): KEY a field of
// the message by its proto name, VALUE a decimal integer for integer fields (in the field's
// range), true or false for bools, the text as written for strings. InvalidArgument naming the
// assignment and, for an unknown KEY, the fields there are; `params` is then unchanged.
Status ApplyParamAssignments(google::protobuf::Message* params,
                             const std::vector<std::string>& assignments);

// The chain's current params of one module, and the module's MsgUpdateParams built from them.
struct UpdateParamsSpec {
  std::string module;  // "auth": the command is `tx auth update-params`
  std::function<std::unique_ptr<google::protobuf::Message>(RpcClient& rpc)> current;
  // `authority`: the sender's bech32 address; `params`: current() with the assignments applied.
  std::function<ante::Msg(const std::string& authority, const google::protobuf::Message& params)>
      make;
};

// Adds `update-params AUTHORITY KEY=VALUE...` under `module_cmd` (e.g. `tx locks`).
void AddUpdateParamsCommand(CLI::App& module_cmd, const std::string& home, UpdateParamsSpec spec);

// `tx auth update-params` and `query auth params`.
void AddAuthTxCommands(CLI::App& tx, const std::string& home);
void AddAuthQueryCommands(CLI::App& query, const std::string& home);

// `tx bank update-params` and `query bank params`.
void AddBankTxCommands(CLI::App& tx, const std::string& home);
void AddBankQueryCommands(CLI::App& query, const std::string& home);

}  // namespace kairos::client
