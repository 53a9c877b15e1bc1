// Unit tests for kairosd's client commands as a user runs them (app/client/: node_commands,
// config_commands, cli_errors, the client config and the keyring backends): each command line is
// parsed and run in-process against a canned CometBFT RPC (canned_http_server.h), and the test
// checks stdout, stderr, the exit code and the requests the node received.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/client/cli_errors.h"
#include "app/client/client_config.h"
#include "app/client/commands.h"
#include "app/client/encoding.h"
#include "app/client/file_util.h"
#include "app/hex.h"
#include "canned_http_server.h"
#include "crypto/hash.h"
#include "temp_dir.h"

using kairos::client::Base64Encode;
using kairos::test::CannedServer;
using kairos::test::TempDir;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

// `kairosd ARGS --home HOME` through the same root setup as app/main.cc (the client commands
// only: init, start and version are main's own).
CliRun Kairosd(const std::string& home, std::vector<std::string> args) {
  CLI::App cli{"kairosd: an ABCI++ application server for CometBFT", "kairosd"};
  cli.require_subcommand(1);
  cli.fallthrough();
  std::string home_flag = home;
  cli.add_option("--home", home_flag, "Node home directory");
  kairos::client::AddClientCommands(cli, home_flag);
  args.insert(args.begin(), "kairosd");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  std::optional<int> code;
  try {
    code = kairos::client::ParseCommandLine(cli, static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    throw;
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code.value_or(0), out.str(), err.str()};
}

std::string RpcResult(const std::string& result) {
  return R"({"jsonrpc":"2.0","id":-1,"result":)" + result + "}";
}

std::string RpcError(const std::string& data) {
  return R"({"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error","data":")" +
         data + "\"}}";
}

// An address nothing listens on (bound, then closed).
std::string DeadUrl() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor probe(
      ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return "http://127.0.0.1:" + std::to_string(probe.local_endpoint().port());
}

// The request line of a recorded request: "GET /status HTTP/1.1".
std::string RequestLine(const std::string& request) {
  return request.substr(0, request.find("\r\n"));
}

const char* kStatus = R"({"node_info":{"protocol_version":{"p2p":"8","block":"11","app":"1"},
  "id":"0b31f90b2e5afa10ac7b5635dca12979dd7a1ce1","listen_addr":"tcp://127.0.0.1:26656",
  "network":"kairos-dev","version":"0.38.25","channels":"40","moniker":"dev",
  "other":{"tx_index":"on","rpc_address":"tcp://127.0.0.1:26657"}},
  "sync_info":{"latest_block_hash":"8E4A0F6CB3D1B0A0F2A2AB6F63C0E6D28F6B8A3A5C2D35E2B3D4E5F6A7B8C9D0",
  "latest_app_hash":"A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90",
  "latest_block_height":"42","latest_block_time":"2026-01-02T03:04:05.678Z",
  "earliest_block_height":"1","catching_up":false},
  "validator_info":{"address":"AB","pub_key":{"type":"tendermint/PubKeyEd25519","value":"AA=="},
  "voting_power":"10"}})";

const char* kAbciInfo = R"({"response":{"data":"kairos","version":"0.9.0","app_version":"1",
  "last_block_height":"42","last_block_app_hash":"obLD1OX2BxgpOktcbX6PkKGyw9Tl9gcYKTpLXG1+j5A="}})";

const std::string kHash = "5E7D2C4B1A09F8E7D6C5B4A39281706F5E4D3C2B1A09F8E7D6C5B4A392817060";

std::string TxJson(const std::string& hash, int height, int code, const std::string& log) {
  return R"({"hash":")" + hash + R"(","height":")" + std::to_string(height) +
         R"(","index":0,"tx_result":{"code":)" + std::to_string(code) +
         R"(,"data":null,"log":")" + log + R"(","info":"","gas_wanted":"200000",
         "gas_used":"61234","events":[{"type":"tx","attributes":[{"key":"fee","value":"2000stake",
         "index":true}]},{"type":"transfer","attributes":[{"key":"recipient","value":"kairos1bob",
         "index":true},{"key":"amount","value":"1000stake","index":true}]}],
         "codespace":")" + (code == 0 ? "" : "sdk") + R"("},"tx":"CgA="})";
}

}  // namespace

