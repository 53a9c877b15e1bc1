// The REST (LCD) gateway and server (app/api/rest_gateway.h, rest_server.h) against a real
// ApiBackend over the real QueryRouter of a chain with funded accounts: the SDK's paths, the
// JSON the SDK prints, path variables and query parameters reaching the request message, the
// height header in and out, every refusal (HTTP status, gRPC code, message), and, over a
// socket, keep-alive, the body limit, the connection limit, the read timeout and CORS.
#include <catch2/catch.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <future>
#include <string>
#include <thread>
#include <variant>

#include "absl/strings/escaping.h"
#include "app/api/api_backend.h"
#include "app/api/rest_gateway.h"
#include "app/api/rest_server.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "google/api/annotations.pb.h"
#include <google/protobuf/descriptor.pb.h>
#include "test_chain.h"

namespace kairos::test {
namespace {

using app::api::ApiBackend;
using app::api::Code;
using app::api::HttpResponse;
using app::api::RestGateway;
using app::api::RestRequest;
using json = nlohmann::json;

const TestKey kAlice = MakeKey("rest-alice");
const TestKey kBob = MakeKey("rest-bob");
const TestKey kNobody = MakeKey("rest-nobody");  // never funded: no account

// Alice's (account 0) send with `sequence`, paying 200stake.
SendOptions AliceSends(std::uint64_t sequence) {
  SendOptions o;
  o.account_number = 0;
  o.sequence = sequence;
  o.fee = "200stake";
  return o;
}

// A chain at height 2: alice and bob funded at genesis (block 1), then alice sends bob 100stake
// (block 2). A backend and a gateway over its query router.
struct RestFixture {
  RestFixture() : chain({{kAlice, "1000000stake,77atom"}, {kBob, "500stake"}}) {
    chain.Block({}, kT0);
    const auto res =
        chain.Block({chain.Send(kAlice, kBob, "100stake", AliceSends(0))}, kT0 + kSecond);
    REQUIRE(res.tx_results(0).code() == 0);
    backend = std::make_unique<ApiBackend>(chain.app().query_router(), app::api::BackendOptions{});
    auto made = RestGateway::Create(*backend);
    REQUIRE(made.ok());
    gateway = std::move(*made);
  }

  HttpResponse Get(const std::string& target,
                   std::optional<std::string> height = std::nullopt) const {
    RestRequest req;
    req.method = "GET";
    req.target = target;
    if (height) req.height_header = *height;
    return gateway->HandleNow(req);
  }
  HttpResponse Post(const std::string& target, const std::string& body) const {
    RestRequest req;
    req.method = "POST";
    req.target = target;
    req.body = body;
    return gateway->HandleNow(req);
  }
  // The call a GET maps to; fails the test when it is refused.
  RestGateway::Call Prepared(const std::string& target) const {
    RestRequest req;
    req.method = "GET";
    req.target = target;
    auto prepared = gateway->Prepare(req);
    if (auto* refused = std::get_if<HttpResponse>(&prepared)) FAIL(refused->body);
    return std::get<RestGateway::Call>(prepared);
  }

