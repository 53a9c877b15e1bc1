#include "app/client/commands.h"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ante/coins.h"
#include "ante/context.h"
#include "ante/tx.h"
#include "app/client/chain_queries.h"
#include "app/client/encoding.h"
#include "app/client/genesis_edit.h"
#include "app/client/keyring.h"
#include "app/client/prompt.h"
#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"

namespace kairos::client {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr std::chrono::seconds kWaitTimeout{30};
constexpr std::chrono::milliseconds kWaitPoll{500};
constexpr char kDefaultGas[] = "200000";

// ---- failure and output helpers ---------------------------------------------------------

[[noreturn]] void Fail(int exit_code, const std::string& message) {
  std::cerr << "error: " << message << "\n";
  throw CLI::RuntimeError(exit_code);
}

template <class T>
T Take(Result<T> r, int exit_code = kExitFailure, const std::string& context = "") {
  if (!r.ok()) Fail(exit_code, context + r.status().message());
  return std::move(*r);
}

void Check(const Status& s, int exit_code = kExitFailure, const std::string& context = "") {
  if (!s.ok()) Fail(exit_code, context + s.message());
}

bool IsJson(const std::string& output) { return output == "json"; }

void AddOutputFlag(CLI::App* cmd, std::string* output) {
  cmd->add_option("--output,-o", *output, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

void PrintJson(const json& j) { std::cout << j.dump() << std::endl; }

// ---- parsing helpers --------------------------------------------------------------------

std::string KeyringPath(const std::string& home) {
  return (fs::path(home) / kKeyringFileName).string();
}

// A bech32 account address, or the address of a key in the keyring.
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
  return RpcClient(Take(ParseNodeUrl(node), kExitUsage));
}

RpcClient ConnectForQuery(const std::string& node, std::int64_t height) {
  if (height < 0) Fail(kExitUsage, "--height must be 0 (latest) or a block height");
  return Connect(node);
}

json PubKeyJson(crypto::KeyType type, std::string_view key) {
  return {{"@type", PubKeyTypeUrl(type)}, {"key", Base64Encode(key)}};
}

json KeyJson(const KeyInfo& k) {
  return {{"name", k.name},
          {"type", KeyTypeName(k.type)},
          {"address", k.address},
          {"pub_key", PubKeyJson(k.type, k.pub_key)}};
}

void PrintKeyText(const KeyInfo& k) {
  std::cout << "name: " << k.name << "\n"
            << "type: " << KeyTypeName(k.type) << "\n"
            << "address: " << k.address << "\n"
            << "pub_key: " << Base64Encode(k.pub_key) << "\n";
}

// ---- keys -------------------------------------------------------------------------------

struct KeysFlags {
  std::string name;
  bool recover = false;
  std::string key_type = "secp256k1";
  std::string passphrase_file;
  std::string output = "text";
  bool address_only = false;
  bool yes = false;
  bool hex = false;
};

void RunKeysAdd(const std::string& home, const KeysFlags& f) {
  const crypto::KeyType type = Take(ParseKeyType(f.key_type), kExitUsage);
  Check(ValidateKeyName(f.name), kExitUsage);
  const Keyring keyring(KeyringPath(home));
  if (keyring.Find(f.name).ok()) {
    Fail(kExitFailure, "key '" + f.name + "' already exists in " + keyring.path());
  }
  std::string mnemonic;
  if (f.recover) {
    mnemonic = NormalizeMnemonic(
        Take(ReadStdinLine("Enter your BIP-39 mnemonic: ", /*secret=*/true)));
    Check(crypto::ValidateMnemonic(mnemonic), kExitUsage, "invalid mnemonic: ");
  } else {
    mnemonic = crypto::GenerateMnemonic();
  }
  const std::string passphrase = Take(GetPassphrase(
      f.passphrase_file, "Passphrase to encrypt key '" + f.name + "': ", /*confirm=*/true));
  const KeyInfo key = Take(keyring.Add(f.name, type, mnemonic, passphrase));
  if (IsJson(f.output)) {
    json j = KeyJson(key);
    if (!f.recover) j["mnemonic"] = mnemonic;
    PrintJson(j);
    return;
  }
  PrintKeyText(key);
  if (!f.recover) {
    std::cerr << "\n**Important** write this mnemonic phrase in a safe place.\n"
                 "It is the only way to recover the key if you forget the passphrase.\n\n"
              << mnemonic << "\n";
  }
}

void RunKeysList(const std::string& home, const KeysFlags& f) {
  const Keyring keyring(KeyringPath(home));
  const std::vector<KeyInfo> keys = Take(keyring.List());
  if (IsJson(f.output)) {
    json list = json::array();
    for (const KeyInfo& k : keys) list.push_back(KeyJson(k));
    PrintJson(list);
    return;
  }
  if (keys.empty()) std::cerr << "no keys in " << keyring.path() << "\n";
  for (const KeyInfo& k : keys) {
    std::cout << k.name << "\t" << KeyTypeName(k.type) << "\t" << k.address << "\n";
  }
}

void RunKeysShow(const std::string& home, const KeysFlags& f) {
  const KeyInfo key = Take(Keyring(KeyringPath(home)).Find(f.name));
  if (f.address_only) {
    std::cout << key.address << "\n";
  } else if (IsJson(f.output)) {
    PrintJson(KeyJson(key));
  } else {
    PrintKeyText(key);
  }
}

void RunKeysDelete(const std::string& home, const KeysFlags& f) {
  const Keyring keyring(KeyringPath(home));
  const KeyInfo key = Take(keyring.Find(f.name));
  if (!f.yes) {
    Result<bool> yes = AskYesNo("Delete key '" + key.name + "' (" + key.address + ")?");
    if (!yes.ok()) Fail(kExitFailure, "not deleting without confirmation: pass --yes");
    if (!*yes) Fail(kExitFailure, "aborted: key '" + key.name + "' not deleted");
  }
  Check(keyring.Delete(key.name));
  std::cout << "deleted key '" << key.name << "' (" << key.address << ")\n";
}

void RunKeysExport(const std::string& home, const KeysFlags& f) {
  const Keyring keyring(KeyringPath(home));
  const KeyInfo key = Take(keyring.Find(f.name));
  const std::string passphrase =
      Take(GetPassphrase(f.passphrase_file, "Passphrase for key '" + key.name + "': ", false));
  const KeySecret secret = Take(keyring.Unlock(key.name, passphrase));
  if (f.hex || secret.mnemonic.empty()) {
    std::cout << app::HexEncode(secret.private_key) << "\n";
  } else {
    std::cout << secret.mnemonic << "\n";
  }
}

void AddKeysCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<KeysFlags>();
  CLI::App* keys = app.add_subcommand("keys", "Manage the keys in <home>/keyring.json");
  keys->require_subcommand(1);
  const std::string passphrase_help =
      "Read the keyring passphrase from the first line of this file (else $" +
      std::string(kPassphraseEnv) + ", else the terminal)";

  CLI::App* add = keys->add_subcommand("add", "Create a key (or --recover one from a mnemonic)");
  add->add_option("name", f->name, "Key name")->required();
  add->add_flag("--recover", f->recover, "Read a BIP-39 mnemonic from stdin instead of "
                                         "generating 24 words");
  add->add_option("--key-type", f->key_type, "secp256k1 or ed25519")
      ->check(CLI::IsMember({"secp256k1", "ed25519"}))
      ->capture_default_str();
  add->add_option("--passphrase-file", f->passphrase_file, passphrase_help);
  AddOutputFlag(add, &f->output);
  add->callback([&home, f] { RunKeysAdd(home, *f); });

  CLI::App* list = keys->add_subcommand("list", "List the keys (no passphrase needed)");
  AddOutputFlag(list, &f->output);
  list->callback([&home, f] { RunKeysList(home, *f); });

  CLI::App* show = keys->add_subcommand("show", "Show a key by name or address");
  show->add_option("name", f->name, "Key name or address")->required();
  show->add_flag("--address,-a", f->address_only, "Print only the address");
  AddOutputFlag(show, &f->output);
  show->callback([&home, f] { RunKeysShow(home, *f); });

  CLI::App* del = keys->add_subcommand("delete", "Delete a key");
  del->add_option("name", f->name, "Key name or address")->required();
  del->add_flag("--yes,-y", f->yes, "Do not ask for confirmation");
  del->callback([&home, f] { RunKeysDelete(home, *f); });

  CLI::App* exp = keys->add_subcommand(
      "export", "Print a key's mnemonic (or its private key in hex) after the passphrase");
  exp->add_option("name", f->name, "Key name or address")->required();
  exp->add_flag("--hex", f->hex, "Print the raw private key in hex instead of the mnemonic");
  exp->add_option("--passphrase-file", f->passphrase_file, passphrase_help);
  exp->callback([&home, f] { RunKeysExport(home, *f); });
}

// ---- tx send ----------------------------------------------------------------------------

struct SendFlags {
  std::string from, to, amount;
  std::string fees;
  std::string gas = kDefaultGas;
  double gas_adjustment = 1.3;
  bool unordered = false;
  std::string timeout;
  std::string sequence;
  std::string memo;
  std::string chain_id;
  std::string node = kDefaultNodeUrl;
  bool wait = false;
  std::string passphrase_file;
  std::string output = "text";
};

std::string CodeAndLog(std::uint32_t code, const std::string& codespace, const std::string& log) {
  std::string out = "code " + std::to_string(code);
  if (!codespace.empty()) out += " (" + codespace + ")";
  return out + ": " + (log.empty() ? std::string("no log") : log);
}

// Polls /tx until the tx is in a block.
TxResponse WaitForTx(RpcClient& rpc, const std::string& hash) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitTimeout;
  while (true) {
    std::optional<TxResponse> tx = Take(rpc.FindTx(hash));
    if (tx) return *tx;
    if (std::chrono::steady_clock::now() >= deadline) {
      Fail(kExitFailure, "tx " + app::HexEncode(hash, true) + " was not included within " +
                             std::to_string(kWaitTimeout.count()) + "s");
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
}

void RunSend(const std::string& home, const SendFlags& f) {
  // Everything that can be checked offline first (exit 2).
  ante::Coins amount = Take(ante::Coins::Parse(f.amount), kExitUsage, "invalid amount: ");
  if (amount.empty()) Fail(kExitUsage, "invalid amount '" + f.amount + "': nothing to send");
  ante::Coins fees = Take(ante::Coins::Parse(f.fees), kExitUsage, "invalid --fees: ");
  const bool gas_auto = f.gas == "auto";
  std::uint64_t gas_limit = 0;
  if (!gas_auto) gas_limit = Take(ParseUint(f.gas, "--gas"), kExitUsage);
  if (!(f.gas_adjustment > 0) || !std::isfinite(f.gas_adjustment)) {
    Fail(kExitUsage, "--gas-adjustment must be positive");
  }
  std::optional<std::int64_t> timeout_nanos;
  if (f.unordered && f.timeout.empty()) {
    Fail(kExitUsage, "--unordered needs --timeout (e.g. --timeout 60s; the chain allows at most "
                     "its unordered_max_timeout, 10m by default)");
  }
  if (!f.unordered && !f.timeout.empty()) {
    Fail(kExitUsage, "--timeout applies to --unordered txs only");
  }
  if (f.unordered) timeout_nanos = Take(ante::ParseDuration(f.timeout), kExitUsage, "--timeout: ");
  if (f.unordered && !f.sequence.empty()) {
    Fail(kExitUsage, "--sequence does not apply to --unordered txs (their sequence is 0)");
  }
  std::optional<std::uint64_t> sequence;
  if (!f.sequence.empty()) sequence = Take(ParseUint(f.sequence, "--sequence"), kExitUsage);

  const Keyring keyring(KeyringPath(home));
  const KeyInfo from = Take(keyring.Find(f.from));
  const std::string to = Take(ResolveAddress(keyring, f.to), kExitUsage);
  RpcClient rpc = Connect(f.node);

  const std::string chain_id = f.chain_id.empty() ? Take(rpc.ChainId()) : f.chain_id;
  const Account account = Take(QueryAccount(rpc, from.address, 0), kExitFailure,
                               "cannot send from " + from.address + ": ");
  const std::string passphrase =
      Take(GetPassphrase(f.passphrase_file, "Passphrase for key '" + from.name + "': ", false));
  const KeySecret secret = Take(keyring.Unlock(from.name, passphrase));

  ante::MsgSend msg;
  msg.from_address = from.address;
  msg.to_address = to;
  msg.from = *crypto::DecodeAccountAddress(from.address);
  msg.to = *crypto::DecodeAccountAddress(to);
  msg.amount = amount;
  app::TxSpec spec;
  spec.msgs.push_back(msg);
  spec.memo = f.memo;
  spec.fee = fees;
  spec.unordered = f.unordered;
  if (timeout_nanos) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    spec.timeout_unix_nanos = now + *timeout_nanos;
  }
  app::SignerKey signer;
  signer.type = from.type;
  signer.private_key = secret.private_key;
  signer.account_number = account.account_number;
  signer.sequence = f.unordered ? 0 : sequence.value_or(account.sequence);

  if (gas_auto) {
    spec.gas_limit = 0;  // simulate mode meters without a limit
    const GasEstimate estimate =
        Take(Simulate(rpc, app::BuildSignedTx(spec, {signer}, chain_id)), kExitFailure,
             "simulation failed: ");
    gas_limit = static_cast<std::uint64_t>(
        std::ceil(static_cast<double>(estimate.gas_used) * f.gas_adjustment));
    std::cerr << "gas estimate: " << gas_limit << " (used " << estimate.gas_used << " x "
              << f.gas_adjustment << ")\n";
  }
  spec.gas_limit = gas_limit;
  const std::string tx = app::BuildSignedTx(spec, {signer}, chain_id);
  const std::string hash = crypto::Sha256(tx);

  const BroadcastResponse sent = Take(rpc.BroadcastTxSync(tx));
  const std::string hash_hex = sent.hash.empty() ? app::HexEncode(hash, true) : sent.hash;
  json out = {{"txhash", hash_hex},
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
  if (!f.wait) {
    if (IsJson(f.output)) {
      PrintJson(out);
    } else {
      std::cout << "txhash: " << hash_hex << "\ncode: 0\nlog: " << sent.log << "\n";
    }
    return;
  }
  if (!IsJson(f.output)) {
    std::cout << "txhash: " << hash_hex << "\ncode: 0 (CheckTx)\n" << std::flush;
  }
  const TxResponse result = WaitForTx(rpc, hash);
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

void AddTxCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<SendFlags>();
  CLI::App* tx = app.add_subcommand("tx", "Build, sign and broadcast transactions");
  tx->require_subcommand(1);
  CLI::App* send = tx->add_subcommand("send", "Send coins: kairosd tx send FROM TO AMOUNT");
  send->add_option("from", f->from, "Key name (or its address) that signs and pays")->required();
  send->add_option("to", f->to, "Recipient address (or a key name)")->required();
  send->add_option("amount", f->amount, "Coins, e.g. 1000stake or 10atom,5stake")->required();
  send->add_option("--fees", f->fees, "Fee coins, e.g. 500stake");
  send->add_option("--gas", f->gas, "Gas limit, or 'auto' to simulate")->capture_default_str();
  send->add_option("--gas-adjustment", f->gas_adjustment,
                   "With --gas auto: multiply the simulated gas by this")
      ->capture_default_str();
  send->add_flag("--unordered", f->unordered,
                 "Unordered tx (ADR-070): sequence 0, replay-protected by --timeout");
  send->add_option("--timeout", f->timeout,
                   "With --unordered: time to live, e.g. 60s (timeout_timestamp = now + this)");
  send->add_option("--sequence", f->sequence,
                   "Sign with this sequence instead of the account's (several txs per block)");
  send->add_option("--memo", f->memo, "Memo");
  send->add_option("--chain-id", f->chain_id, "Chain id (default: the node's, from /status)");
  send->add_option("--node", f->node, "CometBFT RPC address")->capture_default_str();
  send->add_flag("--wait", f->wait, "Wait (up to 30s) until the tx is in a block");
  send->add_option("--passphrase-file", f->passphrase_file,
                   "Read the keyring passphrase from the first line of this file");
  AddOutputFlag(send, &f->output);
  send->callback([&home, f] { RunSend(home, *f); });
}

// ---- query ------------------------------------------------------------------------------

struct QueryFlags {
  std::string address;
  std::string denom;
  std::string node = kDefaultNodeUrl;
  std::int64_t height = 0;
  std::string output = "text";
};

void RunQueryAccount(const std::string& home, const QueryFlags& f) {
  const std::string address =
      Take(ResolveAddress(Keyring(KeyringPath(home)), f.address), kExitUsage);
  RpcClient rpc = ConnectForQuery(f.node, f.height);
  const Account a = Take(QueryAccount(rpc, address, f.height), kExitFailure, "query account: ");
  if (IsJson(f.output)) {
    json pub = nullptr;
    if (!a.pub_key_type_url.empty()) {
      pub = {{"@type", a.pub_key_type_url}, {"key", Base64Encode(a.pub_key)}};
    }
    PrintJson({{"account",
                {{"@type", kBaseAccountTypeUrl},
                 {"address", a.address},
                 {"pub_key", pub},
                 {"account_number", std::to_string(a.account_number)},
                 {"sequence", std::to_string(a.sequence)}}},
               {"height", std::to_string(a.height)}});
    return;
  }
  std::cout << "address: " << a.address << "\n"
            << "account_number: " << a.account_number << "\n"
            << "sequence: " << a.sequence << "\n"
            << "pub_key: "
            << (a.pub_key_type_url.empty() ? std::string("none")
                                           : a.pub_key_type_url + " " + Base64Encode(a.pub_key))
            << "\n";
}

void RunQueryBalance(const std::string& home, const QueryFlags& f) {
  const std::string address =
      Take(ResolveAddress(Keyring(KeyringPath(home)), f.address), kExitUsage);
  if (!f.denom.empty() && !ante::ValidDenom(f.denom)) {
    Fail(kExitUsage, "invalid --denom '" + f.denom + "'");
  }
  RpcClient rpc = ConnectForQuery(f.node, f.height);
  if (!f.denom.empty()) {
    const CoinAmount c =
        Take(QueryBalance(rpc, address, f.denom, f.height), kExitFailure, "query balance: ");
    if (IsJson(f.output)) {
      PrintJson({{"balance", {{"denom", c.denom}, {"amount", c.amount}}}});
    } else {
      std::cout << c.amount << c.denom << "\n";
    }
    return;
  }
  const std::vector<CoinAmount> coins =
      Take(QueryAllBalances(rpc, address, f.height), kExitFailure, "query balances: ");
  if (IsJson(f.output)) {
    json list = json::array();
    for (const CoinAmount& c : coins) list.push_back({{"denom", c.denom}, {"amount", c.amount}});
    PrintJson({{"balances", list}});
    return;
  }
  if (coins.empty()) std::cout << "no balances\n";
  for (const CoinAmount& c : coins) std::cout << c.amount << c.denom << "\n";
}

void AddQueryCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<QueryFlags>();
  CLI::App* query = app.add_subcommand("query", "Query the chain through a CometBFT node");
  query->alias("q");
  query->require_subcommand(1);
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("address", f->address, "Account address (or a key name)")->required();
    cmd->add_option("--node", f->node, "CometBFT RPC address")->capture_default_str();
    cmd->add_option("--height", f->height, "Height to query (0: latest)");
    AddOutputFlag(cmd, &f->output);
  };
  CLI::App* account = query->add_subcommand("account", "Account number, sequence, public key");
  common(account);
  account->callback([&home, f] { RunQueryAccount(home, *f); });
  CLI::App* balance = query->add_subcommand("balance", "Balances (all, or one with --denom)");
  common(balance);
  balance->add_option("--denom", f->denom, "Only this denom");
  balance->callback([&home, f] { RunQueryBalance(home, *f); });
}

