#include "abci/server.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "abci/connection.h"
#include "abci/dispatcher.h"
#include "abci/log.h"

namespace kairos::abci {

namespace {
using tcp = asio::ip::tcp;
using unix_proto = asio::local::stream_protocol;
constexpr char kAddressForm[] = "tcp://HOST:PORT or unix:///PATH";
// The query threads' nice value (the executor keeps the process's, normally 0).
constexpr int kQueryThreadNice = 10;
}  // namespace

bool ParseListenAddress(const std::string& text, ListenAddress* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = "bad listen address '" + text + "': " + why + " (expected " + kAddressForm + ")";
    return false;
  };
  if (text.rfind("unix://", 0) == 0) {
    out->kind = ListenAddress::Kind::kUnix;
    out->path = text.substr(7);
    if (out->path.empty()) return fail("empty socket path");
    if (out->path.size() >= sizeof(sockaddr_un{}.sun_path)) return fail("socket path too long");
    return true;
  }
  if (text.rfind("tcp://", 0) != 0) return fail("unknown scheme");
  const std::string rest = text.substr(6);
  std::string host, port;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:PORT
    const auto close = rest.find(']');
    if (close == std::string::npos) return fail("unclosed '[' in the host");
    host = rest.substr(1, close - 1);
    if (close + 1 >= rest.size() || rest[close + 1] != ':') return fail("missing port");
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) return fail("missing port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.find(':') != std::string::npos) return fail("an IPv6 host must be in brackets");
  }
  if (host.empty()) return fail("missing host");
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return fail("port must be a number from 0 to 65535");
  }
  out->kind = ListenAddress::Kind::kTcp;
  out->host = host;
  out->port = static_cast<std::uint16_t>(value);
  return true;
}

struct Server::Impl {
  Impl(Application& app, ServerOptions opts)
      : options(std::move(opts)),
        io(static_cast<int>(std::max<std::size_t>(1, options.io_threads))),
        app_executor(1),
        query_executor(static_cast<int>(std::max<std::size_t>(1, options.query_threads))),
        dispatcher(app, options.observer),
        ctx{app_executor, options.query_threads > 0 ? &query_executor : nullptr, dispatcher,
            options.max_frame_bytes, options.max_pending_requests},
        control(asio::make_strand(io)),
        signals(io),
        drain_timer(control),
        accept_retry(control) {}

  template <class Acceptor>
  void Accept(Acceptor& acceptor);
  void Register(std::shared_ptr<ConnectionHandle> conn);
  void OnClosed(ConnectionHandle* conn);
  void BeginStop();

  ServerOptions options;
  ListenAddress address;
  asio::io_context io;
  asio::io_context app_executor;
  asio::io_context query_executor;
  Dispatcher dispatcher;
  ConnectionContext ctx;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<unix_proto::acceptor> unix_acceptor;
  // Shutdown and accept retries run on this strand, whichever I/O thread serves them.
  asio::strand<asio::io_context::executor_type> control;
  asio::signal_set signals;
  asio::steady_timer drain_timer;
  asio::steady_timer accept_retry;

  std::mutex mu;  // guards the fields below
  std::unordered_map<ConnectionHandle*, std::shared_ptr<ConnectionHandle>> connections;
  std::uint64_t next_id = 1;
  bool stopping = false;
  bool executor_open = false;  // RunOnExecutor may post (between Run's start and the stop)
};

template <class Acceptor>
void Server::Impl::Accept(Acceptor& acceptor) {
  using Socket = typename Acceptor::protocol_type::socket;
  acceptor.async_accept(asio::make_strand(io), [this, &acceptor](boost::system::error_code ec,
                                                                 Socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted) return;  // acceptor closed: stopping
      // E.g. out of file descriptors: back off instead of spinning on the error.
      Log()->warn("accept failed: {}; retrying in 100 ms", ec.message());
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this, &acceptor](boost::system::error_code wait_ec) {
        if (!wait_ec && acceptor.is_open()) Accept(acceptor);
      });
      return;
    } else {
      std::string peer = "unix socket";
      if constexpr (std::is_same_v<Socket, tcp::socket>) {
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        const auto ep = socket.remote_endpoint(ignored);
        peer = ep.address().to_string() + ":" + std::to_string(ep.port());
      }
      std::uint64_t id;
      {
        std::lock_guard lock(mu);
        if (stopping) return;
        id = next_id++;
      }
      auto conn = std::make_shared<Connection<Socket>>(
          std::move(socket), ctx, id, std::move(peer),
          [this](ConnectionHandle* c) { OnClosed(c); });
      Register(conn);
      conn->Start();
    }
    Accept(acceptor);
  });
}

void Server::Impl::Register(std::shared_ptr<ConnectionHandle> conn) {
  std::lock_guard lock(mu);
  connections.emplace(conn.get(), std::move(conn));
}

void Server::Impl::OnClosed(ConnectionHandle* conn) {
  std::shared_ptr<ConnectionHandle> keep;  // released outside the lock
  std::lock_guard lock(mu);
  auto it = connections.find(conn);
  if (it == connections.end()) return;
  keep = std::move(it->second);
  connections.erase(it);
  if (stopping && connections.empty()) {
    asio::post(control, [this] { drain_timer.cancel(); });
  }
}

