// app/api: the method table behind the gRPC and REST servers (ApiBackend) on a real chain
// (test_chain.h), and the gRPC server's start. Checks that a method's answer is the ABCI
// query's (same bytes, same height), that ABCI codes become the gRPC codes the SDK gives, that
// the node's Config answers its options, that a full queue refuses at once, and that an address
// in use stops GrpcServer::Start with a message naming it. (grpcurl calls every method of a
// running node in test/e2e/test_grpc.py.)
#include <catch2/catch.hpp>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "app/api/api_backend.h"
#include "app/api/grpc_server.h"
#include "app/api/proto_json.h"
#include "app/hex.h"
#include "canned_http_server.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/base64.h"
#include "crypto/hash.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/base/node/v1beta1/query.pb.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

using app::api::ApiBackend;
using app::api::BackendOptions;
using app::api::CallResult;
using app::api::Code;
using Catch::Matchers::Contains;

const TestKey kAlice = MakeKey("api alice");
const TestKey kNobody = MakeKey("api nobody");

struct Fixture {
  Fixture() {
    chain.Block({}, kT0 + kSecond);
    chain.Block({chain.Send(kAlice, kNobody, "5stake")}, kT0 + 2 * kSecond);
  }
  TestChain chain{{{kAlice, "1000stake"}}};
};

std::string BalanceRequest(const TestKey& key) {
  cosmos::bank::v1beta1::QueryBalanceRequest q;
  q.set_address(key.bech32);
  q.set_denom("stake");
  return q.SerializeAsString();
}

TEST_CASE("api: a method answers exactly what the ABCI query of its path answers",
          "[api]") {
  Fixture f;
  ApiBackend backend(f.chain.app().query_router(), {});
  for (std::int64_t height : {0, 1, 2}) {
    abci_pb::RequestQuery q;
    q.set_path("/cosmos.bank.v1beta1.Query/Balance");
    q.set_data(BalanceRequest(kNobody));
    q.set_height(height);
    const abci_pb::ResponseQuery abci = f.chain.app().Query(q);
    REQUIRE(abci.code() == 0);
    const CallResult r = backend.CallNow(q.path(), q.data(), height);
    REQUIRE(r.code == Code::kOk);
    CHECK(r.response == abci.value());
    CHECK(r.height == abci.height());
    CHECK(r.height == (height == 0 ? 2 : height));
  }
  cosmos::bank::v1beta1::QueryBalanceResponse at1, at2;
  REQUIRE(at1.ParseFromString(backend.CallNow("/cosmos.bank.v1beta1.Query/Balance",
                                              BalanceRequest(kNobody), 1).response));
  REQUIRE(at2.ParseFromString(backend.CallNow("/cosmos.bank.v1beta1.Query/Balance",
                                              BalanceRequest(kNobody), 2).response));
  CHECK(at1.balance().amount() == "0");
  CHECK(at2.balance().amount() == "5");
}

