// mempool_bench: PriorityMempool insert, eviction, reap and memory at several pool sizes, each
// beside a baseline measured in the same run: the CometBFT v1 TxMempool algorithm (v0.35.8+ /
// v0.34.20+ / v0.37, research/mempool.md §1.4 and §1.8) written here in C++: a list in arrival
// order plus a hash map and a sender map; a reap copies every entry and sorts by priority desc /
// arrival asc; an insert into a full pool scans every entry for strictly lower priority, sorts
// those victims (lowest first, newest first among equals) and evicts until the new tx's bytes
// are freed. Its entries are CometBFT's WrappedTx shape: a shared_ptr to the TxInfo plus arrival
// fields. A benchmark, not a test: it prints figures.
//
// Workload: senders with --nonces txs each (sent round by round, so every tx is ready), ~250-byte
// txs (200..300), priorities (fees per gas) uniform in [1, 1e6] / 2e6, random 32-byte hashes.
//   mempool_bench [--sizes 10000,100000] [--samples 10000] [--reap 10000] [--nonces 4]
//                 [--baseline-evictions N] [--ttl 0|1] [--baseline 0|1] [--cold N]
// --ttl 1 configures a TTL that never fires (the pool then keeps its expiry index); --baseline 0
// skips the CometBFT v1 algorithm (its 1M eviction run takes most of the time).
// Memory is malloc's in-use bytes (mallinfo2: uordblks + hblkhd, so malloc's chunk headers and
// rounding count) added by filling the pool, minus the raw tx bytes, per tx: everything the pool
// holds for a tx (entry, indexes, sender records).
// Work: the pool's WorkCounters (heap levels moved, heap and tree comparisons, hash-index slots
// probed, frontier entries examined) per insert that evicted, in the full-pool run: steps that do
// not depend on caches, to set beside the time, which does.
// Memory latency: the pool grows from a few MB (in the 32 MB L3) at 10k to ~400 MB at 1M, so every
// step of an operation turns from a cache hit into a DRAM miss and all times grow with n for that
// reason alone. Two controls, in the same full pool: a lookup of one random resident tx (Find:
// a hash-index probe and the entry's reference count, the least any operation on a tx touches),
// warm, and with the caches flushed before each sample (64 MB streamed) together with an evicting
// insert flushed the same way (--cold N samples each, default 1000; 0 = off). Flushed, every size
// pays DRAM for every step, so the cold eviction time compares the number of memory steps across
// sizes, which is what O(log n) is about.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <list>
#include <random>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "mempool/priority_mempool.h"