  TestChain chain;
  std::unique_ptr<ApiBackend> backend;
  std::unique_ptr<RestGateway> gateway;
};

std::string HeaderOf(const HttpResponse& res, const std::string& name) {
  for (const auto& [n, v] : res.headers) {
    if (n == name) return v;
  }
  return "";
}

// Checks that `res` is grpc-gateway's error shape with `status`, `code` and a message holding
// `text`.
void CheckError(const HttpResponse& res, unsigned status, Code code, const std::string& text) {
  INFO(res.body);
  CHECK(res.status == status);
  const json body = json::parse(res.body);
  CHECK(body.at("code") == static_cast<int>(code));
  CHECK(body.at("message").get<std::string>().find(text) != std::string::npos);
  CHECK(body.at("details") == json::array());
  CHECK(body.size() == 3);
  CHECK(res.body.rfind(R"({"code":)", 0) == 0);  // grpc-gateway's key order
}

TEST_CASE("rest: HttpStatusFor is grpc-gateway's HTTPStatusFromCode table", "[rest]") {
  using app::api::HttpStatusFor;
  const std::pair<Code, int> table[] = {
      {Code::kOk, 200},           {Code::kCancelled, 499},         {Code::kUnknown, 500},
      {Code::kInvalidArgument, 400}, {Code::kDeadlineExceeded, 504}, {Code::kNotFound, 404},
      {Code::kAlreadyExists, 409}, {Code::kPermissionDenied, 403}, {Code::kUnauthenticated, 401},
      {Code::kResourceExhausted, 429}, {Code::kFailedPrecondition, 400}, {Code::kAborted, 409},
      {Code::kOutOfRange, 400},   {Code::kUnimplemented, 501},     {Code::kInternal, 500},
      {Code::kUnavailable, 503},  {Code::kDataLoss, 500}};
  for (const auto& [code, status] : table) {
    INFO(static_cast<int>(code));
    CHECK(HttpStatusFor(code) == status);
  }
}

TEST_CASE("rest: balances by path and by denom, in the SDK's JSON, with the height", "[rest]") {
  RestFixture f;
  const auto one = f.Get("/cosmos/bank/v1beta1/balances/" + kBob.bech32 + "/by_denom?denom=stake");
  INFO(one.body);
  REQUIRE(one.status == 200);
  CHECK(one.content_type == "application/json");
  CHECK(json::parse(one.body) == json::parse(R"({"balance":{"denom":"stake","amount":"600"}})"));
  CHECK(HeaderOf(one, "X-Cosmos-Block-Height") == "2");
  CHECK(HeaderOf(one, "Grpc-Metadata-X-Cosmos-Block-Height") == "2");

  const auto all = f.Get("/cosmos/bank/v1beta1/balances/" + kAlice.bech32);
  INFO(all.body);
  REQUIRE(all.status == 200);
  const json body = json::parse(all.body);
  CHECK(body.at("balances") ==
        json::parse(R"([{"denom":"atom","amount":"77"},{"denom":"stake","amount":"999700"}])"));
  // uint64 as a string, empty bytes printed (always_print_primitive_fields).
  CHECK(body.at("pagination") == json::parse(R"({"next_key":"","total":"2"})"));

  // A past height through the header: before the send.
  const auto past = f.Get("/cosmos/bank/v1beta1/balances/" + kBob.bech32 + "/by_denom?denom=stake",
                          "1");
  INFO(past.body);
  REQUIRE(past.status == 200);
  CHECK(json::parse(past.body).at("balance").at("amount") == "500");
  CHECK(HeaderOf(past, "X-Cosmos-Block-Height") == "1");
}

TEST_CASE("rest: an account is an Any with @type, params print every field", "[rest]") {
  RestFixture f;
  const auto res = f.Get("/cosmos/auth/v1beta1/accounts/" + kAlice.bech32);
  INFO(res.body);
  REQUIRE(res.status == 200);
  const json account = json::parse(res.body).at("account");
  CHECK(account.at("@type") == "/cosmos.auth.v1beta1.BaseAccount");
  CHECK(account.at("address") == kAlice.bech32);
  CHECK(account.at("account_number") == "0");
  CHECK(account.at("sequence") == "1");
  CHECK(account.at("pub_key").at("@type") == "/cosmos.crypto.secp256k1.PubKey");
  CHECK(account.at("pub_key").at("key") == absl::Base64Escape(kAlice.pub));

  const auto params = f.Get("/cosmos/auth/v1beta1/params");
  INFO(params.body);
  REQUIRE(params.status == 200);
  const json p = json::parse(params.body).at("params");
  for (const char* name : {"max_memo_characters", "tx_sig_limit", "tx_size_cost_per_byte",
                           "sig_verify_cost_ed25519", "sig_verify_cost_secp256k1"}) {
    INFO(name);
    REQUIRE(p.contains(name));
    CHECK(p.at(name).is_string());  // uint64
  }
  const auto bank = f.Get("/cosmos/bank/v1beta1/params");
  INFO(bank.body);
  REQUIRE(bank.status == 200);
  CHECK(json::parse(bank.body).at("params").contains("default_send_enabled"));
}

TEST_CASE("rest: literal segments win over variables; variables are percent-decoded",
          "[rest]") {
  RestFixture f;
  CHECK(f.Prepared("/cosmos/auth/v1beta1/accounts").method ==
        "/cosmos.auth.v1beta1.Query/Accounts");
  CHECK(f.Prepared("/cosmos/auth/v1beta1/accounts/x").method ==
        "/cosmos.auth.v1beta1.Query/Account");
  CHECK(f.Prepared("/cosmos/bank/v1beta1/balances/x").method ==
        "/cosmos.bank.v1beta1.Query/AllBalances");
  CHECK(f.Prepared("/cosmos/bank/v1beta1/balances/x/by_denom").method ==
        "/cosmos.bank.v1beta1.Query/Balance");
  CHECK(f.Prepared("/cosmos/bank/v1beta1/supply/by_denom?denom=stake").method ==
        "/cosmos.bank.v1beta1.Query/SupplyOf");

  const auto call = f.Prepared("/cosmos/bank/v1beta1/balances/a%2Fb%20c/by_denom?denom=u%2Bx");
  cosmos::bank::v1beta1::QueryBalanceRequest req;
  REQUIRE(req.ParseFromString(call.request));
  CHECK(req.address() == "a/b c");
  CHECK(req.denom() == "u+x");
  CHECK(call.height == 0);
}

TEST_CASE("rest: pagination query parameters reach the request, typed by the field",
          "[rest]") {
  RestFixture f;
  const std::string key = std::string("\xfb\xff\x00k", 4);  // base64 "+/8Aaw==", URL-safe "-_8Aaw=="
  const std::string base = "/cosmos/bank/v1beta1/balances/" + kAlice.bech32;
  for (const std::string& encoded : {std::string("%2B%2F8Aaw%3D%3D"), std::string("-_8Aaw=="),
                                     std::string("-_8Aaw")}) {
    INFO(encoded);
    const auto call = f.Prepared(base + "?pagination.limit=5&pagination.offset=%2B7&"
                                        "pagination.count_total=true&pagination.reverse=1&"
                                        "pagination.key=" +
                                 encoded + "&resolve_denom=False");
    cosmos::bank::v1beta1::QueryAllBalancesRequest req;
    REQUIRE(req.ParseFromString(call.request));
    CHECK(req.address() == kAlice.bech32);
    CHECK(req.pagination().limit() == 5);
    CHECK(req.pagination().offset() == 7);
    CHECK(req.pagination().count_total());
    CHECK(req.pagination().reverse());
    CHECK(req.pagination().key() == key);
    CHECK_FALSE(req.resolve_denom());
  }
  // The JSON name of a field works too; a parameter naming the path variable is ignored (as
  // grpc-gateway filters path parameters out of the query).
  const auto call = f.Prepared(base + "?pagination.countTotal=1&address=someone-else");
  cosmos::bank::v1beta1::QueryAllBalancesRequest req;
  REQUIRE(req.ParseFromString(call.request));
  CHECK(req.pagination().count_total());
  CHECK(req.address() == kAlice.bech32);
}

TEST_CASE("rest: bad query parameters get 400, code 3, naming the parameter and the form",
          "[rest]") {
  RestFixture f;
  const std::string base = "/cosmos/bank/v1beta1/balances/" + kAlice.bech32 + "?";
  CheckError(f.Get(base + "foo=1"), 400, Code::kInvalidArgument,
             "unknown query parameter \"foo\": cosmos.bank.v1beta1.QueryAllBalancesRequest has "
             "no field \"foo\" (its fields: address, pagination, resolve_denom)");
  CheckError(f.Get(base + "pagination.lmit=1"), 400, Code::kInvalidArgument,
             "unknown query parameter \"pagination.lmit\"");
  CheckError(f.Get(base + "pagination.limit=abc"), 400, Code::kInvalidArgument,
             "bad query parameter \"pagination.limit\": \"abc\" is not a decimal unsigned 64-bit "
             "integer");
  CheckError(f.Get(base + "pagination.limit=-1"), 400, Code::kInvalidArgument,
             "bad query parameter \"pagination.limit\": \"-1\" is not a decimal unsigned");
  CheckError(f.Get(base + "pagination.limit=18446744073709551616"), 400,
             Code::kInvalidArgument, "is not a decimal unsigned 64-bit integer");
  CheckError(f.Get(base + "pagination.count_total=maybe"), 400, Code::kInvalidArgument,
             "bad query parameter \"pagination.count_total\": \"maybe\" is not a boolean");
  CheckError(f.Get(base + "pagination.key=@@@"), 400, Code::kInvalidArgument,
             "bad query parameter \"pagination.key\": \"@@@\" is not base64");
  CheckError(f.Get(base + "pagination=5"), 400, Code::kInvalidArgument,
             "bad query parameter \"pagination\": pagination is a message");
  CheckError(f.Get(base + "pagination.limit=1&pagination.limit=2"), 400,
             Code::kInvalidArgument, "given 2 times, but pagination.limit is not repeated");
  CheckError(f.Get(base + "address.x=1"), 400, Code::kInvalidArgument,
             "goes into address, which is not a singular message");
  CheckError(f.Get(base + "denom=%zz"), 400, Code::kInvalidArgument,
             "bad query string: an invalid %-escape in \"denom=%zz\"");
}

TEST_CASE("rest: the height header must be a decimal, 0 or more (0: the latest)", "[rest]") {
  RestFixture f;
  const std::string target = "/cosmos/bank/v1beta1/params";
  for (const char* bad : {"-1", "abc", "1x", "", "+1", "99999999999999999999"}) {
    INFO(bad);
    CheckError(f.Get(target, bad), 400, Code::kInvalidArgument,
               std::string("bad x-cosmos-block-height header \"") + bad +
                   "\": expected a decimal height, 0 or more (0: the latest)");
  }
  CHECK(f.Get(target, "0").status == 200);  // the latest, as the SDK takes it
  // A height the store does not have yet: the backend's answer, in the error shape.
  const auto future = f.Get(target, "1000");
  INFO(future.body);
  CHECK(future.status >= 400);
  CHECK(json::parse(future.body).at("code") != 0);
}

TEST_CASE("rest: routing errors are 404 and 405 in grpc-gateway's shape", "[rest]") {
  RestFixture f;
  CheckError(f.Get("/cosmos/bank/v1beta1/nothing"), 404, Code::kNotFound,
             "Not Found: no route for path \"/cosmos/bank/v1beta1/nothing\"");
  CheckError(f.Get("/cosmos/bank/v1beta1/params/"), 404, Code::kNotFound, "Not Found");
  CheckError(f.Get("/"), 404, Code::kNotFound, "no route for path \"/\"");
  const auto post = f.Post("/cosmos/bank/v1beta1/params", "{}");
  CheckError(post, 405, Code::kUnimplemented,
             "Method Not Allowed: POST /cosmos/bank/v1beta1/params (allowed: GET)");
  CHECK(HeaderOf(post, "Allow") == "GET");
  CheckError(f.Get("/cosmos/tx/v1beta1/simulate"), 405, Code::kUnimplemented,
             "(allowed: POST)");
}

TEST_CASE("rest: the backend's errors keep their code and message", "[rest]") {
  RestFixture f;
  CheckError(f.Get("/cosmos/auth/v1beta1/accounts/" + kNobody.bech32), 404, Code::kNotFound,
             "account " + kNobody.bech32 + " not found");
  CheckError(f.Get("/cosmos/bank/v1beta1/balances/notanaddress"), 400, Code::kInvalidArgument,
             "invalid address \"notanaddress\"");
}

TEST_CASE("rest: simulate takes a JSON body; bad JSON is 400 with protobuf's message",
          "[rest]") {
  RestFixture f;
  const std::string tx = f.chain.Send(kAlice, kBob, "5stake", AliceSends(1));
  const auto ok =
      f.Post("/cosmos/tx/v1beta1/simulate", R"({"tx_bytes":")" + absl::Base64Escape(tx) + "\"}");
  INFO(ok.body);
  REQUIRE(ok.status == 200);
  const json body = json::parse(ok.body);
  CHECK(body.at("gas_info").at("gas_used").is_string());
  CHECK(std::stoll(body.at("gas_info").at("gas_used").get<std::string>()) > 0);

