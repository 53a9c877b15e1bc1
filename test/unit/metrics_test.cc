// Unit tests for app/metrics: a KairosApp driven with a Metrics object on a test registry (ABCI
// requests through the dispatcher, blocks, txs by result code, the store commit), the
// scrape-time mempool and disk collectors, and the HTTP endpoint scraped over loopback.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "abci/dispatcher.h"
#include "app/metrics.h"
#include "test_chain.h"

namespace {

using namespace kairos;
using namespace kairos::test;
using Labels = std::map<std::string, std::string>;

const TestKey kAlice = MakeKey("alice");
const TestKey kBob = MakeKey("bob");
const TestKey kCarol = MakeKey("carol");

std::vector<prometheus::MetricFamily> CollectAll(
    const std::vector<const prometheus::Collectable*>& sources) {
  std::vector<prometheus::MetricFamily> all;
  for (const auto* c : sources) {
    auto f = c->Collect();
    all.insert(all.end(), f.begin(), f.end());
  }
  return all;
}

// The sample of family `name` whose labels are exactly `labels`; nullopt when absent.
std::optional<prometheus::ClientMetric> Sample(
    const std::vector<const prometheus::Collectable*>& sources, const std::string& name,
    const Labels& labels = {}) {
  for (const auto& family : CollectAll(sources)) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      Labels got;
      for (const auto& l : m.label) got[l.name] = l.value;
      if (got == labels) return m;
    }
  }
  return std::nullopt;
}

// The sample of family `name` with exactly `labels`; fails the test when absent.
prometheus::ClientMetric MustSample(const std::vector<const prometheus::Collectable*>& sources,
                                    const std::string& name, const Labels& labels = {}) {
  auto m = Sample(sources, name, labels);
  INFO(name);
  REQUIRE(m);
  return *m;
}

double CounterValue(const std::vector<const prometheus::Collectable*>& sources,
                    const std::string& name, const Labels& labels = {}) {
  return MustSample(sources, name, labels).counter.value;
}

double GaugeValue(const std::vector<const prometheus::Collectable*>& sources,
                  const std::string& name, const Labels& labels = {}) {
  return MustSample(sources, name, labels).gauge.value;
}

prometheus::ClientMetric::Histogram HistogramOf(
    const std::vector<const prometheus::Collectable*>& sources, const std::string& name,
    const Labels& labels = {}) {
  return MustSample(sources, name, labels).histogram;
}

// A chain whose app records into `metrics` (test_chain.h with AppOptions::metrics).
struct MeteredChain {
  explicit MeteredChain(app::AppOptions options = {})
      : metrics(*registry), chain(Funded(), "", WithMetrics(std::move(options), &metrics)) {}

  static std::vector<std::pair<TestKey, std::string>> Funded() {
    return {{kAlice, "1000000stake"}, {kBob, "1000000stake"}, {kCarol, "1000000stake"}};
  }
  static app::AppOptions WithMetrics(app::AppOptions o, app::Metrics* m) {
    o.metrics = m;
    return o;
  }

  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  app::Metrics metrics;
  TestChain chain;
};

SendOptions From(std::uint64_t account_number, const std::string& fee = "",
                 std::uint64_t sequence = 0) {
  SendOptions o;
  o.account_number = account_number;
  o.fee = fee;
  o.sequence = sequence;
  return o;
}

abci_pb::Request CheckTxRequest(const std::string& tx) {
  abci_pb::Request req;
  req.mutable_check_tx()->set_tx(tx);
  req.mutable_check_tx()->set_type(abci_pb::NEW);
  return req;
}

}  // namespace