TEST_CASE("api: ABCI codes become the SDK's gRPC codes, with the node's message", "[api]") {
  Fixture f;
  ApiBackend backend(f.chain.app().query_router(), {});
  SECTION("a missing account is NOT_FOUND, without the ABCI text's gRPC prefix") {
    cosmos::auth::v1beta1::QueryAccountRequest q;
    q.set_address(MakeKey("api stranger").bech32);
    const CallResult r =
        backend.CallNow("/cosmos.auth.v1beta1.Query/Account", q.SerializeAsString(), 0);
    CHECK(r.code == Code::kNotFound);
    CHECK(r.message == "account " + q.address() + " not found: key not found");
    CHECK(app::api::HttpStatusFor(r.code) == 404);
  }
  SECTION("a bad address is INVALID_ARGUMENT naming it") {
    cosmos::auth::v1beta1::QueryAccountRequest q;
    q.set_address("kairos1nope");
    const CallResult r =
        backend.CallNow("/cosmos.auth.v1beta1.Query/Account", q.SerializeAsString(), 0);
    CHECK(r.code == Code::kInvalidArgument);
    CHECK_THAT(r.message, Contains("invalid address \"kairos1nope\""));
    CHECK(app::api::HttpStatusFor(r.code) == 400);
  }
  SECTION("a future or negative height is INVALID_ARGUMENT") {
    const CallResult future =
        backend.CallNow("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), 99);
    CHECK(future.code == Code::kInvalidArgument);
    CHECK_THAT(future.message, Contains("version 99 is not committed yet; the latest is 2"));
    const CallResult negative =
        backend.CallNow("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), -1);
    CHECK(negative.code == Code::kInvalidArgument);
  }
  SECTION("a path no module serves is UNIMPLEMENTED; bytes that are not the request, invalid") {
    CHECK(backend.CallNow("/cosmos.bank.v1beta1.Query/DenomOwners", "", 0).code ==
          Code::kUnimplemented);
    const CallResult r =
        backend.CallNow("/cosmos.bank.v1beta1.Query/Balance", std::string("\xff\xff\xff", 3), 0);
    CHECK(r.code == Code::kInvalidArgument);
    CHECK_THAT(r.message, Contains("QueryBalanceRequest"));
  }
  SECTION("a request over the size limit is refused before it is parsed") {
    BackendOptions o;
    o.max_request_bytes = 16;
    ApiBackend small(f.chain.app().query_router(), o);
    const CallResult r = small.CallNow("/cosmos.bank.v1beta1.Query/Balance",
                                       BalanceRequest(kAlice), 0);
    CHECK(r.code == Code::kInvalidArgument);
    CHECK_THAT(r.message, Contains("over the limit of 16"));
  }
}

TEST_CASE("api: every method of every served service has an implementation", "[api]") {
  // An empty request is a valid (if useless) request of every method: none may fall through to
  // "unknown query path" (UNIMPLEMENTED), and every answer parses as the method's response.
  Fixture f;
  ApiBackend backend(f.chain.app().query_router(), {});
  std::size_t methods = 0;
  for (const auto* service : ApiBackend::Services()) {
    for (int i = 0; i < service->method_count(); ++i) {
      const auto* m = service->method(i);
      const std::string path = "/" + service->full_name() + "/" + m->name();
      INFO(path);
      const CallResult r = backend.CallNow(path, "", 0);
      CHECK(r.code != Code::kUnimplemented);
      if (r.code == Code::kOk) CHECK(app::api::ToJson(m->output_type(), r.response).ok());
      ++methods;
    }
  }
  CHECK(methods >= 38);  // auth 4, bank 9, tx 4, node 1, tendermint 7, kairos auth 1, locks 6, poa 4, mempool 2
}

TEST_CASE("api: cosmos.base.node.v1beta1.Service/Config answers the node's options", "[api]") {
  Fixture f;
  BackendOptions o;
  o.minimum_gas_price = "0.025stake";
  o.pruning_keep_recent = 100;
  ApiBackend backend(f.chain.app().query_router(), o);
  const CallResult r = backend.CallNow("/cosmos.base.node.v1beta1.Service/Config", "", 0);
  REQUIRE(r.code == Code::kOk);
  CHECK(r.height == 0);  // not state
  cosmos::base::node::v1beta1::ConfigResponse c;
  REQUIRE(c.ParseFromString(r.response));
  CHECK(c.minimum_gas_price() == "0.025stake");
  CHECK(c.pruning_keep_recent() == "100");
  CHECK(c.halt_height() == 0);
}

TEST_CASE("api: past max_pending, a call is refused at once; the others still run", "[api]") {
  // One worker, held inside the first call's callback: the next calls wait in the queue, where
  // max_pending counts them, and the one past the limit is refused on the caller's thread.
  Fixture f;
  BackendOptions o;
  o.threads = 1;
  o.max_pending = 2;
  ApiBackend backend(f.chain.app().query_router(), o);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<CallResult> first;
  auto first_done = first.get_future();
  backend.Call("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), 0,
               [&](CallResult r) {
                 first.set_value(r);
                 released.wait();  // holds the only worker until the test lets go
               });
  REQUIRE(first_done.get().code == Code::kOk);
  std::vector<std::future<CallResult>> queued;
  for (int i = 0; i < 2; ++i) {
    auto p = std::make_shared<std::promise<CallResult>>();
    queued.push_back(p->get_future());
    backend.Call("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), 0,
                 [p](CallResult r) { p->set_value(r); });
  }
  CallResult refused;
  bool ran_inline = false;
  backend.Call("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), 0,
               [&](CallResult r) {
                 refused = r;
                 ran_inline = true;
               });
  CHECK(ran_inline);
  CHECK(refused.code == Code::kResourceExhausted);
  CHECK_THAT(refused.message, Contains("2 calls are already waiting or running"));
  CHECK_THAT(refused.message, Contains("query.api_max_pending"));
  CHECK(app::api::HttpStatusFor(refused.code) == 429);
  release.set_value();
  for (auto& q : queued) CHECK(q.get().code == Code::kOk);
  // Their slots are free again: a new call runs.
  std::promise<CallResult> again;
  auto again_done = again.get_future();
  backend.Call("/cosmos.bank.v1beta1.Query/Balance", BalanceRequest(kAlice), 0,
               [&](CallResult r) { again.set_value(r); });
  CHECK(again_done.get().code == Code::kOk);
}

TEST_CASE("api: every served method parses and prints as the SDK's JSON", "[api]") {
  // An Any prints with the Cosmos type URL ("/cosmos.auth.v1beta1.BaseAccount"), which
  // protobuf's default resolver refuses.
  Fixture f;
  ApiBackend backend(f.chain.app().query_router(), {});
  cosmos::auth::v1beta1::QueryAccountRequest q;
  q.set_address(kAlice.bech32);
  const CallResult r = backend.CallNow("/cosmos.auth.v1beta1.Query/Account",
                                       q.SerializeAsString(), 0);
  REQUIRE(r.code == Code::kOk);
  auto json = app::api::ToJson(cosmos::auth::v1beta1::QueryAccountResponse::descriptor(),
                               r.response);
  REQUIRE(json.ok());
  CHECK_THAT(*json, Contains(R"("@type":"/cosmos.auth.v1beta1.BaseAccount")"));
  CHECK_THAT(*json, Contains(R"("address":")" + kAlice.bech32 + "\""));
  CHECK_THAT(*json, Contains(R"("account_number":"0")"));  // defaults printed, int64 as string
  auto back = app::api::FromJson(cosmos::auth::v1beta1::QueryAccountResponse::descriptor(), *json);
  REQUIRE(back.ok());
  cosmos::auth::v1beta1::QueryAccountResponse a, b;
  REQUIRE(a.ParseFromString(r.response));
  REQUIRE(b.ParseFromString(*back));
  // The same account (JSON's zeros come back as explicit zero fields: compared parsed).
  cosmos::auth::v1beta1::BaseAccount x, y;
  REQUIRE(x.ParseFromString(a.account().value()));
  REQUIRE(y.ParseFromString(b.account().value()));
  CHECK(a.account().type_url() == b.account().type_url());
  CHECK(x.SerializeAsString() == y.SerializeAsString());
  CHECK(x.address() == kAlice.bech32);
  auto bad = app::api::FromJson(cosmos::auth::v1beta1::QueryAccountRequest::descriptor(),
                                R"({"adress": "x"})");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Contains("adress"));
}

