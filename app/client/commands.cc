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
#include "app/client/bench_load.h"
#include "app/client/snapshot_commands.h"
#include "app/client/chain_queries.h"
#include "app/client/cli_util.h"
#include "app/client/config_commands.h"
#include "app/client/locks_commands.h"
#include "app/client/method_query.h"
#include "app/client/params_commands.h"
#include "app/client/poa_commands.h"
#include "app/client/node_commands.h"
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
#include "kairos/mempool/v1/query.pb.h"
#include "app/bank/msgs.h"

namespace kairos::client {

namespace {

namespace fs = std::filesystem;
using json = OrderedJson;

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
  std::string output;  // "" = client.toml's
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
  const std::string passphrase = Take(KeyringPassphrase(
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
      Take(KeyringPassphrase(f.passphrase_file, "Passphrase for key '" + key.name + "': ", false));
  const KeySecret secret = Take(keyring.Unlock(key.name, passphrase));
  if (f.hex || secret.mnemonic.empty()) {
    std::cout << app::HexEncode(secret.private_key) << "\n";
  } else {
    std::cout << secret.mnemonic << "\n";
  }
}

void AddKeysCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<KeysFlags>();
  CLI::App* keys = app.add_subcommand(
      "keys", "Manage the keys in <home>/keyring.json (keyring-test.json: --keyring-backend test)");
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
  TxFlags tx;
};

void RunSend(const std::string& home, const SendFlags& f) {
  // Everything that can be checked offline first (exit 2).
  ante::Coins amount = Take(ante::Coins::Parse(f.amount), kExitUsage, "invalid amount: ");
  if (amount.empty()) Fail(kExitUsage, "invalid amount '" + f.amount + "': nothing to send");
  SignAndBroadcast(home, f.from, f.tx, /*simulate_first=*/false,
                   [&](const Keyring& keyring, const KeyInfo& from, RpcClient&) {
                     const std::string to = Take(ResolveAddress(keyring, f.to), kExitUsage);
                     app::bank::MsgSend msg;
                     msg.from_address = from.address;
                     msg.to_address = to;
                     msg.from = *crypto::DecodeAccountAddress(from.address);
                     msg.to = *crypto::DecodeAccountAddress(to);
                     msg.amount = amount;
                     return std::vector<ante::Msg>{msg};
                   });
}

void AddTxCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<SendFlags>();
  CLI::App* tx = app.add_subcommand("tx", "Build, sign and broadcast transactions");
  tx->require_subcommand(1);
  CLI::App* send = tx->add_subcommand("send", "Send coins: kairosd tx send FROM TO AMOUNT");
  send->add_option("from", f->from, "Key name (or its address) that signs and pays")->required();
  send->add_option("to", f->to, "Recipient address (or a key name)")->required();
  send->add_option("amount", f->amount, "Coins, e.g. 1000stake or 10atom,5stake")->required();
  AddTxFlags(send, &f->tx);
  send->callback([&home, f] { RunSend(home, *f); });
  AddAuthTxCommands(*tx, home);
  AddBankTxCommands(*tx, home);
  AddLocksTxCommands(*tx, home);
  AddPoaTxCommands(*tx, home);
}

// ---- query ------------------------------------------------------------------------------

struct QueryFlags {
  std::string address;
  std::string denom;
  std::string node;  // "" = client.toml's
  std::int64_t height = 0;
  std::string output;  // "" = client.toml's
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

// A sender's txs in the app mempool of the node asked (not part of the state: no height).
void RunQueryMempool(const std::string& home, const QueryFlags& f) {
  const std::string address =
      Take(ResolveAddress(Keyring(KeyringPath(home)), f.address), kExitUsage);
  RpcClient rpc = Connect(f.node);
  kairos::mempool::v1::QuerySenderTxsRequest req;
  req.set_address(address);
  kairos::mempool::v1::QuerySenderTxsResponse res;
  Take(QueryProto(rpc, "/kairos.mempool.v1.Query/SenderTxs", req, 0, &res), kExitFailure,
       "query mempool: ");
  using kairos::mempool::v1::PooledTx;
  const auto state = [](const PooledTx& t) {
    return t.state() == PooledTx::STATE_PARKED ? "parked" : "ready";
  };
  if (IsJson(f.output)) {
    json txs = json::array();
    for (const PooledTx& t : res.txs()) {
      json j = {{"hash", app::HexEncode(t.hash(), true)}, {"state", state(t)}};
      if (t.unordered()) {
        j["unordered"] = true;
        j["timeout"] = ante::FormatUnixNanos(t.timeout_unix_nanos());
      } else {
        j["sequence"] = std::to_string(t.sequence());
      }
      j["fee_per_gas"] = t.fee_per_gas();
      j["gas_wanted"] = std::to_string(t.gas_wanted());
      j["bytes"] = std::to_string(t.bytes());
      j["arrival_height"] = std::to_string(t.arrival_height());
      txs.push_back(std::move(j));
    }
    PrintJson({{"address", address},
               {"committed_sequence", std::to_string(res.committed_sequence())},
               {"next_sequence", std::to_string(res.next_sequence())},
               {"txs", txs}});
    return;
  }
  if (res.txs().empty()) {
    std::cout << "no txs of " << address << " in the mempool\n";
    return;
  }
  std::cout << "committed sequence: " << res.committed_sequence() << "\n"
            << "next sequence:      " << res.next_sequence()
            << " (the pool lacks it: ordered txs above it are parked)\n";
  for (const PooledTx& t : res.txs()) {
    std::cout << (t.unordered() ? "unordered, timeout " +
                                      ante::FormatUnixNanos(t.timeout_unix_nanos())
                                : "sequence " + std::to_string(t.sequence()))
              << ": " << state(t) << ", " << t.fee_per_gas() << " per gas, gas "
              << t.gas_wanted() << ", " << t.bytes() << " bytes, since height "
              << t.arrival_height() << ", hash " << app::HexEncode(t.hash(), true) << "\n";
  }
}

void AddQueryCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<QueryFlags>();
  CLI::App* query = app.add_subcommand("query", "Query the chain through a CometBFT node");
  query->alias("q");
  query->require_subcommand(1);
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("address", f->address, "Account address (or a key name)")->required();
    cmd->add_option("--node", f->node, kNodeFlagHelp);
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
  CLI::App* mempool = query->add_subcommand(
      "mempool", "An account's txs in the node's app mempool: ready, or parked behind a "
                 "sequence gap");
  mempool->add_option("address", f->address, "Account address (or a key name)")->required();
  mempool->add_option("--node", f->node, kNodeFlagHelp);
  AddOutputFlag(mempool, &f->output);
  mempool->callback([&home, f] { RunQueryMempool(home, *f); });
  AddNodeQueryCommands(*query);
  AddAuthQueryCommands(*query, home);
  AddBankQueryCommands(*query, home);
  AddLocksQueryCommands(*query, home);
  AddPoaQueryCommands(*query, home);
  AddMethodQueryCommand(*query);
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
  // A bad coins argument is a bad argument (exit 2), checked before the file is read.
  const ante::Coins coins = Take(ante::Coins::Parse(f.coins), kExitUsage, "invalid coins: ");
  if (coins.empty()) Fail(kExitUsage, "invalid coins '" + f.coins + "': no coins, e.g. 1000stake");
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

