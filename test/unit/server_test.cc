// Unit tests for abci/server and abci/connection over real loopback and unix sockets: order,
// Flush, backpressure, bad frames that close one connection only, graceful Stop, addresses.
#include <catch2/catch.hpp>

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "abci/frame.h"
#include "abci/server.h"
#include "abci/varint.h"
#include "temp_dir.h"

using kairos::abci::AppendFrame;
using kairos::abci::ListenAddress;
using kairos::abci::ParseListenAddress;
using kairos::abci::Server;
using kairos::abci::ServerOptions;
namespace pb = ::tendermint::abci;
using namespace std::chrono_literals;

namespace {

// The guard on every blocking wait: only ever reached when the behaviour under test is broken.
constexpr auto kGuard = 10s;

// CheckTx answers with the tx as data and sleeps a little on txs starting with 's'. The tx
// "gate" blocks the application executor until Release(). Info answers with the version.
// A Query with data "qgate" blocks its thread until ReleaseQuery(). Every CheckTx and the end
// of every Query are logged in call order (calls()).
class TestApp final : public kairos::abci::Application {
 public:
  pb::ResponseCheckTx CheckTx(const pb::RequestCheckTx& req) override {
    Log("check:" + req.tx());
    if (req.tx() == "gate") {
      std::unique_lock lock(mu_);
      entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    } else if (!req.tx().empty() && req.tx()[0] == 's') {
      std::this_thread::sleep_for(1ms + 1ms * (req.tx().size() % 2));
    }
    pb::ResponseCheckTx res;
    res.set_data(req.tx());
    return res;
  }
  pb::ResponseInfo Info(const pb::RequestInfo& req) override {
    pb::ResponseInfo res;
    res.set_data(req.version());
    return res;
  }
  pb::ResponseQuery Query(const pb::RequestQuery& req) override {
    if (req.data() == "qgate") {
      std::unique_lock lock(mu_);
      query_entered_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return query_released_; });
    }
    Log("query done:" + req.data());
    pb::ResponseQuery res;
    res.set_value(req.data());
    return res;
  }
  pb::ResponseInsertTx InsertTx(const pb::RequestInsertTx&) override { return {}; }
  pb::ResponseReapTxs ReapTxs(const pb::RequestReapTxs&) override { return {}; }
  pb::ResponseInitChain InitChain(const pb::RequestInitChain&) override { return {}; }
  pb::ResponsePrepareProposal PrepareProposal(const pb::RequestPrepareProposal&) override {
    return {};
  }
  pb::ResponseProcessProposal ProcessProposal(const pb::RequestProcessProposal&) override {
    return {};
  }
  pb::ResponseExtendVote ExtendVote(const pb::RequestExtendVote&) override { return {}; }
  pb::ResponseVerifyVoteExtension VerifyVoteExtension(
      const pb::RequestVerifyVoteExtension&) override {
    return {};
  }
  pb::ResponseFinalizeBlock FinalizeBlock(const pb::RequestFinalizeBlock&) override { return {}; }
  pb::ResponseCommit Commit(const pb::RequestCommit&) override { return {}; }
  pb::ResponseListSnapshots ListSnapshots(const pb::RequestListSnapshots&) override { return {}; }
  pb::ResponseOfferSnapshot OfferSnapshot(const pb::RequestOfferSnapshot&) override { return {}; }
  pb::ResponseLoadSnapshotChunk LoadSnapshotChunk(const pb::RequestLoadSnapshotChunk&) override {
    return {};
  }
  pb::ResponseApplySnapshotChunk ApplySnapshotChunk(const pb::RequestApplySnapshotChunk&) override {
    return {};
  }

  // True once a "gate" tx is being served.
  bool WaitUntilGateEntered() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kGuard, [this] { return entered_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  bool WaitUntilQueryGateEntered() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kGuard, [this] { return query_entered_; });
  }
  void ReleaseQuery() {
    std::lock_guard lock(mu_);
    query_released_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

  void Log(std::string call) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(call));
  }

 private:

  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
  bool query_entered_ = false;
  bool query_released_ = false;
  std::vector<std::string> calls_;
};