using namespace kairos::mempool;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::vector<std::size_t> sizes{10'000, 100'000};
  std::size_t samples = 10'000;
  std::size_t reap = 10'000;
  std::size_t nonces = 4;
  std::size_t baseline_evictions = 0;  // 0: as many as fit in about a second
  std::size_t cold = 1000;  // flushed-cache samples per measure; 0 = off
  bool ttl = false;
  bool baseline = true;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--sizes") {
      a.sizes.clear();
      for (const char* p = v; *p != '\0';) {
        char* end;
        a.sizes.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (k == "--samples") {
      a.samples = std::strtoull(v, nullptr, 10);
    } else if (k == "--reap") {
      a.reap = std::strtoull(v, nullptr, 10);
    } else if (k == "--nonces") {
      a.nonces = std::max<std::size_t>(1, std::strtoull(v, nullptr, 10));
    } else if (k == "--ttl") {
      a.ttl = std::strtoull(v, nullptr, 10) != 0;
    } else if (k == "--baseline") {
      a.baseline = std::strtoull(v, nullptr, 10) != 0;
    } else if (k == "--cold") {
      a.cold = std::strtoull(v, nullptr, 10);
    } else if (k == "--baseline-evictions") {
      a.baseline_evictions = std::strtoull(v, nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

std::size_t MallocInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Evicts the pool from every cache level: streams a buffer twice the L3 (32 MB here; 64 MB
// is also larger than any L3 of a 2-core cloud machine we run on).
volatile std::uint64_t g_flush_sink;  // keeps the flush's reads

void FlushCaches() {
  static std::vector<std::uint64_t> buffer((64u << 20) / sizeof(std::uint64_t), 1);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < buffer.size(); i += 8) sum += buffer[i]++;  // one word per line
  g_flush_sink = sum;
}

// The workload: tx i belongs to sender (i % senders) with nonce (i / senders), so each round of
// nonces arrives in order; `resident` txs give each sender `nonces` txs, and later ones (the
// timed samples) continue the senders' sequences. Priority, size and hash come from a generator
// seeded by i.
class Workload {
 public:
  Workload(std::size_t resident, std::size_t nonces)
      : senders_(std::max<std::size_t>(1, resident / nonces)) {}

  TxInfo Tx(std::size_t i, std::int64_t min_priority = 1) const {
    std::mt19937_64 rng(i * 0x9E3779B97F4A7C15ull + 17);
    TxInfo t;
    const std::size_t sender = i % senders_;
    t.sender.resize(20);
    for (int b = 0; b < 20; b += 8) {
      const std::uint64_t v = (sender + 1) * 0xD6E8FEB86659FD93ull ^ static_cast<std::uint64_t>(b);
      std::memcpy(t.sender.data() + b, &v, std::min(8, 20 - b));
    }
    t.nonce = i / senders_;
    // A fee of `units` for 2,000,000 gas: gas prices below 0.5 per gas (the integer part of
    // every priority is 0, as at real Cosmos fee levels), ordered as the units are.
    const auto units = static_cast<std::uint64_t>(min_priority) +
                       rng() % static_cast<std::uint64_t>(1'000'001 - min_priority);
    t.priority = Priority::PerGas(units, 2'000'000);
    t.bytes.assign(200 + rng() % 101, static_cast<char>(rng()));
    for (int b = 0; b < 32; b += 8) {
      const std::uint64_t v = rng();
      std::memcpy(t.hash.data() + b, &v, 8);
    }
    t.gas_wanted = 100'000;
    return t;
  }

 private:
  std::size_t senders_;
};

struct BaselineEntry {
  TxInfo tx;
  std::uint64_t arrival = 0;
  std::int64_t arrival_height = 0;
  std::int64_t arrival_time = 0;
};
using BaselinePtr = std::shared_ptr<const BaselineEntry>;

// The CometBFT v1 TxMempool algorithm (see the file comment).
class BaselinePool {
 public:
  BaselinePool(std::size_t max_txs, std::size_t max_bytes)
      : max_txs_(max_txs), max_bytes_(max_bytes) {}

  bool Insert(TxInfo tx, std::int64_t height, std::int64_t now) {
    if (by_hash_.count(tx.hash)) return false;
    const std::size_t size = tx.bytes.size();
    if (txs_.size() >= max_txs_ || bytes_ + size > max_bytes_) {
      std::vector<std::list<BaselinePtr>::iterator> victims;
      std::size_t victim_bytes = 0;
      for (auto it = txs_.begin(); it != txs_.end(); ++it) {
        if ((*it)->tx.priority < tx.priority) {
          victims.push_back(it);
          victim_bytes += (*it)->tx.bytes.size();
        }
      }
      if (victims.empty() || victim_bytes < size) return false;
      using It = std::list<BaselinePtr>::iterator;
      std::sort(victims.begin(), victims.end(), [](It a, It b) {
        const BaselineEntry& x = **a;
        const BaselineEntry& y = **b;
        return x.tx.priority != y.tx.priority ? x.tx.priority < y.tx.priority
                                              : x.arrival > y.arrival;
      });
      std::size_t evicted = 0;
      for (auto it : victims) {
        evicted += (*it)->tx.bytes.size();
        Erase(it);
        if (evicted >= size) break;
      }
    }
    auto e = std::make_shared<BaselineEntry>();
    e->tx = std::move(tx);
    e->arrival = next_arrival_++;
    e->arrival_height = height;
    e->arrival_time = now;
    txs_.push_back(e);
    auto it = std::prev(txs_.end());
    by_hash_.emplace(e->tx.hash, it);
    by_sender_.emplace(e->tx.sender, it);
    bytes_ += size;
    return true;
  }

  // ReapMaxTxs: copy everything, sort, take the first `n`.
  std::vector<BaselinePtr> Reap(std::size_t n) const {
    std::vector<BaselinePtr> all(txs_.begin(), txs_.end());
    std::sort(all.begin(), all.end(), [](const BaselinePtr& a, const BaselinePtr& b) {
      return a->tx.priority != b->tx.priority ? a->tx.priority > b->tx.priority
                                              : a->arrival < b->arrival;
    });
    all.resize(std::min(n, all.size()));
    return all;
  }

  std::size_t size() const { return txs_.size(); }

 private:
  struct HashOf {
    std::size_t operator()(const Hash& h) const {
      std::size_t v;
      std::memcpy(&v, h.data(), sizeof v);
      return v;
    }
  };

  void Erase(std::list<BaselinePtr>::iterator it) {
    auto [lo, hi] = by_sender_.equal_range((*it)->tx.sender);
    for (auto s = lo; s != hi; ++s) {
      if (s->second == it) {
        by_sender_.erase(s);
        break;
      }
    }
    by_hash_.erase((*it)->tx.hash);
    bytes_ -= (*it)->tx.bytes.size();
    txs_.erase(it);
  }

  std::size_t max_txs_, max_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t next_arrival_ = 1;
  std::list<BaselinePtr> txs_;
  std::unordered_map<Hash, std::list<BaselinePtr>::iterator, HashOf> by_hash_;
  std::unordered_multimap<std::string, std::list<BaselinePtr>::iterator> by_sender_;
};

struct Figures {
  double insert_p50 = 0, insert_p99 = 0;
  double evict_p50 = 0, evict_p99 = 0;
  double reap_ms = 0;
  double reap_min_ms = 0;  // the fastest round: on a loaded machine the median includes preemption
  double bytes_per_tx = 0;
  std::size_t evictions = 0;
  double lookup_p50 = 0;                      // Find of a random resident tx, warm, µs
  double cold_lookup_p50 = 0, cold_evict_p50 = 0;  // the same and an evicting insert, flushed
  std::size_t cold_evictions = 0;
  std::size_t victims = 0;  // txs evicted by those inserts
  WorkCounters work;        // summed over the inserts that evicted
};

bool g_ttl = false;

Config PoolConfig(std::size_t max_txs) {
  Config c;
  c.max_txs = max_txs;
  c.max_bytes = std::size_t{1} << 40;
  if (g_ttl) c.ttl_blocks = 1'000'000'000;  // kept, never reached
  return c;
}

void Add(WorkCounters& sum, const WorkCounters& after, const WorkCounters& before) {
  sum.heap_levels += after.heap_levels - before.heap_levels;
  sum.heap_compares += after.heap_compares - before.heap_compares;
  sum.tree_compares += after.tree_compares - before.tree_compares;
  sum.index_probes += after.index_probes - before.index_probes;
  sum.plan_steps += after.plan_steps - before.plan_steps;
}

// Fills a pool with txs [0, n), measuring memory when asked.
template <class Insert>
double Fill(const Workload& w, std::size_t n, Insert insert) {
  const std::size_t before = MallocInUse();
  std::size_t raw = 0;
  for (std::size_t i = 0; i < n; ++i) {
    TxInfo t = w.Tx(i);
    raw += t.bytes.size();
    insert(std::move(t));
  }
  return (static_cast<double>(MallocInUse() - before) - static_cast<double>(raw)) /
         static_cast<double>(n);
}

// Times `insert` on txs [n, n + count) generated with priorities from `min_priority` up.
template <class Insert>
std::vector<double> TimeInserts(const Workload& w, std::size_t n, std::size_t count,
                                std::int64_t min_priority, Insert insert) {
  std::vector<double> times;
  times.reserve(count);
  for (std::size_t i = n; i < n + count; ++i) {
    TxInfo t = w.Tx(i, min_priority);
    const auto t0 = Clock::now();
    const bool counted = insert(std::move(t));
    const auto t1 = Clock::now();
    if (counted) times.push_back(Micros(t1 - t0));
  }
  return times;
}

// The median and the fastest of `rounds` reaps, ms.
template <class ReapFn>
std::pair<double, double> TimeReap(ReapFn reap, int rounds) {
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    reap();
    ms.push_back(Micros(Clock::now() - t0) / 1000.0);
  }
  return {Percentile(ms, 0.5), *std::min_element(ms.begin(), ms.end())};
}

Figures MeasureKairos(const Args& a, std::size_t n) {
  Figures f;
  Workload w(n, a.nonces);
  {
    PriorityMempool pool(PoolConfig(n + a.samples));
    f.bytes_per_tx = Fill(w, n, [&](TxInfo t) { pool.Insert(std::move(t), 0, 1, 1); });
    std::size_t taken = 0;
    std::tie(f.reap_ms, f.reap_min_ms) = TimeReap(
        [&] {
          taken = 0;
          pool.Reap([&](const EntryPtr&) {
            return ++taken >= a.reap ? Verdict::kStop : Verdict::kTake;
          });
        },
        11);
    const auto times = TimeInserts(w, n, a.samples, 1, [&](TxInfo t) {
      return pool.Insert(std::move(t), 0, 1, 1).ok;
    });
    f.insert_p50 = Percentile(times, 0.5);
    f.insert_p99 = Percentile(times, 0.99);
  }
  {
    PriorityMempool pool(PoolConfig(n));
    Fill(w, n, [&](TxInfo t) { pool.Insert(std::move(t), 0, 1, 1); });
    std::vector<double> times;
    for (std::size_t i = n; i < n + a.samples; ++i) {
      TxInfo t = w.Tx(i, 500'000);
      const WorkCounters before = pool.work_counters();
      const auto t0 = Clock::now();
      const InsertResult r = pool.Insert(std::move(t), 0, 1, 1);
      const auto t1 = Clock::now();
      if (r.ok && !r.evicted.empty()) {
        times.push_back(Micros(t1 - t0));
        f.victims += r.evicted.size();
        Add(f.work, pool.work_counters(), before);
      }
    }
    f.evict_p50 = Percentile(times, 0.5);
    f.evict_p99 = Percentile(times, 0.99);
    f.evictions = times.size();

    // The memory-latency controls (file comment), in the same full pool.
    std::mt19937_64 rng(n);
    std::vector<Hash> resident;
    for (std::size_t j = 0; j < 10'000; ++j) resident.push_back(w.Tx(rng() % n).hash);
    std::vector<double> lookups;
    auto time_lookup = [&](const Hash& h) {
      const auto t0 = Clock::now();
      const bool found = pool.Find(h) != nullptr;
      const auto t1 = Clock::now();
      if (found) lookups.push_back(Micros(t1 - t0));  // an evicted one is not a resident tx
    };
    for (const Hash& h : resident) time_lookup(h);
    f.lookup_p50 = Percentile(lookups, 0.5);
    lookups.clear();
    std::vector<double> cold;
    for (std::size_t j = 0; j < a.cold; ++j) {
      FlushCaches();
      time_lookup(resident[j % resident.size()]);
      TxInfo t = w.Tx(n + a.samples + j, 500'000);
      FlushCaches();
      const auto t0 = Clock::now();
      const InsertResult r = pool.Insert(std::move(t), 0, 1, 1);
      const auto t1 = Clock::now();
      if (r.ok && !r.evicted.empty()) cold.push_back(Micros(t1 - t0));
    }
    f.cold_lookup_p50 = Percentile(lookups, 0.5);
    f.cold_evict_p50 = Percentile(cold, 0.5);
    f.cold_evictions = cold.size();
  }
  return f;
}

Figures MeasureBaseline(const Args& a, std::size_t n) {
  Figures f;
  Workload w(n, a.nonces);
  {
    BaselinePool pool(n + a.samples, std::size_t{1} << 40);
    f.bytes_per_tx = Fill(w, n, [&](TxInfo t) { pool.Insert(std::move(t), 1, 1); });
    std::tie(f.reap_ms, f.reap_min_ms) =
        TimeReap([&] { (void)pool.Reap(a.reap); }, n >= 1'000'000 ? 3 : 11);
    const auto times = TimeInserts(w, n, a.samples, 1, [&](TxInfo t) {
      return pool.Insert(std::move(t), 1, 1);
    });
    f.insert_p50 = Percentile(times, 0.5);
    f.insert_p99 = Percentile(times, 0.99);
  }
  {
    BaselinePool pool(n, std::size_t{1} << 40);
    Fill(w, n, [&](TxInfo t) { pool.Insert(std::move(t), 1, 1); });
    // Each eviction scans and sorts the pool: about n log n work, so fewer samples at 1M.
    const std::size_t count =
        a.baseline_evictions != 0
            ? a.baseline_evictions
            : std::clamp<std::size_t>(200'000'000 / std::max<std::size_t>(n, 1) / 20, 10,
                                      a.samples);
    const auto times = TimeInserts(w, n, count, 500'000, [&](TxInfo t) {
      const std::size_t before = pool.size();
      return pool.Insert(std::move(t), 1, 1) && pool.size() <= before;  // evicted one or two
    });
    f.evict_p50 = Percentile(times, 0.5);
    f.evict_p99 = Percentile(times, 0.99);
    f.evictions = times.size();
  }
  return f;
}

std::string Ratio(double ours, double base) {
  char buf[32];
  if (ours <= 0) return "-";
  std::snprintf(buf, sizeof buf, "%.1f×", base / ours);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  g_ttl = a.ttl;
  std::string load;
  std::getline(std::ifstream("/proc/loadavg"), load);
  std::printf("mempool_bench: txs of 200..300 bytes, %zu nonces per sender, %zu samples, "
              "reap %zu, TTL %s; load average at start: %s\n\n",
              a.nonces, a.samples, a.reap, a.ttl ? "on" : "off", load.c_str());
  std::printf("| resident txs | measure | kairos | CometBFT v1 algorithm | kairos faster by "
              "| goal |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (std::size_t n : a.sizes) {
    const Figures k = MeasureKairos(a, n);
    const Figures b = a.baseline ? MeasureBaseline(a, n) : Figures{};
    const char* insert_goal = n == 100'000 ? "p50 ≤ 5 µs" : "";
    const char* reap_goal = n == 1'000'000 ? "≤ 20 ms" : "";
    std::printf("| %zu | insert p50 / p99, µs | %.2f / %.2f | %.2f / %.2f | %s | %s |\n", n,
                k.insert_p50, k.insert_p99, b.insert_p50, b.insert_p99,
                Ratio(k.insert_p50, b.insert_p50).c_str(), insert_goal);
    std::printf("| %zu | insert into the full pool, evicting, p50 / p99, µs (samples) "
                "| %.2f / %.2f (%zu) | %.1f / %.1f (%zu) | %s | flat 10k→1M |\n",
                n, k.evict_p50, k.evict_p99, k.evictions, b.evict_p50, b.evict_p99, b.evictions,
                Ratio(k.evict_p50, b.evict_p50).c_str());
    if (a.cold != 0) {
      std::printf("| %zu | control: lookup of a resident tx p50, µs: warm; caches flushed | %.3f; "
                  "%.3f | | | |\n",
                  n, k.lookup_p50, k.cold_lookup_p50);
      std::printf("| %zu | insert into the full pool, evicting, caches flushed, p50 µs (samples); "
                  "in flushed lookups | %.2f (%zu); %.1f | | | O(log n) |\n",
                  n, k.cold_evict_p50, k.cold_evictions,
                  k.cold_lookup_p50 > 0 ? k.cold_evict_p50 / k.cold_lookup_p50 : 0.0);
    }
    std::printf("| %zu | reap %zu txs, ms: median (fastest) of 11; baseline 3 at 1M | %.3f (%.3f) "
                "| %.2f (%.2f) | %s | %s |\n",
                n, a.reap, k.reap_ms, k.reap_min_ms, b.reap_ms, b.reap_min_ms,
                Ratio(k.reap_ms, b.reap_ms).c_str(), reap_goal);
    std::printf("| %zu | memory per tx above its raw bytes, bytes | %.0f | %.0f | | ≤ 200 |\n", n,
                k.bytes_per_tx, b.bytes_per_tx);
    const double e = static_cast<double>(std::max<std::size_t>(k.evictions, 1));
    std::printf("| %zu | work per insert that evicted (%.2f victims): heap levels moved / heap "
                "compares / tree compares / index probes / frontier entries examined | %.2f / "
                "%.2f / %.2f / %.2f / %.2f | | | O(log n) |\n",
                n, static_cast<double>(k.victims) / e, k.work.heap_levels / e,
                k.work.heap_compares / e, k.work.tree_compares / e, k.work.index_probes / e,
                k.work.plan_steps / e);
    std::fflush(stdout);
  }
  return 0;
}