TEST_CASE("api: the gRPC server starts on a free port, and an address in use is refused",
          "[api]") {
  Fixture f;
  ApiBackend backend(f.chain.app().query_router(), {});
  app::api::GrpcOptions o;
  o.address = "127.0.0.1:0";
  auto first = app::api::GrpcServer::Start(backend, o);
  REQUIRE(first.ok());
  REQUIRE((*first)->port() > 0);
  o.address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = app::api::GrpcServer::Start(backend, o);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.status().message(), Contains("grpc.address: cannot listen on " + o.address));
  (*first)->Shutdown();
}

TEST_CASE("api: the height header takes a decimal height >= 0, 0 the latest as in the SDK",
          "[api]") {
  std::int64_t h = -1;
  std::string why;
  CHECK(app::api::ParseHeightHeader("42", &h, &why));
  CHECK(h == 42);
  CHECK(app::api::ParseHeightHeader("0", &h, &why));
  CHECK(h == 0);
  for (const char* bad : {"", "-3", "12x", "x", "99999999999999999999", " 5"}) {
    CHECK_FALSE(app::api::ParseHeightHeader(bad, &h, &why));
    CHECK_THAT(why, Contains("a decimal integer >= 0 (0: the latest)"));
  }
}

// ---- cosmos.tx.v1beta1.Service: BroadcastTx, GetTx, GetTxsEvent (app/api/tx_service.h)