TEST_CASE("status: height, hashes, catching up and both versions; JSON adds app_info",
          "[cli]") {
  TempDir home;
  CannedServer node({RpcResult(kStatus), RpcResult(kAbciInfo), RpcResult(kStatus),
                     RpcResult(kAbciInfo)});
  const CliRun text = Kairosd(home.path(), {"status", "--node", node.url()});
  REQUIRE(text.code == 0);
  CHECK(text.err.empty());
  CHECK_THAT(text.out, Contains("chain-id: kairos-dev\n"));
  CHECK_THAT(text.out, Contains("height: 42 (2026-01-02T03:04:05.678Z)\n"));
  CHECK_THAT(text.out, Contains("app hash: A1B2C3D4E5F60718293A4B5C6D7E8F90"
                                "A1B2C3D4E5F60718293A4B5C6D7E8F90\n"));
  CHECK_THAT(text.out, Contains("catching up: false\n"));
  CHECK_THAT(text.out, Contains("CometBFT 0.38.25"));
  CHECK_THAT(text.out, Contains("app: kairos 0.9.0 (app version 1), committed height 42, app hash "
                                "A1B2C3D4E5F60718293A4B5C6D7E8F90"
                                "A1B2C3D4E5F60718293A4B5C6D7E8F90"));

  const CliRun j = Kairosd(home.path(), {"status", "--node", node.url(), "-o", "json"});
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc["sync_info"]["latest_block_height"] == "42");
  CHECK(doc["node_info"]["network"] == "kairos-dev");
  CHECK(doc["app_info"]["version"] == "0.9.0");
  const std::vector<std::string>& requests = node.requests();
  REQUIRE(requests.size() == 4);
  CHECK(RequestLine(requests[0]) == "GET /status HTTP/1.1");
  CHECK(RequestLine(requests[1]) == "GET /abci_info HTTP/1.1");
}

TEST_CASE("every node command says when no node answers (exit 1)", "[cli]") {
  TempDir home;
  const std::string dead = DeadUrl();
  for (std::vector<std::string> args :
       {std::vector<std::string>{"status"}, {"query", "tx", kHash}, {"query", "block"},
        {"query", "txs", "--query", "tx.height=1"}}) {
    args.insert(args.end(), {"--node", dead});
    INFO(args[0] + " " + args[1]);
    const CliRun r = Kairosd(home.path(), args);
    CHECK(r.code == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "error: no CometBFT node at " + dead + ": connection refused\n");
  }
}

TEST_CASE("query tx: code, log, gas, height and events; a bad hash is exit 2; not found exit 1",
          "[cli]") {
  TempDir home;
  SECTION("bad hashes are refused before anything is sent") {
    for (const std::string& bad : std::vector<std::string>{"xyz", kHash.substr(1), kHash + "00",
                                                         "0x" + kHash.substr(2) + "G"}) {
      const CliRun r = Kairosd(home.path(), {"query", "tx", bad, "--node", DeadUrl()});
      CHECK(r.code == 2);
      CHECK(r.err == "error: invalid tx hash '" + bad +
                         "': expected 64 hex digits (the SHA-256 of the tx, as `tx send` prints "
                         "it)\n");
    }
  }
  SECTION("found, in text and JSON") {
    CannedServer node(
        {RpcResult(TxJson(kHash, 7, 0, "")), RpcResult(TxJson(kHash, 7, 5, "out of funds"))});
    // Lower case and a 0x prefix are accepted; the node is asked for the upper-case hash.
    std::string lower = kHash;
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    const CliRun text = Kairosd(home.path(), {"query", "tx", "0x" + lower, "--node", node.url()});
    REQUIRE(text.code == 0);
    CHECK(text.out == "txhash: " + kHash + "\nheight: 7\ncode: 0\nlog: \n"
                      "gas: 61234 used of 200000 wanted\nevents:\n  tx fee=2000stake\n"
                      "  transfer recipient=kairos1bob amount=1000stake\n");
    const CliRun j = Kairosd(home.path(), {"q", "tx", kHash, "--node", node.url(), "-o", "json"});
    REQUIRE(j.code == 0);
    const json doc = json::parse(j.out);
    CHECK(doc["txhash"] == kHash);
    CHECK(doc["height"] == "7");
    CHECK(doc["code"] == 5);
    CHECK(doc["codespace"] == "sdk");
    CHECK(doc["raw_log"] == "out of funds");
    CHECK(doc["gas_used"] == "61234");
    CHECK(doc["events"][1]["type"] == "transfer");
    CHECK(doc["events"][1]["attributes"][0] ==
          json({{"key", "recipient"}, {"value", "kairos1bob"}, {"index", true}}));
    const auto& requests = node.requests();
    CHECK(RequestLine(requests[0]) == "GET /tx?hash=0x" + kHash + "&prove=false HTTP/1.1");
  }
  SECTION("not in a block") {
    CannedServer node({RpcError("tx (" + kHash + ") not found")});
    const CliRun r = Kairosd(home.path(), {"query", "tx", kHash, "--node", node.url()});
    CHECK(r.code == 1);
    CHECK(r.err == "error: tx " + kHash + " is not in a block on " + node.url() +
                       " (not yet, or never: a tx that CheckTx refused is not kept)\n");
  }
}

