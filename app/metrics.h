// Prometheus metrics of a Kairos node (prometheus-cpp). Every metric, its type, labels and
// meaning are listed in docs/metrics.md.
//
// - Metrics: the families recorded while the node runs, in a prometheus::Registry the caller
//   owns (kairosd's, or a test's). It is the ABCI server's RequestObserver (a latency histogram
//   and a counter per method, children resolved once at construction: a request costs two clock
//   reads, an array index and prometheus-cpp's own atomics and histogram mutex) and KairosApp
//   records block execution, txs by result code and the store commit through it. A node without
//   a metrics address has no Metrics object at all: nothing is recorded and no clock is read.
// - MempoolCollector and DiskUsageCollector: read at scrape time, on the exposer's thread, from
//   sources that are thread-safe (TxPool::stats(), the file system), so the request path pays
//   nothing for them.
// - MetricsExposer: the HTTP endpoint (GET /metrics, text format 0.0.4) on HOST:PORT.
//
// Thread-safety: Metrics' Observe* run on the ABCI application executor; OnRequest also runs
// on query threads (it only updates prometheus-cpp's metric objects, which are thread-safe,
// through a table fixed at construction). The
// collectors are thread-safe. MetricsExposer is created and destroyed by one thread (main).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "abci/dispatcher.h"
#include "store/status.h"

namespace prometheus {
class Exposer;
}

namespace kairos::app {

class TxPool;

// Histogram bucket upper bounds, in the metric's unit.
const std::vector<double>& AbciLatencyBuckets();       // seconds, 10 us .. 10 s
const std::vector<double>& BlockExecutionBuckets();    // seconds, 1 ms .. 60 s
const std::vector<double>& StoreCommitBuckets();       // seconds, 100 us .. 10 s
const std::vector<double>& StoreCommitBytesBuckets();  // bytes, 1 KiB .. 1 GiB
const std::vector<double>& BlockTxsBuckets();          // txs, 0 .. 20000

// The label value of an ABCI method: "check_tx", "finalize_block", ...; "" for Flush and
// VALUE_NOT_SET, which are not recorded (a lone Flush never reaches the dispatcher).
const char* AbciMethodLabel(tendermint::abci::Request::ValueCase method);

// Txs of one block by result: (codespace, code) -> count. Codespace is "" for code 0.
class TxResultTally {
 public:
  void Add(const std::string& codespace, std::uint32_t code);
  void Clear() { counts_.clear(); }
  std::size_t total() const;
  // In first-seen order.
  const std::vector<std::pair<std::pair<std::string, std::uint32_t>, std::uint64_t>>& counts()
      const {
    return counts_;
  }

 private:
  // A block has few distinct codes: a vector searched linearly beats a map.
  std::vector<std::pair<std::pair<std::string, std::uint32_t>, std::uint64_t>> counts_;
};

// What Commit reports about the block it made durable.
struct CommittedBlock {
  std::int64_t height = 0;
  const TxResultTally* txs = nullptr;            // the block's tx results
  std::chrono::nanoseconds store_commit{};       // MerkleStore::Commit (the synced batch)
  std::uint64_t change_bytes = 0;                // keys + values written (deletes: the key)
  std::uint64_t change_writes = 0;               // keys written or deleted
  std::chrono::nanoseconds mempool_update{};     // TxPool::AfterCommit (removal, TTL, recheck)
};

class Metrics final : public abci::RequestObserver {
 public:
  // Adds every family to `registry`. REQUIRES: `registry` outlives this object.
  explicit Metrics(prometheus::Registry& registry);
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // abci::RequestObserver: kairos_abci_requests_total, kairos_abci_request_duration_seconds,
  // kairos_abci_request_failures_total.
  void OnRequest(tendermint::abci::Request::ValueCase method, std::chrono::nanoseconds elapsed,
                 bool failed) noexcept override;

  // FinalizeBlock computed the app hash of a block after `elapsed` (PreBlock, the txs,
  // EndBlock and the root). A block finalized again before Commit counts again.
  void ObserveBlockExecution(std::chrono::nanoseconds elapsed);

  // Commit made a block durable.
  void ObserveCommit(const CommittedBlock& block);

 private:
  // Indexed by Request::ValueCase (0 .. kMaxMethod).
  static constexpr int kMaxMethod = 22;
  struct MethodMetrics {
    prometheus::Counter* requests = nullptr;
    prometheus::Counter* failures = nullptr;
    prometheus::Histogram* duration = nullptr;
  };
  prometheus::Counter& TxCounter(const std::pair<std::string, std::uint32_t>& key);

  std::array<MethodMetrics, kMaxMethod + 1> methods_{};
  prometheus::Family<prometheus::Counter>& block_txs_family_;
  std::map<std::pair<std::string, std::uint32_t>, prometheus::Counter*> block_txs_;
  prometheus::Histogram& block_execution_;
  prometheus::Histogram& block_size_txs_;
  prometheus::Gauge& block_height_;
  prometheus::Counter& blocks_;
  prometheus::Histogram& store_commit_;
  prometheus::Histogram& store_commit_bytes_;
  prometheus::Counter& store_written_bytes_;
  prometheus::Counter& store_written_keys_;
  prometheus::Histogram& mempool_update_;
};

// kairos_mempool_{txs,bytes,senders,parked_txs} (gauges) and
// kairos_mempool_{removed,rejected}_total{reason} (counters), from TxPool::stats() at scrape.
class MempoolCollector final : public prometheus::Collectable {
 public:
  // REQUIRES: `pool` outlives every Collect() (unregister or stop the exposer first).
  explicit MempoolCollector(const TxPool& pool) : pool_(pool) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const TxPool& pool_;
};

// kairos_store_disk_bytes: the size of the files under the database directory, at scrape.
class DiskUsageCollector final : public prometheus::Collectable {
 public:
  explicit DiskUsageCollector(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::filesystem::path dir_;
};

// Checks a metrics listen address: "HOST:PORT" with HOST an IPv4 address or a bracketed IPv6
// address ("127.0.0.1:26661", "[::1]:26661"), or ":PORT" for every IPv4 interface; PORT from
// 0 (any free port) to 65535. On success sets `*civetweb` to the form the HTTP server takes.
// The error names the expected form.
Status ParseMetricsAddress(const std::string& text, std::string* civetweb);

// The HTTP endpoint serving the registered collectables at /metrics.
class MetricsExposer {
 public:
  // Binds `address` (ParseMetricsAddress form). Fails with the reason (address in use, ...).
  static Result<std::unique_ptr<MetricsExposer>> Start(const std::string& address);
  ~MetricsExposer();  // stops serving; an in-flight scrape finishes first

  // REQUIRES: what the collectable reads outlives this exposer, or Unregister() first.
  void Register(const std::weak_ptr<prometheus::Collectable>& collectable);
  void Unregister(const std::weak_ptr<prometheus::Collectable>& collectable);
  // The bound port (the real one when the address asked for 0).
  std::uint16_t port() const { return port_; }

 private:
  MetricsExposer() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::uint16_t port_ = 0;
};

}  // namespace kairos::app