namespace txv = cosmos::tx::v1beta1;

std::string BroadcastRequest(const std::string& tx, txv::BroadcastMode mode) {
  txv::BroadcastTxRequest q;
  q.set_tx_bytes(tx);
  q.set_mode(mode);
  return q.SerializeAsString();
}

cosmos::base::abci::v1beta1::TxResponse BroadcastAnswer(const CallResult& r) {
  txv::BroadcastTxResponse out;
  REQUIRE(r.code == Code::kOk);
  REQUIRE(out.ParseFromString(r.response));
  return out.tx_response();
}

TEST_CASE("api: with direct ingestion BroadcastTx puts the tx in the app mempool and answers "
          "its check", "[api]") {
  Fixture f;
  std::vector<std::string> ingested;
  BackendOptions options;
  options.ingest = [&](std::string tx, std::function<void(app::api::IngestResult)> done) {
    ingested.push_back(tx);
    const abci_pb::ResponseCheckTx r = f.chain.app().IngestTx(tx);
    done({r.code(), r.codespace(), r.log(), r.info(), r.gas_wanted(), r.gas_used()});
    return true;
  };
  ApiBackend backend(f.chain.app().query_router(), options);
  SendOptions next;
  next.sequence = 1;
  const std::string tx = f.chain.Send(kAlice, kNobody, "3stake", next);
  const auto ok = BroadcastAnswer(
      backend.CallNow("/cosmos.tx.v1beta1.Service/BroadcastTx",
                      BroadcastRequest(tx, txv::BROADCAST_MODE_SYNC), 0));
  CHECK(ok.code() == 0);
  CHECK(ok.txhash() == app::HexEncode(crypto::Sha256(tx), /*upper=*/true));
  CHECK(ok.gas_wanted() > 0);
  CHECK(f.chain.app().tx_pool().stats().size == 1);
  CHECK(ingested == std::vector<std::string>{tx});

  // A stale sequence: the check's code and log, in a TxResponse (as the SDK answers).
  const auto stale = BroadcastAnswer(backend.CallNow(
      "/cosmos.tx.v1beta1.Service/BroadcastTx",
      BroadcastRequest(f.chain.Send(kAlice, kNobody, "1stake"), txv::BROADCAST_MODE_SYNC), 0));
  CHECK(stale.code() == ante::kWrongSequence);
  CHECK(stale.codespace() == "sdk");
  CHECK_THAT(stale.raw_log(), Contains("sequence"));

  // ASYNC answers the hash; the check still runs.
  next.sequence = 2;
  const std::string tx2 = f.chain.Send(kAlice, kNobody, "4stake", next);
  std::promise<CallResult> answered;
  backend.Call("/cosmos.tx.v1beta1.Service/BroadcastTx",
               BroadcastRequest(tx2, txv::BROADCAST_MODE_ASYNC), 0,
               [&](CallResult r) { answered.set_value(std::move(r)); });
  const auto async = BroadcastAnswer(answered.get_future().get());
  CHECK(async.txhash() == app::HexEncode(crypto::Sha256(tx2), /*upper=*/true));
  CHECK(async.code() == 0);
  CHECK(f.chain.app().tx_pool().stats().size == 2);
}