  CheckError(f.Post("/cosmos/tx/v1beta1/simulate", "{not json"), 400, Code::kInvalidArgument,
             "bad JSON body: not a cosmos.tx.v1beta1.SimulateRequest in JSON: ");
  CheckError(f.Post("/cosmos/tx/v1beta1/simulate", R"({"tx_bytes":"AA==","extra":1})"), 400,
             Code::kInvalidArgument, "extra");
  CheckError(f.Post("/cosmos/tx/v1beta1/simulate", R"({"tx_bytes":5})"), 400,
             Code::kInvalidArgument, "bad JSON body: not a cosmos.tx.v1beta1.SimulateRequest in JSON");
  // Not a tx: the backend's refusal.
  const auto not_tx = f.Post("/cosmos/tx/v1beta1/simulate", R"({"tx_bytes":"AAEC"})");
  INFO(not_tx.body);
  CHECK(not_tx.status == 400);
}

TEST_CASE("rest: Handle answers on the backend's worker thread as HandleNow does", "[rest]") {
  RestFixture f;
  const std::string target =
      "/cosmos/bank/v1beta1/balances/" + kBob.bech32 + "/by_denom?denom=stake";
  RestRequest req;
  req.method = "GET";
  req.target = target;
  std::promise<std::pair<HttpResponse, std::thread::id>> answered;
  f.gateway->Handle(req, [&answered](HttpResponse res) {
    answered.set_value({std::move(res), std::this_thread::get_id()});
  });
  auto [res, thread] = answered.get_future().get();
  CHECK(thread != std::this_thread::get_id());  // a backend worker, not the caller
  const HttpResponse now = f.Get(target);
  CHECK(res.status == 200);
  CHECK(res.body == now.body);
  CHECK(res.headers == now.headers);
  // A refusal before the backend is answered on the caller's thread.
  req.target = "/nope";
  std::thread::id refused_on;
  f.gateway->Handle(req, [&](HttpResponse r) {
    CHECK(r.status == 404);
    refused_on = std::this_thread::get_id();
  });
  CHECK(refused_on == std::this_thread::get_id());
}

TEST_CASE("rest: every served method has a route at its (google.api.http) path", "[rest]") {
  RestFixture f;
  std::size_t methods = 0;
  for (const auto* service : ApiBackend::Services()) methods += service->method_count();
  const auto routes = f.gateway->DescribeRoutes();
  CHECK(routes.size() == methods);
  CHECK(std::find(routes.begin(), routes.end(),
                  "GET /cosmos/bank/v1beta1/balances/{address}/by_denom -> "
                  "/cosmos.bank.v1beta1.Query/Balance") != routes.end());
  CHECK(std::find(routes.begin(), routes.end(),
                  "POST /cosmos/tx/v1beta1/simulate -> /cosmos.tx.v1beta1.Service/Simulate") !=
        routes.end());
}

// A service built here (in a pool over the generated one) whose methods take generated
// messages, with the rules `rules` lists (method name -> HttpRule), so the template syntax,
// precedence and rejections can be tested on paths the real services do not have.
struct TestService {
  explicit TestService(
      const std::vector<std::pair<std::string, google::api::HttpRule>>& rules)
      : pool(google::protobuf::DescriptorPool::generated_pool()) {
    google::protobuf::FileDescriptorProto file;
    file.set_name("rest_gateway_test_" + std::to_string(++counter) + ".proto");
    file.set_package("resttest");
    file.set_syntax("proto3");
    file.add_dependency("cosmos/bank/v1beta1/query.proto");
    auto* service = file.add_service();
    service->set_name("Svc");
    for (const auto& [name, rule] : rules) {
      auto* m = service->add_method();
      m->set_name(name);
      m->set_input_type(".cosmos.bank.v1beta1.QueryBalanceRequest");
      m->set_output_type(".cosmos.bank.v1beta1.QueryBalanceResponse");
      *m->mutable_options()->MutableExtension(google::api::http) = rule;
    }
    const auto* built = pool.BuildFile(file);
    REQUIRE(built != nullptr);
    descriptor = built->service(0);
  }
  static google::api::HttpRule Get(const std::string& path) {
    google::api::HttpRule rule;
    rule.set_get(path);
    return rule;
  }
  google::protobuf::DescriptorPool pool;
  const google::protobuf::ServiceDescriptor* descriptor = nullptr;
  static inline int counter = 0;
};

TEST_CASE("rest: path templates: precedence, wildcards, bindings, and rules refused",
          "[rest]") {
  RestFixture f;
  TestService svc({{"ByVar", TestService::Get("/t/{address}/x")},
                   {"ByLiteral", TestService::Get("/t/fixed/x")},
                   {"Deep", TestService::Get("/t/{address}/deep/{denom=**}")},
                   {"Nested", TestService::Get("/n/{address=acc/*}/d/{denom}")},
                   {"Star", TestService::Get("/s/*/{denom}")}});
  google::api::HttpRule bound = TestService::Get("/b/{address}");
  *bound.add_additional_bindings() = TestService::Get("/b2/{denom}");
  TestService with_binding({{"Bound", bound}});
  auto made = RestGateway::Create(*f.backend, {svc.descriptor, with_binding.descriptor});
  REQUIRE(made.ok());
  const RestGateway& gw = **made;
  auto prepare = [&](const std::string& target) {
    RestRequest req;
    req.method = "GET";
    req.target = target;
    auto prepared = gw.Prepare(req);
    if (auto* refused = std::get_if<HttpResponse>(&prepared)) FAIL(refused->body);
    auto call = std::get<RestGateway::Call>(prepared);
    cosmos::bank::v1beta1::QueryBalanceRequest msg;
    REQUIRE(msg.ParseFromString(call.request));
    return std::make_tuple(call.method, msg.address(), msg.denom());
  };
  // The literal beats the variable at the same position, whichever was declared first.
  CHECK(prepare("/t/fixed/x") == std::make_tuple(std::string("/resttest.Svc/ByLiteral"),
                                                 std::string(), std::string()));
  CHECK(prepare("/t/other/x") ==
        std::make_tuple(std::string("/resttest.Svc/ByVar"), std::string("other"), std::string()));
  // `**` takes the rest, slashes included (each segment decoded).
  CHECK(prepare("/t/a/deep/ibc/AB%2FCD/e") ==
        std::make_tuple(std::string("/resttest.Svc/Deep"), std::string("a"),
                        std::string("ibc/AB/CD/e")));
  // A variable over several segments keeps its literal part.
  CHECK(prepare("/n/acc/7/d/stake") == std::make_tuple(std::string("/resttest.Svc/Nested"),
                                                       std::string("acc/7"),
                                                       std::string("stake")));
  CHECK(prepare("/s/anything/stake") == std::make_tuple(std::string("/resttest.Svc/Star"),
                                                        std::string(), std::string("stake")));
  // additional_bindings route to the same method.
  CHECK(std::get<0>(prepare("/b/x")) == "/resttest.Svc/Bound");
  CHECK(prepare("/b2/y") ==
        std::make_tuple(std::string("/resttest.Svc/Bound"), std::string(), std::string("y")));
  RestRequest miss;
  miss.method = "GET";
  miss.target = "/n/other/7/d/stake";
  CHECK(std::get<HttpResponse>(gw.Prepare(miss)).status == 404);

  // Rules the gateway cannot serve are refused at start, naming the template and the reason.
  const std::pair<std::string, std::string> bad[] = {
      {"/v/{nofield}", "has no field \"nofield\""},
      {"/v/{address", "an unclosed '{'"},
      {"v/x", "does not start with '/'"},
      {"/v//x", "an empty segment"},
      {"/v/x:verb", "a verb"},
      {"/v/{denom=**}/x", "'**' that is not the last segment"},
      {"/v/a*b", "'*' inside a literal"}};
  for (const auto& [path, why] : bad) {
    INFO(path);
    TestService broken({{"Broken", TestService::Get(path)}});
    auto refused = RestGateway::Create(*f.backend, {broken.descriptor});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("path template \"" + path + "\"") !=
          std::string::npos);
    CHECK(refused.status().message().find(why) != std::string::npos);
  }
}