TEST_CASE("the dispatcher times each ABCI request per method into the histograms",
          "[metrics]") {
  MeteredChain m;
  const std::vector<const prometheus::Collectable*> reg = {m.registry.get()};
  abci::Dispatcher dispatcher(m.chain.app(), &m.metrics);

  SendOptions o;
  const std::string tx0 = m.chain.Send(kAlice, kBob, "10stake", o);
  o.sequence = 1;
  const std::string tx1 = m.chain.Send(kAlice, kBob, "10stake", o);
  CHECK(dispatcher.Handle(CheckTxRequest(tx0)).check_tx().code() == 0);
  CHECK(dispatcher.Handle(CheckTxRequest(tx1)).check_tx().code() == 0);
  CHECK(dispatcher.Handle(CheckTxRequest("garbage")).check_tx().code() == 2);

  CHECK(CounterValue(reg, "kairos_abci_requests_total", {{"method", "check_tx"}}) == 3);
  const auto h = HistogramOf(reg, "kairos_abci_request_duration_seconds", {{"method", "check_tx"}});
  CHECK(h.sample_count == 3);
  CHECK(h.sample_sum > 0);
  CHECK(h.sample_sum < 10);
  REQUIRE(h.bucket.size() == app::AbciLatencyBuckets().size() + 1);  // + Inf
  CHECK(h.bucket.front().upper_bound == Approx(10e-6));
  CHECK(h.bucket.back().cumulative_count == 3);
  // A rejected tx is an answer, not a failure.
  CHECK(CounterValue(reg, "kairos_abci_request_failures_total", {{"method", "check_tx"}}) == 0);
  CHECK(CounterValue(reg, "kairos_abci_requests_total", {{"method", "finalize_block"}}) == 0);

  abci_pb::Request info;
  info.mutable_info();
  dispatcher.Handle(info);
  abci_pb::Request flush;
  flush.mutable_flush();
  dispatcher.Handle(flush);
  CHECK(CounterValue(reg, "kairos_abci_requests_total", {{"method", "info"}}) == 1);
  CHECK_FALSE(Sample(reg, "kairos_abci_requests_total", {{"method", "flush"}}));  // not counted

  // An exception (a FinalizeBlock for the wrong height) counts as a failure of that method.
  abci_pb::Request fb;
  fb.mutable_finalize_block()->set_height(7);
  CHECK(dispatcher.Handle(fb).has_exception());
  CHECK(CounterValue(reg, "kairos_abci_requests_total", {{"method", "finalize_block"}}) == 1);
  CHECK(CounterValue(reg, "kairos_abci_request_failures_total", {{"method", "finalize_block"}}) ==
        1);

  // Every method CometBFT can send has its series from the start (a scrape sees zeros).
  for (const char* method :
       {"echo", "info", "init_chain", "query", "check_tx", "commit", "list_snapshots",
        "offer_snapshot", "load_snapshot_chunk", "apply_snapshot_chunk", "prepare_proposal",
        "process_proposal", "extend_vote", "verify_vote_extension", "finalize_block", "insert_tx",
        "reap_txs"}) {
    INFO(method);
    CHECK(Sample(reg, "kairos_abci_request_duration_seconds", {{"method", method}}));
  }
}

TEST_CASE("a committed block records its execution, txs by result code and the store commit",
          "[metrics]") {
  MeteredChain m;
  const std::vector<const prometheus::Collectable*> reg = {m.registry.get()};
  CHECK(HistogramOf(reg, "kairos_block_execution_seconds").sample_count == 0);
  CHECK(HistogramOf(reg, "kairos_store_commit_seconds").sample_count == 0);

  const std::vector<std::string> txs = {
      m.chain.Send(kAlice, kBob, "100stake"),          // code 0
      "",                                              // code 2 (decode)
      m.chain.Send(kBob, kAlice, "1stake", From(1, "", 5)),  // code 32 (sequence)
      m.chain.Send(kCarol, kAlice, "1stake", From(2)),  // code 0
  };
  // Finalized twice before Commit (as after a crash): executed twice, counted once.
  m.chain.Finalize(txs, kT0 + kSecond);
  const abci_pb::ResponseFinalizeBlock res = m.chain.Finalize(txs, kT0 + kSecond);
  REQUIRE(res.tx_results_size() == 4);
  REQUIRE(res.tx_results(2).code() == 32);
  CHECK(HistogramOf(reg, "kairos_block_execution_seconds").sample_count == 2);
  CHECK_FALSE(Sample(reg, "kairos_block_txs_total", {{"code", "0"}, {"codespace", ""}}));
  m.chain.app().Commit({});

  CHECK(CounterValue(reg, "kairos_block_txs_total", {{"code", "0"}, {"codespace", ""}}) == 2);
  CHECK(CounterValue(reg, "kairos_block_txs_total", {{"code", "2"}, {"codespace", "sdk"}}) == 1);
  CHECK(CounterValue(reg, "kairos_block_txs_total", {{"code", "32"}, {"codespace", "sdk"}}) == 1);
  const auto size = HistogramOf(reg, "kairos_block_size_txs");
  CHECK(size.sample_count == 1);
  CHECK(size.sample_sum == 4);
  CHECK(GaugeValue(reg, "kairos_block_height") == 1);
  CHECK(CounterValue(reg, "kairos_blocks_committed_total") == 1);
  const auto commit = HistogramOf(reg, "kairos_store_commit_seconds");
  CHECK(commit.sample_count == 1);
  CHECK(commit.sample_sum > 0);
  // Block 1 writes the genesis state and the txs' effects: accounts, balances, params.
  const auto bytes = HistogramOf(reg, "kairos_store_commit_bytes");
  CHECK(bytes.sample_count == 1);
  CHECK(bytes.sample_sum > 200);
  CHECK(CounterValue(reg, "kairos_store_written_bytes_total") == bytes.sample_sum);
  CHECK(CounterValue(reg, "kairos_store_written_keys_total") > 5);
  CHECK(HistogramOf(reg, "kairos_mempool_update_seconds").sample_count == 1);

  // An empty block: one more block of 0 txs, no state written.
  m.chain.Block({}, kT0 + 2 * kSecond);
  CHECK(GaugeValue(reg, "kairos_block_height") == 2);
  const auto size2 = HistogramOf(reg, "kairos_block_size_txs");
  CHECK(size2.sample_count == 2);
  CHECK(size2.bucket.front().upper_bound == 0);
  CHECK(size2.bucket.front().cumulative_count == 1);  // the empty block
  CHECK(HistogramOf(reg, "kairos_store_commit_bytes").sample_sum == bytes.sample_sum);
  CHECK(CounterValue(reg, "kairos_block_txs_total", {{"code", "0"}, {"codespace", ""}}) == 2);
}

