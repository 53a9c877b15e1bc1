// TxHashSet (the mempool's gossip set) against std::set under random inserts and
// erases. The hashes share few distinct first 8 bytes (the bytes the slot is computed from), so
// many share a home slot whatever the seed: long runs, which exercise the backward-shift
// deletion across wrap-around. The all-zero hash is included.
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <vector>

#include "app/tx_hash_set.h"

using kairos::app::TxHashSet;

namespace {

TxHashSet::Hash Make(std::uint64_t low, std::uint64_t rest) {
  TxHashSet::Hash h{};
  for (int i = 0; i < 8; ++i) h[i] = static_cast<std::uint8_t>(low >> (8 * i));
  for (int i = 8; i < 16; ++i) h[i] = static_cast<std::uint8_t>(rest >> (8 * (i - 8)));
  return h;
}

}  // namespace

TEST_CASE("TxHashSet agrees with std::set under random inserts and erases", "[mempool]") {
  std::mt19937_64 rng(7);
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0x1234567890abcdef}}) {
    TxHashSet set(seed);
    std::set<TxHashSet::Hash> model;
    // Few distinct first-8-byte values: many hashes collide on their home slot.
    std::vector<TxHashSet::Hash> universe;
    for (int i = 0; i < 600; ++i) universe.push_back(Make(rng() % 40, rng()));
    universe.push_back(TxHashSet::Hash{});  // the all-zero hash
    for (int op = 0; op < 40000; ++op) {
      const TxHashSet::Hash& h = universe[rng() % universe.size()];
      switch (rng() % 3) {
        case 0:
          REQUIRE(set.insert(h) == model.insert(h).second);
          break;
        case 1:
          REQUIRE(set.erase(h) == (model.erase(h) == 1));
          break;
        case 2:
          REQUIRE(set.contains(h) == (model.count(h) == 1));
          break;
      }
      REQUIRE(set.size() == model.size());
      if (op % 5000 == 0) {
        for (const auto& u : universe) REQUIRE(set.contains(u) == (model.count(u) == 1));
      }
      if (op == 20000) {
        set.clear();
        model.clear();
        REQUIRE(set.size() == 0);
      }
    }
    for (const auto& u : universe) REQUIRE(set.contains(u) == (model.count(u) == 1));
  }
}

TEST_CASE("TxHashSet::clear frees a sparse array and the set works on after it", "[mempool]") {
  TxHashSet set(42);
  std::mt19937_64 rng(9);
  std::vector<TxHashSet::Hash> hashes;
  for (int i = 0; i < 4000; ++i) hashes.push_back(Make(rng(), rng()));
  for (const auto& h : hashes) REQUIRE(set.insert(h));
  for (int i = 0; i < 3990; ++i) REQUIRE(set.erase(hashes[i]));
  REQUIRE(set.size() == 10);
  set.clear();  // 10 of thousands of slots: the array goes
  REQUIRE(set.size() == 0);
  for (const auto& h : hashes) REQUIRE_FALSE(set.contains(h));
  for (int i = 0; i < 100; ++i) REQUIRE(set.insert(hashes[i]));
  for (int i = 0; i < 4000; ++i) REQUIRE(set.contains(hashes[i]) == (i < 100));
  set.clear();  // 100 in 256 slots: kept and zeroed
  for (int i = 0; i < 100; ++i) REQUIRE_FALSE(set.contains(hashes[i]));
}
