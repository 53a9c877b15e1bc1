// api_bench: queries per second of cosmos.bank.v1beta1.Query/Balance through one of a running
// node's three doors, with N concurrent clients for D seconds (issue 23's query benchmark;
// scripts/bench-api.sh runs it against a node under a steady load of bank sends).
//
//   api_bench --via grpc|rest|abci --address ADDR --accounts A1,A2,... [--denom stake]
//             [--expect-amount N] [--clients 1] [--duration 15] [--label TEXT]
//
//   grpc  ADDR = 127.0.0.1:9090; grpc::GenericStub with the serialized QueryBalanceRequest (the
//         server registers its services by descriptor, so there is no generated stub to use).
//         One channel per client (a local subchannel pool: one HTTP/2 connection each). The
//         client waits for GenericStub's callback; gRPC's blocking unary call (what a generated
//         stub does) was tried and cost about the same client CPU per call but reached ~25%
//         fewer queries/s with 16 clients (2026-11-27, docs/benchmarks.md).
//   rest  ADDR = http://127.0.0.1:1317; GET /cosmos/bank/v1beta1/balances/{addr}/by_denom?denom=
//         on a keep-alive HTTP/1.1 connection per client (Boost.Beast).
//   abci  ADDR = http://127.0.0.1:26657; CometBFT's JSON-RPC abci_query (POST, path
//         "/cosmos.bank.v1beta1.Query/Balance", data = the request in hex), keep-alive likewise.
//
// Each client asks for the balance of a random account of --accounts, one request at a time,
// and checks every answer: the call succeeded (gRPC OK, HTTP 200, ABCI code 0), the response
// parses as a QueryBalanceResponse (REST: protobuf's JSON parser, unknown fields refused), its
// denom is --denom, and its amount is --expect-amount when given (else a decimal integer). A
// failed or wrong answer is counted by its first line and printed; it never counts as a query
// served. The clients connect first; the clock starts when all of them are connected.
//
// Prints one line of key=value figures (qps counts correct answers only; latency percentiles are
// over every answer, wrong ones included), then one line per kind of error. client_cpu_share is
// this process's CPU time (getrusage, every thread: the clients and gRPC's own) over the wall
// time, i.e. how many of the machine's cores the load generator itself used.
// Exit 0 when at least one answer was correct, 1 otherwise, 2 for a bad argument.
//
// Threads: one per client (blocking calls; gRPC's callback completes on gRPC's threads and
// wakes the client), and the main thread, which waits.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <nlohmann/json.hpp>

#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "crypto/base64.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;
using ::cosmos::bank::v1beta1::QueryBalanceRequest;
using ::cosmos::bank::v1beta1::QueryBalanceResponse;

constexpr char kMethod[] = "/cosmos.bank.v1beta1.Query/Balance";

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "api_bench: %s\nusage: api_bench --via grpc|rest|abci --address ADDR "
               "--accounts A1,A2,... [--denom stake] [--expect-amount N] [--clients 1] "
               "[--duration 15] [--label TEXT]\n",
               why.c_str());
  std::exit(2);
}

struct Options {
  std::string via;
  std::string address;
  std::vector<std::string> accounts;
  std::string denom = "stake";
  std::string expect_amount;  // "" = any decimal integer
  int clients = 1;
  double duration_s = 15;
  std::string label;
};

// The verdict on a decoded response: "" when it is the balance asked for.
std::string CheckBalance(const QueryBalanceResponse& r, const Options& o) {
  if (!r.has_balance()) return "no balance in the response";
  if (r.balance().denom() != o.denom) return "wrong denom '" + r.balance().denom() + "'";
  const std::string& amount = r.balance().amount();
  if (!o.expect_amount.empty()) {
    if (amount != o.expect_amount) return "wrong amount " + amount + " (expected " + o.expect_amount + ")";
  } else if (amount.empty() || !std::all_of(amount.begin(), amount.end(),
                                            [](char c) { return c >= '0' && c <= '9'; })) {
    return "amount '" + amount + "' is not a decimal integer";
  }
  return "";
}

// One client's connection: Ask returns "" for a correct answer, else what was wrong.
class Door {
 public:
  virtual ~Door() = default;
  virtual std::string Connect() = 0;
  virtual std::string Ask(std::size_t account) = 0;
};

