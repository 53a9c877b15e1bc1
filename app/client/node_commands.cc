#include "app/client/node_commands.h"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/client/cli_util.h"
#include "app/client/encoding.h"
#include "app/hex.h"
#include "crypto/hash.h"

namespace kairos::client {

namespace {

using json = nlohmann::json;

// CometBFT's tx_search: per_page defaults to 30 and is capped at 100 (rpc/core/env.go).
constexpr std::uint64_t kDefaultLimit = 30;
constexpr std::uint64_t kMaxLimit = 100;

struct NodeFlags {
  std::string node;    // "" = client.toml's
  std::string output;  // "" = client.toml's
  std::string hash;
  std::string height;
  std::string query;
  std::string page = "1";
  std::string limit = std::to_string(kDefaultLimit);
  std::string order_by = "asc";
};

std::string Str(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return "";
  const json& v = object[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A CometBFT reply without a field it always sends: the node is not the CometBFT v0.38 we know.
[[noreturn]] void Unexpected(const RpcClient& rpc, std::string_view method,
                             const std::exception& e) {
  Fail(kExitFailure, std::string(method) + " at " + rpc.node().text +
                         ": unexpected reply: " + e.what());
}

// ---- status -------------------------------------------------------------------------------

void RunStatus(const NodeFlags& f) {
  RpcClient rpc = Connect(f.node);
  json status = Take(rpc.Get("status", {}));
  json info = Take(rpc.Get("abci_info", {}));
  try {
    const json& node = status.at("node_info");
    const json& sync = status.at("sync_info");
    const json& app = info.at("response");
    if (IsJson(f.output)) {
      json out = status;
      out["app_info"] = app;
      PrintJson(OrderedJson::parse(out.dump()));
      return;
    }
    const std::optional<std::string> app_hash = Base64Decode(Str(app, "last_block_app_hash"));
    std::cout << "chain-id: " << Str(node, "network") << "\n"
              << "height: " << Str(sync, "latest_block_height") << " ("
              << Str(sync, "latest_block_time") << ")\n"
              << "block hash: " << Str(sync, "latest_block_hash") << "\n"
              << "app hash: " << Str(sync, "latest_app_hash") << "\n"
              << "catching up: " << (sync.at("catching_up").get<bool>() ? "true" : "false")
              << "\n"
              << "node: " << rpc.node().text << ", CometBFT " << Str(node, "version")
              << ", moniker " << Str(node, "moniker") << ", id " << Str(node, "id") << "\n"
              << "app: " << Str(app, "data") << " " << Str(app, "version") << " (app version "
              << JsonInt(app, "app_version") << "), committed height "
              << JsonInt(app, "last_block_height") << ", app hash "
              << app::HexEncode(app_hash.value_or(""), true) << "\n";
  } catch (const std::exception& e) {
    Unexpected(rpc, "status", e);
  }
}

// ---- query tx / txs -------------------------------------------------------------------------

// The raw hash of "ABCD..." or "0xabcd..." (64 hex digits); exit 2 otherwise.
std::string ParseTxHash(std::string_view text) {
  std::string_view hex = text;
  if (hex.starts_with("0x") || hex.starts_with("0X")) hex.remove_prefix(2);
  std::string raw;
  if (hex.size() != 64 || !app::HexDecode(hex, &raw)) {
    Fail(kExitUsage, "invalid tx hash '" + std::string(text) +
                         "': expected 64 hex digits (the SHA-256 of the tx, as `tx send` prints "
                         "it)");
  }
  return raw;
}

// A /tx or tx_search entry in the SDK's TxResponse shape (int64s as strings, as the SDK).
OrderedJson TxResponseJson(const json& tx) {
  const json& r = tx.at("tx_result");
  OrderedJson events = OrderedJson::array();
  if (r.contains("events") && r["events"].is_array()) {
    for (const json& e : r["events"]) {
      OrderedJson attributes = OrderedJson::array();
      if (e.contains("attributes") && e["attributes"].is_array()) {
        for (const json& a : e["attributes"]) {
          attributes.push_back({{"key", Str(a, "key")},
                                {"value", Str(a, "value")},
                                {"index", a.value("index", false)}});
        }
      }
      events.push_back({{"type", Str(e, "type")}, {"attributes", attributes}});
    }
  }
  const std::optional<std::string> data = Base64Decode(Str(r, "data"));
  return {{"height", std::to_string(JsonInt(tx, "height"))},
          {"txhash", Str(tx, "hash")},
          {"codespace", Str(r, "codespace")},
          {"code", JsonInt(r, "code")},
          {"data", app::HexEncode(data.value_or(""), true)},
          {"raw_log", Str(r, "log")},
          {"info", Str(r, "info")},
          {"gas_wanted", std::to_string(JsonInt(r, "gas_wanted"))},
          {"gas_used", std::to_string(JsonInt(r, "gas_used"))},
          {"events", events}};
}

void PrintTxText(const OrderedJson& tx) {
  std::cout << "txhash: " << tx["txhash"].get<std::string>() << "\n"
            << "height: " << tx["height"].get<std::string>() << "\n"
            << "code: " << tx["code"].get<std::int64_t>() << "\n";
  if (!tx["codespace"].get<std::string>().empty()) {
    std::cout << "codespace: " << tx["codespace"].get<std::string>() << "\n";
  }
  std::cout << "log: " << tx["raw_log"].get<std::string>() << "\n"
            << "gas: " << tx["gas_used"].get<std::string>() << " used of "
            << tx["gas_wanted"].get<std::string>() << " wanted\n"
            << "events:\n";
  for (const OrderedJson& e : tx["events"]) {
    std::cout << "  " << e["type"].get<std::string>();
    for (const OrderedJson& a : e["attributes"]) {
      std::cout << " " << a["key"].get<std::string>() << "=" << a["value"].get<std::string>();
    }
    std::cout << "\n";
  }
}

void RunQueryTx(const NodeFlags& f) {
  const std::string hash = ParseTxHash(f.hash);
  const std::string hex = app::HexEncode(hash, true);
  RpcClient rpc = Connect(f.node);
  Result<json> found = rpc.Get("tx", {{"hash", "0x" + hex}, {"prove", "false"}});
  if (!found.ok()) {
    // CometBFT: "tx (HASH) not found" for a hash it has not indexed.
    if (found.status().message().find("not found") != std::string::npos) {
      Fail(kExitFailure, "tx " + hex + " is not in a block on " + rpc.node().text +
                             " (not yet, or never: a tx that CheckTx refused is not kept)");
    }
    Fail(kExitFailure, found.status().message());
  }
  OrderedJson tx;
  try {
    tx = TxResponseJson(*found);
  } catch (const std::exception& e) {
    Unexpected(rpc, "tx", e);
  }
  if (IsJson(f.output)) {
    PrintJson(tx);
  } else {
    PrintTxText(tx);
  }
}

void RunQueryTxs(const NodeFlags& f) {
  if (f.query.empty()) Fail(kExitUsage, "--query must not be empty, e.g. \"tx.height=5\"");
  const std::uint64_t page = Take(ParseUint(f.page, "--page"), kExitUsage);
  const std::uint64_t limit = Take(ParseUint(f.limit, "--limit"), kExitUsage);
  if (page == 0) Fail(kExitUsage, "--page counts from 1");
  if (limit == 0 || limit > kMaxLimit) {
    Fail(kExitUsage, "--limit must be from 1 to " + std::to_string(kMaxLimit) +
                         " (CometBFT's most per page)");
  }
  RpcClient rpc = Connect(f.node);
  // POST: the query holds quotes and spaces that a GET's URI form would have to escape twice.
  const json result = Take(rpc.Call("tx_search", {{"query", f.query},
                                                  {"prove", false},
                                                  {"page", std::to_string(page)},
                                                  {"per_page", std::to_string(limit)},
                                                  {"order_by", f.order_by}}));
  OrderedJson out;
  try {
    const std::int64_t total = JsonInt(result, "total_count");
    OrderedJson txs = OrderedJson::array();
    for (const json& tx : result.at("txs")) txs.push_back(TxResponseJson(tx));
    const auto per_page = static_cast<std::int64_t>(limit);
    out = {{"total_count", std::to_string(total)},
           {"count", std::to_string(txs.size())},
           {"page_number", std::to_string(page)},
           {"page_total", std::to_string(total == 0 ? 0 : (total + per_page - 1) / per_page)},
           {"limit", std::to_string(limit)},
           {"txs", txs}};
  } catch (const std::exception& e) {
    Unexpected(rpc, "tx_search", e);
  }
  if (IsJson(f.output)) {
    PrintJson(out);
    return;
  }
  std::cout << out["total_count"].get<std::string>() << " tx(s) match, page "
            << out["page_number"].get<std::string>() << " of "
            << out["page_total"].get<std::string>() << " (" << limit << " per page)\n";
  for (const OrderedJson& tx : out["txs"]) {
    std::cout << "height " << tx["height"].get<std::string>() << "  "
              << tx["txhash"].get<std::string>() << "  code " << tx["code"].get<std::int64_t>()
              << "\n";
  }
}

// ---- query block --------------------------------------------------------------------------

void RunQueryBlock(const NodeFlags& f) {
  std::vector<std::pair<std::string, std::string>> args;
  if (!f.height.empty()) {
    const std::uint64_t h = Take(ParseUint(f.height, "HEIGHT"), kExitUsage);
    if (h == 0) Fail(kExitUsage, "HEIGHT counts from 1 (leave it out for the latest block)");
    args.emplace_back("height", std::to_string(h));
  }
  RpcClient rpc = Connect(f.node);
  const json result = Take(rpc.Get("block", args));
  if (IsJson(f.output)) {
    PrintJson(OrderedJson::parse(result.dump()));
    return;
  }
  try {
    const json& header = result.at("block").at("header");
    const json& txs = result.at("block").at("data").value("txs", json::array());
    std::cout << "height: " << Str(header, "height") << "\n"
              << "hash: " << Str(result.at("block_id"), "hash") << "\n"
              << "time: " << Str(header, "time") << "\n"
              << "chain-id: " << Str(header, "chain_id") << "\n"
              << "proposer: " << Str(header, "proposer_address") << "\n"
              << "app hash: " << Str(header, "app_hash") << " (the state after block "
              << JsonInt(header, "height") - 1 << ")\n"
              << "txs: " << (txs.is_array() ? txs.size() : 0) << "\n";
    if (txs.is_array()) {
      for (const json& tx : txs) {
        const std::optional<std::string> bytes = Base64Decode(tx.get<std::string>());
        if (!bytes) throw std::runtime_error("a tx is not base64");
        std::cout << "  " << app::HexEncode(crypto::Sha256(*bytes), true) << "\n";
      }
    }
  } catch (const std::exception& e) {
    Unexpected(rpc, "block", e);
  }
}

void AddCommon(CLI::App* cmd, NodeFlags* f) {
  cmd->add_option("--node", f->node, kNodeFlagHelp);
  AddOutputFlag(cmd, &f->output);
}

}  // namespace

void AddStatusCommand(CLI::App& app) {
  auto f = std::make_shared<NodeFlags>();
  CLI::App* status = app.add_subcommand(
      "status", "The node's chain, height, app hash, catching-up state and versions");
  AddCommon(status, f.get());
  status->callback([f] { RunStatus(*f); });
}

void AddNodeQueryCommands(CLI::App& query) {
  auto f = std::make_shared<NodeFlags>();
  CLI::App* tx = query.add_subcommand("tx", "A tx in a block by its hash: code, log, gas, events");
  tx->add_option("hash", f->hash, "The tx hash (64 hex digits, as `tx send` prints it)")
      ->required();
  AddCommon(tx, f.get());
  tx->callback([f] { RunQueryTx(*f); });

  CLI::App* block = query.add_subcommand("block", "A block (default: the latest)");
  block->add_option("height", f->height, "Block height");
  AddCommon(block, f.get());
  block->callback([f] { RunQueryBlock(*f); });

  CLI::App* txs = query.add_subcommand(
      "txs", "Txs whose events match a query, e.g. --query \"transfer.recipient='kairos1...'\"");
  txs->add_option("--query", f->query,
                  "CometBFT event query: conditions joined by AND, e.g. "
                  "\"transfer.sender='kairos1...' AND tx.height>5\"")
      ->required();
  txs->add_option("--page", f->page, "Page number, from 1")->capture_default_str();
  txs->add_option("--limit", f->limit, "Txs per page, at most 100")->capture_default_str();
  txs->add_option("--order-by", f->order_by, "asc or desc (by height)")
      ->check(CLI::IsMember({"asc", "desc"}))
      ->capture_default_str();
  AddCommon(txs, f.get());
  txs->callback([f] { RunQueryTxs(*f); });
}

}  // namespace kairos::client
