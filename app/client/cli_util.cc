#include "app/client/cli_util.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>

#include "ante/coins.h"
#include "ante/context.h"
#include "app/client/chain_queries.h"
#include "app/client/prompt.h"
#include "app/hex.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"

namespace kairos::client {

namespace {

namespace fs = std::filesystem;

// The test backend's keys are sealed with this public passphrase (the SDK's test backend uses a
// fixed one too): the file protects nothing from whoever can read it.
constexpr char kTestBackendPassphrase[] = "kairos-test-keyring";

// The client config of this run (main thread only; see BindClientContext).
struct ClientContext {
  const std::string* home = nullptr;
  const std::string* keyring_backend_flag = nullptr;
  std::optional<ClientConfig> config;  // loaded on first use
};
ClientContext& Context() {
  static ClientContext context;
  return context;
}

constexpr std::chrono::seconds kWaitTimeout{30};
constexpr std::chrono::milliseconds kWaitPoll{500};

// Polls /tx until the tx is in a block; `why_late` ends the message of a timeout.
TxResponse WaitForTx(RpcClient& rpc, const std::string& hash, const std::string& why_late) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitTimeout;
  while (true) {
    std::optional<TxResponse> tx = Take(rpc.FindTx(hash));
    if (tx) return *tx;
    if (std::chrono::steady_clock::now() >= deadline) {
      Fail(kExitFailure, "tx " + app::HexEncode(hash, true) + " was not included within " +
                             std::to_string(kWaitTimeout.count()) + "s" + why_late);
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
}

// The tx flags that need no node, checked first (exit 2).
struct CheckedTxFlags {
  ante::Coins fees;
  bool gas_auto = false;
  std::uint64_t gas_limit = 0;
  std::optional<std::int64_t> timeout_nanos;
  std::optional<std::uint64_t> sequence;
};

CheckedTxFlags CheckTxFlags(const TxFlags& f) {
  CheckedTxFlags c;
  c.fees = Take(ante::Coins::Parse(f.fees), kExitUsage, "invalid --fees: ");
  c.gas_auto = f.gas == "auto";
  if (!c.gas_auto) c.gas_limit = Take(ParseUint(f.gas, "--gas"), kExitUsage);
  if (!(f.gas_adjustment > 0) || !std::isfinite(f.gas_adjustment)) {
    Fail(kExitUsage, "--gas-adjustment must be positive");
  }
  if (f.unordered && f.timeout.empty()) {
    Fail(kExitUsage, "--unordered needs --timeout (e.g. --timeout 60s; the chain allows at most "
                     "its unordered_max_timeout, 10m by default)");
  }
  if (!f.unordered && !f.timeout.empty()) {
    Fail(kExitUsage, "--timeout applies to --unordered txs only");
  }
  if (f.unordered) {
    c.timeout_nanos = Take(ante::ParseDuration(f.timeout), kExitUsage, "--timeout: ");
  }
  if (f.unordered && !f.sequence.empty()) {
    Fail(kExitUsage, "--sequence does not apply to --unordered txs (their sequence is 0)");
  }
  if (!f.sequence.empty()) c.sequence = Take(ParseUint(f.sequence, "--sequence"), kExitUsage);
  return c;
}

}  // namespace

[[noreturn]] void Fail(int exit_code, const std::string& message) {
  std::cerr << "error: " << message << "\n";
  throw CLI::RuntimeError(exit_code);
}

void Check(const Status& s, int exit_code, const std::string& context) {
  if (!s.ok()) Fail(exit_code, context + s.message());
}

void BindClientContext(const std::string* home, const std::string* keyring_backend_flag) {
  Context() = ClientContext{home, keyring_backend_flag, std::nullopt};
}

const ClientConfig& ActiveClientConfig() {
  ClientContext& c = Context();
  if (!c.config) {
    ClientConfig config;
    if (c.home != nullptr) config = Take(LoadClientConfig(*c.home), kExitUsage);
    if (c.keyring_backend_flag != nullptr && !c.keyring_backend_flag->empty()) {
      config.keyring_backend = *c.keyring_backend_flag;  // checked by its flag
    }
    c.config = std::move(config);
  }
  return *c.config;
}

bool IsJson(const std::string& output) {
  return output.empty() ? ActiveClientConfig().output == "json" : output == "json";
}

void AddOutputFlag(CLI::App* cmd, std::string* output) {
  cmd->add_option("--output,-o", *output,
                  "Output format: text or json (default: client.toml's output, else text)")
      ->check(CLI::IsMember({"text", "json"}));
}

void PrintJson(const OrderedJson& j) { std::cout << j.dump() << std::endl; }

std::string KeyringPath(const std::string& home) {
  const bool test = ActiveClientConfig().keyring_backend == kKeyringBackendTest;
  return (fs::path(home) / (test ? kTestKeyringFileName : kKeyringFileName)).string();
}

Result<std::string> KeyringPassphrase(const std::string& passphrase_file, std::string_view prompt,
                                      bool confirm) {
  if (ActiveClientConfig().keyring_backend == kKeyringBackendTest) {
    return std::string(kTestBackendPassphrase);
  }
  return GetPassphrase(passphrase_file, prompt, confirm);
}

Result<std::string> ResolveAddress(const Keyring& keyring, std::string_view text) {
  if (Result<std::string> raw = crypto::DecodeAccountAddress(text); raw.ok()) {
    return crypto::EncodeAccountAddress(*raw);
  }
  Result<KeyInfo> key = keyring.Find(text);
  if (key.ok()) return key->address;
  if (!key.status().IsNotFound()) return key.status();
  if (text.starts_with(std::string(crypto::kAccountPrefix) + "1") ||
      (text.find('1') != std::string_view::npos && crypto::Bech32Decode(text).ok())) {
    return Status::InvalidArgument(
        "invalid address '" + std::string(text) + "': " +
        crypto::DecodeAccountAddress(text).status().message());
  }
  return Status::NotFound("'" + std::string(text) + "' is neither a kairos address nor a key in " +
                          keyring.path());
}

Result<std::uint64_t> ParseUint(std::string_view text, std::string_view what) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Status::InvalidArgument(std::string(what) + " must be a non-negative integer, not '" +
                                   std::string(text) + "'");
  }
  return v;
}

