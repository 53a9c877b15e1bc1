// snapshot_bench: state sync snapshots of a MerkleStore (issue 24). A benchmark, not a test: it
// prints figures, each beside its baseline measured in the same run.
//
//   snapshot_bench [--keys 1000000] [--block 10000] [--blocks 50] [--warmup 50] [--interval-ms 500]
//                  [--chunk-mb 10] [--gate 0|1] [--dir DIR]
//   (--blocks 0: no blocks, the snapshot alone, then the restore; --hold-ms N: instead of a
//   snapshot, hold the view N ms and write nothing, to see what holding a view alone costs;
//   --alternate N --cycles C: phases of N blocks with and without snapshots, interleaved, in
//   place of 1. and 2. below; --walk-past N: only time walks of a version N below the latest)
//
// The store bench's workload: random 32-byte keys, 100-byte values. After the load (every key
// written once, in blocks of 100k), it measures:
//  1. block latency (Stage + Commit of --block updates) over --blocks blocks with no snapshot,
//     after --warmup blocks not measured, and again after the snapshots (blocks get slower as
//     the store grows, so the baseline brackets the blocks beside snapshots and is both
//     halves): the baseline; a block begins every --interval-ms (a chain's block interval:
//     the node is idle in between, as a node is while consensus runs), or at once when the
//     last took longer;
//  2. a snapshot of the latest version written to files (app::SnapshotFiles::Write, on a thread
//     at nice +19 as kairosd's writer; with --gate 1, the default, each block closes an
//     app::BlockGate as kairosd's executor does, so the writer waits while a block runs) while
//     the same number of blocks run (more if the snapshot is not done by then; and when it is
//     done first, snapshots of the latest version follow, one after the other, so that every
//     block measured runs beside a snapshot write): the first snapshot's time, size on disk
//     against the raw key and value bytes, the tree rebuilds, and the blocks' latency;
//  3. the restore of that snapshot from its files into an empty store, in a fresh process (so
//     its peak memory is its own): every chunk's hash and proof checked, the tree built, the
//     wall time, keys per second and peak memory (VmHWM: a spawned process's getrusage maxrss
//     starts from its parent's). Twice (--restore-mode both): first the baseline, one thread
//     that checks a chunk and then writes it, with the time of the chunks and of the tree
//     apart; then app::RestoreSnapshot, which checks the next chunk while a RestoreWriter
//     writes the last.
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app/block_gate.h"
#include "app/state_sync.h"
#include "store/merkle_store.h"
#include "store/snapshot_writer.h"

extern char** environ;

using namespace kairos;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

