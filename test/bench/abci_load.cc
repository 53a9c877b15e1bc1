// abci_load: a pipelined ABCI load client for any ABCI socket server (kairosd, or CometBFT's
// `abci-cli kvstore` as the baseline), so both are measured by the same client in the same run.
//
// Per connection, a sender thread writes requests in large batches, with a Flush request after
// every --flush-every requests (as CometBFT's socket client does: the Go server writes nothing
// until it sees a Flush), and a receiver thread reads the responses, matches them to the
// requests in FIFO order and records each request's latency (the send timestamp of its batch ->
// its response parsed). At most --window requests are in flight per connection; the sender
// only sends whole flush groups, so every request in flight is always followed by a Flush.
//
// Each payload (--tx-bytes long) is a unique "key=value" tx, valid for the kvstore; its key
// repeats every --keys requests (default 5000, CometBFT's default mempool size), so a server
// that stages CheckTx state until the next Commit does not grow without bound.
//
// Every response must be the expected type in the expected order: Echo responses carry the
// request's unique payload back, CheckTx responses must have code 0, and a Flush response must
// follow exactly where a Flush request was sent. Any mismatch, a short stream or an extra
// response ends the run with exit code 1. The result is printed as one key=value line and one
// JSON line.
//
// Thread-safety: the threads of one connection share only ConnectionRun's atomics and the
// send-timestamp array, whose entries are published (release) before the bytes are written.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "abci/frame.h"
#include "abci/server.h"
#include "tendermint/abci/types.pb.h"

namespace {

namespace pb = ::tendermint::abci;
using Clock = std::chrono::steady_clock;

enum class Method { kEcho, kCheckTx };

struct Options {
  std::string address;
  Method method = Method::kEcho;
  std::uint64_t requests = 1000000;
  unsigned connections = 1;
  std::size_t tx_bytes = 256;
  std::uint64_t flush_every = 100;
  std::uint64_t window = 1000;
  std::uint64_t keys = 5000;  // distinct keys per connection; 0: a new key for every tx
  std::string label = "run";
};

constexpr std::size_t kMaxWriteBytes = 256 * 1024;  // one sender write, at most
constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::size_t kMaxResponseBytes = 64u << 20;
// The front of every payload: "k" + 2 digits of connection + 12 digits of key + "=" + 12
// digits of request index. The rest is 'v' padding.
constexpr std::size_t kHeaderBytes = 28;
constexpr unsigned kMaxConnections = 99;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "abci_load: error: %s\n", message.c_str());
  std::exit(1);
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "abci_load: %s\n"
               "usage: abci_load --address tcp://HOST:PORT|unix:///PATH [--method echo|check_tx]\n"
               "         [--requests N] [--connections C] [--tx-bytes B] [--flush-every F]\n"
               "         [--window W] [--keys K] [--label NAME]\n",
               why.c_str());
  std::exit(2);
}

std::uint64_t ParseCount(std::string_view flag, std::string_view text, std::uint64_t min,
                         std::uint64_t max) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < min ||
      value > max) {
    Usage(std::string(flag) + " must be an integer from " + std::to_string(min) + " to " +
          std::to_string(max) + ", got '" + std::string(text) + "'");
  }
  return value;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) Usage("missing value for " + std::string(flag));
    const std::string_view value = argv[++i];
    if (flag == "--address") {
      o.address = value;
    } else if (flag == "--method") {
      if (value == "echo") {
        o.method = Method::kEcho;
      } else if (value == "check_tx") {
        o.method = Method::kCheckTx;
      } else {
        Usage("--method must be echo or check_tx");
      }
    } else if (flag == "--requests") {
      o.requests = ParseCount(flag, value, 1, 1'000'000'000'000);
    } else if (flag == "--connections") {
      o.connections = static_cast<unsigned>(ParseCount(flag, value, 1, kMaxConnections));
    } else if (flag == "--tx-bytes") {
      o.tx_bytes = ParseCount(flag, value, kHeaderBytes, 16u << 20);
    } else if (flag == "--flush-every") {
      o.flush_every = ParseCount(flag, value, 1, 1'000'000);
    } else if (flag == "--window") {
      o.window = ParseCount(flag, value, 1, 100'000'000);
    } else if (flag == "--keys") {
      o.keys = ParseCount(flag, value, 0, 1'000'000'000'000);
    } else if (flag == "--label") {
      o.label = value;
      const auto plain = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      };
      if (o.label.empty() || !std::all_of(o.label.begin(), o.label.end(), plain)) {
        Usage("--label must be letters, digits, '-', '_' or '.'");
      }
    } else {
      Usage("unknown flag " + std::string(flag));
    }
  }
  if (o.address.empty()) Usage("--address is required");
  if (o.window < o.flush_every) {
    Usage("--window must be at least --flush-every (whole flush groups are sent)");
  }
  if (o.requests < o.connections) Usage("--requests must be at least --connections");
  return o;
}