TEST_CASE("query block: the latest or a height; its txs by hash; bad heights are exit 2",
          "[cli]") {
  TempDir home;
  const std::string tx1 = "tx one", tx2 = "tx two";
  const std::string block = R"({"block_id":{"hash":"BLOCKHASH","parts":{"total":1,"hash":"P"}},
    "block":{"header":{"chain_id":"kairos-dev","height":"9","time":"2026-01-02T03:04:05Z",
    "app_hash":"APPHASH","proposer_address":"PROPOSER"},"data":{"txs":[")" +
                            Base64Encode(tx1) + R"(",")" + Base64Encode(tx2) + R"("]},
    "evidence":{"evidence":[]},"last_commit":null}})";
  CannedServer node({RpcResult(block), RpcResult(block),
                     RpcError("height 99 must be less than or equal to the current blockchain "
                              "height 9")});
  const CliRun latest = Kairosd(home.path(), {"query", "block", "--node", node.url()});
  REQUIRE(latest.code == 0);
  CHECK(latest.out == "height: 9\nhash: BLOCKHASH\ntime: 2026-01-02T03:04:05Z\n"
                      "chain-id: kairos-dev\nproposer: PROPOSER\n"
                      "app hash: APPHASH (the state after block 8)\ntxs: 2\n  " +
                          kairos::app::HexEncode(kairos::crypto::Sha256(tx1), true) + "\n  " +
                          kairos::app::HexEncode(kairos::crypto::Sha256(tx2), true) + "\n");
  const CliRun j =
      Kairosd(home.path(), {"query", "block", "9", "--node", node.url(), "-o", "json"});
  REQUIRE(j.code == 0);
  CHECK(json::parse(j.out)["block"]["header"]["height"] == "9");
  const CliRun future = Kairosd(home.path(), {"query", "block", "99", "--node", node.url()});
  CHECK(future.code == 1);
  CHECK_THAT(future.err, Contains("height 99 must be less than or equal to the current blockchain "
                                  "height 9"));
  const auto& requests = node.requests();
  CHECK(RequestLine(requests[0]) == "GET /block HTTP/1.1");
  CHECK(RequestLine(requests[1]) == "GET /block?height=9 HTTP/1.1");

  for (const std::string bad : {"0", "-3", "ten"}) {
    const CliRun r = Kairosd(home.path(), {"query", "block", bad, "--node", DeadUrl()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, StartsWith("error: HEIGHT "));
  }
}

