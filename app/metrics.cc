#include "app/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <system_error>

#include <prometheus/exposer.h>

#include "app/tx_pool.h"
#include "mempool/priority_mempool.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

const std::vector<double>& AbciLatencyBuckets() {
  static const std::vector<double> b = {10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3,
                                        2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3,
                                        500e-3, 1, 2.5, 5, 10};
  return b;
}

const std::vector<double>& BlockExecutionBuckets() {
  static const std::vector<double> b = {1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3,
                                        250e-3, 500e-3, 1, 2.5, 5, 10, 30, 60};
  return b;
}

const std::vector<double>& StoreCommitBuckets() {
  static const std::vector<double> b = {100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3,
                                        25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10};
  return b;
}

const std::vector<double>& StoreCommitBytesBuckets() {
  static const std::vector<double> b = {1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10,
                                        1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20,
                                        1 << 30};
  return b;
}

const std::vector<double>& BlockTxsBuckets() {
  static const std::vector<double> b = {0, 1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
                                        20000};
  return b;
}

const char* AbciMethodLabel(pb::Request::ValueCase method) {
  using R = pb::Request;
  switch (method) {
    case R::kEcho: return "echo";
    case R::kInfo: return "info";
    case R::kInitChain: return "init_chain";
    case R::kQuery: return "query";
    case R::kCheckTx: return "check_tx";
    case R::kCommit: return "commit";
    case R::kListSnapshots: return "list_snapshots";
    case R::kOfferSnapshot: return "offer_snapshot";
    case R::kLoadSnapshotChunk: return "load_snapshot_chunk";
    case R::kApplySnapshotChunk: return "apply_snapshot_chunk";
    case R::kPrepareProposal: return "prepare_proposal";
    case R::kProcessProposal: return "process_proposal";
    case R::kExtendVote: return "extend_vote";
    case R::kVerifyVoteExtension: return "verify_vote_extension";
    case R::kFinalizeBlock: return "finalize_block";
    case R::kInsertTx: return "insert_tx";
    case R::kReapTxs: return "reap_txs";
    case R::kFlush:
    case R::VALUE_NOT_SET: return "";
  }
  return "";
}

// --- TxResultTally -------------------------------------------------------------------------

void TxResultTally::Add(const std::string& codespace, std::uint32_t code) {
  static const std::string kNone;
  const std::string& space = code == 0 ? kNone : codespace;
  for (auto& [key, count] : counts_) {
    if (key.second == code && key.first == space) {
      ++count;
      return;
    }
  }
  counts_.push_back({{space, code}, 1});
}

std::size_t TxResultTally::total() const {
  std::size_t n = 0;
  for (const auto& [key, count] : counts_) n += count;
  return n;
}

// --- Metrics -------------------------------------------------------------------------------