TEST_CASE("api: at most max_pending directly ingested txs wait for their check; then "
          "RESOURCE_EXHAUSTED, ASYNC included", "[api]") {
  Fixture f;
  std::vector<std::function<void(app::api::IngestResult)>> queued;  // checks not yet run
  BackendOptions options;
  options.max_pending = 2;
  options.ingest = [&](std::string, std::function<void(app::api::IngestResult)> done) {
    queued.push_back(std::move(done));  // as the executor would, later
    return true;
  };
  ApiBackend backend(f.chain.app().query_router(), options);
  const std::string tx = f.chain.Send(kAlice, kNobody, "1stake");
  const auto async = [&] {
    return backend.CallNow("/cosmos.tx.v1beta1.Service/BroadcastTx",
                           BroadcastRequest(tx, txv::BROADCAST_MODE_ASYNC), 0);
  };
  CHECK(async().code == Code::kOk);  // answered at once, its check still queued
  CHECK(async().code == Code::kOk);
  const CallResult refused = async();
  CHECK(refused.code == Code::kResourceExhausted);
  CHECK_THAT(refused.message, Contains("too many txs waiting for their check"));
  REQUIRE(queued.size() == 2);
  queued[0](app::api::IngestResult{});  // one check runs: room for one more
  CHECK(async().code == Code::kOk);
  CHECK(queued.size() == 3);
  CHECK(async().code == Code::kResourceExhausted);
  for (std::size_t i = 1; i < queued.size(); ++i) queued[i](app::api::IngestResult{});
}

TEST_CASE("api: the app mempool counts as active once CometBFT has called ReapTxs or InsertTx",
          "[api]") {
  Fixture f;
  CHECK_FALSE(f.chain.app().app_mempool_active());
  f.chain.app().ReapTxs({});
  CHECK(f.chain.app().app_mempool_active());
}

TEST_CASE("api: tx service input errors, before anything is sent", "[api]") {
  Fixture f;
  std::size_t ingests = 0;
  BackendOptions options;
  options.ingest = [&](std::string, std::function<void(app::api::IngestResult)>) {
    ++ingests;
    return false;  // not possible now: the call goes to CometBFT's RPC (none here)
  };
  ApiBackend backend(f.chain.app().query_router(), options);
  const auto call = [&](const char* method, const std::string& request) {
    return backend.CallNow(std::string("/cosmos.tx.v1beta1.Service/") + method, request, 0);
  };
  const std::string tx = f.chain.Send(kAlice, kNobody, "1stake");
  CallResult r = call("BroadcastTx", BroadcastRequest("", txv::BROADCAST_MODE_SYNC));
  CHECK(r.code == Code::kInvalidArgument);
  CHECK_THAT(r.message, Contains("invalid empty tx"));
  for (auto mode : {txv::BROADCAST_MODE_BLOCK, txv::BROADCAST_MODE_UNSPECIFIED}) {
    r = call("BroadcastTx", BroadcastRequest(tx, mode));
    CHECK(r.code == Code::kInvalidArgument);
    CHECK_THAT(r.message, Contains("unsupported broadcast mode " + txv::BroadcastMode_Name(mode)));
  }
  CHECK(ingests == 0);
  r = call("BroadcastTx", BroadcastRequest(tx, txv::BROADCAST_MODE_SYNC));
  CHECK(ingests == 1);
  CHECK(r.code == Code::kUnavailable);
  CHECK_THAT(r.message, Contains("cometbft_rpc"));
  txv::GetTxRequest get;
  get.set_hash("12ab");
  r = call("GetTx", get.SerializeAsString());
  CHECK(r.code == Code::kInvalidArgument);
  CHECK_THAT(r.message, Contains("not a SHA-256 hash"));
  r = call("GetTx", "");
  CHECK(r.code == Code::kInvalidArgument);
  CHECK_THAT(r.message, Contains("tx hash cannot be empty"));
  r = call("GetTxsEvent", "");
  CHECK(r.code == Code::kInvalidArgument);
  CHECK_THAT(r.message, Contains("query cannot be empty"));
  txv::GetTxsEventRequest search;
  search.set_query(std::string(5000, 'a'));
  r = call("GetTxsEvent", search.SerializeAsString());
  CHECK(r.code == Code::kInvalidArgument);
  CHECK_THAT(r.message, Contains("over the limit"));
}

