// store_bench: MerkleStore throughput, commit latency, proofs and disk use, beside a floor
// measured in the same run: the same keys and values written as plain LevelDB WriteBatches
// (no tree), one synced batch per block. A benchmark, not a test: it prints figures.
//
// Workload (issue 3): random 32-byte keys, 100-byte values, blocks of 10k updates.
//   store_bench [--keys 1000000] [--block 10000] [--blocks 100] [--keep 100] [--proofs 100000]
//               [--warm N] [--checkpoint K] [--dir DIR] [--trace 1] [--compact 0]
//               [--write-buffer-mb N]
// After the load (every key written once), --warm update blocks run unmeasured (default: keep
// + the pruning interval, so that every measured block prunes values this run's updates
// replaced, as a long-running node does; until session 11 there was no warm phase, and the
// 100 measured blocks pruned only load versions, which replaced nothing), then --blocks
// measured ones (the steady state).
// --trace 1 prints one line per update block (its kind, where its time went, LevelDB's level-0
// file count) and LevelDB's compaction stats. Disk is measured at the end of the run as the
// directory is (obsolete entries that compaction has not dropped yet included), and, unless
// --compact 0, again after a full compaction (the live bytes), each with a per-table estimate.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include "app/proofs.h"
#include "store/merkle_store.h"

using namespace kairos;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kPruneInterval = 10;

struct Args {
  std::int64_t keys = 1'000'000;
  std::int64_t block = 10'000;
  std::int64_t blocks = 100;
  std::int64_t keep = 100;
  std::int64_t warm = -1;  // -1: keep + kPruneInterval
  std::int64_t proofs = 100'000;
  std::int64_t checkpoint = store::StoreOptions{}.checkpoint_interval;
  std::string dir;
  bool trace = false;
  bool compact = true;
  std::int64_t write_buffer_mb = store::StoreOptions{}.write_buffer_bytes >> 20;
  std::int64_t page_cache = static_cast<std::int64_t>(store::StoreOptions{}.page_cache_pages);
  std::int64_t block_cache_mb = store::StoreOptions{}.block_cache_bytes >> 20;
  std::int64_t value_cache_mb = store::StoreOptions{}.value_cache_bytes >> 20;
  std::int64_t table_sync_kb = store::StoreOptions{}.table_bytes_per_sync >> 10;
};