class GrpcDoor : public Door {
 public:
  explicit GrpcDoor(const Options& o) : o_(o) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own per client
    channel_ = grpc::CreateCustomChannel(o.address, grpc::InsecureChannelCredentials(), args);
    stub_ = std::make_unique<grpc::GenericStub>(channel_);
    for (const auto& account : o.accounts) {
      QueryBalanceRequest request;
      request.set_address(account);
      request.set_denom(o.denom);
      requests_.push_back(request.SerializeAsString());
    }
  }

  std::string Connect() override {
    if (!channel_->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      return "no gRPC connection to " + o_.address + " within 10 s";
    }
    return "";
  }

  std::string Ask(std::size_t account) override {
    grpc::Slice slice(requests_[account]);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status;
    bool done = false;
    stub_->UnaryCall(&context, kMethod, grpc::StubOptions(), &request, &response,
                     [&](grpc::Status s) {
                       std::lock_guard<std::mutex> lock(mu_);
                       status = std::move(s);
                       done = true;
                       cv_.notify_one();
                     });
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return done; });
    }
    if (!status.ok()) {
      return "gRPC status " + std::to_string(status.error_code()) + ": " + status.error_message();
    }
    std::vector<grpc::Slice> slices;
    if (!response.Dump(&slices).ok()) return "unreadable gRPC response";
    std::string bytes;
    for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    QueryBalanceResponse decoded;
    if (!decoded.ParseFromString(bytes)) return "gRPC response is not a QueryBalanceResponse";
    return CheckBalance(decoded, o_);
  }

 private:
  const Options& o_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> stub_;
  std::vector<std::string> requests_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// A keep-alive HTTP/1.1 connection (reconnects when the server closes it); the requests are
// built once per account. REST and abci_query differ only in the request and the decoding.
class HttpDoor : public Door {
 public:
  HttpDoor(const Options& o, bool abci) : o_(o), abci_(abci), socket_(io_) {
    auto url = kairos::client::ParseNodeUrl(o.address);
    if (!url.ok()) Usage("--address: " + url.status().ToString());
    url_ = *url;
    for (const auto& account : o.accounts) {
      http::request<http::string_body> req;
      req.version(11);
      req.set(http::field::host, url_.host + ":" + url_.port);
      req.keep_alive(true);
      if (abci) {
        QueryBalanceRequest request;
        request.set_address(account);
        request.set_denom(o.denom);
        const nlohmann::json body = {
            {"jsonrpc", "2.0"},
            {"id", 1},
            {"method", "abci_query"},
            {"params",
             {{"path", kMethod},
              {"data", kairos::app::HexEncode(request.SerializeAsString())},
              {"height", "0"},
              {"prove", false}}}};
        req.method(http::verb::post);
        req.target(url_.base_path + "/");
        req.set(http::field::content_type, "application/json");
        req.body() = body.dump();
      } else {
        req.method(http::verb::get);
        req.target(url_.base_path + "/cosmos/bank/v1beta1/balances/" + account +
                   "/by_denom?denom=" + o.denom);
      }
      req.prepare_payload();
      requests_.push_back(std::move(req));
    }
  }

  std::string Connect() override {
    boost::system::error_code ec;
    socket_.close(ec);
    asio::ip::tcp::resolver resolver(io_);
    const auto endpoints = resolver.resolve(url_.host, url_.port, ec);
    if (!ec) asio::connect(socket_, endpoints, ec);
    if (ec) return "cannot connect to " + url_.text + ": " + ec.message();
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    buffer_.clear();
    connected_ = true;
    return "";
  }

  std::string Ask(std::size_t account) override {
    if (!connected_) {
      if (std::string error = Connect(); !error.empty()) return error;
    }
    boost::system::error_code ec;
    http::write(socket_, requests_[account], ec);
    http::response<http::string_body> res;
    if (!ec) http::read(socket_, buffer_, res, ec);
    if (ec) {
      connected_ = false;
      return "HTTP: " + ec.message();
    }
    if (!res.keep_alive()) connected_ = false;
    if (res.result() != http::status::ok) {
      return "HTTP " + std::to_string(res.result_int()) + ": " + res.body().substr(0, 200);
    }
    return abci_ ? DecodeAbci(res.body()) : DecodeRest(res.body());
  }

 private:
  std::string DecodeRest(const std::string& body) {
    QueryBalanceResponse decoded;
    const auto status = google::protobuf::util::JsonStringToMessage(body, &decoded);
    if (!status.ok()) return "REST body is not a QueryBalanceResponse: " + status.ToString();
    return CheckBalance(decoded, o_);
  }

  std::string DecodeAbci(const std::string& body) {
    try {
      const auto json = nlohmann::json::parse(body);
      if (json.contains("error")) return "JSON-RPC error: " + json["error"].dump();
      const auto& response = json.at("result").at("response");
      const std::int64_t code = kairos::client::JsonInt(response, "code");
      if (code != 0) {
        return "ABCI code " + std::to_string(code) + ": " + response.value("log", std::string());
      }
      const auto value = kairos::crypto::Base64Decode(response.value("value", std::string()));
      if (!value) return "abci_query value is not base64";
      QueryBalanceResponse decoded;
      if (!decoded.ParseFromString(*value)) return "abci_query value is not a QueryBalanceResponse";
      return CheckBalance(decoded, o_);
    } catch (const std::exception& e) {
      return std::string("abci_query answer is not the JSON expected: ") + e.what();
    }
  }

