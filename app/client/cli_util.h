// What the CLI commands share (commands.cc, locks_commands.cc, ...): failing with one "error: ..."
// line and an exit code, the client config of this run (client.toml and the root's
// --keyring-backend: the defaults of --node, --output, --chain-id, and which keyring file and
// passphrase), the --output flag, address and number parsing, and the tx path every
// `kairosd tx ...` command takes: its common flags (TxFlags) and SignAndBroadcast, which signs
// messages with a keyring key (SIGN_MODE_DIRECT), simulates when asked, broadcasts with
// broadcast_tx_sync and with --wait polls until the tx is in a block.
//
// Main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ante/tx.h"
#include "app/client/client_config.h"
#include "app/client/commands.h"
#include "app/client/keyring.h"
#include "app/client/rpc_client.h"
#include "store/status.h"

namespace CLI {
class App;
}

namespace kairos::client {

using OrderedJson = nlohmann::ordered_json;

// Prints "error: <message>" on stderr and throws CLI::RuntimeError(exit_code).
[[noreturn]] void Fail(int exit_code, const std::string& message);

template <class T>
T Take(Result<T> r, int exit_code = kExitFailure, const std::string& context = "") {
  if (!r.ok()) Fail(exit_code, context + r.status().message());
  return std::move(*r);
}

void Check(const Status& s, int exit_code = kExitFailure, const std::string& context = "");

// The client config of this run. AddClientCommands binds the root's --home and
// --keyring-backend values (read on first use, once the command line is parsed);
// ActiveClientConfig loads <home>/client.toml then (exit 2 on a bad file) and applies the flag.
void BindClientContext(const std::string* home, const std::string* keyring_backend_flag);
const ClientConfig& ActiveClientConfig();

// The help text of every --node flag (its default comes from the client config).
inline constexpr char kNodeFlagHelp[] =
    "CometBFT RPC address (default: client.toml's node, else http://127.0.0.1:26657)";

// --output text|json; "" (the flag not given) takes the client config's output.
bool IsJson(const std::string& output);
void AddOutputFlag(CLI::App* cmd, std::string* output);
void PrintJson(const OrderedJson& j);

// <home>/keyring.json, or <home>/keyring-test.json with the test backend.
std::string KeyringPath(const std::string& home);
// The passphrase of a keyring key: GetPassphrase (file, env, terminal), or with the test
// backend its fixed passphrase, without asking.
Result<std::string> KeyringPassphrase(const std::string& passphrase_file, std::string_view prompt,
                                      bool confirm);
// A bech32 account address, or the address of a key in the keyring.
Result<std::string> ResolveAddress(const Keyring& keyring, std::string_view text);
Result<std::uint64_t> ParseUint(std::string_view text, std::string_view what);
// `node` is a --node value; "" takes the client config's node.
RpcClient Connect(const std::string& node);
// As Connect; a negative height fails (exit 2).
RpcClient ConnectForQuery(const std::string& node, std::int64_t height);
// "code N (codespace): log".
std::string CodeAndLog(std::uint32_t code, const std::string& codespace, const std::string& log);
// For a CheckTx answer with code 0: the sequence the tx waits for when kairosd parked it behind a
// sequence gap (its log starts "parked: waiting for sequence N"; app/tx_pool.h), else nullopt.
std::optional<std::uint64_t> ParkedWaitingFor(std::string_view check_tx_log);

// The flags of every tx command.
struct TxFlags {
  std::string fees;
  std::string gas = "200000";
  double gas_adjustment = 1.3;
  bool unordered = false;
  std::string timeout;
  std::string sequence;
  std::string memo;
  std::string chain_id;  // "" = client.toml's chain-id, else the node's
  std::string node;      // "" = client.toml's node
  bool wait = false;
  std::string passphrase_file;
  std::string output;  // "" = client.toml's output
};
void AddTxFlags(CLI::App* cmd, TxFlags* f);

// Builds the messages once the signer is known (its keyring entry) and the node is reachable.
using MsgBuilder =
    std::function<std::vector<ante::Msg>(const Keyring& keyring, const KeyInfo& from,
                                         RpcClient& rpc)>;

// Signs build(...)'s messages with key `from` (a name or an address in the keyring) and
// broadcasts them. With `simulate_first` (or --gas auto) it runs Simulate first and stops on a
// failure there with "simulation failed: code N (codespace): log", before anything is sent.
// Prints the result (text or JSON) and fails (exit 1) when CheckTx or the block rejects the tx.
void SignAndBroadcast(const std::string& home, const std::string& from, const TxFlags& f,
                      bool simulate_first, const MsgBuilder& build);

}  // namespace kairos::client