TEST_CASE("query txs: tx_search with the query, page and limit; counts and hashes", "[cli]") {
  TempDir home;
  const std::string other = std::string(64, 'A');
  CannedServer node({RpcResult(R"({"txs":[)" + TxJson(kHash, 3, 0, "") + "," +
                               TxJson(other, 5, 0, "") + R"(],"total_count":"32"})"),
                     RpcResult(R"({"txs":[],"total_count":"0"})")});
  const std::string query = "transfer.recipient='kairos1bob'";
  const CliRun text = Kairosd(home.path(), {"query", "txs", "--query", query, "--limit", "2",
                                            "--node", node.url()});
  REQUIRE(text.code == 0);
  CHECK(text.out == "32 tx(s) match, page 1 of 16 (2 per page)\nheight 3  " + kHash +
                        "  code 0\nheight 5  " + other + "  code 0\n");
  const CliRun j = Kairosd(home.path(), {"query", "txs", "--query", "tx.height=100", "--page",
                                         "2", "--order-by", "desc", "--node", node.url(), "-o",
                                         "json"});
  REQUIRE(j.code == 0);
  CHECK(json::parse(j.out) == json({{"total_count", "0"}, {"count", "0"}, {"page_number", "2"},
                                    {"page_total", "0"}, {"limit", "30"},
                                    {"txs", json::array()}}));
  const auto& requests = node.requests();
  const json first = json::parse(requests[0].substr(requests[0].find("\r\n\r\n") + 4));
  CHECK(first["method"] == "tx_search");
  CHECK(first["params"] == json({{"query", query}, {"prove", false}, {"page", "1"},
                                 {"per_page", "2"}, {"order_by", "asc"}}));
  const json second = json::parse(requests[1].substr(requests[1].find("\r\n\r\n") + 4));
  CHECK(second["params"]["order_by"] == "desc");

  for (const auto& [flag, value, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--limit", "0", "--limit must be from 1 to 100"},
           {"--limit", "101", "--limit must be from 1 to 100"},
           {"--page", "0", "--page counts from 1"},
           {"--query", "", "--query must not be empty"}}) {
    std::vector<std::string> args = {"query", "txs", "--node", DeadUrl()};
    if (flag != "--query") args.insert(args.end(), {"--query", "tx.height=1"});
    args.insert(args.end(), {flag, value});
    const CliRun r = Kairosd(home.path(), args);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, StartsWith("error: " + message));
  }
}

TEST_CASE("config set/get: client.toml holds node, output, chain-id, keyring-backend; flags win",
          "[cli]") {
  TempDir home;
  const std::string path = home / "client.toml";
  // No file: the defaults, and nothing is written by reading.
  const CliRun defaults = Kairosd(home.path(), {"config"});
  REQUIRE(defaults.code == 0);
  CHECK(defaults.out == "chain-id = \"\"\nkeyring-backend = \"file\"\noutput = \"text\"\n"
                        "node = \"http://127.0.0.1:26657\"\n");
  CHECK_FALSE(fs::exists(path));

  CannedServer node({RpcResult(kStatus), RpcResult(kAbciInfo), RpcResult(kStatus),
                     RpcResult(kAbciInfo)});
  const CliRun set = Kairosd(home.path(), {"config", "set", "node", node.url()});
  REQUIRE(set.code == 0);
  CHECK(set.out == "node = \"" + node.url() + "\" in " + path + "\n");
  // The SDK's form, with "client", and tcp:// normalised to http://.
  REQUIRE(Kairosd(home.path(), {"config", "set", "client", "output", "json"}).code == 0);
  CHECK(Kairosd(home.path(), {"config", "get", "node"}).out == node.url() + "\n");
  const std::string text = *kairos::client::ReadWholeFile(path);
  CHECK_THAT(text, Contains("node = \"" + node.url() + "\"\n") && Contains("output = \"json\"\n"));

  // status without --node goes to client.toml's node and prints JSON (its output).
  const CliRun j = Kairosd(home.path(), {"status"});
  REQUIRE(j.code == 0);
  CHECK(json::parse(j.out)["node_info"]["network"] == "kairos-dev");
  // Flags override the file: --output text.
  const CliRun t = Kairosd(home.path(), {"status", "-o", "text"});
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, StartsWith("chain-id: kairos-dev\n"));
  CHECK(node.requests().size() == 4);
  // --node overrides it too: a dead node named on the line is the one asked.
  const std::string dead = DeadUrl();
  CHECK(Kairosd(home.path(), {"status", "--node", dead}).err ==
        "error: no CometBFT node at " + dead + ": connection refused\n");

  SECTION("bad keys and values: exit 2, the file unchanged") {
    const CliRun unknown = Kairosd(home.path(), {"config", "set", "nodes", "x"});
    CHECK(unknown.code == 2);
    CHECK(unknown.err == "error: unknown client config key 'nodes' (known keys: chain-id, "
                         "keyring-backend, output, node)\n");
    const CliRun bad_output = Kairosd(home.path(), {"config", "set", "output", "yaml"});
    CHECK(bad_output.code == 2);
    CHECK(bad_output.err == "error: client config output = \"yaml\": unknown output format; "
                            "expected \"text\" or \"json\"\n");
    const CliRun bad_node = Kairosd(home.path(), {"config", "set", "node", "localhost:26657"});
    CHECK(bad_node.code == 2);
    CHECK_THAT(bad_node.err, Contains("expected http://HOST:PORT"));
    const CliRun bad_get = Kairosd(home.path(), {"config", "get", "colour"});
    CHECK(bad_get.code == 2);
    CHECK(*kairos::client::ReadWholeFile(path) == text);
  }
  SECTION("a hand-edited file with a typo stops every command that reads it") {
    std::ofstream(path) << "nod = \"http://127.0.0.1:1\"\n";
    const CliRun r = Kairosd(home.path(), {"status"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + path + ": unknown key 'nod' (known keys: chain-id, "
                   "keyring-backend, output, node)\n");
  }
}