// ---------------------------------------------------------------------------------------
// Requests and how their answers are recognised.

pb::Request Echo(const std::string& message) {
  pb::Request r;
  r.mutable_echo()->set_message(message);
  return r;
}
pb::Request CheckTx(const std::string& tx) {
  pb::Request r;
  r.mutable_check_tx()->set_tx(tx);
  return r;
}
pb::Request Info(const std::string& version) {
  pb::Request r;
  r.mutable_info()->set_version(version);
  return r;
}
pb::Request Query(const std::string& data) {
  pb::Request r;
  r.mutable_query()->set_data(data);
  return r;
}
pb::Request Flush() {
  pb::Request r;
  r.mutable_flush();
  return r;
}

std::string Key(const pb::Response& res) {
  switch (res.value_case()) {
    case pb::Response::kEcho: return "echo:" + res.echo().message();
    case pb::Response::kCheckTx: return "check:" + res.check_tx().data();
    case pb::Response::kInfo: return "info:" + res.info().data();
    case pb::Response::kFlush: return "flush";
    case pb::Response::kQuery: return "query:" + res.query().value();
    case pb::Response::kException: return "exception:" + res.exception().error();
    default: return "other:" + std::to_string(res.value_case());
  }
}

// The Key of the answer TestApp must give to `req`.
std::string ExpectedKey(const pb::Request& req) {
  pb::Response res;
  if (req.has_echo()) res.mutable_echo()->set_message(req.echo().message());
  if (req.has_check_tx()) res.mutable_check_tx()->set_data(req.check_tx().tx());
  if (req.has_info()) res.mutable_info()->set_data(req.info().version());
  if (req.has_flush()) res.mutable_flush();
  return Key(res);
}

// `n` requests: Echo, CheckTx (every other one slow) and Info in turn, with each
// `flush_every`-th a Flush. Echo messages are padded with `pad` bytes.
std::vector<pb::Request> Mixed(int n, int flush_every, std::size_t pad = 0) {
  std::vector<pb::Request> out;
  for (int i = 0; i < n; ++i) {
    const std::string seq = std::to_string(i);
    if (i % flush_every == flush_every - 1) {
      out.push_back(Flush());
    } else if (i % 3 == 0) {
      out.push_back(Echo("e" + seq + std::string(pad, 'p')));
    } else if (i % 3 == 1) {
      out.push_back(CheckTx((i % 2 == 1 ? "s" : "f") + seq));
    } else {
      out.push_back(Info("v" + seq));
    }
  }
  return out;
}

std::string Stream(const std::vector<pb::Request>& requests) {
  std::string out;
  for (const auto& r : requests) AppendFrame(r, &out);
  return out;
}

std::string Varint(std::uint64_t v) {
  std::string out;
  kairos::abci::AppendUvarint(v, &out);
  return out;
}

// ---------------------------------------------------------------------------------------
// A blocking client socket with a receive/send timeout as a failure guard.

