// app/api: the method table behind the gRPC and REST servers (ApiBackend) on a real chain
// (test_chain.h), and the gRPC server's start. Checks that a method's answer is the ABCI
// query's (same bytes, same height), that ABCI codes become the gRPC codes the SDK gives, that
// the node's Config answers its options, that a full queue refuses at once, and that an address
// in use stops GrpcServer::Start with a message naming it. (grpcurl calls every method of a
// running node in test/e2e/test_grpc.py.)
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "app/api/api_backend.h"
#include "app/api/grpc_server.h"
#include "app/api/proto_json.h"
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
  CHECK(methods >= 35);  // auth 4, bank 9, tx 1, node 1, tendermint 7, kairos auth 1, locks 6, poa 4, mempool 2
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

TEST_CASE("api: the height header takes a decimal height > 0 only", "[api]") {
  std::int64_t h = 0;
  std::string why;
  CHECK(app::api::ParseHeightHeader("42", &h, &why));
  CHECK(h == 42);
  for (const char* bad : {"", "0", "-3", "12x", "x", "99999999999999999999", " 5"}) {
    CHECK_FALSE(app::api::ParseHeightHeader(bad, &h, &why));
    CHECK_THAT(why, Contains("a decimal integer > 0"));
  }
}

}  // namespace
}  // namespace kairos::test
