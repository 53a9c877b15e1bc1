// Hash flooding (issue 20, item 1): store keys derived, in the test itself, to collide fully under
// libstdc++'s fixed-seed std::hash<std::string_view> (test/std_hash_collisions.h) cost the
// store's hash tables no more key comparisons than random keys of the same layout, now that the
// tables use store::SeededHash (SipHash-1-3 under a per-process random key). Counted in key
// comparisons (the tables' debug statistics), never in time. Also SipHash-1-3's reference
// vectors, so that the seeded hash is the function its security argument is about.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "app/auth/keeper.h"
#include "app/bank/keeper.h"
#include "store/branch.h"
#include "store/merkle_store.h"
#include "store/seeded_hash.h"
#include "store_test_open.h"
#include "temp_dir.h"
#include "test/std_hash_collisions.h"

using namespace kairos;
using store::Branch;
using store::MerkleStore;

namespace {

constexpr std::size_t kAddresses = 1500;  // per key family: 3,000 keys a workload

std::string BalanceKey(std::string_view address) {
  return app::bank::BankKeeper::BalanceKey(address, "stake");
}

// An account key and a balance key per address, as a send to a new recipient writes.
std::vector<std::string> KeysOf(const std::vector<std::string>& account_addresses,
                                const std::vector<std::string>& balance_addresses) {
  std::vector<std::string> keys;
  for (const auto& a : account_addresses) keys.push_back(app::auth::AuthKeeper::AccountKey(a));
  for (const auto& a : balance_addresses) keys.push_back(BalanceKey(a));
  return keys;
}

struct Cost {
  std::uint64_t branch_comparisons = 0;       // the block's branch and every tx's branch
  std::uint64_t value_cache_comparisons = 0;  // the store's value cache: Commit, then reads
};

// What a block does with the keys, through the real parts: each tx reads a key through its own
// branch over the block's branch over the committed store (a miss), writes it, reads it back,
// and is applied to the block's branch; the block's changes are committed (the value cache
// takes every written key), and the next block reads every key again (value cache hits).
Cost RunBlock(const std::vector<std::string>& keys) {
  test::TempDir dir;
  store::StoreOptions options;
  options.dir = dir / "db";
  auto db = test::OpenStore(options);
  Cost cost;
  Branch block(*db, db->limits());
  for (const std::string& key : keys) {
    Branch tx(block, block.limits());
    std::string value;
    REQUIRE(tx.Get(key, &value).IsNotFound());
    REQUIRE(tx.Set(key, "1").ok());
    REQUIRE(tx.Get(key, &value).ok());
    block.Apply(tx);
    cost.branch_comparisons += tx.key_comparisons();
  }
  for (const std::string& key : keys) {  // the block's own reads of what it wrote
    std::string value;
    REQUIRE(block.Get(key, &value).ok());
  }
  cost.branch_comparisons += block.key_comparisons();

  const std::uint64_t before = db->value_cache_key_comparisons();
  REQUIRE(db->Stage(1, block.changes()).ok());
  REQUIRE(db->Commit().ok());
  for (const std::string& key : keys) {
    std::string value;
    REQUIRE(db->Get(key, &value).ok());
    REQUIRE(value == "1");
  }
  cost.value_cache_comparisons = db->value_cache_key_comparisons() - before;
  return cost;
}

}  // namespace