  auto poa = std::make_shared<GenesisFlags>();
  CLI::App* set_poa = genesis->add_subcommand(
      "set-poa",
      "Make the chain proof of authority: app_state.poa from the genesis validators, and its "
      "authority");
  set_poa->add_option("--authority", poa->account,
                      "Who may change validators and params: an address or key name (default: "
                      "none, or the section's)");
  set_poa->add_option("--genesis", poa->genesis,
                      "genesis.json to edit (default <home>/cometbft/config/genesis.json)");
  set_poa->callback([&home, poa] {
    const std::string path =
        poa->genesis.empty()
            ? (fs::path(home) / "cometbft" / "config" / "genesis.json").string()
            : poa->genesis;
    const std::string authority =
        poa->account.empty()
            ? std::string()
            : Take(ResolveAddress(Keyring(KeyringPath(home)), poa->account), kExitUsage);
    Check(SetGenesisPoaInFile(path, authority));
    std::cout << "app_state.poa of " << path << ": the genesis validators"
              << (authority.empty() ? "" : ", authority " + authority) << "\n";
  });
}

}  // namespace

void AddClientCommands(CLI::App& app, const std::string& home) {
  // Read when a command runs (after parsing): --keyring-backend may come anywhere on the line.
  static std::string keyring_backend;
  keyring_backend.clear();
  app.add_option("--keyring-backend", keyring_backend,
                 "Keyring: file (keyring.json, your passphrase) or test (keyring-test.json, a "
                 "fixed passphrase: local dev chains only); default: client.toml's, else file")
      ->check(CLI::IsMember({kKeyringBackendFile, kKeyringBackendTest}));
  BindClientContext(&home, &keyring_backend);
  AddStatusCommand(app);
  AddConfigCommands(app, home);
  AddKeysCommands(app, home);
  AddTxCommands(app, home);
  AddQueryCommands(app, home);
  AddGenesisCommands(app, home);
  AddBenchCommands(app, home);
  AddSnapshotCommands(app, home);
}

}  // namespace kairos::client