struct Args {
  std::int64_t keys = 1'000'000;
  std::int64_t block = 10'000;
  // Blocks measured in each phase, and blocks run before the baseline: both default to the
  // store's checkpoint interval, so that each phase spans one whole checkpoint cycle (one block
  // that begins a checkpoint, the others each writing a share of its pages) and the first
  // checkpoint after the load, which writes every page of the tree, is behind both.
  std::int64_t blocks = 50;
  std::int64_t warmup = 50;
  std::int64_t chunk_mb = 10;
  std::int64_t interval_ms = 500;
  bool gate = true;  // blocks close an app::BlockGate, as kairosd's executor does
  std::int64_t hold_ms = 0;  // > 0: the experiment "hold the view this long, write nothing"
  // The experiment "no chunk files": every snapshot is made (walked, proven, compressed, the
  // writer gated as usual) but its chunks are dropped, not written and synced; no restore.
  bool null_sink = false;
  std::string dir;
  std::string restore_from;  // internal: the restore phase, in its own process
  std::int64_t restore_height = 0;
  // The restores run: "serial" (the baseline: each chunk checked, then written, one thread),
  // "pipelined" (app::RestoreSnapshot, what kairosd ships), or "both", each in its own process.
  std::string restore_mode = "both";
  // > 0: the alternating layout instead. --cycles cycles, each one phase of --alternate blocks
  // with no snapshot and one with snapshots written one after another (the first of each phase
  // from that phase's first block, the last cancelled at its end), in the order off-on, then
  // on-off (so that drift, and the block that begins a checkpoint, fall on both sides alike).
  // With --hold-ms (any value > 0), the phases "with" hold a view and write nothing.
  std::int64_t alternate = 0;
  std::int64_t cycles = 10;
  // > 0: after the warm-up, only walk (no snapshot) the version this many below the latest,
  // rebuilt from a checkpoint with its replaced pages read from LevelDB, and time it.
  std::int64_t walk_past = 0;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--keys") a.keys = std::atoll(v);
    else if (k == "--block") a.block = std::atoll(v);
    else if (k == "--blocks") a.blocks = std::atoll(v);
    else if (k == "--warmup") a.warmup = std::atoll(v);
    else if (k == "--chunk-mb") a.chunk_mb = std::atoll(v);
    else if (k == "--interval-ms") a.interval_ms = std::atoll(v);
    else if (k == "--gate") a.gate = std::atoll(v) != 0;
    else if (k == "--hold-ms") a.hold_ms = std::atoll(v);
    else if (k == "--null-sink") a.null_sink = std::atoll(v) != 0;
    else if (k == "--dir") a.dir = v;
    else if (k == "--restore-from") a.restore_from = v;
    else if (k == "--restore-height") a.restore_height = std::atoll(v);
    else if (k == "--restore-mode") a.restore_mode = v;
    else if (k == "--alternate") a.alternate = std::atoll(v);
    else if (k == "--cycles") a.cycles = std::atoll(v);
    else if (k == "--walk-past") a.walk_past = std::atoll(v);
    else {
      std::fprintf(stderr,
                   "usage: snapshot_bench [--keys N] [--block N] [--blocks N] [--warmup N] "
                   "[--interval-ms N] [--chunk-mb N] [--gate 0|1] [--hold-ms N] "
                   "[--null-sink 0|1] [--restore-mode serial|pipelined|both] "
                   "[--alternate N --cycles N] [--walk-past N] [--dir DIR]\n");
      std::exit(2);
    }
  }
  if (a.dir.empty()) a.dir = (fs::temp_directory_path() / "kairos-snapshot-bench").string();
  return a;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

std::uint64_t DirBytes(const std::string& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

store::StoreOptions Options(const std::string& dir) {
  store::StoreOptions o;
  o.dir = dir;
  return o;
}

void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

std::string RandomBytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t r = rng();
    std::memcpy(s.data() + i, &r, std::min<std::size_t>(8, n - i));
  }
  return s;
}

// LevelDB's compactions so far, from its "leveldb.stats" (a table with a row per level: level,
// files, size MB, time s, read MB, written MB): the seconds and MB read and written, summed.
struct Compactions {
  double secs = 0, read_mb = 0, write_mb = 0;
};
Compactions CompactionsOf(const std::string& stats) {
  Compactions c;
  std::size_t at = 0;
  while (at < stats.size()) {
    std::size_t end = stats.find('\n', at);
    if (end == std::string::npos) end = stats.size();
    int level = 0, files = 0;
    double size = 0, secs = 0, read = 0, write = 0;
    if (std::sscanf(stats.substr(at, end - at).c_str(), "%d %d %lf %lf %lf %lf", &level, &files,
                    &size, &secs, &read, &write) == 6) {
      c.secs += secs;
      c.read_mb += read;
      c.write_mb += write;
    }
    at = end + 1;
  }
  return c;
}

// This process's peak resident memory (VmHWM), in MB.
double PeakMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return 0;
}