void Server::Impl::BeginStop() {
  std::vector<std::shared_ptr<ConnectionHandle>> open;
  {
    std::lock_guard lock(mu);
    if (stopping) return;
    stopping = true;
    for (auto& [ptr, conn] : connections) open.push_back(conn);
  }
  Log()->info("shutting down: no new connections, answering {} open connection(s)",
              open.size());
  boost::system::error_code ec;
  if (tcp_acceptor) tcp_acceptor->close(ec);
  if (unix_acceptor) {
    unix_acceptor->close(ec);
    ::unlink(address.path.c_str());
  }
  signals.cancel(ec);
  accept_retry.cancel();
  for (auto& conn : open) conn->Drain();
  if (open.empty()) return;
  drain_timer.expires_after(options.drain_timeout);
  drain_timer.async_wait([this](boost::system::error_code wait_ec) {
    if (wait_ec) return;  // cancelled: every connection finished in time
    std::lock_guard lock(mu);
    for (auto& [ptr, conn] : connections) {
      conn->Abort("drain timeout of " + std::to_string(options.drain_timeout.count()) +
                  " ms reached during shutdown");
    }
  });
}

Server::Server(Application& app, ServerOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {}

Server::~Server() = default;

bool Server::Listen(std::string* error) {
  Impl& s = *impl_;
  if (!ParseListenAddress(s.options.address, &s.address, error)) return false;
  boost::system::error_code ec;
  if (s.address.kind == ListenAddress::Kind::kTcp) {
    tcp::resolver resolver(s.io);
    auto results = resolver.resolve(s.address.host, std::to_string(s.address.port),
                                    tcp::resolver::passive, ec);
    if (ec || results.empty()) {
      *error = "cannot resolve host '" + s.address.host + "': " + ec.message();
      return false;
    }
    const tcp::endpoint ep = results.begin()->endpoint();
    tcp::acceptor acceptor(s.control);  // accepts, retries and shutdown share one strand
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      *error = "cannot listen on " + s.options.address + ": " + ec.message();
      return false;
    }
    s.tcp_acceptor.emplace(std::move(acceptor));
  } else {
    struct stat st {};
    if (::lstat(s.address.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        *error = "cannot listen on " + s.options.address + ": " + s.address.path +
                 " exists and is not a socket";
        return false;
      }
      // A socket file: stale from an earlier run, unless something still answers on it.
      unix_proto::socket probe(s.io);
      probe.connect(unix_proto::endpoint(s.address.path), ec);
      if (!ec) {
        *error = "cannot listen on " + s.options.address +
                 ": another process is listening on that socket";
        return false;
      }
      ::unlink(s.address.path.c_str());
    }
    unix_proto::acceptor acceptor(s.control);
    const unix_proto::endpoint ep(s.address.path);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      *error = "cannot listen on " + s.options.address + ": " + ec.message();
      return false;
    }
    s.unix_acceptor.emplace(std::move(acceptor));
  }
  Log()->info("ABCI server listening on {}", local_address());
  return true;
}

std::string Server::local_address() const {
  const Impl& s = *impl_;
  if (s.tcp_acceptor) {
    boost::system::error_code ec;
    const auto ep = s.tcp_acceptor->local_endpoint(ec);
    if (!ec) {
      const std::string host = ep.address().is_v6() ? "[" + ep.address().to_string() + "]"
                                                    : ep.address().to_string();
      return "tcp://" + host + ":" + std::to_string(ep.port());
    }
  }
  return s.options.address;
}

void Server::Run() {
  Impl& s = *impl_;
  if (s.options.handle_signals) {
    s.signals.add(SIGINT);
    s.signals.add(SIGTERM);
    s.signals.async_wait([&s](boost::system::error_code ec, int sig) {
      if (ec) return;
      Log()->info("received {}", sig == SIGINT ? "SIGINT" : "SIGTERM");
      asio::post(s.control, [&s] { s.BeginStop(); });
    });
  }
  if (s.tcp_acceptor) s.Accept(*s.tcp_acceptor);
  if (s.unix_acceptor) s.Accept(*s.unix_acceptor);

  auto app_work = asio::make_work_guard(s.app_executor);
  std::thread app_thread([&s] { s.app_executor.run(); });
  {
    std::lock_guard lock(s.mu);
    s.executor_open = !s.stopping;
  }
  auto query_work = asio::make_work_guard(s.query_executor);
  std::vector<std::thread> query_threads;
  for (std::size_t i = 0; i < s.options.query_threads; ++i) {
    query_threads.emplace_back([&s] {
      // Below the executor's priority: when the cores are busy, a block's work goes first.
      // (Linux: setpriority on a thread id sets that thread's nice value.)
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kQueryThreadNice) != 0) {
        Log()->warn("query thread: could not lower its priority: {}", std::strerror(errno));
      }
      s.query_executor.run();
    });
  }
  std::vector<std::thread> io_threads;
  for (std::size_t i = 1; i < s.options.io_threads; ++i) {
    io_threads.emplace_back([&s] { s.io.run(); });
  }
  s.io.run();  // returns once the acceptors, connections and timers are all done
  for (auto& t : io_threads) t.join();
  {
    std::lock_guard lock(s.mu);
    s.executor_open = false;  // (BeginStop closed it already; a Stop before Run did not run it)
  }
  app_work.reset();  // the executor runs what was posted to it, then its thread ends
  query_work.reset();
  app_thread.join();
  for (auto& t : query_threads) t.join();
  Log()->info("ABCI server stopped");
}

bool Server::RunOnExecutor(std::function<void()> task) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mu);
  if (!s.executor_open || s.stopping) return false;
  asio::post(s.app_executor, std::move(task));
  return true;
}

void Server::Stop() {
  asio::post(impl_->control, [s = impl_.get()] { s->BeginStop(); });
}

}  // namespace kairos::abci
