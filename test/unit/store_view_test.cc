// StoreView: reads and proofs of committed versions from other threads while the store commits
// (every answer checked against a model of each version), the recent versions' trees in memory
// (no rebuild), older ones rebuilt once and reused (alternating two heights rebuilds nothing
// more), views that outlive the pruning of their version, and what views may not do.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "smt_reference.h"
#include "store/merkle_store.h"
#include "store_crash_workload.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

StoreOptions Options(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  o.keep_recent = 20;
  o.prune_interval = 3;
  o.checkpoint_interval = 4;
  o.page_cache_pages = 64;
  o.recent_versions = 3;
  o.rebuild_cache = 2;
  return o;
}

// Version v: inserts, overwrites and deletes among 300 keys.
ChangeSet Block(Version v) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(v) * 104729);
  ChangeSet c;
  c["counter"] = std::to_string(v);
  for (int i = 0; i < 25; ++i) {
    const std::string key = "k" + std::to_string(rng() % 300);
    c[key] = rng() % 5 == 0 ? std::optional<std::string>()
                            : std::optional<std::string>("v" + std::to_string(v) + "-" +
                                                         std::to_string(i));
  }
  return c;
}

using State = std::map<std::string, std::string>;

Hash RootOf(const State& state) {
  std::vector<std::pair<Hash, Hash>> leaves;
  for (const auto& [k, v] : state) leaves.emplace_back(Sha256Of(k), Sha256Of(v));
  return kairos::test::ReferenceRoot(leaves);
}

// The state after every version 1..last.
std::vector<State> States(Version last) {
  std::vector<State> states(static_cast<std::size_t>(last) + 1);
  for (Version v = 1; v <= last; ++v) {
    states[v] = states[v - 1];
    for (const auto& [key, value] : Block(v)) {
      if (value) {
        states[v][key] = *value;
      } else {
        states[v].erase(key);
      }
    }
  }
  return states;
}

void Commit(MerkleStore& s, Version v) {
  auto root = s.Stage(v, Block(v));
  REQUIRE(root.ok());
  REQUIRE(s.Commit().ok());
}

// Checks a view's value and proof of `key` against the model of its version; "" when right.
std::string CheckKey(const StoreView& view, const State& state, const Hash& root,
                     const std::string& key) {
  const std::string at = " at version " + std::to_string(view.version()) + " key " + key;
  if (view.root_hash() != root) return "root differs" + at;
  std::string value;
  const Status got = view.Get(key, &value);
  KeyProof proof;
  const Status proved = view.Prove(key, &proof);
  if (!proved.ok()) return "proof failed: " + proved.ToString() + at;
  if (auto it = state.find(key); it != state.end()) {
    if (!got.ok() || value != it->second) return "value differs" + at;
    if (!proof.exist || proof.exist->value != it->second) return "no existence proof" + at;
    if (RootFromPath(proof.exist->path) != root) return "existence path misses the root" + at;
  } else {
    if (!got.IsNotFound()) return "present, expected absent" + at;
    if (proof.exist) return "existence proof of an absent key" + at;
    for (const auto* side : {&proof.left, &proof.right}) {
      if (*side && (state.at((*side)->key) != (*side)->value ||
                    RootFromPath((*side)->path) != root)) {
        return "bad neighbour" + at;
      }
    }
  }
  return "";
}

}  // namespace