// The restore phase (its own process): prints one line the parent passes on.
int RunRestore(const Args& a) {
  app::SnapshotFiles files(a.restore_from);
  if (Status s = files.Init(); !s.ok()) Die("snapshot files", s);
  const auto list = files.List();
  if (list.empty()) Die("restore", Status::NotFound("no snapshot in " + a.restore_from));
  store::SnapshotManifest m;
  if (Status s = store::SnapshotManifest::Decode(list[0].metadata, &m); !s.ok()) Die("manifest", s);
  const std::string target = a.dir + "/restored";
  fs::remove_all(target);
  auto db = store::MerkleStore::Open(Options(target));
  if (!db.ok()) Die("open", db.status());
  const auto load = [&](std::uint32_t i) {
    return files.LoadChunk(list[0].height, store::kSnapshotFormat, i);
  };
  const auto t0 = Clock::now();
  std::string phases;
  if (a.restore_mode == "serial") {
    // The baseline: what RestoreSnapshot did before its RestoreWriter, on this thread alone.
    store::MerkleStore& s = **db;
    if (Status st = s.BeginRestore(m.version, m.root, m.commit_info); !st.ok()) Die("begin", st);
    if (Status st = app::VerifySnapshotChunks(
            m, load, [&](std::unique_ptr<store::VerifiedChunk> c) {
              return s.RestoreLeaves(c->leaves);
            });
        !st.ok()) {
      Die("restore", st);
    }
    const auto t1 = Clock::now();
    if (Status st = s.FinishRestore(); !st.ok()) Die("finish", st);
    char buf[96];
    std::snprintf(buf, sizeof buf, " (chunks checked and written %.1f s, tree %.1f s)",
                  Seconds(t1 - t0), Seconds(Clock::now() - t1));
    phases = buf;
  } else if (Status st = app::RestoreSnapshot(db->get(), m, load); !st.ok()) {
    Die("restore", st);
  }
  const double secs = Seconds(Clock::now() - t0);
  if ((*db)->root_hash() != m.root) Die("restore", Status::Corruption("root differs"));
  std::printf("restore, %s: %llu keys in %.1f s = %.0f keys/s%s, peak memory %.0f MB, store on "
              "disk %.0f MB\n",
              a.restore_mode.c_str(), static_cast<unsigned long long>(m.leaves), secs,
              m.leaves / secs, phases.c_str(), PeakMb(), DirBytes(target) / 1048576.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  if (!a.restore_from.empty()) return RunRestore(a);
  fs::remove_all(a.dir);
  fs::create_directories(a.dir);
  auto opened = store::MerkleStore::Open(Options(a.dir + "/source"));
  if (!opened.ok()) Die("open", opened.status());
  store::MerkleStore& db = **opened;
  std::mt19937_64 rng(42);
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(a.keys));
  store::Version v = 0;
  const auto load_start = Clock::now();
  for (std::int64_t done = 0; done < a.keys;) {
    store::ChangeSet c;
    for (std::int64_t i = 0; i < 100'000 && done < a.keys; ++i, ++done) {
      keys.push_back(RandomBytes(rng, 32));
      c[keys.back()] = RandomBytes(rng, 100);
    }
    if (auto r = db.Stage(++v, c); !r.ok()) Die("stage", r.status());
    if (Status s = db.Commit(); !s.ok()) Die("commit", s);
  }
  std::printf("load: %lld keys in %.1f s\n", static_cast<long long>(a.keys),
              Seconds(Clock::now() - load_start));

  app::BlockGate gate;
  // Where a block's time goes: Stage (the tree update), Commit, and Commit's synced LevelDB
  // write and in-memory update (MerkleStore::BlockStats), in ms.
  struct Phases {
    std::vector<double> stage, commit, write, memory;
  };
  Phases base_phases, during_phases;
  const auto run_blocks = [&](std::int64_t n, const std::atomic<bool>* until_done,
                              Phases* phases) {
    std::vector<double> ms;
    for (std::int64_t b = 0; b < n || (until_done != nullptr && !*until_done); ++b) {
      store::ChangeSet c;
      for (std::int64_t i = 0; i < a.block; ++i) {
        c[keys[rng() % keys.size()]] = RandomBytes(rng, 100);
      }
      const auto t0 = Clock::now();
      if (a.gate) gate.Close();
      if (auto r = db.Stage(++v, c); !r.ok()) Die("stage", r.status());
      const auto t1 = Clock::now();
      if (Status s = db.Commit(); !s.ok()) Die("commit", s);
      if (a.gate) gate.Open();
      const auto t2 = Clock::now();
      ms.push_back(Seconds(t2 - t0) * 1000);
      if (phases != nullptr) {
        phases->stage.push_back(Seconds(t1 - t0) * 1000);
        phases->commit.push_back(Seconds(t2 - t1) * 1000);
        phases->write.push_back(db.last_block().write_ms);
        phases->memory.push_back(db.last_block().memory_ms);
      }
      std::this_thread::sleep_until(t0 + std::chrono::milliseconds(a.interval_ms));
    }
    return ms;
  };
  if (a.blocks > 0 && a.warmup > 0) {
    const std::vector<double> warm = run_blocks(a.warmup, nullptr, nullptr);
    std::printf("warm-up: %zu blocks, p50 %.1f ms, p99 %.1f ms (not compared)\n", warm.size(),
                Percentile(warm, 0.5), Percentile(warm, 0.99));
  }
  if (a.walk_past > 0) {
    for (int round = 0; round < 3; ++round) {
      auto past = db.View(v - a.walk_past);
      if (!past.ok()) Die("view", past.status());
      const auto before = db.view_stats();
      std::uint64_t leaves = 0;
      const auto t0 = Clock::now();
      const Status w = (*past)->ForEachLeaf([&](const store::StoreLeaf&) {
        ++leaves;
        return Status::OK();
      });
      if (!w.ok()) Die("walk", w);
      const auto after = db.view_stats();
      std::printf("walk of version %lld (latest %lld): %llu leaves in %.2f s, %llu rebuilds, %llu "
                  "tree pages read from LevelDB\n",
                  static_cast<long long>(v - a.walk_past), static_cast<long long>(v),
                  static_cast<unsigned long long>(leaves), Seconds(Clock::now() - t0),
                  static_cast<unsigned long long>(after.rebuilds - before.rebuilds),
                  static_cast<unsigned long long>(after.disk_page_reads -
                                                  before.disk_page_reads));
      std::fflush(stdout);
      run_blocks(1, nullptr, nullptr);  // a new version: the rebuild cache may not serve it
    }
    return 0;
  }
  // The snapshot, written as kairosd's writer does, while blocks go on.
  const std::string snap_dir = a.dir + "/snapshots";
  app::SnapshotFiles files(snap_dir);
  if (Status s = files.Init(); !s.ok()) Die("snapshot files", s);
  // One snapshot of `v`: to files (their height), or with --null-sink made and dropped (0).
  const auto write = [&](const store::StoreView& v,
                         const std::atomic<bool>* cancel) -> Result<std::uint64_t> {
    const std::size_t bytes = static_cast<std::size_t>(a.chunk_mb) << 20;
    if (!a.null_sink) {
      auto w = files.Write(v, bytes, cancel, a.gate ? &gate : nullptr);
      if (!w.ok()) return w.status();
      return w->height;
    }
    store::SnapshotManifest manifest;
    app::GateWaiter waiter(a.gate ? &gate : nullptr, app::kSnapshotMaxWaitShare);
    const Status s = store::WriteSnapshot(
        v, bytes, [](std::uint32_t, std::string_view) { return Status::OK(); }, &manifest,
        [&]() -> Status {
          waiter.Wait(cancel);
          if (cancel != nullptr && *cancel) return Status::IOError("cancelled");
          return Status::OK();
        });
    if (!s.ok()) return s;
    return std::uint64_t{0};
  };
  // Snapshots of the latest version, one after another until `stop`, which cancels the last
  // (not counted); each is deleted once written. An error other than the cancel goes to
  // *status and ends them.
  const auto write_until = [&](const std::atomic<bool>& stop, int* count, Status* status) {
    while (status->ok() && !stop) {
      auto view = db.View();
      if (!view.ok()) {
        *status = view.status();
        return;
      }
      auto w = write(**view, &stop);
      if (!w.ok()) {
        if (!stop) *status = w.status();
        return;
      }
      ++*count;
      if (a.null_sink) continue;
      if (Status d = files.Delete(*w); !d.ok()) *status = d;
    }
  };
  // The blocks without a snapshot against those beside one: latency, where it goes, and the
  // slowest blocks.
  const auto report = [&](const std::vector<double>& base, const std::vector<double>& during) {
    const double base_p99 = Percentile(base, 0.99);
    std::printf("blocks of %lld updates, without a snapshot: %zu blocks, p50 %.1f ms, p99 %.1f "
                "ms\n",
                static_cast<long long>(a.block), base.size(), Percentile(base, 0.5), base_p99);
    std::printf("blocks of %lld updates, while a snapshot is written: %zu blocks, p50 %.1f ms, "
                "p99 %.1f ms (p99 %+.0f%%)\n",
                static_cast<long long>(a.block), during.size(), Percentile(during, 0.5),
                Percentile(during, 0.99), 100.0 * (Percentile(during, 0.99) / base_p99 - 1));
    // How many blocks the snapshot slowed past the baseline's p99, and the slowest five: one
    // outlier (the version's one rebuild) reads differently from many (every chunk's write).
    std::vector<std::pair<double, std::size_t>> by_ms;
    for (std::size_t i = 0; i < during.size(); ++i) by_ms.emplace_back(during[i], i);
    std::sort(by_ms.rbegin(), by_ms.rend());
    std::string slowest;
    for (std::size_t i = 0; i < std::min<std::size_t>(5, by_ms.size()); ++i) {
      // (Appended piece by piece: `" " + std::to_string(...)` trips GCC 12's -Wrestrict.)
      slowest.append(" ").append(std::to_string(static_cast<int>(by_ms[i].first)));
      slowest.append(" ms (block ").append(std::to_string(by_ms[i].second)).append(")");
    }
    const auto phase = [&](const char* name, const std::vector<double>& b,
                           const std::vector<double>& d) {
      std::printf("  %-7s p50 %6.1f ms -> %6.1f ms, p99 %6.1f ms -> %6.1f ms\n", name,
                  Percentile(b, 0.5), Percentile(d, 0.5), Percentile(b, 0.99),
                  Percentile(d, 0.99));
    };
    std::printf("where the time goes, without -> while a snapshot is written:\n");
    phase("stage", base_phases.stage, during_phases.stage);
    phase("commit", base_phases.commit, during_phases.commit);
    phase(" write", base_phases.write, during_phases.write);
    phase(" memory", base_phases.memory, during_phases.memory);
    std::printf("blocks slower than the baseline's p99 while a snapshot is written: %zd of %zu; "
                "slowest:%s\n",
                std::count_if(during.begin(), during.end(),
                              [&](double x) { return x > base_p99; }),
                during.size(), slowest.c_str());
  };
  if (a.alternate > 0) {
    // The alternating layout: no baseline before and after, but short phases with and without
    // snapshots, interleaved, so that the store's growth over the run is on both sides.
    std::vector<double> base, during;
    Compactions off_compactions, on_compactions;  // LevelDB's, in the phases without and with
    int snapshots = 0;
    Status snap_status;
    for (std::int64_t c = 0; c < a.cycles && snap_status.ok(); ++c) {
      for (int half = 0; half < 2; ++half) {
        const bool on = (half == 0) == (c % 2 == 1);
        const Compactions before = CompactionsOf(db.DbProperty("leveldb.stats"));
        const auto count = [&](Compactions* into) {
          const Compactions after = CompactionsOf(db.DbProperty("leveldb.stats"));
          into->secs += after.secs - before.secs;
          into->read_mb += after.read_mb - before.read_mb;
          into->write_mb += after.write_mb - before.write_mb;
        };
        if (!on) {
          const std::vector<double> ms = run_blocks(a.alternate, nullptr, &base_phases);
          base.insert(base.end(), ms.begin(), ms.end());
          count(&off_compactions);
          continue;
        }
        std::atomic<bool> stop{false};
        std::thread writer([&] {
          app::LowerToLowestPriority();
          if (a.hold_ms <= 0) {
            write_until(stop, &snapshots, &snap_status);
            return;
          }
          auto view = db.View();  // the view alone, held for the phase, nothing walked
          if (!view.ok()) {
            snap_status = view.status();
            return;
          }
          while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        });
        const std::vector<double> ms = run_blocks(a.alternate, nullptr, &during_phases);
        stop = true;
        writer.join();
        during.insert(during.end(), ms.begin(), ms.end());
        count(&on_compactions);
      }
      std::printf("cycle %lld (%s): without p50 %.1f ms, with p50 %.1f ms\n",
                  static_cast<long long>(c), c % 2 == 0 ? "off, on" : "on, off",
                  Percentile({base.end() - a.alternate, base.end()}, 0.5),
                  Percentile({during.end() - a.alternate, during.end()}, 0.5));
      std::fflush(stdout);
    }
    if (!snap_status.ok()) Die("snapshot", snap_status);
    std::printf("alternating: %lld cycles of %lld blocks without and %lld with; %d snapshots "
                "finished (writer %s%s), %llu tree rebuilds, %llu tree pages read from LevelDB\n",
                static_cast<long long>(a.cycles), static_cast<long long>(a.alternate),
                static_cast<long long>(a.alternate), snapshots,
                a.gate ? "waits while a block runs" : "runs beside blocks",
                a.null_sink ? ", chunks dropped" : "",
                static_cast<unsigned long long>(db.view_stats().rebuilds),
                static_cast<unsigned long long>(db.view_stats().disk_page_reads));
    report(base, during);
    std::printf("LevelDB compactions in the phases without snapshots: %.1f s, %.0f MB read, %.0f "
                "MB written; with: %.1f s, %.0f MB read, %.0f MB written\n",
                off_compactions.secs, off_compactions.read_mb, off_compactions.write_mb,
                on_compactions.secs, on_compactions.read_mb, on_compactions.write_mb);
    // The noise in these figures: each side split into the even cycles and the odd ones, two
    // samples of the same thing; a difference between them is chance (and the order in a cycle).
    const auto halves = [&](const std::vector<double>& all, const char* name) {
      std::vector<double> even, odd;
      for (std::size_t i = 0; i < all.size(); ++i) {
        ((i / static_cast<std::size_t>(a.alternate)) % 2 == 0 ? even : odd).push_back(all[i]);
      }
      std::printf("  %s: even cycles p50 %.1f ms p99 %.1f ms, odd cycles p50 %.1f ms p99 %.1f "
                  "ms\n",
                  name, Percentile(even, 0.5), Percentile(even, 0.99), Percentile(odd, 0.5),
                  Percentile(odd, 0.99));
    };
    std::printf("the same split in two (noise):\n");
    halves(base, "without");
    halves(during, "with   ");
    return 0;
  }
  // LevelDB's compactions (per level: time, MB read and written, since the open), before and
  // after each measured phase: what its background thread did beside the blocks.
  const std::string stats_before_base = db.DbProperty("leveldb.stats");
  std::vector<double> base = run_blocks(a.blocks, nullptr, &base_phases);
  const std::string stats_after_base = db.DbProperty("leveldb.stats");

  // With no blocks, nothing is written while the snapshot is: LevelDB's compactions then are
  // the ones its reads schedule (seek compactions), once those the load left have finished.
  const auto settle = [&] {
    Compactions last = CompactionsOf(db.DbProperty("leveldb.stats"));
    for (int quiet = 0, waited = 0; quiet < 5 && waited < 600; ++waited) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const Compactions now = CompactionsOf(db.DbProperty("leveldb.stats"));
      quiet = now.read_mb == last.read_mb && now.write_mb == last.write_mb ? quiet + 1 : 0;
      last = now;
    }
    return last;
  };
  const Compactions settled = a.blocks == 0 ? settle() : Compactions{};
  auto view = db.View();
  if (!view.ok()) Die("view", view.status());
  std::atomic<bool> done{false};         // the first snapshot (the one measured) is written
  std::atomic<bool> blocks_done{false};  // the blocks measured during snapshots have run
  double snap_secs = 0;
  int snapshots = 0;
  Status snap_status;
  std::thread writer([&] {
    app::LowerToLowestPriority();
    const auto t0 = Clock::now();
    if (a.hold_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
      snap_secs = Seconds(Clock::now() - t0);
      done = true;
      return;
    }
    auto w = write(**view, nullptr);
    snap_secs = Seconds(Clock::now() - t0);
    snapshots = 1;
    if (!w.ok()) snap_status = w.status();
    done = true;
    // So that every block measured runs while a snapshot is written: the next snapshots, of
    // the latest version each, until the blocks are done (each deleted when written; the last
    // one cancelled). The first stays, for the restore.
    write_until(blocks_done, &snapshots, &snap_status);
  });
  // --blocks 0: the snapshot alone (no block before or during it), e.g. to make a large
  // snapshot for the restore figures quickly. Otherwise --blocks blocks, and more until the
  // first snapshot is written, every one while a snapshot is written (the first, or one of
  // those after it).
  std::vector<double> during;
  if (a.blocks > 0) during = run_blocks(a.blocks, &done, &during_phases);
  blocks_done = true;
  const std::string stats_after_during = db.DbProperty("leveldb.stats");
  writer.join();
  std::printf("LevelDB compactions before the baseline:\n%s\nafter the baseline:\n%s\nafter the "
              "blocks beside snapshots:\n%s\n",
              stats_before_base.c_str(), stats_after_base.c_str(), stats_after_during.c_str());
  if (!snap_status.ok()) Die("snapshot", snap_status);
  if (a.blocks == 0) {
    const Compactions after = settle();
    std::printf("LevelDB compactions the snapshot's reads scheduled (no block ran): %.0f s, %.0f "
                "MB read, %.0f MB written; %llu tree pages read from LevelDB\n",
                after.secs - settled.secs, after.read_mb - settled.read_mb,
                after.write_mb - settled.write_mb,
                static_cast<unsigned long long>(db.view_stats().disk_page_reads));
  }
  view->reset();
  // Blocks get slower as the store grows (the warm-up's p50 below the baseline's): a second
  // baseline after the snapshots, so that the baseline brackets the blocks beside them, and
  // both halves together are what they are compared with.
  if (a.blocks > 0) {
    const std::vector<double> before = base;
    const std::vector<double> after = run_blocks(a.blocks, nullptr, &base_phases);
    std::printf("baseline before the snapshots: p50 %.1f ms, p99 %.1f ms; after them: p50 %.1f "
                "ms, p99 %.1f ms (the baseline below is both)\n",
                Percentile(before, 0.5), Percentile(before, 0.99), Percentile(after, 0.5),
                Percentile(after, 0.99));
    base.insert(base.end(), after.begin(), after.end());
  }
  if (a.hold_ms > 0) {
    std::printf("a view held %.1f s, nothing written\n", snap_secs);
    std::printf("blocks of %lld updates: without a view held, %zu blocks, p50 %.1f ms, p99 %.1f "
                "ms; while it is held, %zu blocks, p50 %.1f ms (%+.0f%%), p99 %.1f ms (%+.0f%%)\n",
                static_cast<long long>(a.block), base.size(), Percentile(base, 0.5),
                Percentile(base, 0.99), during.size(), Percentile(during, 0.5),
                100.0 * (Percentile(during, 0.5) / Percentile(base, 0.5) - 1),
                Percentile(during, 0.99),
                100.0 * (Percentile(during, 0.99) / Percentile(base, 0.99) - 1));
    return 0;
  }
  const auto list = files.List();
  store::SnapshotManifest m;
  if (a.null_sink) {
    std::printf("snapshot (writer %s, chunks dropped: no file written): the first in %.1f s; %d "
                "snapshots made while the blocks ran, %llu tree rebuilds in all\n",
                a.gate ? "waits while a block runs" : "runs beside blocks", snap_secs, snapshots,
                static_cast<unsigned long long>(db.view_stats().rebuilds));
  } else {
    if (Status s = store::SnapshotManifest::Decode(list.at(0).metadata, &m); !s.ok()) {
      Die("manifest", s);
    }
    std::printf("snapshot (writer %s): %llu keys, %u chunks in %.1f s; %.0f MB on disk for %.0f "
                "MB of keys and values (%.2fx); %d snapshots written while the blocks ran, %llu "
                "tree rebuilds in all\n",
                a.gate ? "waits while a block runs" : "runs beside blocks",
                static_cast<unsigned long long>(m.leaves), list[0].chunks, snap_secs,
                DirBytes(snap_dir) / 1048576.0, m.raw_bytes / 1048576.0,
                static_cast<double>(DirBytes(snap_dir)) / static_cast<double>(m.raw_bytes),
                snapshots, static_cast<unsigned long long>(db.view_stats().rebuilds));
  }
  if (a.blocks > 0) report(base, during);
  std::fflush(stdout);
  opened->reset();
  if (a.null_sink) return 0;

  // The restores, each in a process of its own: the serial baseline first.
  std::vector<std::string> modes;
  if (a.restore_mode == "both") {
    modes = {"serial", "pipelined"};
  } else {
    modes = {a.restore_mode};
  }
  std::string self = fs::read_symlink("/proc/self/exe").string();
  for (const std::string& mode : modes) {
    std::vector<std::string> args = {self, "--dir", a.dir, "--restore-from", snap_dir,
                                     "--restore-mode", mode};
    std::vector<char*> argv2;
    for (auto& s : args) argv2.push_back(s.data());
    argv2.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv2.data(), environ) != 0) {
      Die("spawn", Status::IOError("cannot start the restore"));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
