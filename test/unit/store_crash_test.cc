// Crash safety of MerkleStore: a child process commits blocks and is SIGKILLed at random
// instants (KAIROS_CRASH_ITERATIONS times, 200 by default; scripts/crash-soak.sh runs more).
// After every kill the store must reopen at a whole version whose values are exactly the
// workload's state at that version, whose root matches a recompute from those values, and
// which answers queries and proofs; whose oldest kept version is the one pruning reaches at
// that version whatever the kills before; and which holds nothing that pruning up to there
// should have deleted (kills inside a pruning commit neither lose nor repeat its work).
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "store_crash_workload.h"
#include "store_prune_check.h"
#include "smt_reference.h"
#include "temp_dir.h"

extern char** environ;

using namespace kairos::store;

namespace {

pid_t SpawnChild(const std::string& dir) {
  pid_t pid = 0;
  std::string program = KAIROS_STORE_CRASH_CHILD;
  char* argv[] = {program.data(), const_cast<char*>(dir.c_str()), nullptr};
  REQUIRE(posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ) == 0);
  return pid;
}

}  // namespace

TEST_CASE("the store survives SIGKILL at any instant", "[store][crash]") {
  kairos::test::TempDir dir;
  const char* env = std::getenv("KAIROS_CRASH_ITERATIONS");
  const int iterations = env != nullptr ? std::atoi(env) : 200;
  std::mt19937 rng(std::random_device{}());
  Version last = 0;
  int advanced = 0;
  // Kill after 0-40 ms: during open (replaying changesets), staging, the synced write (with a
  // share of a checkpoint's pages), pruning or compaction. On a loaded machine a child may need
  // longer than that to start and commit once: after 10 kills in a row without progress the
  // window doubles (up to 5 s), so the kills still land at random instants of a committing run.
  std::uint32_t window_us = 40000;
  int stuck = 0;
  for (int i = 0; i < iterations; ++i) {
    const pid_t child = SpawnChild(dir.path());
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % window_us));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    INFO("iteration " << i);
    REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

    const StoreOptions options = crash::CrashStoreOptions(dir.path());
    auto opened = MerkleStore::Open(options);
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    MerkleStore& store = **opened;
    const Version v = store.version();
    REQUIRE(v >= last);  // never goes back
    if (v > last) {
      ++advanced;
      stuck = 0;
    } else if (++stuck == 10 && window_us < 5000000) {
      window_us *= 2;
      stuck = 0;
    }
    last = v;

    // Exactly the state of version v, and the root recomputed from it.
    const auto want = crash::StateAt(v);
    std::vector<std::pair<Hash, Hash>> leaves;
    auto it = store.Iterate("", "");
    for (auto w = want.begin(); w != want.end(); ++w, it->Next()) {
      REQUIRE(it->Valid());
      REQUIRE(it->key() == w->first);
      REQUIRE(it->value() == w->second);
      leaves.emplace_back(Sha256Of(w->first), Sha256Of(w->second));
    }
    REQUIRE_FALSE(it->Valid());
    REQUIRE(it->status().ok());
    it.reset();  // before the store closes
    REQUIRE(store.root_hash() == kairos::test::ReferenceRoot(leaves));
    if (v == 0) continue;
    // Queries and proofs work, at the latest and the earliest kept version, and one between
    // (often rebuilt from a checkpoint).
    for (const Version at : {v, store.earliest_version(), (v + store.earliest_version()) / 2}) {
      std::string value;
      REQUIRE(store.GetAt(at, "counter", &value).ok());
      REQUIRE(value == std::to_string(at));
      KeyProof proof;
      REQUIRE(store.Prove(at, "counter", &proof).ok());
      REQUIRE(proof.exist);
    }
    // Pruning: the window's start depends only on the version reached, and nothing below it
    // that pruning deletes is left.
    Version earliest = 1;
    for (Version at = 2; at <= v; ++at) {
      earliest = kairos::test::ExpectedEarliest(at, earliest, options);
    }
    REQUIRE(store.earliest_version() == earliest);
    opened->reset();
    kairos::test::CheckNothingPrunableLeft(options, earliest);
  }
  WARN("crash test: " << iterations << " kills, store reached version " << last << ", advanced "
                      << advanced << " times, last kill window " << window_us / 1000 << " ms");
  CHECK(advanced > 0);  // the child did commit between kills
}