TEST_CASE("views read and prove kept versions on other threads while the store commits",
          "[store][view]") {
  constexpr Version kLast = 90;
  const std::vector<State> states = States(kLast);
  std::vector<Hash> roots;
  for (const State& s : states) roots.push_back(RootOf(s));
  TempDir d;
  auto store = OpenStore(Options(d.path()));
  Commit(*store, 1);

  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> checked{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  const auto reader = [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (!done.load()) {
      // A kept version: the latest, a recent one, or an older one that needs a rebuild.
      auto latest = store->View(0);
      if (!latest.ok()) {
        std::lock_guard lock(errors_mu);
        errors.push_back("latest view: " + latest.status().ToString());
        return;
      }
      const Version top = (*latest)->version();
      const Version back = static_cast<Version>(rng() % 20);
      auto view = top - back >= 1 ? store->View(top - back) : latest;
      if (!view.ok()) continue;  // pruned between the two calls: a right answer
      const Version v = (*view)->version();
      for (int i = 0; i < 6; ++i) {
        const std::string key = "k" + std::to_string(rng() % 300);
        if (std::string e = CheckKey(**view, states[v], roots[v], key); !e.empty()) {
          std::lock_guard lock(errors_mu);
          errors.push_back(e);
          return;
        }
        checked.fetch_add(1);
      }
    }
  };
  const auto failed = [&] {
    std::lock_guard lock(errors_mu);
    return !errors.empty();
  };
  std::thread a(reader, 1), b(reader, 2);
  for (Version v = 2; v <= kLast; ++v) {
    Commit(*store, v);
    // Let the readers check a few keys between commits, so views of every age are made and
    // some commits land in the middle of a read (the wait is bounded only as a guard).
    const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (checked.load() < static_cast<std::uint64_t>(v) * 8 && !failed() &&
           std::chrono::steady_clock::now() < guard) {
      std::this_thread::yield();
    }
  }
  done = true;
  a.join();
  b.join();
  INFO((errors.empty() ? std::string() : errors.front()));
  CHECK(errors.empty());
  CHECK(checked.load() > 500);
  CHECK(store->view_stats().rebuilds > 0);  // the older versions were rebuilt
}

TEST_CASE("recent versions are proved from memory; older ones are rebuilt once and reused",
          "[store][view]") {
  const std::vector<State> states = States(40);
  TempDir d;
  auto store = OpenStore(Options(d.path()));  // recent_versions 3, rebuild_cache 2
  for (Version v = 1; v <= 40; ++v) Commit(*store, v);
  const auto check = [&](Version v) {
    auto view = store->View(v);
    REQUIRE(view.ok());
    for (const std::string key : {"counter", "k7", "k150", "k299"}) {
      const std::string e = CheckKey(**view, states[v], RootOf(states[v]), key);
      INFO(e);
      REQUIRE(e.empty());
    }
  };
  // The latest and the three before it: no rebuild at all.
  for (Version v = 37; v <= 40; ++v) check(v);
  CHECK(store->view_stats().rebuilds == 0);
  CHECK(store->view_stats().rebuild_steps == 0);
  // Two older heights, alternated: each is rebuilt once, then served from the cache.
  check(25);
  check(30);
  const MerkleStore::ViewStats first = store->view_stats();
  CHECK(first.rebuilds >= 1);
  CHECK(first.rebuilds <= 2);
  for (int i = 0; i < 10; ++i) {
    check(25);
    check(30);
  }
  CHECK(store->view_stats().rebuilds == first.rebuilds);
  CHECK(store->view_stats().rebuild_steps == first.rebuild_steps);
  // A third height between them moves a cached rebuild (it is not made anew when one with the
  // same base can reach it).
  check(28);
  CHECK(store->view_stats().rebuilds == first.rebuilds);
}

TEST_CASE("a view answers for its version after later commits pruned it", "[store][view]") {
  const std::vector<State> states = States(80);
  TempDir d;
  auto store = OpenStore(Options(d.path()));  // keeps 20 versions
  for (Version v = 1; v <= 40; ++v) Commit(*store, v);
  const Version old = store->earliest_version();
  auto view = store->View(old);
  REQUIRE(view.ok());
  for (Version v = 41; v <= 80; ++v) Commit(*store, v);
  REQUIRE(store->earliest_version() > old);
  // A new view of it is refused, the old one still answers from its snapshot.
  auto again = store->View(old);
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.status().message(), Catch::Contains("not kept"));
  for (const std::string key : {"counter", "k1", "k100", "k250"}) {
    const std::string e = CheckKey(**view, states[old], RootOf(states[old]), key);
    INFO(e);
    CHECK(e.empty());
  }
}

TEST_CASE("views refuse what they cannot answer, with the reason", "[store][view]") {
  TempDir d;
  auto store = OpenStore(Options(d.path()));
  auto none = store->View(0);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("no version is committed yet"));
  for (Version v = 1; v <= 6; ++v) Commit(*store, v);
  auto future = store->View(7);
  REQUIRE_FALSE(future.ok());
  CHECK_THAT(future.status().message(), Catch::Contains("not committed yet; the latest is 6"));
  // A scan reads the latest version only (the key index is not versioned).
  auto past = store->View(5);
  REQUIRE(past.ok());
  auto it = (*past)->Iterate("k", "l");
  CHECK_FALSE(it->Valid());
  CHECK(it->status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(it->status().message(), Catch::Contains("reads the latest version only"));
  // A scan of the latest view keeps its version's keys after a commit changes them.
  auto latest = store->View(0);
  REQUIRE(latest.ok());
  Commit(*store, 7);
  const State state6 = States(6)[6];
  std::size_t n = 0;
  for (auto scan = (*latest)->Iterate("", ""); scan->Valid(); scan->Next(), ++n) {
    REQUIRE(state6.count(std::string(scan->key())) == 1);
    CHECK(scan->value() == state6.at(std::string(scan->key())));
  }
  CHECK(n == state6.size());
}