namespace {

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

// A family with one unlabelled metric.
prometheus::Histogram& OneHistogram(prometheus::Registry& registry, const char* name,
                                    const char* help, const std::vector<double>& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}

prometheus::Counter& OneCounter(prometheus::Registry& registry, const char* name,
                                const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

}  // namespace

Metrics::Metrics(prometheus::Registry& registry)
    : block_txs_family_(
          prometheus::BuildCounter()
              .Name("kairos_block_txs_total")
              .Help("Txs in committed blocks, by result code and codespace (code 0: success)")
              .Register(registry)),
      block_execution_(OneHistogram(
          registry, "kairos_block_execution_seconds",
          "FinalizeBlock execution time: PreBlock, the txs, EndBlock and the app hash",
          BlockExecutionBuckets())),
      block_size_txs_(OneHistogram(registry, "kairos_block_size_txs", "Txs per committed block",
                                   BlockTxsBuckets())),
      block_height_(prometheus::BuildGauge()
                        .Name("kairos_block_height")
                        .Help("The last committed height")
                        .Register(registry)
                        .Add({})),
      blocks_(OneCounter(registry, "kairos_blocks_committed_total",
                         "Blocks committed since the node started")),
      store_commit_(OneHistogram(registry, "kairos_store_commit_seconds",
                                 "Time to write a block's version to the store (one synced batch)",
                                 StoreCommitBuckets())),
      store_commit_bytes_(OneHistogram(
          registry, "kairos_store_commit_bytes",
          "Bytes of state written per committed block (keys plus values)",
          StoreCommitBytesBuckets())),
      store_written_bytes_(OneCounter(registry, "kairos_store_written_bytes_total",
                                      "Bytes of state (keys plus values) committed")),
      store_written_keys_(OneCounter(registry, "kairos_store_written_keys_total",
                                     "State keys written or deleted by committed blocks")),
      mempool_update_(OneHistogram(
          registry, "kairos_mempool_update_seconds",
          "Mempool update after a commit: included txs, TTLs and the recheck",
          StoreCommitBuckets())) {
  auto& requests = prometheus::BuildCounter()
                       .Name("kairos_abci_requests_total")
                       .Help("ABCI requests served, by method (Flush is not counted)")
                       .Register(registry);
  auto& failures = prometheus::BuildCounter()
                       .Name("kairos_abci_request_failures_total")
                       .Help("ABCI requests answered with an Exception (a broken node), by method")
                       .Register(registry);
  auto& duration = prometheus::BuildHistogram()
                       .Name("kairos_abci_request_duration_seconds")
                       .Help("Time to serve an ABCI request on the application thread, by method")
                       .Register(registry);
  for (int m = 0; m <= kMaxMethod; ++m) {
    const std::string label = AbciMethodLabel(static_cast<pb::Request::ValueCase>(m));
    if (label.empty()) continue;
    methods_[m].requests = &requests.Add({{"method", label}});
    methods_[m].failures = &failures.Add({{"method", label}});
    methods_[m].duration = &duration.Add({{"method", label}}, AbciLatencyBuckets());
  }
}

void Metrics::OnRequest(pb::Request::ValueCase method, std::chrono::nanoseconds elapsed,
                        bool failed) noexcept {
  const int m = static_cast<int>(method);
  if (m < 0 || m > kMaxMethod || methods_[m].requests == nullptr) return;
  const MethodMetrics& mm = methods_[m];
  mm.requests->Increment();
  mm.duration->Observe(Seconds(elapsed));
  if (failed) mm.failures->Increment();
}

void Metrics::ObserveBlockExecution(std::chrono::nanoseconds elapsed) {
  block_execution_.Observe(Seconds(elapsed));
}

prometheus::Counter& Metrics::TxCounter(const std::pair<std::string, std::uint32_t>& key) {
  auto it = block_txs_.find(key);
  if (it == block_txs_.end()) {
    prometheus::Counter& c = block_txs_family_.Add(
        {{"code", std::to_string(key.second)}, {"codespace", key.first}});
    it = block_txs_.emplace(key, &c).first;
  }
  return *it->second;
}

void Metrics::ObserveCommit(const CommittedBlock& block) {
  blocks_.Increment();
  block_height_.Set(static_cast<double>(block.height));
  std::size_t txs = 0;
  if (block.txs != nullptr) {
    for (const auto& [key, count] : block.txs->counts()) {
      TxCounter(key).Increment(static_cast<double>(count));
      txs += count;
    }
  }
  block_size_txs_.Observe(static_cast<double>(txs));
  store_commit_.Observe(Seconds(block.store_commit));
  store_commit_bytes_.Observe(static_cast<double>(block.change_bytes));
  store_written_bytes_.Increment(static_cast<double>(block.change_bytes));
  store_written_keys_.Increment(static_cast<double>(block.change_writes));
  mempool_update_.Observe(Seconds(block.mempool_update));
}

// --- scrape-time collectors ----------------------------------------------------------------

namespace {

prometheus::MetricFamily Family(std::string name, std::string help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddSample(prometheus::MetricFamily* f, double value,
               std::vector<prometheus::ClientMetric::Label> labels = {}) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f->type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f->metric.push_back(std::move(m));
}

// A counter family labelled `reason`: counts[i] is the count of reason i (mempool::Name).
template <class Reason, std::size_t N>
prometheus::MetricFamily ByReason(const char* name, const char* help,
                                  const std::array<std::uint64_t, N>& counts) {
  prometheus::MetricFamily f = Family(name, help, prometheus::MetricType::Counter);
  for (std::size_t r = 0; r < N; ++r) {
    AddSample(&f, static_cast<double>(counts[r]),
              {{"reason", mempool::Name(static_cast<Reason>(r))}});
  }
  return f;
}

}  // namespace

std::vector<prometheus::MetricFamily> MempoolCollector::Collect() const {
  using prometheus::MetricType;
  const mempool::Stats s = pool_.stats();
  std::vector<prometheus::MetricFamily> out;
  out.push_back(Family("kairos_mempool_txs", "Txs in the app mempool (ready and parked)",
                       MetricType::Gauge));
  AddSample(&out.back(), static_cast<double>(s.size));
  out.push_back(
      Family("kairos_mempool_bytes", "Bytes of the txs in the app mempool", MetricType::Gauge));
  AddSample(&out.back(), static_cast<double>(s.bytes));
  out.push_back(Family("kairos_mempool_senders", "Senders with txs in the app mempool",
                       MetricType::Gauge));
  AddSample(&out.back(), static_cast<double>(s.senders));
  out.push_back(Family("kairos_mempool_parked_txs",
                       "Mempool txs parked behind a sequence gap (not reapable yet)",
                       MetricType::Gauge));
  AddSample(&out.back(), static_cast<double>(s.parked));
  out.push_back(ByReason<mempool::RemoveReason>(
      "kairos_mempool_removed_total",
      "Txs that left the app mempool, by reason (evicted, expired, ...)", s.removed));
  out.push_back(ByReason<mempool::RejectReason>(
      "kairos_mempool_rejected_total",
      "Txs the app mempool refused after the ante passed, by reason", s.rejected));
  return out;
}

std::vector<prometheus::MetricFamily> DiskUsageCollector::Collect() const {
  // LevelDB adds and deletes files while this walks (compactions): errors skip the file.
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec) || size_ec) continue;
    const std::uintmax_t size = it->file_size(size_ec);
    if (!size_ec) bytes += size;
  }
  std::vector<prometheus::MetricFamily> out;
  out.push_back(Family("kairos_store_disk_bytes",
                       "Size of the files in the database directory (db.dir)",
                       prometheus::MetricType::Gauge));
  AddSample(&out.back(), static_cast<double>(bytes));
  return out;
}