  const Options& o_;
  const bool abci_;
  kairos::client::NodeUrl url_;
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
  std::vector<http::request<http::string_body>> requests_;
};

struct ClientResult {
  std::vector<std::uint32_t> latency_us;  // every answer
  std::uint64_t ok = 0;
  std::map<std::string, std::uint64_t> errors;  // by message
};

double CpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::uint32_t Percentile(const std::vector<std::uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(flag + " needs a value");
    const std::string value = argv[i + 1];
    try {
      if (flag == "--via") o.via = value;
      else if (flag == "--address") o.address = value;
      else if (flag == "--accounts") o.accounts = SplitCommas(value);
      else if (flag == "--denom") o.denom = value;
      else if (flag == "--expect-amount") o.expect_amount = value;
      else if (flag == "--clients") o.clients = std::stoi(value);
      else if (flag == "--duration") o.duration_s = std::stod(value);
      else if (flag == "--label") o.label = value;
      else Usage("unknown flag " + flag);
    } catch (const std::exception&) {
      Usage(flag + ": bad value '" + value + "'");
    }
  }
  if (o.via != "grpc" && o.via != "rest" && o.via != "abci") Usage("--via must be grpc, rest or abci");
  if (o.address.empty()) Usage("--address is required");
  if (o.accounts.empty()) Usage("--accounts is required");
  if (o.clients < 1 || o.clients > 1024) Usage("--clients must be from 1 to 1024");
  if (!(o.duration_s > 0)) Usage("--duration must be positive");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseOptions(argc, argv);
  std::vector<std::unique_ptr<Door>> doors;
  for (int i = 0; i < o.clients; ++i) {
    if (o.via == "grpc") doors.push_back(std::make_unique<GrpcDoor>(o));
    else doors.push_back(std::make_unique<HttpDoor>(o, o.via == "abci"));
  }
  for (auto& door : doors) {
    if (std::string error = door->Connect(); !error.empty()) {
      std::fprintf(stderr, "api_bench: %s\n", error.c_str());
      return 1;
    }
  }

  std::vector<ClientResult> results(doors.size());
  std::latch ready(o.clients + 1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937_64 rng(static_cast<std::uint64_t>(c) + 1);
      std::uniform_int_distribution<std::size_t> pick(0, o.accounts.size() - 1);
      ClientResult& r = results[c];
      r.latency_us.reserve(1 << 16);
      ready.arrive_and_wait();
      while (!stop.load(std::memory_order_relaxed)) {
        const auto start = Clock::now();
        const std::string error = doors[c]->Ask(pick(rng));
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
        r.latency_us.push_back(static_cast<std::uint32_t>(us.count()));
        if (error.empty()) ++r.ok;
        else ++r.errors[error.substr(0, error.find('\n'))];
      }
    });
  }
  const double cpu_before = CpuSeconds();
  ready.arrive_and_wait();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration_s));
  stop = true;
  for (auto& t : threads) t.join();
  const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu_s = CpuSeconds() - cpu_before;

  std::vector<std::uint32_t> latency;
  std::uint64_t ok = 0;
  std::map<std::string, std::uint64_t> errors;
  std::uint64_t error_count = 0;
  for (const auto& r : results) {
    latency.insert(latency.end(), r.latency_us.begin(), r.latency_us.end());
    ok += r.ok;
    for (const auto& [message, n] : r.errors) {
      errors[message] += n;
      error_count += n;
    }
  }
  std::sort(latency.begin(), latency.end());
  std::printf(
      "label=%s via=%s clients=%d seconds=%.2f ok=%llu errors=%llu qps=%.1f p50_us=%u p99_us=%u "
      "max_us=%u client_cpu_s=%.2f client_cpu_share=%.3f\n",
      o.label.empty() ? "-" : o.label.c_str(), o.via.c_str(), o.clients, wall_s,
      static_cast<unsigned long long>(ok), static_cast<unsigned long long>(error_count),
      static_cast<double>(ok) / wall_s, Percentile(latency, 0.50), Percentile(latency, 0.99),
      latency.empty() ? 0u : latency.back(), cpu_s, cpu_s / wall_s);
  for (const auto& [message, n] : errors) {
    std::printf("error count=%llu %s\n", static_cast<unsigned long long>(n), message.c_str());
  }
  std::fflush(stdout);
  return ok > 0 ? 0 : 1;
}
