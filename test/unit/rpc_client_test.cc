// Unit tests for app/client/rpc_client and chain_queries against a canned HTTP server on
// loopback (no CometBFT): node URLs, base64, the "connection refused" message, abci_query
// requests and answers, JSON-RPC errors, /tx not found, and the account query's decoding and
// its "not found" code.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/client/chain_queries.h"
#include "app/client/encoding.h"
#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "canned_http_server.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"

using kairos::client::Base64Decode;
using kairos::client::Base64Encode;
using kairos::client::ParseNodeUrl;
using kairos::client::PercentEncode;
using kairos::client::RpcClient;
using Catch::Matchers::Contains;
using kairos::test::CannedServer;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

RpcClient Client(const std::string& url) {
  auto node = ParseNodeUrl(url);
  REQUIRE(node.ok());
  return RpcClient(*node, std::chrono::seconds(5));
}

std::string QueryReply(const std::string& response_fields) {
  return R"({"jsonrpc":"2.0","id":-1,"result":{"response":{)" + response_fields + "}}}";
}

}  // namespace

TEST_CASE("node URLs: http and tcp, default port, paths; https refused", "[rpc_client]") {
  auto a = ParseNodeUrl("http://127.0.0.1:26657");
  REQUIRE(a.ok());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == "26657");
  CHECK(a->text == "http://127.0.0.1:26657");
  auto b = ParseNodeUrl("tcp://localhost:26657/");
  REQUIRE(b.ok());
  CHECK(b->text == "http://localhost:26657");
  auto c = ParseNodeUrl("http://[::1]:1234/rpc/");
  REQUIRE(c.ok());
  CHECK(c->host == "::1");
  CHECK(c->base_path == "/rpc");
  CHECK(ParseNodeUrl("http://example")->port == "80");
  auto https = ParseNodeUrl("https://127.0.0.1:26657");
  REQUIRE_FALSE(https.ok());
  CHECK_THAT(https.status().message(), Contains("https is not supported"));
  CHECK_FALSE(ParseNodeUrl("127.0.0.1:26657").ok());
  CHECK_FALSE(ParseNodeUrl("http://127.0.0.1:0").ok());
  CHECK_FALSE(ParseNodeUrl("http://127.0.0.1:99999").ok());
  CHECK_FALSE(ParseNodeUrl("http://:26657").ok());
}

TEST_CASE("base64 and percent-encoding", "[rpc_client]") {
  // RFC 4648 section 10.
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},         {"f", "Zg=="},        {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    CHECK(Base64Encode(plain) == encoded);
    CHECK(Base64Decode(encoded) == plain);
  }
  CHECK(Base64Encode(std::string("\xff\xfe\x00", 3)) == "//4A");
  CHECK_FALSE(Base64Decode("Zg=").has_value());
  CHECK_FALSE(Base64Decode("Z=g=").has_value());
  CHECK_FALSE(Base64Decode("Zm9v!A==").has_value());
  CHECK(PercentEncode("\"/cosmos.a/B\" x") == "%22%2Fcosmos.a%2FB%22%20x");
}

TEST_CASE("no node at the address: the message says so", "[rpc_client]") {
  std::string url;
  {
    asio::io_context ioc;
    tcp::acceptor probe(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    url = "http://127.0.0.1:" + std::to_string(probe.local_endpoint().port());
  }  // closed: nothing listens there now
  RpcClient rpc = Client(url);
  auto id = rpc.ChainId();
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().message() == "no CometBFT node at " + url + ": connection refused");
}

TEST_CASE("abci_query sends the path and data, and decodes the answer", "[rpc_client]") {
  CannedServer server({QueryReply(
      R"("code":0,"log":"","value":")" + Base64Encode("\x01\x02") + R"(","height":"42")")});
  RpcClient rpc = Client(server.url());
  auto r = rpc.AbciQuery("/cosmos.bank.v1beta1.Query/Balance", std::string("\xab\x01", 2), 7);
  REQUIRE(r.ok());
  CHECK(r->code == 0);
  CHECK(r->value == "\x01\x02");
  CHECK(r->height == 42);
  const std::string request = server.requests().at(0);
  CHECK_THAT(request, Contains("GET /abci_query?path=%22%2Fcosmos.bank.v1beta1.Query%2FBalance%22"
                               "&data=0xab01&height=7&prove=false HTTP/1.1"));
}