class Client {
 public:
  explicit Client(const std::string& address) {
    ListenAddress a;
    std::string error;
    REQUIRE(ParseListenAddress(address, &a, &error));
    if (a.kind == ListenAddress::Kind::kTcp) {
      sockaddr_in sa{};
      sa.sin_family = AF_INET;
      sa.sin_port = htons(a.port);
      sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      Connect(AF_INET, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    } else {
      sockaddr_un sa{};
      sa.sun_family = AF_UNIX;
      std::strncpy(sa.sun_path, a.path.c_str(), sizeof sa.sun_path - 1);
      Connect(AF_UNIX, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    }
  }
  ~Client() { Close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Writes all of `bytes`. Returns false on error. Safe to call from another thread than
  // Read's (it uses no Catch macros).
  bool Send(const std::string& bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  void Send(const pb::Request& req) { REQUIRE(Send(Stream({req}))); }

  // Reads one response. False on EOF, error or timeout.
  bool Read(pb::Response* res) {
    std::span<const std::uint8_t> frame;
    while (decoder_.Next(&frame) != kairos::abci::FrameDecoder::Status::kFrame) {
      if (!Receive()) return false;
    }
    return res->ParseFromArray(frame.data(), static_cast<int>(frame.size()));
  }
  // Send then Read, as a key.
  std::string Call(const pb::Request& req) {
    Send(req);
    pb::Response res;
    REQUIRE(Read(&res));
    return Key(res);
  }

  // True when the server has closed the connection (EOF or reset) with nothing more to read.
  bool ServerClosed() {
    if (decoder_.buffered() > 0) return false;
    char byte;
    ssize_t n;
    do {
      n = ::recv(fd_, &byte, 1, 0);
    } while (n < 0 && errno == EINTR);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  void Connect(int family, const sockaddr* sa, socklen_t len) {
    fd_ = ::socket(family, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    const timeval tv{std::chrono::seconds(kGuard).count(), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int rc = ::connect(fd_, sa, len);
    INFO("connect: " << std::strerror(errno));
    REQUIRE(rc == 0);
  }
  bool Receive() {
    auto space = decoder_.Prepare(64 * 1024);
    ssize_t n;
    do {
      n = ::recv(fd_, space.data(), space.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    decoder_.Commit(static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  kairos::abci::FrameDecoder decoder_{1u << 30};
};

// Sends `requests` in one write from another thread while this one reads the answers, so a
// stream larger than the socket buffers cannot deadlock the test. Checks that every answer
// comes back, in request order.
void CheckPipelined(Client& client, const std::vector<pb::Request>& requests) {
  const std::string stream = Stream(requests);
  std::atomic<bool> sent{false};
  std::thread writer([&] { sent = client.Send(stream); });
  std::size_t answered = 0;
  pb::Response res;
  for (; answered < requests.size() && client.Read(&res); ++answered) {
    const std::string want = ExpectedKey(requests[answered]);
    if (Key(res) != want) {
      FAIL_CHECK("response " << answered << " is " << Key(res) << ", expected " << want);
      break;
    }
  }
  writer.join();
  CHECK(sent);
  CHECK(answered == requests.size());
}

// ---------------------------------------------------------------------------------------
// A server running on its own thread.

ServerOptions TestOptions(const std::string& address = "tcp://127.0.0.1:0") {
  ServerOptions o;
  o.address = address;
  o.handle_signals = false;
  o.max_frame_bytes = 1 << 20;
  return o;
}

class TestServer {
 public:
  explicit TestServer(ServerOptions options = TestOptions()) : server_(app_, std::move(options)) {
    std::string error;
    if (!server_.Listen(&error)) FAIL(error);
    address_ = server_.local_address();
    thread_ = std::thread([this] {
      server_.Run();
      stopped_.set_value();
    });
  }
  ~TestServer() {
    app_.Release();
    app_.ReleaseQuery();
    server_.Stop();
    thread_.join();
  }

  const std::string& address() const { return address_; }
  TestApp& app() { return app_; }
  void Stop() { server_.Stop(); }
  bool RunOnExecutor(std::function<void()> task) { return server_.RunOnExecutor(std::move(task)); }
  // True once Run() has returned.
  bool WaitUntilStopped() { return stopped_future_.wait_for(kGuard) == std::future_status::ready; }

 private:
  TestApp app_;
  Server server_;
  std::string address_;
  std::promise<void> stopped_;
  std::future<void> stopped_future_ = stopped_.get_future();
  std::thread thread_;
};

// Waits until connecting to `address` is refused: the listener is closed.
bool WaitUntilRefused(const std::string& address) {
  ListenAddress a;
  std::string error;
  REQUIRE(ParseListenAddress(address, &a, &error));
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    const int err = errno;
    ::close(fd);
    if (rc != 0 && err == ECONNREFUSED) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// A connection that must keep working: one round trip.
void CheckServes(Client& client, const std::string& tag) {
  CHECK(client.Call(Echo(tag)) == "echo:" + tag);
  CHECK(client.Call(CheckTx("s" + tag)) == "check:s" + tag);
}

// Opens a connection that `misbehave` then spoils, and checks that the server closes it
// without an answer while another connection, itself in the middle of a frame meanwhile, is
// served before and after, and a new connection is served too.
void CheckOnlyThatConnectionCloses(const std::string& address,
                                   const std::function<void(Client&)>& misbehave) {
  Client other(address);
  CheckServes(other, "before");
  const std::string split = Stream({Echo("split")});
  REQUIRE(other.Send(split.substr(0, 4)));
  {
    Client victim(address);
    CheckServes(victim, "victim");
    misbehave(victim);
    CHECK(victim.ServerClosed());
  }
  REQUIRE(other.Send(split.substr(4)));
  pb::Response res;
  REQUIRE(other.Read(&res));
  CHECK(Key(res) == "echo:split");
  CheckServes(other, "after");
  Client fresh(address);
  CheckServes(fresh, "new");
}

}  // namespace

TEST_CASE("pipelined requests are answered in order, Flush in its place", "[server]") {
  ServerOptions options = TestOptions();
  options.query_threads = GENERATE(0, 1);  // Echo and Info batches on the query thread, or not
  TestServer server(options);
  Client client(server.address());
  CheckPipelined(client, Mixed(1000, 10));
  // And again on the same connection, with Flush at other positions.
  CheckPipelined(client, Mixed(300, 7));
}

TEST_CASE("order holds across several connections at once", "[server]") {
  ServerOptions options = TestOptions();
  options.io_threads = GENERATE(1, 4);
  TestServer server(options);
  Client a(server.address());
  Client b(server.address());
  std::atomic<bool> sent{false};
  // No Catch macros off the main thread: the result is checked below.
  std::thread other([&] { sent = b.Send(Stream(Mixed(400, 10))); });
  CheckPipelined(a, Mixed(400, 9));
  other.join();
  CHECK(sent);
  const auto requests = Mixed(400, 10);
  pb::Response res;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    REQUIRE(b.Read(&res));
    REQUIRE(Key(res) == ExpectedKey(requests[i]));
  }
}

TEST_CASE("a unix socket address works and is removed at Stop", "[server]") {
  kairos::test::TempDir dir;
  const std::string path = dir / "abci.sock";
  {
    TestServer server(TestOptions("unix://" + path));
    CHECK(server.address() == "unix://" + path);
    {
      Client client(server.address());
      CheckPipelined(client, Mixed(200, 10));
    }
    server.Stop();
    REQUIRE(server.WaitUntilStopped());
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a unix socket path: a file that is not a socket is refused, a stale socket replaced",
          "[server]") {
  kairos::test::TempDir dir;
  const std::string path = dir / "abci.sock";
  TestApp app;
  SECTION("a regular file") {
    std::ofstream(path) << "precious";
    Server server(app, TestOptions("unix://" + path));
    std::string error;
    REQUIRE_FALSE(server.Listen(&error));
    CHECK_THAT(error, Catch::Contains(path + " exists and is not a socket"));
    CHECK(std::filesystem::is_regular_file(path));
  }
  SECTION("a stale socket") {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    ::close(fd);  // the file stays behind
    REQUIRE(std::filesystem::is_socket(path));
    TestServer server(TestOptions("unix://" + path));
    Client client(server.address());
    CheckServes(client, "fresh");
  }
}

TEST_CASE("a client that leaves mid-frame does not disturb another connection", "[server]") {
  TestServer server;
  CheckOnlyThatConnectionCloses(server.address(), [](Client& b) {
    REQUIRE(b.Send(Varint(100) + std::string(50, 'h')));
    b.ShutdownWrite();  // the server sees EOF in the middle of the frame
  });
}

TEST_CASE("a frame that is not a Request closes only that connection", "[server]") {
  TestServer server;
  CheckOnlyThatConnectionCloses(
      server.address(), [](Client& b) { REQUIRE(b.Send(std::string("\x03\xff\xff\xff", 4))); });
}

TEST_CASE("a frame over max_frame_bytes closes only that connection", "[server]") {
  ServerOptions options = TestOptions();
  options.max_frame_bytes = 1024;
  TestServer server(options);

  // A request of exactly 1024 bytes is served.
  const pb::Request at_cap = CheckTx("f" + std::string(1017, 'x'));
  REQUIRE(at_cap.ByteSizeLong() == 1024);
  Client a(server.address());
  CHECK(a.Call(at_cap) == ExpectedKey(at_cap));

  SECTION("a length prefix over the cap") {
    CheckOnlyThatConnectionCloses(
        server.address(), [](Client& b) { REQUIRE(b.Send(Varint(2000) + std::string(10, 'y'))); });
  }
  SECTION("a whole request one byte over the cap") {
    const pb::Request over = CheckTx("f" + std::string(1018, 'x'));
    REQUIRE(over.ByteSizeLong() == 1025);
    CheckOnlyThatConnectionCloses(server.address(), [&](Client& b) { b.Send(over); });
  }
  CHECK(a.Call(at_cap) == ExpectedKey(at_cap));
}

TEST_CASE("an empty or unknown request gets an Exception and the connection stays usable",
          "[server]") {
  TestServer server;
  Client client(server.address());
  REQUIRE(client.Send(std::string("\x00", 1)));
  pb::Response res;
  REQUIRE(client.Read(&res));
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(), Catch::Contains("empty"));
  CheckServes(client, "after-empty");

  // Field 30 (no method), length 0.
  REQUIRE(client.Send(std::string("\x03\xf2\x01\x00", 4)));
  REQUIRE(client.Read(&res));
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(), Catch::Contains("unknown"));
  CheckServes(client, "after-unknown");
}

TEST_CASE("with a small max_pending_requests every response still arrives in order", "[server]") {
  ServerOptions options = TestOptions();
  options.max_pending_requests = 4;
  TestServer server(options);
  Client client(server.address());
  SECTION("slow requests") { CheckPipelined(client, Mixed(600, 10)); }
  SECTION("megabytes of requests") { CheckPipelined(client, Mixed(3000, 50, 8000)); }
}

TEST_CASE("a client that half-closes gets every answer, then EOF", "[server]") {
  TestServer server;
  Client client(server.address());
  const auto requests = Mixed(100, 10);
  REQUIRE(client.Send(Stream(requests)));
  client.ShutdownWrite();
  pb::Response res;
  for (const auto& req : requests) {
    REQUIRE(client.Read(&res));
    REQUIRE(Key(res) == ExpectedKey(req));
  }
  CHECK(client.ServerClosed());
}

TEST_CASE("Stop answers every request already read, then closes and Run returns", "[server]") {
  TestServer server;
  Client client(server.address());
  Client idle(server.address());
  CheckServes(idle, "idle");
  auto requests = Mixed(60, 10);
  requests.push_back(CheckTx("gate"));  // holds the application until released
  REQUIRE(client.Send(Stream(requests)));
  REQUIRE(server.app().WaitUntilGateEntered());  // so every request has been read

  server.Stop();
  REQUIRE(WaitUntilRefused(server.address()));  // the server is stopping: no new connections
  server.app().Release();

  pb::Response res;
  for (const auto& req : requests) {
    REQUIRE(client.Read(&res));
    REQUIRE(Key(res) == ExpectedKey(req));
  }
  CHECK(client.ServerClosed());
  CHECK(idle.ServerClosed());
  CHECK(server.WaitUntilStopped());
}

TEST_CASE("Stop with no connections returns from Run", "[server]") {
  TestServer server;
  server.Stop();
  server.Stop();  // idempotent
  CHECK(server.WaitUntilStopped());
}

TEST_CASE("Stop before Run makes Run return at once", "[server]") {
  TestApp app;
  Server server(app, TestOptions());
  std::string error;
  REQUIRE(server.Listen(&error));
  server.Stop();
  std::promise<void> stopped;
  std::thread runner([&] {
    server.Run();
    stopped.set_value();
  });
  CHECK(stopped.get_future().wait_for(kGuard) == std::future_status::ready);
  runner.join();
}

TEST_CASE("Listen on an address in use fails with a clear error", "[server]") {
  TestServer first;
  TestApp app;
  Server second(app, TestOptions(first.address()));
  std::string error;
  REQUIRE_FALSE(second.Listen(&error));
  CHECK_THAT(error,
             Catch::Contains("cannot listen on " + first.address()) && Catch::Contains("in use"));
  // The first server is unaffected.
  Client client(first.address());
  CheckServes(client, "first");
}

TEST_CASE("ParseListenAddress rejects bad forms, naming the expected one", "[server]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"http://x:1", "unknown scheme"},
      {"127.0.0.1:26658", "unknown scheme"},
      {"tcp://host", "missing port"},
      {"tcp://host:99999", "port must be a number from 0 to 65535"},
      {"tcp://host:", "port must be a number"},
      {"tcp://host:-1", "port must be a number"},
      {"tcp://host:80x", "port must be a number"},
      {"tcp://:80", "missing host"},
      {"tcp://[]:80", "missing host"},
      {"unix://", "empty socket path"},
      {"unix:///" + std::string(200, 'p'), "socket path too long"},
  };
  for (const auto& [text, why] : bad) {
    INFO(text);
    ListenAddress out;
    std::string error;
    CHECK_FALSE(ParseListenAddress(text, &out, &error));
    CHECK_THAT(error, Catch::Contains("'" + text + "'") && Catch::Contains(why) &&
                          Catch::Contains("expected tcp://HOST:PORT or unix:///PATH"));
  }
}

TEST_CASE("ParseListenAddress accepts tcp hosts, IPv6 and unix paths", "[server]") {
  ListenAddress out;
  std::string error;
  REQUIRE(ParseListenAddress("tcp://[::1]:26658", &out, &error));
  CHECK(out.kind == ListenAddress::Kind::kTcp);
  CHECK(out.host == "::1");
  CHECK(out.port == 26658);

  REQUIRE(ParseListenAddress("tcp://localhost:0", &out, &error));
  CHECK(out.kind == ListenAddress::Kind::kTcp);
  CHECK(out.host == "localhost");
  CHECK(out.port == 0);

  REQUIRE(ParseListenAddress("tcp://0.0.0.0:65535", &out, &error));
  CHECK(out.port == 65535);

  REQUIRE(ParseListenAddress("unix:///tmp/x.sock", &out, &error));
  CHECK(out.kind == ListenAddress::Kind::kUnix);
  CHECK(out.path == "/tmp/x.sock");

  REQUIRE(ParseListenAddress("unix://relative.sock", &out, &error));
  CHECK(out.path == "relative.sock");
  CHECK(error.empty());
}

TEST_CASE("with a query thread, Info and Query are answered while the executor is busy",
          "[server]") {
  ServerOptions options = TestOptions();
  options.query_threads = 1;
  TestServer server(options);
  Client busy(server.address());
  busy.Send(CheckTx("gate"));  // holds the application executor
  REQUIRE(server.app().WaitUntilGateEntered());
  Client queries(server.address());
  CHECK(queries.Call(Info("v1")) == "info:v1");
  CHECK(queries.Call(Query("q1")) == "query:q1");
  CHECK(queries.Call(Echo("e1")) == "echo:e1");
  server.app().Release();
  pb::Response res;
  REQUIRE(busy.Read(&res));
  CHECK(Key(res) == "check:gate");
}

TEST_CASE("one connection's requests run in its order across the query thread and the executor",
          "[server]") {
  ServerOptions options = TestOptions();
  options.query_threads = 1;
  TestServer server(options);
  Client client(server.address());
  // A query held on the query thread, then a CheckTx on the same connection: the CheckTx must
  // wait for it, although the executor is free.
  client.Send(Query("qgate"));
  REQUIRE(server.app().WaitUntilQueryGateEntered());
  client.Send(CheckTx("after-query"));
  client.Send(Query("after-check"));  // read-only again, but behind the deferred CheckTx
  // Give a wrong implementation the chance to run the CheckTx now (not a timing assertion:
  // the order below is what is checked).
  std::this_thread::sleep_for(100ms);
  server.app().ReleaseQuery();
  pb::Response res;
  for (const char* want : {"query:qgate", "check:after-query", "query:after-check"}) {
    REQUIRE(client.Read(&res));
    CHECK(Key(res) == want);
  }
  const std::vector<std::string> calls = server.app().calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[0] == "query done:qgate");
  CHECK(calls[1] == "check:after-query");
  CHECK(calls[2] == "query done:after-check");
  // And the other way: a query behind a CheckTx still on the executor runs after it.
  client.Send(CheckTx("gate"));
  REQUIRE(server.app().WaitUntilGateEntered());
  client.Send(Query("behind-gate"));
  std::this_thread::sleep_for(100ms);
  server.app().Release();
  for (const char* want : {"check:gate", "query:behind-gate"}) {
    REQUIRE(client.Read(&res));
    CHECK(Key(res) == want);
  }
  const std::vector<std::string> all = server.app().calls();
  REQUIRE(all.size() == 5);
  CHECK(all[3] == "check:gate");
  CHECK(all[4] == "query done:behind-gate");
}

TEST_CASE("with two query threads, one connection's queries still run in its order",
          "[server]") {
  ServerOptions options = TestOptions();
  options.query_threads = 2;
  TestServer server(options);
  Client client(server.address());
  client.Send(Query("qgate"));  // held on one query thread
  REQUIRE(server.app().WaitUntilQueryGateEntered());
  client.Send(Query("second"));  // the other thread is free, but this must wait its turn
  // Another connection's query is not held behind it: the second thread answers it.
  Client other(server.address());
  CHECK(other.Call(Query("other")) == "query:other");
  // Give a wrong implementation the chance to run "second" now (the order is what is checked).
  std::this_thread::sleep_for(100ms);
  server.app().ReleaseQuery();
  pb::Response res;
  for (const char* want : {"query:qgate", "query:second"}) {
    REQUIRE(client.Read(&res));
    CHECK(Key(res) == want);
  }
  const std::vector<std::string> calls = server.app().calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[0] == "query done:other");
  CHECK(calls[1] == "query done:qgate");
  CHECK(calls[2] == "query done:second");
}

TEST_CASE("RunOnExecutor runs a task on the executor after the calls queued before it; refused "
          "before Run and once stopping", "[server]") {
  {
    TestApp app;
    Server idle(app, TestOptions());
    std::string error;
    REQUIRE(idle.Listen(&error));
    CHECK_FALSE(idle.RunOnExecutor([] {}));  // before Run
  }
  TestServer server;
  Client client(server.address());
  REQUIRE(client.Send(Stream({CheckTx("gate")})));
  REQUIRE(server.app().WaitUntilGateEntered());  // the executor is inside CheckTx("gate")
  std::promise<std::vector<std::string>> seen;
  // Run() opens the executor before it accepts a connection, so it is open by now.
  REQUIRE(server.RunOnExecutor([&] {
    server.app().Log("task");
    seen.set_value(server.app().calls());
  }));
  server.app().Release();
  const std::vector<std::string> calls = seen.get_future().get();
  REQUIRE(calls.size() >= 2);
  CHECK(calls[calls.size() - 2] == "check:gate");  // the task ran after the queued call
  CHECK(calls.back() == "task");
  server.Stop();
  REQUIRE(server.WaitUntilStopped());
  CHECK_FALSE(server.RunOnExecutor([] { FAIL("ran after the stop"); }));
}