TEST_CASE("unknown commands and flags name themselves and list the commands", "[cli]") {
  TempDir home;
  const CliRun root = Kairosd(home.path(), {"foo"});
  CHECK(root.code == 109);
  CHECK(root.out.empty());
  CHECK_THAT(root.err, StartsWith("error: unknown command 'foo' for 'kairosd'\n"
                                  "Commands of 'kairosd':\n"));
  for (const char* cmd : {"status", "config", "keys", "tx", "query", "genesis", "bench"}) {
    CHECK_THAT(root.err, Contains(std::string("\n  ") + cmd + " "));
  }
  const CliRun query = Kairosd(home.path(), {"query", "txx", "--node", "http://127.0.0.1:1"});
  CHECK(query.code == 109);
  CHECK_THAT(query.err, StartsWith("error: unknown command 'txx' for 'kairosd query'\n"));
  for (const char* cmd : {"account", "balance", "tx", "block", "txs", "locks"}) {
    CHECK_THAT(query.err, Contains(std::string("\n  ") + cmd + " "));
  }
  const CliRun none = Kairosd(home.path(), {"query"});
  CHECK(none.code == 106);
  CHECK_THAT(none.err, StartsWith("error: 'kairosd query' needs a command\n"));
  const CliRun flag = Kairosd(home.path(), {"status", "--bogus"});
  CHECK(flag.code == 109);
  CHECK(flag.err == "error: unknown flag '--bogus' for 'kairosd status'\n"
                    "Run 'kairosd status --help' for its arguments and flags.\n");
  const CliRun extra = Kairosd(home.path(), {"query", "tx", kHash, "extra"});
  CHECK(extra.code == 109);
  CHECK_THAT(extra.err, StartsWith("error: unexpected argument 'extra' for 'kairosd query tx'\n"));
  const CliRun missing = Kairosd(home.path(), {"query", "tx"});
  CHECK(missing.code == 106);
  CHECK_THAT(missing.err, StartsWith("error: kairosd query tx: hash is required\n"));
}