TEST_CASE("the mempool collector reports the pool's size, bytes and removals by reason",
          "[metrics]") {
  app::AppOptions options;
  options.mempool.max_txs = 2;
  MeteredChain m(options);
  app::MempoolCollector collector(m.chain.app().tx_pool());
  const std::vector<const prometheus::Collectable*> pool = {&collector};
  CHECK(GaugeValue(pool, "kairos_mempool_txs") == 0);
  CHECK(GaugeValue(pool, "kairos_mempool_bytes") == 0);

  const std::string a = m.chain.Send(kAlice, kBob, "1stake", From(0, "200000stake"));
  const std::string b = m.chain.Send(kBob, kAlice, "1stake", From(1, "400000stake"));
  REQUIRE(m.chain.Check(a).code() == 0);
  REQUIRE(m.chain.Check(b).code() == 0);
  CHECK(GaugeValue(pool, "kairos_mempool_txs") == 2);
  CHECK(GaugeValue(pool, "kairos_mempool_bytes") == static_cast<double>(a.size() + b.size()));
  CHECK(GaugeValue(pool, "kairos_mempool_senders") == 2);
  CHECK(GaugeValue(pool, "kairos_mempool_parked_txs") == 0);

  // Already pooled: a duplicate, answered before the pool (TxPool's count is included).
  CHECK(m.chain.Check(a).code() == 19);
  CHECK(CounterValue(pool, "kairos_mempool_rejected_total", {{"reason", "duplicate"}}) == 1);

  // Full (max_txs 2): carol's better-paying tx evicts alice's, the cheapest (priority = fee per
  // unit of gas: 1, 2 and 4 here).
  const std::string c = m.chain.Send(kCarol, kAlice, "1stake", From(2, "800000stake"));
  REQUIRE(m.chain.Check(c).code() == 0);
  CHECK(CounterValue(pool, "kairos_mempool_removed_total", {{"reason", "evicted"}}) == 1);
  CHECK(GaugeValue(pool, "kairos_mempool_txs") == 2);
  // ... and a tx paying less than everything in a full pool is refused.
  CHECK(m.chain.Check(m.chain.Send(kAlice, kCarol, "1stake", From(0, "1stake"))).code() == 20);
  CHECK(CounterValue(pool, "kairos_mempool_rejected_total", {{"reason", "full"}}) == 1);

  // Included in a block: they leave the pool as included.
  m.chain.Block({b, c}, kT0 + kSecond);
  CHECK(GaugeValue(pool, "kairos_mempool_txs") == 0);
  CHECK(GaugeValue(pool, "kairos_mempool_bytes") == 0);
  CHECK(CounterValue(pool, "kairos_mempool_removed_total", {{"reason", "included"}}) == 2);
  // Every reason has its series, zeros included.
  for (const char* reason : {"included", "evicted", "replaced", "expired_blocks", "expired_time",
                             "recheck_failed", "stale_nonce", "expired_parked"}) {
    INFO(reason);
    CHECK(Sample(pool, "kairos_mempool_removed_total", {{"reason", reason}}));
  }
  CHECK(Sample(pool, "kairos_mempool_rejected_total", {{"reason", "parked_cap"}}));
}