// ---- over a socket ----------------------------------------------------------------------------

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// A blocking HTTP/1.1 client on one connection.
struct Client {
  explicit Client(std::uint16_t port) : socket(io) {
    socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  }
  http::response<http::string_body> Send(http::request<http::string_body> req) {
    req.version(11);
    req.set(http::field::host, "127.0.0.1");
    req.prepare_payload();
    http::write(socket, req);
    return Read();
  }
  http::response<http::string_body> Read() {
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return res;
  }
  http::response<http::string_body> Get(const std::string& target) {
    return Send({http::verb::get, target, 11});
  }
  // True when the server has closed the connection (a read gets EOF or a reset).
  bool Closed() {
    char c;
    boost::system::error_code ec;
    socket.read_some(boost::asio::buffer(&c, 1), ec);
    return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
  }
  boost::asio::io_context io;
  tcp::socket socket;
  boost::beast::flat_buffer buffer;
};

TEST_CASE("rest server: keep-alive, the body limit, the connection limit, timeout, CORS",
          "[rest]") {
  RestFixture f;
  app::api::RestServerOptions options;
  options.address = "127.0.0.1:0";
  options.max_body_bytes = 4096;
  options.max_connections = 2;
  // Long enough that no step of a test outlasts it; the timeout's own section shortens it.
  options.read_timeout = std::chrono::milliseconds(10'000);
  const std::string params = "/cosmos/bank/v1beta1/params";

  SECTION("keep-alive, 413, connection limit, CORS off") {
    app::api::RestServer server(*f.gateway, options);
    REQUIRE(server.Start().ok());
    REQUIRE(server.port() != 0);
    Client c(server.port());
    for (int i = 0; i < 3; ++i) {  // three requests on one connection
      const auto res = c.Get(params);
      INFO(res.body());
      CHECK(res.result_int() == 200);
      CHECK(res.keep_alive());
      CHECK(res[http::field::content_type] == "application/json");
      CHECK(res["X-Cosmos-Block-Height"] == "2");
      CHECK(res.count(http::field::access_control_allow_origin) == 0);
    }
    const auto missing = c.Get("/nope");
    CHECK(missing.result_int() == 404);
    CHECK(json::parse(missing.body()).at("code") == 5);
    // CORS off: an OPTIONS request is routed like any other (no OPTIONS route: 405).
    const auto options_res = c.Send({http::verb::options, params, 11});
    CHECK(options_res.result_int() == 405);
    CHECK(options_res.count(http::field::access_control_allow_origin) == 0);

    // A second connection is served; a third, over max_connections, is closed at once.
    Client second(server.port());
    CHECK(second.Get(params).result_int() == 200);
    Client third(server.port());
    CHECK(third.Closed());

    // A body over the limit: 413 with the limit in the message, then the connection closes.
    http::request<http::string_body> big{http::verb::post, "/cosmos/tx/v1beta1/simulate", 11};
    big.body() = R"({"tx_bytes":")" + std::string(5000, 'A') + "\"}";
    const auto refused = c.Send(big);
    INFO(refused.body());
    CHECK(refused.result_int() == 413);
    CHECK(json::parse(refused.body()) ==
          json::parse(R"({"code":3,"message":"request body too large: the limit is 4096 bytes",)"
                      R"("details":[]})"));
    CHECK_FALSE(refused.keep_alive());
    CHECK(c.Closed());

    // Stop closes the idle second connection and returns.
    server.Stop();
    CHECK(second.Closed());
  }

  SECTION("an idle connection is dropped after the read timeout") {
    options.read_timeout = std::chrono::milliseconds(200);
    app::api::RestServer server(*f.gateway, options);
    REQUIRE(server.Start().ok());
    Client idle(server.port());
    CHECK(idle.Get(params).result_int() == 200);
    CHECK(idle.Closed());  // blocks until the server closes it: no request came in time
    // A client that sends half a header and stops (slowloris) is dropped the same way.
    Client slow(server.port());
    boost::asio::write(slow.socket, boost::asio::buffer(std::string("GET / HTTP/1.1\r\nHo")));
    CHECK(slow.Closed());
  }

  SECTION("CORS on") {
    options.enabled_unsafe_cors = true;
    app::api::RestServer server(*f.gateway, options);
    REQUIRE(server.Start().ok());
    Client c(server.port());
    const auto res = c.Get(params);
    CHECK(res.result_int() == 200);
    CHECK(res[http::field::access_control_allow_origin] == "*");
    CHECK(res[http::field::access_control_expose_headers].find("X-Cosmos-Block-Height") !=
          boost::beast::string_view::npos);
    http::request<http::string_body> preflight{http::verb::options, params, 11};
    preflight.set(http::field::origin, "https://wallet.example");
    preflight.set(http::field::access_control_request_method, "GET");
    const auto pre = c.Send(preflight);
    CHECK(pre.result_int() == 200);
    CHECK(pre[http::field::access_control_allow_origin] == "*");
    CHECK(pre[http::field::access_control_allow_methods].find("GET") !=
          boost::beast::string_view::npos);
    CHECK(pre[http::field::access_control_allow_headers].find("x-cosmos-block-height") !=
          boost::beast::string_view::npos);
    // An error answer carries the header too.
    const auto missing = c.Get("/nope");
    CHECK(missing.result_int() == 404);
    CHECK(missing[http::field::access_control_allow_origin] == "*");

    // Headers over max_header_bytes (16 KiB): 431, then the connection closes.
    // (A second connection: the first stays open, within max_connections.)
    Client d(server.port());
    http::request<http::string_body> fat{http::verb::get, params, 11};
    fat.set("X-Padding", std::string(20000, 'p'));
    const auto too_big = d.Send(fat);
    CHECK(too_big.result_int() == 431);
    CHECK(json::parse(too_big.body()).at("message") ==
          "request headers too large: the limit is 16384 bytes");
    CHECK(d.Closed());
  }
}

}  // namespace
}  // namespace kairos::test