// ---- genesis ----------------------------------------------------------------------------

struct GenesisFlags {
  std::string account;
  std::string coins;
  std::string genesis;
  bool append = false;
};

void RunAddAccount(const std::string& home, const GenesisFlags& f) {
  const std::string path =
      f.genesis.empty() ? (fs::path(home) / "cometbft" / "config" / "genesis.json").string()
                        : f.genesis;
  const std::string address =
      Take(ResolveAddress(Keyring(KeyringPath(home)), f.account), kExitUsage);
  Check(AddGenesisAccountToFile(path, address, f.coins, {.append = f.append}));
  std::cout << "added " << f.coins << " to " << address << " in " << path << "\n";
}

void AddGenesisCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<GenesisFlags>();
  CLI::App* genesis = app.add_subcommand("genesis", "Edit the app_state of genesis.json");
  genesis->require_subcommand(1);
  CLI::App* add = genesis->add_subcommand("add-account", "Add an account and its coins");
  add->add_option("account", f->account, "Address or key name")->required();
  add->add_option("coins", f->coins, "Coins, e.g. 1000000stake")->required();
  add->add_option("--genesis", f->genesis,
                  "genesis.json to edit (default <home>/cometbft/config/genesis.json)");
  add->add_flag("--append", f->append, "Add the coins to an account already in the file");
  add->callback([&home, f] { RunAddAccount(home, *f); });
}

}  // namespace

void AddClientCommands(CLI::App& app, const std::string& home) {
  AddKeysCommands(app, home);
  AddTxCommands(app, home);
  AddQueryCommands(app, home);
  AddGenesisCommands(app, home);
}

}  // namespace kairos::client