std::string_view MethodName(Method m) { return m == Method::kEcho ? "echo" : "check_tx"; }

int Connect(const std::string& address) {
  kairos::abci::ListenAddress addr;
  std::string error;
  if (!kairos::abci::ParseListenAddress(address, &addr, &error)) Usage(error);
  if (addr.kind == kairos::abci::ListenAddress::Kind::kUnix) {
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    std::memcpy(sun.sun_path, addr.path.c_str(), addr.path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0) {
      Die("cannot connect to " + address + ": " + std::strerror(errno));
    }
    return fd;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(addr.port);
  if (const int rc = ::getaddrinfo(addr.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    Die("cannot resolve " + addr.host + ": " + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found, ::freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_STREAM, 0);
  if (fd < 0 || ::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    Die("cannot connect to " + address + ": " + std::strerror(errno));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Writes the fixed-width decimal `value` into [out, out + width).
void PutDecimal(std::uint64_t value, char* out, std::size_t width) {
  for (std::size_t i = width; i-- > 0; value /= 10) out[i] = static_cast<char>('0' + value % 10);
}

// The payload header of request `index` on connection `conn`: "kCCKKKKKKKKKKKK=IIIIIIIIIIII".
// Every tx is unique (the index), and is valid for the kvstore (one '=', non-empty key and
// value). Keys repeat every `keys` requests, so an app that stages CheckTx writes until Commit
// (none is sent here) holds a bounded state, as behind CometBFT's bounded mempool.
void PutHeader(unsigned conn, std::uint64_t index, std::uint64_t keys, char* out) {
  out[0] = 'k';
  PutDecimal(conn, out + 1, 2);
  PutDecimal(keys == 0 ? index : index % keys, out + 3, 12);
  out[15] = '=';
  PutDecimal(index, out + 16, 12);
}

// Builds request frames from one serialised template: the payload (tx_bytes long) is the last
// field, so only its header bytes change per request.
class RequestFactory {
 public:
  explicit RequestFactory(const Options& opt) : payload_bytes_(opt.tx_bytes), keys_(opt.keys) {
    std::string payload(opt.tx_bytes, 'v');
    PutHeader(0, 0, keys_, payload.data());
    pb::Request req;
    if (opt.method == Method::kEcho) {
      req.mutable_echo()->set_message(payload);
    } else {
      req.mutable_check_tx()->set_tx(payload);
    }
    kairos::abci::AppendFrame(req, &template_);
    pb::Request flush;
    flush.mutable_flush();
    kairos::abci::AppendFrame(flush, &flush_frame_);
  }

  void AppendRequest(unsigned conn, std::uint64_t index, std::string* out) const {
    out->append(template_);
    PutHeader(conn, index, keys_, out->data() + out->size() - payload_bytes_);
  }
  void AppendFlush(std::string* out) const { out->append(flush_frame_); }
  std::size_t request_bytes() const { return template_.size(); }

 private:
  std::size_t payload_bytes_;
  std::uint64_t keys_;
  std::string template_;
  std::string flush_frame_;
};

// True when the sender puts a Flush right after request `index` (0-based) of `total`.
bool FlushFollows(std::uint64_t index, std::uint64_t total, std::uint64_t flush_every) {
  return (index + 1) % flush_every == 0 || index + 1 == total;
}

struct ConnectionRun {
  unsigned id = 0;
  int fd = -1;
  std::uint64_t requests = 0;              // Echo/CheckTx requests on this connection
  std::vector<std::int64_t> sent_ns;       // per request: its batch's send time, since start
  std::vector<std::int64_t> latency_ns;    // per request, filled by the receiver
  std::atomic<std::uint64_t> sent{0};      // requests whose sent_ns is published
  std::atomic<std::uint64_t> answered{0};  // responses matched so far
  std::int64_t last_response_ns = 0;
};

std::int64_t NanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

void WriteAll(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die(std::string("write failed: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

void SendLoop(ConnectionRun& run, const Options& opt, const RequestFactory& factory,
              Clock::time_point start) {
  std::string buf;
  buf.reserve(kMaxWriteBytes + opt.flush_every * (factory.request_bytes() + 3));
  std::uint64_t next = 0;
  while (next < run.requests) {
    buf.clear();
    const std::uint64_t batch_begin = next;
    // Whole flush groups, while they fit in the window; wait for room only before the first.
    while (next < run.requests && buf.size() < kMaxWriteBytes) {
      const std::uint64_t group_end =
          std::min(run.requests, (next / opt.flush_every + 1) * opt.flush_every);
      std::uint64_t answered = run.answered.load(std::memory_order_acquire);
      if (group_end - answered > opt.window) {
        if (next > batch_begin) break;  // send what we have first
        while (group_end - answered > opt.window) {
          run.answered.wait(answered, std::memory_order_acquire);
          answered = run.answered.load(std::memory_order_acquire);
        }
      }
      for (; next < group_end; ++next) factory.AppendRequest(run.id, next, &buf);
      factory.AppendFlush(&buf);
    }
    const std::int64_t now = NanosSince(start);
    std::fill(run.sent_ns.begin() + static_cast<std::ptrdiff_t>(batch_begin),
              run.sent_ns.begin() + static_cast<std::ptrdiff_t>(next), now);
    run.sent.store(next, std::memory_order_release);
    WriteAll(run.fd, buf);
  }
}

// Checks one parsed response against what request `index` expects. Returns "" when it matches.
std::string CheckResponse(const pb::Response& res, bool expect_flush, const ConnectionRun& run,
                          std::uint64_t index, const Options& opt) {
  if (res.has_exception()) return "server answered with an Exception: " + res.exception().error();
  if (expect_flush) return res.has_flush() ? "" : "expected a Flush response";
  if (opt.method == Method::kEcho) {
    if (!res.has_echo()) return "expected an Echo response";
    char header[kHeaderBytes];
    PutHeader(run.id, index, opt.keys, header);
    const std::string& msg = res.echo().message();
    if (msg.size() != opt.tx_bytes || msg.compare(0, kHeaderBytes, header, kHeaderBytes) != 0) {
      return "Echo response does not carry its request's message (out of order?)";
    }
    return "";
  }
  if (!res.has_check_tx()) return "expected a CheckTx response";
  if (res.check_tx().code() != 0) {
    return "CheckTx answered code " + std::to_string(res.check_tx().code()) + " (" +
           res.check_tx().log() + ")";
  }
  return "";
}

void ReceiveLoop(ConnectionRun& run, const Options& opt, Clock::time_point start) {
  kairos::abci::FrameDecoder decoder(kMaxResponseBytes);
  pb::Response res;
  std::uint64_t index = 0;  // the next request to match
  bool expect_flush = false;
  auto fail = [&](const std::string& why) {
    Die("connection " + std::to_string(run.id) + ", response to request " +
        std::to_string(index) + " of " + std::to_string(run.requests) + ": " + why);
  };
  while (index < run.requests || expect_flush) {
    auto space = decoder.Prepare(kReadChunk);
    const ssize_t n = ::read(run.fd, space.data(), space.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) fail("the server closed the connection");
    decoder.Commit(static_cast<std::size_t>(n));
    std::span<const std::uint8_t> frame;
    for (;;) {
      const auto status = decoder.Next(&frame);
      if (status == kairos::abci::FrameDecoder::Status::kNeedMore) break;
      if (status == kairos::abci::FrameDecoder::Status::kError) fail(decoder.error());
      if (index == run.requests && !expect_flush) fail("an extra response arrived");
      if (!res.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
        fail("a frame does not parse as an ABCI Response");
      }
      if (const std::string why = CheckResponse(res, expect_flush, run, index, opt); !why.empty()) {
        fail(why);
      }
      if (expect_flush) {
        expect_flush = false;
        continue;
      }
      if (index >= run.sent.load(std::memory_order_acquire)) fail("answered before it was sent");
      run.last_response_ns = NanosSince(start);
      run.latency_ns[index] = run.last_response_ns - run.sent_ns[index];
      expect_flush = FlushFollows(index, run.requests, opt.flush_every);
      ++index;
    }
    run.answered.store(index, std::memory_order_release);
    run.answered.notify_one();
  }
  if (decoder.buffered() > 0) fail("extra bytes after the last response");
}

// CPU time this process has used so far (user + system, every thread), in nanoseconds.
std::int64_t ProcessCpuNanos() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  const auto ns = [](const timeval& tv) {
    return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000 + tv.tv_usec * 1000;
  };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

// The p-th percentile (0 < p <= 1, nearest rank) of `v`, in microseconds. Reorders `v`.
double PercentileMicros(std::vector<std::int64_t>& v, double p) {
  const double rank = std::ceil(p * static_cast<double>(v.size()));
  const std::size_t k = std::min(rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);  // a closed socket fails the write instead
  const RequestFactory factory(opt);

  std::vector<std::unique_ptr<ConnectionRun>> runs;
  for (unsigned c = 0; c < opt.connections; ++c) {
    auto run = std::make_unique<ConnectionRun>();
    run->id = c;
    run->requests = opt.requests / opt.connections + (c < opt.requests % opt.connections);
    run->sent_ns.resize(run->requests);
    run->latency_ns.resize(run->requests);
    run->fd = Connect(opt.address);
    runs.push_back(std::move(run));
  }

  const std::int64_t cpu_start = ProcessCpuNanos();
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (auto& run : runs) {
    threads.emplace_back([&opt, &factory, &run, start] { SendLoop(*run, opt, factory, start); });
    threads.emplace_back([&opt, &run, start] { ReceiveLoop(*run, opt, start); });
  }
  for (auto& t : threads) t.join();
  const double client_cpu_per_req =
      static_cast<double>(ProcessCpuNanos() - cpu_start) / static_cast<double>(opt.requests);

  std::int64_t end_ns = 0;
  std::vector<std::int64_t> latencies;
  latencies.reserve(opt.requests);
  for (auto& run : runs) {
    end_ns = std::max(end_ns, run->last_response_ns);
    latencies.insert(latencies.end(), run->latency_ns.begin(), run->latency_ns.end());
    ::close(run->fd);
  }
  const double seconds = static_cast<double>(end_ns) / 1e9;
  const double rate = static_cast<double>(opt.requests) / seconds;
  const double p50 = PercentileMicros(latencies, 0.50);
  const double p99 = PercentileMicros(latencies, 0.99);
  // name, value, whether the value is text (quoted in JSON)
  struct Field {
    std::string name;
    std::string value;
    bool text = false;
  };
  const auto fixed = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  const std::vector<Field> fields = {
      {"label", opt.label, true},
      {"method", std::string(MethodName(opt.method)), true},
      {"connections", std::to_string(opt.connections)},
      {"requests", std::to_string(opt.requests)},
      {"seconds", fixed(seconds, 3)},
      {"req_per_s", fixed(rate, 0)},
      {"p50_us", fixed(p50, 1)},
      {"p99_us", fixed(p99, 1)},
      {"client_cpu_ns_per_req", fixed(client_cpu_per_req, 0)},
      {"tx_bytes", std::to_string(opt.tx_bytes)},
      {"flush_every", std::to_string(opt.flush_every)},
      {"window", std::to_string(opt.window)},
      {"keys", std::to_string(opt.keys)},
  };
  std::string line;
  std::string json;
  for (const Field& f : fields) {
    line += (line.empty() ? "" : " ") + f.name + "=" + f.value;
    json += (json.empty() ? "{" : ",") + ("\"" + f.name + "\":") +
            (f.text ? "\"" + f.value + "\"" : f.value);
  }
  std::printf("%s\n%s}\n", line.c_str(), json.c_str());
  return 0;
}