// --- the endpoint --------------------------------------------------------------------------

Status ParseMetricsAddress(const std::string& text, std::string* civetweb) {
  const auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(
        "metrics.address must be \"HOST:PORT\" with HOST an IPv4 address or a bracketed IPv6 "
        "address (e.g. \"127.0.0.1:26661\", \"[::1]:26661\"), \":PORT\" for every IPv4 interface, "
        "or \"\" for no metrics; got \"" +
        text + "\": " + why);
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) return fail("missing :PORT");
  const std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return fail("the port must be a number from 0 to 65535");
  }
  if (host.empty()) {
    *civetweb = "0.0.0.0:" + std::to_string(value);
    return Status::OK();
  }
  if (host.front() == '[') {
    in6_addr a6{};
    if (host.size() < 3 || host.back() != ']' ||
        inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a6) != 1) {
      return fail("not a bracketed IPv6 address");
    }
    *civetweb = host + ":" + std::to_string(value);
    return Status::OK();
  }
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) != 1) {
    return fail("\"" + host + "\" is not an IPv4 address (host names are not resolved)");
  }
  *civetweb = host + ":" + std::to_string(value);
  return Status::OK();
}

namespace {

// Why `bind` (ParseMetricsAddress's output) cannot be bound: civetweb only says "null context",
// so a probe socket asks the kernel (e.g. "Address already in use"). `fallback` when it binds.
std::string BindError(const std::string& bind, const std::string& fallback) {
  const std::size_t colon = bind.rfind(':');
  std::string host = bind.substr(0, colon);
  const int port = std::stoi(bind.substr(colon + 1));
  sockaddr_storage storage{};
  socklen_t len = 0;
  int family = AF_INET;
  if (!host.empty() && host.front() == '[') {
    family = AF_INET6;
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  const int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd < 0) return fallback;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as civetweb does
  std::string why = fallback;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&storage), len) != 0) {
    why = std::strerror(errno);
  }
  ::close(fd);
  return why;
}

}  // namespace

Result<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(const std::string& address) {
  std::string bind;
  if (Status s = ParseMetricsAddress(address, &bind); !s.ok()) return s;
  std::unique_ptr<MetricsExposer> e(new MetricsExposer());
  try {
    // One serving thread: a scrape every few seconds needs no more.
    e->exposer_ = std::make_unique<prometheus::Exposer>(bind, 1);
  } catch (const std::exception& ex) {
    return Status::IOError("metrics.address " + address + ": cannot listen: " +
                           BindError(bind, ex.what()));
  }
  const std::vector<int> ports = e->exposer_->GetListeningPorts();
  if (ports.empty()) return Status::IOError("metrics.address " + address + ": not listening");
  e->port_ = static_cast<std::uint16_t>(ports.front());
  return e;
}

MetricsExposer::~MetricsExposer() = default;

void MetricsExposer::Register(const std::weak_ptr<prometheus::Collectable>& collectable) {
  exposer_->RegisterCollectable(collectable);
}

void MetricsExposer::Unregister(const std::weak_ptr<prometheus::Collectable>& collectable) {
  exposer_->RemoveCollectable(collectable);
}

}  // namespace kairos::app