TEST_CASE("a JSON-RPC error carries its message and data", "[rpc_client]") {
  CannedServer server({R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,)"
                       R"("message":"Internal error","data":"tx already exists in cache"}})"});
  RpcClient rpc = Client(server.url());
  auto r = rpc.BroadcastTxSync("tx-bytes");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Contains("Internal error: tx already exists in cache"));
  const std::string request = server.requests().at(0);
  CHECK_THAT(request, Contains("POST / HTTP/1.1"));
  CHECK_THAT(request, Contains(R"("method":"broadcast_tx_sync")"));
  CHECK_THAT(request, Contains(R"("tx":")" + Base64Encode("tx-bytes") + "\""));
}

TEST_CASE("broadcast and tx answers are decoded; an unknown tx is not an error", "[rpc_client]") {
  CannedServer server(
      {R"({"jsonrpc":"2.0","id":1,"result":{"code":32,"codespace":"sdk",)"
       R"("log":"account sequence mismatch, expected 5, got 4: incorrect account sequence",)"
       R"("hash":"ABCD"}})",
       R"({"jsonrpc":"2.0","id":-1,"error":{"code":-32603,"message":"Internal error",)"
       R"("data":"tx (ABCD) not found"}})",
       R"({"jsonrpc":"2.0","id":-1,"result":{"hash":"ABCD","height":"12","index":0,)"
       R"("tx_result":{"code":5,"codespace":"sdk","log":"spendable balance 1stake is smaller )"
       R"(than 9stake: insufficient funds","gas_wanted":"200000","gas_used":"51234"}}})"});
  RpcClient rpc = Client(server.url());
  auto sent = rpc.BroadcastTxSync("x");
  REQUIRE(sent.ok());
  CHECK(sent->code == 32);
  CHECK(sent->codespace == "sdk");
  CHECK(sent->hash == "ABCD");
  CHECK_THAT(sent->log, Contains("expected 5, got 4"));
  auto missing = rpc.FindTx("\xab\xcd");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  auto found = rpc.FindTx("\xab\xcd");
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->height == 12);
  CHECK((*found)->code == 5);
  CHECK((*found)->gas_used == 51234);
  CHECK((*found)->gas_wanted == 200000);
  CHECK_THAT((*found)->log, Contains("insufficient funds"));
  CHECK_THAT(server.requests().at(1), Contains("GET /tx?hash=0xABCD&prove=false"));
}

TEST_CASE("the account query decodes a BaseAccount and reports code 22 as not found",
          "[rpc_client]") {
  cosmos::crypto::secp256k1::PubKey pub;
  pub.set_key(std::string(33, '\x02'));
  cosmos::auth::v1beta1::BaseAccount base;
  base.set_address("kairos1xyz");
  base.set_account_number(3);
  base.set_sequence(9);
  base.mutable_pub_key()->set_type_url("/cosmos.crypto.secp256k1.PubKey");
  base.mutable_pub_key()->set_value(pub.SerializeAsString());
  cosmos::auth::v1beta1::QueryAccountResponse response;
  response.mutable_account()->set_type_url("/cosmos.auth.v1beta1.BaseAccount");
  response.mutable_account()->set_value(base.SerializeAsString());

  CannedServer server(
      {QueryReply(R"("value":")" + Base64Encode(response.SerializeAsString()) +
                  R"(","height":"5")"),
       QueryReply(R"("code":22,"codespace":"sdk","log":"account kairos1abc not found")"),
       QueryReply(R"("value":"AAAA")")});
  RpcClient rpc = Client(server.url());
  auto account = kairos::client::QueryAccount(rpc, "kairos1xyz", 0);
  REQUIRE(account.ok());
  CHECK(account->address == "kairos1xyz");
  CHECK(account->account_number == 3);
  CHECK(account->sequence == 9);
  CHECK(account->pub_key_type_url == "/cosmos.crypto.secp256k1.PubKey");
  CHECK(account->pub_key == std::string(33, '\x02'));
  CHECK(account->height == 5);

  auto missing = kairos::client::QueryAccount(rpc, "kairos1abc", 0);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message() == "code 22 (sdk): account kairos1abc not found");

  auto garbage = kairos::client::QueryAccount(rpc, "kairos1abc", 0);
  REQUIRE_FALSE(garbage.ok());  // not a BaseAccount

  const std::string first = server.requests().at(0);
  CHECK_THAT(first, Contains("path=%22%2Fcosmos.auth.v1beta1.Query%2FAccount%22"));
  // The data is the request proto in hex.
  const auto from = first.find("data=0x") + 7;
  std::string bytes;
  REQUIRE(kairos::app::HexDecode(first.substr(from, first.find('&', from) - from), &bytes));
  cosmos::auth::v1beta1::QueryAccountRequest sent;
  REQUIRE(sent.ParseFromString(bytes));
  CHECK(sent.address() == "kairos1xyz");
}