TEST_CASE("SipHash-1-3 gives the reference implementation's outputs", "[seeded_hash]") {
  // Key 00 01 .. 0f, message 00 01 .. (n-1): the published SipHash-1-3 vectors (those of
  // Firedancer's fd_siphash13 test; the same as Rust's test_siphash_1_3).
  const store::SipKey key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  const std::uint64_t expected[] = {
      0xabac0158050fc4dcull, 0xc9f49bf37d57ca93ull, 0x82cb9b024dc7d44dull, 0x8bf80ab8e7ddf7fbull,
      0xcf75576088d38328ull, 0xdef9d52f49533b67ull, 0xc50d2b50c59f22a7ull, 0xd3927d989bb11140ull,
      0x369095118d299a8eull, 0x25a48eb36c063de4ull, 0x79de85ee92ff097full, 0x70c118c1f94dc352ull,
      0x78a384b157b4d9a2ull, 0x306f760c1229ffa7ull, 0x605aa111c0f95d34ull, 0xd320d86d2a519956ull,
      0xcc4fdd1a7d908b66ull, 0x9cf2689063dbd80cull, 0x8ffc389cb473e63eull, 0xf21f9de58d297d1cull,
      0xc0dc2f46a6cce040ull, 0xb992abfe2b45f844ull};
  std::array<unsigned char, 32> message{};
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<unsigned char>(i);
  for (std::size_t n = 0; n < std::size(expected); ++n) {
    INFO("length " << n);
    CHECK(store::SipHash13(key, message.data(), n) == expected[n]);
  }
  // The all-zero key.
  CHECK(store::SipHash13({0, 0}, "", 0) == 0xd1fba762150c532cull);
  CHECK(store::SipHash13({0, 0}, "siphash", 7) == 0x8264ceeccb16bcbeull);
}

TEST_CASE("The seeded hash is keyed by the process key and separates crafted keys",
          "[seeded_hash]") {
  CHECK(store::ProcessSipKey() != store::SipKey{});  // drawn (2^-128 to fail by chance)
  const std::string key = app::auth::AuthKeeper::AccountKey(std::string(20, '\x01'));
  CHECK(store::SeededHash{}(key) == store::SipHash13(store::ProcessSipKey(), key.data(), key.size()));
  const auto crafted = test::StdHashCollidingAddresses(kAddresses, &app::auth::AuthKeeper::AccountKey, 1);
  std::set<std::size_t> seeded;
  for (const auto& a : crafted) seeded.insert(store::SeededHash{}(app::auth::AuthKeeper::AccountKey(a)));
  CHECK(seeded.size() == crafted.size());  // 2^-42 to fail by chance
}

TEST_CASE("Keys crafted to collide under std::hash cost the store's tables no more key "
          "comparisons than random keys",
          "[hashflood]") {
  const auto crafted_accounts =
      test::StdHashCollidingAddresses(kAddresses, &app::auth::AuthKeeper::AccountKey, 1);
  const auto crafted_balances = test::StdHashCollidingAddresses(kAddresses, &BalanceKey, 2);
  const std::vector<std::string> crafted = KeysOf(crafted_accounts, crafted_balances);
  const std::vector<std::string> random =
      KeysOf(test::RandomAddresses(kAddresses, 3), test::RandomAddresses(kAddresses, 4));

  // The derivation is right: each family of crafted keys has one std::hash value (what made
  // the old tables quadratic), and the keys are distinct and of the store's real layouts.
  std::set<std::size_t> account_hashes, balance_hashes;
  for (std::size_t i = 0; i < kAddresses; ++i) {
    account_hashes.insert(std::hash<std::string_view>{}(crafted[i]));
    balance_hashes.insert(std::hash<std::string_view>{}(crafted[kAddresses + i]));
  }
  REQUIRE(account_hashes.size() == 1);
  REQUIRE(balance_hashes.size() == 1);
  REQUIRE(std::set<std::string>(crafted.begin(), crafted.end()).size() == crafted.size());
  REQUIRE(crafted[0].starts_with("auth/acc/"));
  REQUIRE(crafted[kAddresses].starts_with("bank/bal/\x14"));

  const Cost c = RunBlock(crafted);
  const Cost r = RunBlock(random);
  // Random keys: about one comparison per hit. Crafted keys with a fixed hash: one per key
  // already in the table, per lookup (millions here).
  CHECK(r.branch_comparisons > 0);
  CHECK(r.value_cache_comparisons > 0);
  CHECK(c.branch_comparisons <= 2 * r.branch_comparisons);
  CHECK(c.value_cache_comparisons <= 2 * r.value_cache_comparisons);
}
