#include "app/api/rest_server.h"

#include <atomic>
#include <charconv>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>  // before asio: awaitable.hpp in Boost 1.74 uses std::exchange
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "abci/log.h"

namespace kairos::app::api {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

const std::shared_ptr<spdlog::logger>& Log() {
  static const std::shared_ptr<spdlog::logger> logger = abci::NamedLogger("api");
  return logger;
}

constexpr char kCorsAllowHeaders[] = "Content-Type, x-cosmos-block-height";
constexpr char kCorsExposeHeaders[] =
    "X-Cosmos-Block-Height, Grpc-Metadata-X-Cosmos-Block-Height";
// After a 413, how much of the rest of the refused body is read and dropped (so the client,
// still sending, gets the answer rather than a reset), and for how long at most.
constexpr std::size_t kDrainBytes = 1u << 20;
constexpr std::chrono::milliseconds kDrainTimeout{1000};

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

// Parses "HOST:PORT" ("[v6]:PORT" too).
Status ParseHostPort(const std::string& text, std::string* host, std::uint16_t* port) {
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument("bad REST listen address \"" + text + "\": " + why +
                                   " (expected HOST:PORT, e.g. 127.0.0.1:1317)");
  };
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return fail("an IPv6 host must be \"[host]:port\"");
    }
    *host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return fail("missing port");
    *host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host->empty()) return fail("missing host");
  unsigned value = 0;
  const auto [ptr, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
  if (port_text.empty() || ec != std::errc() || ptr != port_text.data() + port_text.size() ||
      value > 65535) {
    return fail("port must be a number from 0 to 65535");
  }
  *port = static_cast<std::uint16_t>(value);
  return Status::OK();
}

// Runs the gateway on `request` and completes with its answer on the awaiting coroutine's
// executor (the session's strand), wherever the gateway's callback ran. `work` keeps the io
// context running while the backend holds the request.
template <class Token>
auto AsyncHandle(const RestGateway& gateway, const RestRequest& request,
                 asio::executor_work_guard<asio::io_context::executor_type> work,
                 Token&& token) {
  return asio::async_initiate<Token, void(HttpResponse)>(
      [&gateway, work = std::move(work)](auto handler, const RestRequest& req) mutable {
        using Handler = decltype(handler);
        std::optional executor(asio::get_associated_executor(handler));
        auto shared = std::make_shared<Handler>(std::move(handler));
        gateway.Handle(req, [shared = std::move(shared), executor = std::move(executor),
                             work = std::move(work)](HttpResponse res) mutable {
          asio::post(*executor, [shared = std::move(shared), res = std::move(res)]() mutable {
            (*shared)(std::move(res));
          });
          // This callback is destroyed later, on the backend's thread. Once `work` is
          // released, Stop may join the io threads and the server may destroy its io_context,
          // so nothing of the io context may be left in here by then: a strand executor that
          // outlives its io_context is freed into a destroyed strand service (ASan caught it).
          executor.reset();
          work.reset();
        });
      },
      token, request);
}

}  // namespace

// ---- session --------------------------------------------------------------------------------

class RestSession : public std::enable_shared_from_this<RestSession> {
 public:
  using OnClosed = std::function<void(RestSession*)>;
  RestSession(tcp::socket socket, const RestGateway& gateway, const RestServerOptions& options,
              asio::io_context& io, OnClosed on_closed)
      : stream_(std::move(socket)),
        gateway_(gateway),
        options_(options),
        io_(io),
        on_closed_(std::move(on_closed)) {}

  void Start() {
    auto self = shared_from_this();
    asio::co_spawn(stream_.get_executor(), [self] { return self->Run(); }, asio::detached);
  }

  // Closes an idle connection now; a busy one after its answer is written. Thread-safe.
  void Shutdown() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->stopping_ = true;
      if (!self->busy_) self->stream_.cancel();
    });
  }

 private:
  asio::awaitable<void> Run();
  // Writes `res` (for a request of HTTP version `version`); false when the connection ends.
  asio::awaitable<bool> Write(const HttpResponse& res, unsigned version, bool keep_alive);
  // The answer to a CORS preflight (OPTIONS) request.
  HttpResponse Preflight() const;

  beast::tcp_stream stream_;
  const RestGateway& gateway_;
  const RestServerOptions& options_;
  asio::io_context& io_;
  OnClosed on_closed_;
  bool busy_ = false;      // a request is read and not yet answered
  bool stopping_ = false;  // the server is stopping: answer what is read, then close
};