constexpr const char* kUsage =
    "usage: store_bench [--keys N] [--block N] [--blocks N] [--keep N] [--proofs N] [--warm N]\n"
    "                   [--checkpoint K] [--dir DIR] [--trace 0|1] [--compact 0|1]\n"
    "                   [--write-buffer-mb N] [--page-cache PAGES] [--block-cache-mb N]\n"
    "                   [--value-cache-mb N] [--table-sync-kb N]\n";

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n%s", k.c_str(), kUsage);
      std::exit(2);
    }
    const char* v = argv[i + 1];
    if (k == "--keys") a.keys = std::atoll(v);
    else if (k == "--block") a.block = std::atoll(v);
    else if (k == "--blocks") a.blocks = std::atoll(v);
    else if (k == "--warm") a.warm = std::atoll(v);
    else if (k == "--keep") a.keep = std::atoll(v);
    else if (k == "--proofs") a.proofs = std::atoll(v);
    else if (k == "--dir") a.dir = v;
    else if (k == "--checkpoint") a.checkpoint = std::atoll(v);
    else if (k == "--trace") a.trace = std::atoll(v) != 0;
    else if (k == "--compact") a.compact = std::atoll(v) != 0;
    else if (k == "--write-buffer-mb") a.write_buffer_mb = std::atoll(v);
    else if (k == "--page-cache") a.page_cache = std::atoll(v);
    else if (k == "--block-cache-mb") a.block_cache_mb = std::atoll(v);
    else if (k == "--value-cache-mb") a.value_cache_mb = std::atoll(v);
    else if (k == "--table-sync-kb") a.table_sync_kb = std::atoll(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n%s", k.c_str(), kUsage);
      std::exit(2);
    }
  }
  if (a.dir.empty()) a.dir = (fs::temp_directory_path() / "kairos-store-bench").string();
  if (a.warm < 0) a.warm = a.keep + kPruneInterval;
  return a;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU seconds of the whole process (every thread: LevelDB's compaction too). On a shared
// machine wall time moves with other processes' load; CPU time much less.
double ProcessCpu() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// Phase boundaries on stderr, in CLOCK_MONOTONIC seconds: `perf record -k CLOCK_MONOTONIC` uses
// the same clock, so `perf report --time START,END` can look at one phase alone.
void MarkPhase(const char* name) {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  std::fprintf(stderr, "phase %s %ld.%09ld\n", name, static_cast<long>(t.tv_sec), t.tv_nsec);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

// LevelDB may delete a file while this lists the directory (the trace reads it mid-run): such a
// file counts as gone.
std::uint64_t DirBytes(const std::string& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    const std::uintmax_t size = e.is_regular_file(ec) ? e.file_size(ec) : 0;
    if (!ec) total += size;
  }
  return total;
}

// Key i of the workload: 32 pseudo-random bytes, the same every run.
std::string Key(std::uint64_t i) {
  std::string k(32, '\0');
  std::mt19937_64 rng(i * 0x9e3779b97f4a7c15ull + 1);
  for (int j = 0; j < 4; ++j) {
    const std::uint64_t r = rng();
    std::memcpy(k.data() + 8 * j, &r, 8);
  }
  return k;
}

std::string Value(std::mt19937_64& rng) {
  std::string v(100, '\0');
  for (int j = 0; j < 100; j += 8) {
    const std::uint64_t r = rng();
    std::memcpy(v.data() + j, &r, std::min(8, 100 - j));
  }
  return v;
}

// The blocks of the run: first the load (every key once), then updates of random existing keys.
std::vector<store::ChangeSet> Blocks(const Args& a, std::int64_t* load_blocks) {
  std::mt19937_64 rng(7);
  std::vector<store::ChangeSet> blocks;
  for (std::int64_t start = 0; start < a.keys; start += a.block) {
    store::ChangeSet c;
    for (std::int64_t i = start; i < std::min(a.keys, start + a.block); ++i) c[Key(i)] = Value(rng);
    blocks.push_back(std::move(c));
  }
  *load_blocks = static_cast<std::int64_t>(blocks.size());
  // A block updates distinct keys: no more of them than there are keys.
  const std::int64_t updates = std::min(a.block, a.keys);
  for (std::int64_t b = 0; b < a.warm + a.blocks; ++b) {
    store::ChangeSet c;
    while (static_cast<std::int64_t>(c.size()) < updates) c[Key(rng() % a.keys)] = Value(rng);
    blocks.push_back(std::move(c));
  }
  return blocks;
}

struct Phase {
  double seconds = 0;
  double cpu = 0;  // process CPU seconds
  std::int64_t updates = 0;
  std::vector<double> block_ms;
  double rate() const { return seconds > 0 ? updates / seconds : 0; }
  double cpu_rate() const { return cpu > 0 ? updates / cpu : 0; }
};

// The part of the run block b belongs to: the load, the warm-up (run, not measured), or the
// steady state.
enum Part { kLoad = 0, kWarm = 1, kSteady = 2 };
constexpr const char* kPartNames[] = {"load", "warm", "steady"};
Part PartOf(const Args& a, std::size_t b, std::int64_t load_blocks) {
  const auto i = static_cast<std::int64_t>(b);
  return i < load_blocks ? kLoad : i < load_blocks + a.warm ? kWarm : kSteady;
}

void RunLevelDbFloor(const Args& a, const std::vector<store::ChangeSet>& blocks,
                     std::int64_t load_blocks, Phase* load, Phase* steady) {
  Phase warm;
  Phase* const parts[] = {load, &warm, steady};
  const std::string dir = a.dir + "/leveldb-floor";
  fs::remove_all(dir);
  leveldb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64u << 20;
  o.max_file_size = 32u << 20;
  leveldb::DB* raw = nullptr;
  if (!leveldb::DB::Open(o, dir, &raw).ok()) std::exit(1);
  std::unique_ptr<leveldb::DB> db(raw);
  leveldb::WriteOptions wo;
  wo.sync = true;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto t0 = Clock::now();
    const double c0 = ProcessCpu();
    leveldb::WriteBatch batch;
    for (const auto& [k, v] : blocks[b]) batch.Put(k, *v);
    if (!db->Write(wo, &batch).ok()) std::exit(1);
    const double s = Seconds(Clock::now() - t0);
    Phase* p = parts[PartOf(a, b, load_blocks)];
    p->cpu += ProcessCpu() - c0;
    p->seconds += s;
    p->updates += static_cast<std::int64_t>(blocks[b].size());
    p->block_ms.push_back(s * 1e3);
  }
  db.reset();
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  fs::remove_all(a.dir);
  fs::create_directories(a.dir);
  std::printf("store_bench: %lld keys, blocks of %lld updates, %lld update blocks, keep %lld "
              "versions, %lld warm-up blocks before them, checkpoint every %lld, page cache "
              "%lld pages, block cache %lld MB, memtable %lld MB, value cache %lld MB, table "
              "write-back every %lld KB\n",
              static_cast<long long>(a.keys), static_cast<long long>(a.block),
              static_cast<long long>(a.blocks), static_cast<long long>(a.keep),
              static_cast<long long>(a.warm), static_cast<long long>(a.checkpoint),
              static_cast<long long>(a.page_cache),
              static_cast<long long>(a.block_cache_mb), static_cast<long long>(a.write_buffer_mb),
              static_cast<long long>(a.value_cache_mb), static_cast<long long>(a.table_sync_kb));
  std::int64_t load_blocks = 0;
  const auto blocks = Blocks(a, &load_blocks);

  Phase floor_load, floor_steady;
  // The workload (every block's keys and values, built up front) is resident for the whole
  // run: measured here, before the store exists, so the store's own memory can be told apart.
  rusage before_store{};
  getrusage(RUSAGE_SELF, &before_store);
  MarkPhase("floor");
  RunLevelDbFloor(a, blocks, load_blocks, &floor_load, &floor_steady);

  store::StoreOptions o;
  o.dir = a.dir + "/merkle";
  o.keep_recent = a.keep;
  o.prune_interval = kPruneInterval;
  o.checkpoint_interval = a.checkpoint;
  o.write_buffer_bytes = static_cast<std::size_t>(a.write_buffer_mb) << 20;
  o.page_cache_pages = static_cast<std::size_t>(a.page_cache);
  o.block_cache_bytes = static_cast<std::size_t>(a.block_cache_mb) << 20;
  o.value_cache_bytes = static_cast<std::size_t>(a.value_cache_mb) << 20;
  o.table_bytes_per_sync = static_cast<std::size_t>(a.table_sync_kb) << 10;
  o.verify_on_open = false;
  auto opened = store::MerkleStore::Open(o);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<store::MerkleStore> s = std::move(*opened);
  Phase load, warm, steady;
  Phase* const parts[] = {&load, &warm, &steady};
  std::vector<double> stage_ms, commit_ms;
  std::size_t steady_page_reads = 0, cached_pages = 0, cached_page_bytes = 0;
  // Steady blocks by kind: pruning versions (every 10th), and the others.
  std::vector<double> prune_block_ms, other_block_ms;
  std::vector<std::string> trace;
  MarkPhase("load");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const Part part = PartOf(a, b, load_blocks);
    if (b > 0 && part != PartOf(a, b - 1, load_blocks)) MarkPhase(kPartNames[part]);
    const std::string l0 = a.trace ? s->DbProperty("leveldb.num-files-at-level0") : "";
    const double mem_mb =
        a.trace ? std::atof(s->DbProperty("leveldb.approximate-memory-usage").c_str()) / 1e6 : 0;
    const auto t0 = Clock::now();
    const double c0 = ProcessCpu();
    auto root = s->Stage(s->version() + 1, blocks[b]);
    const auto t1 = Clock::now();
    const Status c = root.ok() ? s->Commit() : root.status();
    const auto t2 = Clock::now();
    if (!c.ok()) {
      std::fprintf(stderr, "block %zu: %s\n", b, c.ToString().c_str());
      return 1;
    }
    Phase* p = parts[part];
    p->cpu += ProcessCpu() - c0;
    p->seconds += Seconds(t2 - t0);
    p->updates += static_cast<std::int64_t>(blocks[b].size());
    p->block_ms.push_back(Seconds(t2 - t0) * 1e3);
    if (p == &steady) {
      stage_ms.push_back(Seconds(t1 - t0) * 1e3);
      commit_ms.push_back(Seconds(t2 - t1) * 1e3);
      (s->version() % 10 == 0 ? prune_block_ms : other_block_ms).push_back(p->block_ms.back());
      steady_page_reads += s->last_block().disk_page_reads;
      cached_pages = s->last_block().cached_pages;
      cached_page_bytes = s->last_block().cached_page_bytes;
    }
    if (a.trace) {
      const auto& st = s->last_block();
      char line[256];
      std::snprintf(line, sizeof line,
                    "%5lld %-6s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9zu %7zu %7.2f %4s %7.1f "
                    "%7.2f %7zu %8zu",
                    static_cast<long long>(s->version()),
                    kPartNames[part],
                    Seconds(t2 - t0) * 1e3, Seconds(t1 - t0) * 1e3, st.prune_ms,
                    Seconds(t2 - t1) * 1e3, st.write_ms, st.memory_ms, st.prune_deletes,
                    st.checkpoint_pages, st.batch_bytes / 1e6, l0.c_str(), mem_mb,
                    static_cast<double>(DirBytes(o.dir)) / a.keys / (32 + 100),
                    st.disk_page_reads, st.cached_pages);
      trace.emplace_back(line);
    }
  }

  // Proofs, warm: the same keys twice, the second pass timed.
  MarkPhase("proofs");
  std::mt19937_64 rng(11);
  std::vector<std::string> present, absent;
  for (std::int64_t i = 0; i < a.proofs; ++i) {
    present.push_back(Key(rng() % a.keys));
    absent.push_back(Key(a.keys + rng() % a.keys));
  }
  double exist_s = 0, absent_s = 0, exist_first_s = 0, absent_first_s = 0;
  std::size_t exist_bytes = 0, absent_bytes = 0, max_bytes = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto* set : {&present, &absent}) {
      const auto t0 = Clock::now();
      for (const std::string& k : *set) {
        store::KeyProof kp;
        if (!s->Prove(s->version(), k, &kp).ok()) return 1;
        if (pass == 1) {
          const std::size_t n = app::EncodeCommitmentProof(k, kp).size();  // as Query does
          (set == &present ? exist_bytes : absent_bytes) += n;
          max_bytes = std::max(max_bytes, n);
        }
      }
      const double took = Seconds(Clock::now() - t0);
      if (pass == 0) (set == &present ? exist_first_s : absent_first_s) = took;
      if (pass == 1) (set == &present ? exist_s : absent_s) = took;
      if (pass == 1) MarkPhase(set == &present ? "proofs-exist-done" : "proofs-absent-done");
    }
  }
  // A proof at a past version first rebuilds that version's tree (replayed forward from the
  // newest checkpoint at or below it, or undone from the newest one): the first proof at the
  // oldest kept version, halfway, and one version back, in that order, each timed whole.
  const store::Version latest = s->version();
  const store::Version past_at[] = {s->earliest_version(), latest - a.keep / 2, latest - 1};
  double past_ms[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    store::KeyProof kp;
    const auto t0 = Clock::now();
    const Status p = s->Prove(past_at[i], present[static_cast<std::size_t>(i)], &kp);
    past_ms[i] = Seconds(Clock::now() - t0) * 1e3;
    if (!p.ok()) {
      std::fprintf(stderr, "proof at version %lld: %s\n", static_cast<long long>(past_at[i]),
                   p.ToString().c_str());
      return 1;
    }
  }
  MarkPhase("end");
  const std::uint64_t disk = DirBytes(o.dir);
  const double raw_per_key = 32 + 100;
  const auto tables = s->TableBytes();
  const std::string level_stats = s->DbProperty("leveldb.stats");
  rusage usage{};  // the run's peak, before the reopen's second store adds its own
  getrusage(RUSAGE_SELF, &usage);
  // A restart: close, then open as a node does (without the checksum read of every table),
  // replaying the changesets above the newest durable checkpoint.
  s.reset();
  const auto reopen_t0 = Clock::now();
  auto reopened = store::MerkleStore::Open(o);
  if (!reopened.ok()) {
    std::fprintf(stderr, "reopen: %s\n", reopened.status().ToString().c_str());
    return 1;
  }
  const double reopen_s = Seconds(Clock::now() - reopen_t0);
  s = std::move(*reopened);
  std::uint64_t disk_compacted = 0;
  std::vector<std::pair<char, std::uint64_t>> tables_compacted;
  double compact_s = 0;
  if (a.compact) {
    const auto t0 = Clock::now();
    s->CompactAll();
    compact_s = Seconds(Clock::now() - t0);
    disk_compacted = DirBytes(o.dir);
    tables_compacted = s->TableBytes();
  }

  if (a.trace) {
    std::printf("\nper block: version, phase, block ms = stage (of which pruning) + commit (of "
                "which synced write, then the wait for the memory update beside it), records "
                "pruning deletes, checkpoint pages written, batch MB, level-0 files and memtable "
                "MB before the block, directory bytes per key / raw after it, tree pages the "
                "stage read from disk, pages in the page cache after the commit\n");
    std::printf("%5s %-6s %8s %8s %8s %8s %8s %8s %9s %7s %7s %4s %7s %7s %7s %8s\n", "ver",
                "phase", "block", "stage", "prune", "commit", "write", "memory", "deletes",
                "pages", "MB", "L0", "memMB", "disk", "reads", "cached");
    for (const std::string& line : trace) std::printf("%s\n", line.c_str());
    std::printf("\nleveldb.stats at the end of the run:\n%s\n", level_stats.c_str());
  }

  std::printf("\n%-52s %14s %14s %10s\n", "measure", "kairos", "leveldb floor", "goal");
  std::printf("%-52s %14.0f %14.0f %10s\n", "load: updates/s (root + synced commit per block)",
              load.rate(), floor_load.rate(), "");
  std::printf("%-52s %14.0f %14.0f %10s\n", "steady: updates/s (root + synced commit per block)",
              steady.rate(), floor_steady.rate(), ">= 30000");
  std::printf("%-52s %14.2f %14s %10s\n", "steady: slowdown against the floor", 
              floor_steady.rate() / std::max(1.0, steady.rate()), "1.00", "<= 3");
  std::printf("%-52s %14.0f %14.0f %10s\n", "steady: updates per process CPU second",
              steady.cpu_rate(), floor_steady.cpu_rate(), "");
  std::printf("%-52s %14.2f %14s %10s\n", "steady: slowdown against the floor, by CPU",
              floor_steady.cpu_rate() / std::max(1.0, steady.cpu_rate()), "1.00", "");
  std::printf("%-52s %14.1f %14.1f %10s\n", "block latency p50 ms (stage + commit)",
              Percentile(steady.block_ms, 0.5), Percentile(floor_steady.block_ms, 0.5), "");
  std::printf("%-52s %14.1f %14.1f %10s\n", "block latency p99 ms (stage + commit)",
              Percentile(steady.block_ms, 0.99), Percentile(floor_steady.block_ms, 0.99), "<= 120");
  std::printf("%-52s %14.1f %14s %10s\n", "  of which stage (root) p50 ms", Percentile(stage_ms, 0.5), "", "");
  std::printf("%-52s %14.1f %14s %10s\n", "  of which synced commit p50 ms", Percentile(commit_ms, 0.5), "", "");
  std::printf("%-52s %14.1f %14s %10s\n", "  stage p99 ms", Percentile(stage_ms, 0.99), "", "");
  std::printf("%-52s %14.1f %14s %10s\n", "  synced commit p99 ms", Percentile(commit_ms, 0.99), "", "");
  std::printf("%-52s %14.0f %14s %10s\n", "steady: tree pages read from disk per block",
              static_cast<double>(steady_page_reads) / std::max<std::size_t>(1, stage_ms.size()),
              "", "");
  std::printf("%-52s %14zu %14s %10s\n", "pages in the page cache at the end", cached_pages, "",
              "");
  std::printf("%-52s %14.0f %14s %10s\n", "  their mean size, bytes (without map overhead)",
              static_cast<double>(cached_page_bytes) / std::max<std::size_t>(1, cached_pages), "",
              "");
  std::printf("%-52s %14.0f %14s %10s\n", "existence proofs/s (warm)", a.proofs / exist_s, "", ">= 50000");
  std::printf("%-52s %14.0f %14s %10s\n", "absence proofs/s (warm)", a.proofs / absent_s, "", ">= 50000");
  std::printf("%-52s %14.0f %14s %10s\n", "  existence proofs/s, first pass",
              a.proofs / exist_first_s, "", "");
  std::printf("%-52s %14.0f %14s %10s\n", "  absence proofs/s, first pass",
              a.proofs / absent_first_s, "", "");
  std::printf("%-52s %14.0f %14s %10s\n", "existence proof bytes (mean)",
              static_cast<double>(exist_bytes) / a.proofs, "", "<= 1200");
  std::printf("%-52s %14.0f %14s %10s\n", "absence proof bytes (mean)",
              static_cast<double>(absent_bytes) / a.proofs, "", "");
  std::printf("%-52s %14zu %14s %10s\n", "largest proof bytes", max_bytes, "", "");
  std::printf("first proof at a past version (its rebuild), ms: oldest kept (latest - %lld) %.0f, "
              "latest - %lld %.0f, latest - 1 %.0f\n",
              static_cast<long long>(latest - past_at[0]), past_ms[0],
              static_cast<long long>(a.keep / 2), past_ms[1], past_ms[2]);
  std::printf("%-52s %14.1f %14.1f %10s\n", "steady pruning blocks p50 / max ms",
              Percentile(prune_block_ms, 0.5), Percentile(prune_block_ms, 1.0), "");
  std::printf("%-52s %14.1f %14.1f %10s\n", "steady other blocks p50 / max ms",
              Percentile(other_block_ms, 0.5), Percentile(other_block_ms, 1.0), "");
  std::printf("%-52s %14.2f %14s %10s\n", "disk bytes per live key / raw (32+100)",
              static_cast<double>(disk) / a.keys / raw_per_key, "", "<= 3");
  // LevelDB's per-table estimate, per live key over raw, as the files are and after a full
  // compaction (what is live).
  const auto table_row = [&](const char* what,
                             const std::vector<std::pair<char, std::uint64_t>>& t) {
    std::printf("  %s:", what);
    std::uint64_t sum = 0;
    for (const auto& [prefix, bytes] : t) {
      std::printf(" %c %.2f", prefix, static_cast<double>(bytes) / a.keys / raw_per_key);
      sum += bytes;
    }
    std::printf(" (sum %.2f)\n", static_cast<double>(sum) / a.keys / raw_per_key);
  };
  table_row("per table at the end", tables);
  if (a.compact) {
    std::printf("%-52s %14.2f %14s %10s\n", "disk per live key / raw after a full compaction",
                static_cast<double>(disk_compacted) / a.keys / raw_per_key, "", "");
    table_row("per table after it", tables_compacted);
    std::printf("  (the full compaction took %.1f s)\n", compact_s);
  }
  std::printf("%-52s %14.1f %14s %10s\n", "reopen after the run, s", reopen_s, "", "");
  std::printf("  (%lld versions replayed from the last durable checkpoint; at most about\n"
              "   twice the checkpoint interval)\n",
              static_cast<long long>(s->replayed_at_open()));
  std::printf("%-52s %14.0f %14s %10s\n", "peak resident memory, MB (run, before the reopen)",
              usage.ru_maxrss / 1024.0, "", "");
  std::printf("%-52s %14.0f %14s %10s\n", "  of which the workload, built before the store",
              before_store.ru_maxrss / 1024.0, "", "");
  s.reset();
  fs::remove_all(a.dir);
  return 0;
}