TEST_CASE("keyring backends: test keeps its keys apart and needs no passphrase", "[cli]") {
  TempDir home;
  ::unsetenv("KAIROS_KEYRING_PASSPHRASE");
  const CliRun added = Kairosd(home.path(), {"keys", "add", "dev0", "--keyring-backend", "test",
                                             "-o", "json"});
  REQUIRE(added.code == 0);
  const json key = json::parse(added.out);
  CHECK(key["name"] == "dev0");
  CHECK(fs::exists(home / "keyring-test.json"));
  CHECK_FALSE(fs::exists(home / "keyring.json"));
  // The file backend does not see it; the test backend does, from the flag or from client.toml.
  const CliRun file_list = Kairosd(home.path(), {"keys", "list"});
  CHECK(file_list.out.empty());
  CHECK_THAT(file_list.err, Contains("no keys in " + (home / "keyring.json")));
  REQUIRE(Kairosd(home.path(), {"config", "set", "keyring-backend", "test"}).code == 0);
  const CliRun test_list = Kairosd(home.path(), {"keys", "list"});
  CHECK(test_list.out == "dev0\tsecp256k1\t" + key["address"].get<std::string>() + "\n");
  // Its mnemonic comes back without a passphrase (there is no terminal here either).
  const CliRun exported = Kairosd(home.path(), {"keys", "export", "dev0"});
  REQUIRE(exported.code == 0);
  CHECK(exported.out == key["mnemonic"].get<std::string>() + "\n");
  // The flag wins over the file: alice goes to keyring.json, sealed with the passphrase given.
  ::setenv("KAIROS_KEYRING_PASSPHRASE", "a passphrase", 1);
  const CliRun file_add = Kairosd(home.path(), {"keys", "add", "alice", "--keyring-backend",
                                                "file"});
  ::unsetenv("KAIROS_KEYRING_PASSPHRASE");
  CHECK(file_add.code == 0);
  CHECK(fs::exists(home / "keyring.json"));
  CHECK(Kairosd(home.path(), {"keys", "list"}).out == test_list.out);
  const CliRun bad = Kairosd(home.path(), {"keys", "list", "--keyring-backend", "os"});
  CHECK(bad.code == 105);
}

TEST_CASE("genesis add-account: bad coins are exit 2; a started chain is refused", "[cli]") {
  TempDir home;
  const std::string config_dir = home / "cometbft/config";
  fs::create_directories(config_dir);
  fs::create_directories(home / "cometbft/data");
  const std::string genesis = config_dir + "/genesis.json";
  std::ofstream(genesis) << R"({"chain_id":"c","app_state":""})";
  const std::string state = home / "cometbft/data/priv_validator_state.json";
  std::ofstream(state) << R"({"height":"0","round":0,"step":0})";
  const std::string alice = "kairos19rl4cm2hmr8afy4kldpxz3fka4jguq0attdgdt";

  const CliRun no_denom = Kairosd(home.path(), {"genesis", "add-account", alice, "1000"});
  CHECK(no_denom.code == 2);
  CHECK(no_denom.err == "error: invalid coins: invalid coin expression: 1000 has no denom; "
                        "expected an amount then a denom, e.g. 1000stake\n");
  const CliRun zero = Kairosd(home.path(), {"genesis", "add-account", alice, "0stake"});
  CHECK(zero.code == 2);
  REQUIRE(Kairosd(home.path(), {"genesis", "add-account", alice, "1000stake"}).code == 0);

  std::ofstream(state) << R"({"height":"12","round":0,"step":3})";
  const std::string before = *kairos::client::ReadWholeFile(genesis);
  const CliRun started = Kairosd(home.path(), {"genesis", "add-account", alice, "5stake",
                                               "--append"});
  CHECK(started.code == 1);
  CHECK(started.err == "error: the chain of " + genesis +
                           " has started (its validator has signed blocks up to height 12): "
                           "InitChain read the genesis accounts when the chain began, so an "
                           "account added now would never be funded. Send coins from a funded "
                           "account instead (kairosd tx send FROM ADDRESS AMOUNT), or start a "
                           "new chain (scripts/run-node.sh --reset, which keeps the keyring)\n");
  CHECK(*kairos::client::ReadWholeFile(genesis) == before);
  // A node that never signed (not a validator) but has CometBFT's state has started too.
  std::ofstream(state) << R"({"height":"0","round":0,"step":0})";
  fs::create_directories(home / "cometbft/data/state.db");
  const CliRun full_node = Kairosd(home.path(), {"genesis", "add-account", alice, "5stake",
                                                 "--append"});
  CHECK(full_node.code == 1);
  CHECK_THAT(full_node.err, Contains("has started (CometBFT has its state in "));
}