TEST_CASE("the disk collector adds up the files under the database directory", "[metrics]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "a") << std::string(1000, 'x');
  std::ofstream(dir / "sub/b") << std::string(24, 'y');
  app::DiskUsageCollector collector(dir.path());
  CHECK(GaugeValue({&collector}, "kairos_store_disk_bytes") == 1024);
  app::DiskUsageCollector missing(dir / "none");
  CHECK(GaugeValue({&missing}, "kairos_store_disk_bytes") == 0);
}

namespace {

// GET http://127.0.0.1:port/path over a plain socket; the whole response (head and body).
std::string HttpGet(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  ::close(fd);
  return out;
}

}  // namespace

TEST_CASE("the endpoint serves the text format on loopback, and a bound port is an error",
          "[metrics]") {
  MeteredChain m;
  abci::Dispatcher dispatcher(m.chain.app(), &m.metrics);
  const std::string tx = m.chain.Send(kAlice, kBob, "1stake");
  REQUIRE(dispatcher.Handle(CheckTxRequest(tx)).check_tx().code() == 0);
  m.chain.Block({tx}, kT0 + kSecond);
  const std::string pending = m.chain.Send(kBob, kAlice, "1stake", From(1));
  REQUIRE(m.chain.Check(pending).code() == 0);

  auto started = app::MetricsExposer::Start("127.0.0.1:0");
  INFO(started.status().message());
  REQUIRE(started.ok());
  std::unique_ptr<app::MetricsExposer> exposer = std::move(*started);
  REQUIRE(exposer->port() != 0);
  auto pool = std::make_shared<app::MempoolCollector>(m.chain.app().tx_pool());
  exposer->Register(m.registry);
  exposer->Register(pool);

  const std::string page = HttpGet(exposer->port(), "/metrics");
  CHECK_THAT(page, Catch::StartsWith("HTTP/1.") && Catch::Contains(" 200 "));
  CHECK_THAT(page, Catch::Contains("text/plain"));
  for (const char* line : {
           "# TYPE kairos_abci_request_duration_seconds histogram\n",
           "kairos_abci_requests_total{method=\"check_tx\"} 1\n",
           "kairos_abci_request_duration_seconds_count{method=\"check_tx\"} 1\n",
           "kairos_abci_request_duration_seconds_bucket{method=\"check_tx\",le=\"+Inf\"} 1\n",
           "# TYPE kairos_block_execution_seconds histogram\n",
           "kairos_block_execution_seconds_count 1\n",
           "# TYPE kairos_block_txs_total counter\n",
           "kairos_block_txs_total{code=\"0\",codespace=\"\"} 1\n",
           "kairos_block_height 1\n",
           "# TYPE kairos_store_commit_seconds histogram\n",
           "kairos_store_commit_seconds_count 1\n",
           "# TYPE kairos_mempool_txs gauge\n",
           "kairos_mempool_txs 1\n",
           "kairos_mempool_removed_total{reason=\"included\"} 1\n",
           "kairos_mempool_removed_total{reason=\"evicted\"} 0\n",
       }) {
    CHECK_THAT(page, Catch::Contains(line));
  }

  // The port is taken: a second endpoint on it fails, naming the key and the address.
  const std::string taken = "127.0.0.1:" + std::to_string(exposer->port());
  auto second = app::MetricsExposer::Start(taken);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.status().message(),
             Catch::Contains("metrics.address " + taken +
                             ": cannot listen: Address already in use"));
  // A bad address is refused before anything is bound.
  auto bad = app::MetricsExposer::Start("localhost:1");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("metrics.address must be"));

  // Unregistered collectables are no longer read (the app may go after this).
  exposer->Unregister(pool);
  CHECK_THAT(HttpGet(exposer->port(), "/metrics"), !Catch::Contains("kairos_mempool_txs"));
}