TEST_CASE("api: BroadcastTx through CometBFT's RPC, and GetTx from its tx index, as the SDK "
          "answers them", "[api]") {
  Fixture f;
  const std::string tx = f.chain.Send(kAlice, kNobody, "1stake");
  const std::string hash = app::HexEncode(crypto::Sha256(tx), /*upper=*/true);
  const std::string b64 = crypto::Base64Encode(tx);
  CannedServer comet({
      // broadcast_tx_sync: accepted
      R"({"jsonrpc":"2.0","id":1,"result":{"code":0,"data":"","log":"","codespace":"","hash":")" +
          hash + R"("}})",
      // broadcast_tx_sync: CometBFT's cache refuses it before the app sees it
      R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"tx already exists in cache"}})",
      // /tx, then /header of its height
      R"({"jsonrpc":"2.0","id":-1,"result":{"hash":")" + hash +
          R"(","height":"7","index":0,"tx_result":{"code":0,"data":"EgA=","log":"","info":"","gas_wanted":"200000","gas_used":"51234","events":[{"type":"transfer","attributes":[{"key":"amount","value":"1stake","index":true}]}],"codespace":""},"tx":")" +
          b64 + R"("}})",
      R"({"jsonrpc":"2.0","id":-1,"result":{"header":{"height":"7","time":"2026-11-27T13:45:00.123456789Z"}}})",
  });
  BackendOptions options;
  options.cometbft_rpc = comet.url();
  ApiBackend backend(f.chain.app().query_router(), options);
  auto r = BroadcastAnswer(backend.CallNow("/cosmos.tx.v1beta1.Service/BroadcastTx",
                                           BroadcastRequest(tx, txv::BROADCAST_MODE_SYNC), 0));
  CHECK(r.code() == 0);
  CHECK(r.txhash() == hash);
  r = BroadcastAnswer(backend.CallNow("/cosmos.tx.v1beta1.Service/BroadcastTx",
                                      BroadcastRequest(tx, txv::BROADCAST_MODE_SYNC), 0));
  CHECK(r.code() == ante::kTxInMempoolCache);  // the SDK's CheckCometError
  CHECK(r.codespace() == "sdk");
  CHECK_THAT(r.raw_log(), Contains("tx already exists in cache"));
  txv::GetTxRequest get;
  get.set_hash(app::HexEncode(crypto::Sha256(tx)));  // lower case is fine
  const CallResult got = backend.CallNow("/cosmos.tx.v1beta1.Service/GetTx",
                                         get.SerializeAsString(), 0);
  REQUIRE(got.code == Code::kOk);
  txv::GetTxResponse out;
  REQUIRE(out.ParseFromString(got.response));
  const auto& t = out.tx_response();
  CHECK(t.height() == 7);
  CHECK(t.txhash() == hash);
  CHECK(t.data() == "1200");  // upper-case hex of the data bytes, as the SDK prints them
  CHECK(t.gas_wanted() == 200000);
  CHECK(t.gas_used() == 51234);
  CHECK(t.timestamp() == "2026-11-27T13:45:00Z");
  REQUIRE(t.events_size() == 1);
  CHECK(t.events(0).type() == "transfer");
  CHECK(t.events(0).attributes(0).value() == "1stake");
  CHECK(t.events(0).attributes(0).index());
  CHECK(t.tx().type_url() == "/cosmos.tx.v1beta1.Tx");
  CHECK(t.tx().value() == tx);
  REQUIRE(out.tx().body().messages_size() == 1);
  CHECK(out.tx().body().messages(0).type_url() == "/cosmos.bank.v1beta1.MsgSend");
  const auto& requests = comet.requests();
  REQUIRE(requests.size() == 4);
  CHECK_THAT(requests[0], Contains("broadcast_tx_sync"));
  CHECK_THAT(requests[0], Contains(b64));
  CHECK_THAT(requests[2], Contains("/tx?hash=0x" + hash));
  CHECK_THAT(requests[3], Contains("/header?height=7"));
}

}  // namespace
}  // namespace kairos::test