RpcClient Connect(const std::string& node) {
  return RpcClient(
      Take(ParseNodeUrl(node.empty() ? ActiveClientConfig().node : node), kExitUsage));
}

RpcClient ConnectForQuery(const std::string& node, std::int64_t height) {
  if (height < 0) Fail(kExitUsage, "--height must be 0 (latest) or a block height");
  return Connect(node);
}

std::string CodeAndLog(std::uint32_t code, const std::string& codespace, const std::string& log) {
  std::string out = "code " + std::to_string(code);
  if (!codespace.empty()) out += " (" + codespace + ")";
  return out + ": " + (log.empty() ? std::string("no log") : log);
}

std::optional<std::uint64_t> ParkedWaitingFor(std::string_view log) {
  constexpr std::string_view kPrefix = "parked: waiting for sequence ";
  if (log.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  log.remove_prefix(kPrefix.size());
  std::uint64_t sequence = 0;
  const auto [end, ec] = std::from_chars(log.data(), log.data() + log.size(), sequence);
  if (ec != std::errc() || end == log.data()) return std::nullopt;
  return sequence;
}

void AddTxFlags(CLI::App* cmd, TxFlags* f) {
  cmd->add_option("--fees", f->fees, "Fee coins, e.g. 500stake");
  cmd->add_option("--gas", f->gas, "Gas limit, or 'auto' to simulate")->capture_default_str();
  cmd->add_option("--gas-adjustment", f->gas_adjustment,
                  "With --gas auto: multiply the simulated gas by this")
      ->capture_default_str();
  cmd->add_flag("--unordered", f->unordered,
                "Unordered tx (ADR-070): sequence 0, replay-protected by --timeout");
  cmd->add_option("--timeout", f->timeout,
                  "With --unordered: time to live, e.g. 60s (timeout_timestamp = now + this)");
  cmd->add_option("--sequence", f->sequence,
                  "Sign with this sequence instead of the account's (several txs per block)");
  cmd->add_option("--memo", f->memo, "Memo");
  cmd->add_option("--chain-id", f->chain_id,
                  "Chain id (default: client.toml's chain-id, else the node's, from /status)");
  cmd->add_option("--node", f->node, kNodeFlagHelp);
  cmd->add_flag("--wait", f->wait, "Wait (up to 30s) until the tx is in a block");
  cmd->add_option("--passphrase-file", f->passphrase_file,
                  "Read the keyring passphrase from the first line of this file");
  AddOutputFlag(cmd, &f->output);
}

void SignAndBroadcast(const std::string& home, const std::string& from_text, const TxFlags& f,
                      bool simulate_first, const MsgBuilder& build) {
  const CheckedTxFlags c = CheckTxFlags(f);
  const Keyring keyring(KeyringPath(home));
  const KeyInfo from = Take(keyring.Find(from_text));
  RpcClient rpc = Connect(f.node);
  app::TxSpec spec;
  spec.msgs = build(keyring, from, rpc);
  spec.memo = f.memo;
  spec.fee = c.fees;
  spec.unordered = f.unordered;

  std::string chain_id = f.chain_id.empty() ? ActiveClientConfig().chain_id : f.chain_id;
  if (chain_id.empty()) chain_id = Take(rpc.ChainId());
  const Account account = Take(QueryAccount(rpc, from.address, 0), kExitFailure,
                               "cannot send from " + from.address + ": ");
  const std::string passphrase =
      Take(KeyringPassphrase(f.passphrase_file, "Passphrase for key '" + from.name + "': ", false));
  const KeySecret secret = Take(keyring.Unlock(from.name, passphrase));
  if (c.timeout_nanos) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    spec.timeout_unix_nanos = now + *c.timeout_nanos;
  }
  app::SignerKey signer;
  signer.type = from.type;
  signer.private_key = secret.private_key;
  signer.account_number = account.account_number;
  signer.sequence = f.unordered ? 0 : c.sequence.value_or(account.sequence);

  std::uint64_t gas_limit = c.gas_limit;
  if (c.gas_auto || simulate_first) {
    spec.gas_limit = c.gas_auto ? 0 : gas_limit;  // simulate mode meters without a limit
    const GasEstimate estimate =
        Take(Simulate(rpc, app::BuildSignedTx(spec, {signer}, chain_id)), kExitFailure,
             "simulation failed: ");
    if (c.gas_auto) {
      gas_limit = static_cast<std::uint64_t>(
          std::ceil(static_cast<double>(estimate.gas_used) * f.gas_adjustment));
      std::cerr << "gas estimate: " << gas_limit << " (used " << estimate.gas_used << " x "
                << f.gas_adjustment << ")\n";
    }
  }
  spec.gas_limit = gas_limit;
  const std::string tx = app::BuildSignedTx(spec, {signer}, chain_id);
  const std::string hash = crypto::Sha256(tx);

  const BroadcastResponse sent = Take(rpc.BroadcastTxSync(tx));
  const std::string hash_hex = sent.hash.empty() ? app::HexEncode(hash, true) : sent.hash;
  OrderedJson out = {{"txhash", hash_hex},
                     {"code", sent.code},
                     {"codespace", sent.codespace},
                     {"log", sent.log},
                     {"gas_wanted", std::to_string(gas_limit)}};
  if (sent.code != 0) {
    if (IsJson(f.output)) {
      PrintJson(out);
    } else {
      std::cout << "txhash: " << hash_hex << "\n";
    }
    Fail(kExitFailure,
         "CheckTx rejected the tx: " + CodeAndLog(sent.code, sent.codespace, sent.log));
  }
  // Accepted, but parked behind a sequence gap: it is not proposed until the txs before it come.
  const std::optional<std::uint64_t> parked = ParkedWaitingFor(sent.log);
  if (parked) {
    out["parked"] = true;
    out["waiting_for_sequence"] = std::to_string(*parked);
  }
  if (!f.wait) {
    if (IsJson(f.output)) {
      PrintJson(out);
    } else {
      std::cout << "txhash: " << hash_hex << "\ncode: 0\nlog: " << sent.log << "\n";
    }
    return;
  }
  if (!IsJson(f.output)) {
    std::cout << "txhash: " << hash_hex << "\ncode: 0 (CheckTx"
              << (parked ? ", parked: waiting for sequence " + std::to_string(*parked) : "")
              << ")\n"
              << std::flush;
  }
  const TxResponse result =
      WaitForTx(rpc, hash,
                parked ? " (it was parked behind a sequence gap, waiting for sequence " +
                             std::to_string(*parked) + ": send that one first)"
                       : "");
  out["height"] = std::to_string(result.height);
  out["tx_result"] = {{"code", result.code},
                      {"codespace", result.codespace},
                      {"log", result.log},
                      {"gas_wanted", std::to_string(result.gas_wanted)},
                      {"gas_used", std::to_string(result.gas_used)}};
  if (IsJson(f.output)) {
    PrintJson(out);
  } else {
    std::cout << "height: " << result.height << "\n"
              << "tx code: " << result.code << "\n"
              << "tx log: " << result.log << "\n"
              << "gas used: " << result.gas_used << " of " << result.gas_wanted << "\n";
  }
  if (result.code != 0) {
    Fail(kExitFailure, "the tx failed in block " + std::to_string(result.height) + ": " +
                           CodeAndLog(result.code, result.codespace, result.log));
  }
}

}  // namespace kairos::client