asio::awaitable<bool> RestSession::Write(const HttpResponse& res, unsigned version,
                                         bool keep_alive) {
  http::response<http::string_body> out{static_cast<http::status>(res.status), version};
  out.set(http::field::content_type, res.content_type);
  for (const auto& [name, value] : res.headers) out.set(name, value);
  if (options_.enabled_unsafe_cors) {
    out.set(http::field::access_control_allow_origin, "*");
    out.set(http::field::access_control_expose_headers, kCorsExposeHeaders);
  }
  out.body() = res.body;
  out.keep_alive(keep_alive && !stopping_);
  out.prepare_payload();
  ErrorCode ec;
  stream_.expires_after(options_.write_timeout);
  co_await http::async_write(stream_, out, asio::redirect_error(asio::use_awaitable, ec));
  co_return !ec && out.keep_alive();
}

HttpResponse RestSession::Preflight() const {
  HttpResponse res;
  res.status = 200;
  res.content_type = "text/plain";
  res.headers.emplace_back("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
  res.headers.emplace_back("Access-Control-Allow-Headers", kCorsAllowHeaders);
  res.headers.emplace_back("Access-Control-Max-Age", "600");
  return res;
}

asio::awaitable<void> RestSession::Run() {
  beast::flat_buffer buffer;
  while (!stopping_) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
    parser.body_limit(options_.max_body_bytes);
    ErrorCode ec;
    stream_.expires_after(options_.read_timeout);
    co_await http::async_read(stream_, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      const bool malformed =
          ec.category() == http::make_error_code(http::error::body_limit).category() &&
          ec != http::error::end_of_stream && ec != http::error::partial_message;
      if (!malformed) {
        break;  // closed, idle or too slow, stopping, or a socket error: nothing to answer
      }
      // A bad request: answer why, then close (the stream's position is lost).
      HttpResponse refusal;
      if (ec == http::error::body_limit) {
        refusal = ErrorResponse(Code::kInvalidArgument,
                                "request body too large: the limit is " +
                                    std::to_string(options_.max_body_bytes) + " bytes",
                                413);
      } else if (ec == http::error::header_limit) {
        refusal = ErrorResponse(Code::kInvalidArgument,
                                "request headers too large: the limit is " +
                                    std::to_string(options_.max_header_bytes) + " bytes",
                                431);
      } else {
        refusal = ErrorResponse(Code::kInvalidArgument, "bad HTTP request: " + ec.message(),
                                400);
      }
      Log()->debug("REST: refused a request: {}", refusal.body);
      const unsigned version = parser.is_header_done() ? parser.get().version() : 11;
      co_await Write(refusal, version, /*keep_alive=*/false);
      // Read and drop what the client still sends, so it reads the answer before the close.
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      stream_.expires_after(kDrainTimeout);
      std::size_t drained = 0;
      std::vector<char> sink(16 * 1024);
      while (drained < kDrainBytes) {
        const std::size_t n = co_await stream_.async_read_some(
            asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
        drained += n;
      }
      break;
    }
    busy_ = true;
    const auto& req = parser.get();
    HttpResponse res;
    if (req.method() == http::verb::options && options_.enabled_unsafe_cors) {
      res = Preflight();
    } else {
      RestRequest request;
      request.method = View(req.method_string());
      request.target = View(req.target());
      request.body = req.body();
      if (auto it = req.find(kHeightHeader); it != req.end()) {
        request.height_header = View(it->value());
      }
      res = co_await AsyncHandle(gateway_, request, asio::make_work_guard(io_),
                                 asio::use_awaitable);
    }
    const bool keep = co_await Write(res, req.version(), req.keep_alive());
    busy_ = false;
    if (!keep) break;
  }
  ErrorCode ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  on_closed_(this);
}

// ---- server ---------------------------------------------------------------------------------

struct RestServer::Impl {
  Impl(const RestGateway& g, RestServerOptions o)
      : gateway(g),
        options(std::move(o)),
        io(static_cast<int>(std::max<std::size_t>(1, options.io_threads))),
        acceptor(asio::make_strand(io)) {}

  asio::awaitable<void> AcceptLoop();
  void OnClosed(RestSession* session);

  const RestGateway& gateway;
  const RestServerOptions options;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  std::atomic<std::uint16_t> port{0};

  std::mutex mu;  // guards the fields below
  std::unordered_map<RestSession*, std::shared_ptr<RestSession>> sessions;
  bool started = false;
  bool stopping = false;
};

asio::awaitable<void> RestServer::Impl::AcceptLoop() {
  while (true) {
    tcp::socket socket(asio::make_strand(io));
    ErrorCode ec;
    co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // E.g. out of file descriptors: back off instead of spinning on the error.
      Log()->warn("REST: accept failed: {}; retrying in 100 ms", ec.message());
      asio::steady_timer backoff(acceptor.get_executor(), std::chrono::milliseconds(100));
      co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    std::shared_ptr<RestSession> session;
    {
      std::lock_guard lock(mu);
      if (stopping) co_return;
      if (sessions.size() >= options.max_connections) {
        Log()->debug("REST: {} connections open (api max_connections): closing a new one",
                     sessions.size());
        socket.close(ec);
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      session = std::make_shared<RestSession>(std::move(socket), gateway, options, io,
                                              [this](RestSession* s) { OnClosed(s); });
      sessions.emplace(session.get(), session);
    }
    session->Start();
  }
}

void RestServer::Impl::OnClosed(RestSession* session) {
  std::shared_ptr<RestSession> keep;  // released outside the lock
  std::lock_guard lock(mu);
  auto it = sessions.find(session);
  if (it == sessions.end()) return;
  keep = std::move(it->second);
  sessions.erase(it);
}

RestServer::RestServer(const RestGateway& gateway, RestServerOptions options)
    : impl_(std::make_unique<Impl>(gateway, std::move(options))) {}

RestServer::~RestServer() { Stop(); }

Status RestServer::Start() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    if (s.started) return Status::InvalidArgument("the REST server is already started");
    s.started = true;
  }
  std::string host;
  std::uint16_t port = 0;
  if (Status st = ParseHostPort(s.options.address, &host, &port); !st.ok()) return st;
  ErrorCode ec;
  tcp::resolver resolver(s.io);
  auto results = resolver.resolve(host, std::to_string(port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    return Status::InvalidArgument("REST: cannot resolve host \"" + host + "\": " +
                                   ec.message());
  }
  const tcp::endpoint ep = results.begin()->endpoint();
  s.acceptor.open(ep.protocol(), ec);
  if (!ec) s.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(ep, ec);
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("REST: cannot listen on " + s.options.address + ": " + ec.message());
  }
  s.port = s.acceptor.local_endpoint(ec).port();
  asio::co_spawn(s.acceptor.get_executor(), [&s] { return s.AcceptLoop(); }, asio::detached);
  for (std::size_t i = 0; i < std::max<std::size_t>(1, s.options.io_threads); ++i) {
    s.threads.emplace_back([&s] { s.io.run(); });
  }
  Log()->info("REST (LCD) server listening on {}:{}", host, s.port.load());
  return Status::OK();
}

std::uint16_t RestServer::port() const { return impl_->port.load(); }

void RestServer::Stop() {
  Impl& s = *impl_;
  std::vector<std::shared_ptr<RestSession>> open;
  {
    std::lock_guard lock(s.mu);
    if (!s.started || s.stopping) return;
    s.stopping = true;
    for (auto& [ptr, session] : s.sessions) open.push_back(session);
  }
  asio::post(s.acceptor.get_executor(), [&s] {
    ErrorCode ignored;
    s.acceptor.close(ignored);
  });
  for (auto& session : open) session->Shutdown();
  open.clear();
  // io.run() returns once the acceptor and every session are done (a session waiting for the
  // backend holds a work guard until its answer is written).
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  Log()->info("REST (LCD) server stopped");
}

}  // namespace kairos::app::api
