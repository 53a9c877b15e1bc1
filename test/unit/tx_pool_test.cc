// The app mempool through KairosApp's ABCI methods (app/tx_pool.h): CheckTx and InsertTx fill
// it, PrepareProposal builds blocks from it, Commit updates it, Recheck answers from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "app/kairos_app.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "kairos/mempool/v1/query.pb.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

constexpr std::uint64_t kGas = 200000;

// A transfer paying `priority` per unit of gas (priority = fee / gas, as DeductFee computes).
SendOptions At(std::uint64_t sequence, std::uint64_t priority, std::uint64_t account_number) {
  SendOptions o;
  o.account_number = account_number;
  o.sequence = sequence;
  o.gas = kGas;
  o.fee = std::to_string(priority * kGas) + "stake";
  return o;
}

std::vector<std::string> Prepare(TestChain& chain, std::int64_t time,
                                 std::int64_t max_tx_bytes = 1 << 20,
                                 const std::vector<std::string>& offered = {}) {
  abci_pb::RequestPrepareProposal req;
  req.set_height(chain.app().last_height() + 1);
  req.mutable_time()->set_seconds(time / kSecond);
  req.set_max_tx_bytes(max_tx_bytes);
  for (const auto& tx : offered) req.add_txs(tx);
  auto res = chain.app().PrepareProposal(req);
  return {res.txs().begin(), res.txs().end()};
}

kairos::mempool::v1::QueryStatsResponse Stats(TestChain& chain) {
  abci_pb::RequestQuery q;
  q.set_path("/kairos.mempool.v1.Query/Stats");
  auto res = chain.app().Query(q);
  REQUIRE(res.code() == 0);
  kairos::mempool::v1::QueryStatsResponse s;
  REQUIRE(s.ParseFromString(res.value()));
  return s;
}

std::uint64_t Count(const google::protobuf::RepeatedPtrField<kairos::mempool::v1::ReasonCount>& rc,
                    const std::string& reason) {
  for (const auto& c : rc) {
    if (c.reason() == reason) return c.count();
  }
  FAIL("no counter " << reason);
  return 0;
}

app::AppOptions PoolOptions(std::size_t max_txs) {
  app::AppOptions o;
  o.mempool.max_txs = max_txs;
  return o;
}

const TestKey kAlice = MakeKey("alice");
const TestKey kBob = MakeKey("bob");
const TestKey kCarol = MakeKey("carol");
const TestKey kDave = MakeKey("dave");

TestChain Chain(app::AppOptions options = {}) {
  return TestChain({{kAlice, "1000000000stake"},
                    {kBob, "1000000000stake"},
                    {kCarol, "1000000000stake"},
                    {kDave, "1000000000stake"}},
                   "", std::move(options));
}

}  // namespace

TEST_CASE("ordered txs sent out of order are parked, then proposed in sequence order",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string s0 = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  const std::string s1 = chain.Send(kAlice, kBob, "2stake", At(1, 9, 0));
  const std::string s2 = chain.Send(kAlice, kBob, "3stake", At(2, 5, 0));
  CHECK(chain.Check(s2).code() == 0);
  CHECK(chain.Check(s1).code() == 0);
  CHECK(Stats(chain).parked() == 2);
  CHECK(Prepare(chain, kT0 + kSecond).empty());  // nothing is ready yet
  CHECK(chain.Check(s0).code() == 0);
  CHECK(Stats(chain).parked() == 0);
  // s1 pays the most, but only after s0; s2 after s1.
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{s0, s1, s2});
  CHECK(chain.Process(block, kT0 + kSecond).status() == abci_pb::ResponseProcessProposal::ACCEPT);
  auto res = chain.Block(block, kT0 + kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(Stats(chain).size() == 0);
  CHECK(Count(Stats(chain).removals(), "included") == 3);
  // The next sequence is 3, in the check state and in the pool.
  CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", At(3, 1, 0))).code() == 0);
}

TEST_CASE("PrepareProposal takes higher priority first, ties by arrival", "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kDave, "1stake", At(0, 1, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", At(0, 3, 1));
  const std::string c = chain.Send(kCarol, kDave, "1stake", At(0, 3, 2));
  for (const auto& tx : {a, b, c}) REQUIRE(chain.Check(tx).code() == 0);
  CHECK(Prepare(chain, kT0 + kSecond) == std::vector<std::string>{b, c, a});
  // req.txs' order does not matter: the block comes from the pool.
  CHECK(Prepare(chain, kT0 + kSecond, 1 << 20, {a, c, b}) == std::vector<std::string>{b, c, a});
}

TEST_CASE("a full pool evicts a cheaper tx, or refuses with code 20 and the priority needed",
          "[tx_pool]") {
  TestChain chain = Chain(PoolOptions(2));
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kDave, "1stake", At(0, 1, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", At(0, 2, 1));
  REQUIRE(chain.Check(a).code() == 0);
  REQUIRE(chain.Check(b).code() == 0);
  // Equal to the cheapest: refused, and told what would do.
  auto refused = chain.Check(chain.Send(kCarol, kDave, "1stake", At(0, 1, 2)));
  CHECK(refused.code() == 20);
  CHECK(refused.codespace() == "sdk");
  CHECK_THAT(refused.log(), Catch::Contains("mempool is full"));
  CHECK_THAT(refused.log(), Catch::Contains("priority >= 2"));
  // Higher: alice's tx goes.
  const std::string c = chain.Send(kCarol, kDave, "1stake", At(0, 5, 2));
  CHECK(chain.Check(c).code() == 0);
  CHECK(Count(Stats(chain).evictions(), "evicted") == 1);
  CHECK(Count(Stats(chain).rejections(), "full") == 1);
  // Alice's fee and sequence left the check state with it: sequence 0 again, paying more.
  auto recheck = chain.Check(a, /*recheck=*/true);
  CHECK(recheck.code() == 20);
  CHECK_THAT(recheck.log(), Catch::Contains("evicted"));
  const std::string a2 = chain.Send(kAlice, kDave, "2stake", At(0, 3, 0));
  CHECK(chain.Check(a2).code() == 0);  // evicts bob (2 < 3)
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{c, a2});
  auto res = chain.Block(block, kT0 + kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(chain.Balance(kAlice) == std::to_string(1000000000 - 3 * kGas - 2));
}

TEST_CASE("a replacement needs the priority bump, and only its fee is charged", "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string first = chain.Send(kAlice, kBob, "10stake", At(0, 10, 0));
  REQUIRE(chain.Check(first).code() == 0);
  // 10% over 10 is 11: 10.99... per gas is still priority 10.
  SendOptions low = At(0, 10, 0);
  low.fee = std::to_string(11 * kGas - 1) + "stake";
  auto refused = chain.Check(chain.Send(kAlice, kBob, "10stake", low));
  CHECK(refused.code() == 13);
  CHECK_THAT(refused.log(), Catch::Contains("needs priority >= 11"));
  const std::string second = chain.Send(kAlice, kBob, "20stake", At(0, 11, 0));  // exactly +10%
  CHECK(chain.Check(second).code() == 0);
  auto recheck = chain.Check(first, /*recheck=*/true);
  CHECK(recheck.code() == 19);
  CHECK_THAT(recheck.log(), Catch::Contains("replaced"));
  // The check state: the sequence is still 1 and only the new fee is taken.
  const std::string next = chain.Send(kAlice, kBob, "1stake", At(1, 1, 0));
  CHECK(chain.Check(next).code() == 0);
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{second, next});
  chain.Block(block, kT0 + kSecond);
  CHECK(chain.Balance(kAlice) == std::to_string(1000000000 - 11 * kGas - 20 - 1 * kGas - 1));
}

TEST_CASE("a duplicate, a tx too large for the pool, and a stale sequence get clear errors",
          "[tx_pool]") {
  app::AppOptions options;
  options.mempool.max_tx_bytes = 400;
  TestChain chain = Chain(options);
  chain.Block({}, kT0);
  const std::string tx = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  REQUIRE(chain.Check(tx).code() == 0);
  auto dup = chain.Check(tx);
  CHECK(dup.code() == 19);
  CHECK(dup.log() == "tx already in mempool");
  CHECK(Count(Stats(chain).rejections(), "duplicate") == 1);
  SendOptions big = At(1, 1, 0);
  big.memo = std::string(250, 'm');
  auto large = chain.Check(chain.Send(kAlice, kBob, "1stake", big));
  CHECK(large.code() == 21);
  CHECK_THAT(large.log(), Catch::Contains("mempool.max_tx_bytes"));
  chain.Block({tx}, kT0 + kSecond);
  auto stale = chain.Check(chain.Send(kAlice, kBob, "2stake", At(0, 1, 0)));
  CHECK(stale.code() == 32);
}

TEST_CASE("after a block, Recheck keeps what is valid and drops what is not, saying why",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string pooled = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  const std::string other = chain.Send(kBob, kCarol, "1stake", At(0, 1, 1));
  REQUIRE(chain.Check(pooled).code() == 0);
  REQUIRE(chain.Check(other).code() == 0);
  // Another node's block spends alice's sequence 0 with a different tx.
  const std::string rival = chain.Send(kAlice, kCarol, "7stake", At(0, 1, 0));
  chain.Block({rival}, kT0 + kSecond);
  CHECK(chain.Check(other, /*recheck=*/true).code() == 0);
  auto dropped = chain.Check(pooled, /*recheck=*/true);
  CHECK(dropped.code() != 0);
  CHECK_THAT(dropped.log(), Catch::Contains("stale_nonce"));
  CHECK(Stats(chain).size() == 1);
  CHECK(Prepare(chain, kT0 + 2 * kSecond) == std::vector<std::string>{other});
}

TEST_CASE("a tx the pool never saw is judged as new on Recheck and offered PrepareProposal",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  const std::string b = chain.Send(kBob, kAlice, "1stake", At(0, 1, 1));
  REQUIRE(chain.Check(a).code() == 0);
  chain.Reopen();  // kairosd restarted; CometBFT still holds both in its mempool
  CHECK(chain.Check(a, /*recheck=*/true).code() == 0);
  CHECK(Prepare(chain, kT0 + kSecond, 1 << 20, {a, b}) == std::vector<std::string>{a, b});
}

TEST_CASE("PrepareProposal skips a tx that does not fit and fills on with smaller ones",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  SendOptions big = At(0, 9, 0);
  big.memo = std::string(250, 'm');
  const std::string large = app::BuildSignedTx(
      SpecOf({MakeSend(kAlice, kDave, "1stake"), MakeSend(kAlice, kBob, "1stake"),
              MakeSend(kAlice, kCarol, "1stake")},
             big),
      {SignerOf(kAlice, 0, 0)}, TestChain::kChainId);
  const std::string after_large = chain.Send(kAlice, kDave, "1stake", At(1, 9, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", At(0, 2, 1));
  const std::string c = chain.Send(kCarol, kDave, "1stake", At(0, 1, 2));
  for (const auto& tx : {large, after_large, b, c}) REQUIRE(chain.Check(tx).code() == 0);
  const std::int64_t room = app::ProtoSizeOfTx(b) + app::ProtoSizeOfTx(c);
  REQUIRE(app::ProtoSizeOfTx(large) > room);
  const auto block = Prepare(chain, kT0 + kSecond, room);
  // The large one is skipped with its successor (its sequence would have a gap), not the end.
  CHECK(block == std::vector<std::string>{b, c});
  std::int64_t total = 0;
  for (const auto& tx : block) total += app::ProtoSizeOfTx(tx);
  CHECK(total <= room);
}

TEST_CASE("ProcessProposal rejects a block over max gas, undecodable or failing txs, and a "
          "duplicate unordered nonce",
          "[tx_pool]") {
  TestChain chain = Chain();  // block max_gas 10,000,000
  chain.Block({}, kT0);
  const std::int64_t t = kT0 + kSecond;
  SendOptions heavy = At(0, 0, 0);
  heavy.gas = 6'000'000;
  SendOptions heavy_b = heavy;
  heavy_b.account_number = 1;
  const std::string h1 = chain.Send(kAlice, kDave, "1stake", heavy);
  const std::string h2 = chain.Send(kBob, kDave, "1stake", heavy_b);
  CHECK(chain.Process({h1}, t).status() == abci_pb::ResponseProcessProposal::ACCEPT);
  CHECK(chain.Process({h1, h2}, t).status() == abci_pb::ResponseProcessProposal::REJECT);
  CHECK(chain.Process({"not a tx"}, t).status() == abci_pb::ResponseProcessProposal::REJECT);
  CHECK(chain.Process({chain.Send(kAlice, kDave, "1stake", At(5, 1, 0))}, t).status() ==
        abci_pb::ResponseProcessProposal::REJECT);
  SendOptions u;
  u.unordered = true;
  u.timeout_unix_nanos = t + 30 * kSecond;
  u.fee = "200stake";
  const std::string u1 = chain.Send(kAlice, kDave, "1stake", u);
  const std::string u2 = chain.Send(kAlice, kDave, "2stake", u);  // same signer and timeout
  CHECK(chain.Process({u1}, t).status() == abci_pb::ResponseProcessProposal::ACCEPT);
  CHECK(chain.Process({u1, u2}, t).status() == abci_pb::ResponseProcessProposal::REJECT);
  // The pool refuses the second one already (the check state holds the first one's nonce).
  REQUIRE(chain.Check(u1).code() == 0);
  CHECK(chain.Check(u2).code() == 18);
}

TEST_CASE("txs older than mempool.ttl_blocks leave the pool at commit", "[tx_pool]") {
  app::AppOptions options;
  options.mempool.ttl_blocks = 1;
  TestChain chain = Chain(options);
  chain.Block({}, kT0);                                   // height 1
  const std::string tx = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  REQUIRE(chain.Check(tx).code() == 0);                   // arrives at height 1
  chain.Block({}, kT0 + kSecond);                         // height 2: 1 block old, kept
  CHECK(Stats(chain).size() == 1);
  chain.Block({}, kT0 + 2 * kSecond);                     // height 3: 2 blocks old, expired
  CHECK(Stats(chain).size() == 0);
  CHECK(Count(Stats(chain).expiries(), "expired_blocks") == 1);
  auto recheck = chain.Check(tx, /*recheck=*/true);
  CHECK(recheck.code() == 20);
  CHECK_THAT(recheck.log(), Catch::Contains("expired"));
  // Its sequence is free again.
  CHECK(chain.Check(tx).code() == 0);
}

TEST_CASE("txs parked behind a gap that is never filled leave after mempool.parked_ttl_blocks",
          "[tx_pool]") {
  // The overload wedge: a sender's sequence 0 never reaches the pool (CometBFT's full mempool
  // refused it), its later txs are parked. They must not hold the pool (and CometBFT's mempool,
  // which rechecks them) forever; a ready tx of the same age stays.
  app::AppOptions options;
  options.mempool_parked_ttl_blocks = 2;
  TestChain chain = Chain(options);
  chain.Block({}, kT0);  // height 1
  const std::string p1 = chain.Send(kAlice, kBob, "1stake", At(1, 1, 0));
  const std::string p2 = chain.Send(kAlice, kBob, "1stake", At(2, 1, 0));
  const std::string ready = chain.Send(kBob, kCarol, "1stake", At(0, 1, 1));
  REQUIRE(chain.Check(p1).code() == 0);
  REQUIRE(chain.Check(p2).code() == 0);
  REQUIRE(chain.Check(ready).code() == 0);
  REQUIRE(Stats(chain).parked() == 2);
  chain.Block({}, kT0 + kSecond);      // height 2: 1 block old
  chain.Block({}, kT0 + 2 * kSecond);  // height 3: 2 blocks old, kept
  CHECK(Stats(chain).parked() == 2);
  chain.Block({}, kT0 + 3 * kSecond);  // height 4: 3 blocks old, dropped
  CHECK(Stats(chain).parked() == 0);
  CHECK(Stats(chain).size() == 1);     // the ready tx (empty blocks: nothing proposed it)
  CHECK(Count(Stats(chain).expiries(), "expired_blocks") == 2);
  auto recheck = chain.Check(p2, /*recheck=*/true);
  CHECK(recheck.code() == 20);
  CHECK_THAT(recheck.log(), Catch::Contains("parked_ttl_blocks"));
  // The sender recovers: sequence 0 then 1 are accepted and proposed in order.
  const std::string s0 = chain.Send(kAlice, kBob, "1stake", At(0, 1, 0));
  CHECK(chain.Check(s0).code() == 0);
  CHECK(chain.Check(p1).code() == 0);
  const auto block = Prepare(chain, kT0 + 4 * kSecond);
  CHECK(std::count(block.begin(), block.end(), s0) == 1);
  CHECK(std::count(block.begin(), block.end(), p1) == 1);
  CHECK(std::find(block.begin(), block.end(), s0) < std::find(block.begin(), block.end(), p1));

  SECTION("0 keeps them") {
    app::AppOptions keep;
    keep.mempool_parked_ttl_blocks = 0;
    TestChain c2 = Chain(keep);
    c2.Block({}, kT0);
    REQUIRE(c2.Check(c2.Send(kAlice, kBob, "1stake", At(1, 1, 0))).code() == 0);
    for (int i = 1; i <= 5; ++i) c2.Block({}, kT0 + i * kSecond);
    CHECK(Stats(c2).parked() == 1);
  }
}

using Txs = std::vector<std::string>;

Txs Reaped(TestChain& chain, std::uint64_t max_bytes = 0) {
  abci_pb::RequestReapTxs req;
  req.set_max_bytes(max_bytes);
  const auto res = chain.app().ReapTxs(req);
  return Txs(res.txs().begin(), res.txs().end());
}

void Insert(TestChain& chain, const std::string& tx) {
  abci_pb::RequestInsertTx req;
  req.set_tx(tx);
  REQUIRE(chain.app().InsertTx(req).code() == 0);
}

TEST_CASE("InsertTx fills the pool and ReapTxs hands out each ready tx once per gossip round, "
          "by priority",
          "[tx_pool]") {
  // A fake monotonic clock: the gossip round is 10 s by default.
  auto now = std::make_shared<std::int64_t>(0);
  app::AppOptions options;
  options.monotonic_nanos = [now] { return *now; };
  TestChain chain = Chain(options);
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kDave, "1stake", At(0, 1, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", At(0, 4, 1));
  const std::string gap = chain.Send(kCarol, kDave, "1stake", At(1, 9, 2));
  for (const auto& tx : {a, b, gap}) Insert(chain, tx);
  abci_pb::RequestInsertTx dup;
  dup.set_tx(a);
  CHECK(chain.app().InsertTx(dup).code() == 19);
  CHECK(Reaped(chain) == Txs{b, a});  // the parked one is not gossiped
  // CometBFT gossips whatever ReapTxs returns: what went out does not go out again this round.
  *now += 500'000'000;
  CHECK(Reaped(chain).empty());

  // Carol's first tx fills the gap: both of hers are new, in sequence order; alice's next tx too.
  const std::string fill = chain.Send(kCarol, kDave, "1stake", At(0, 2, 2));
  const std::string a1 = chain.Send(kAlice, kDave, "1stake", At(1, 1, 0));
  Insert(chain, fill);
  Insert(chain, a1);
  CHECK(Reaped(chain) == Txs{fill, gap, a1});

  // Within max_bytes: what does not fit waits for the next call.
  const std::string b1 = chain.Send(kBob, kDave, "1stake", At(1, 4, 1));
  const std::string a2 = chain.Send(kAlice, kDave, "1stake", At(2, 1, 0));
  Insert(chain, b1);
  Insert(chain, a2);
  CHECK(Reaped(chain, b1.size()) == Txs{b1});
  CHECK(Reaped(chain, b1.size()) == Txs{a2});
  CHECK(Reaped(chain).empty());

  // Included txs leave; a new one goes out.
  chain.Block({a, a1, a2}, kT0 + kSecond);
  const std::string a3 = chain.Send(kAlice, kDave, "1stake", At(3, 1, 0));
  Insert(chain, a3);
  CHECK(Reaped(chain) == Txs{a3});
  CHECK(Reaped(chain).empty());

  // 10 s after the round began, a new round hands out the whole pool again (for peers that
  // connected since), once.
  *now += 9'000'000'000;
  CHECK(Reaped(chain).empty());
  *now += 1'000'000'000;
  CHECK(Reaped(chain) == Txs{b, b1, fill, gap, a3});  // each sender in sequence order
  CHECK(Reaped(chain).empty());
}

TEST_CASE("ReapTxs with regossip_interval 0 hands out the whole pool every time", "[tx_pool]") {
  app::AppOptions options;
  options.mempool_regossip_interval_nanos = 0;
  TestChain chain = Chain(options);
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kDave, "1stake", At(0, 1, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", At(0, 4, 1));
  Insert(chain, a);
  Insert(chain, b);
  CHECK(Reaped(chain) == Txs{b, a});
  CHECK(Reaped(chain) == Txs{b, a});
  CHECK(Reaped(chain, b.size()) == Txs{b});
}

TEST_CASE("property: ProcessProposal accepts whatever PrepareProposal builds", "[tx_pool]") {
  const std::vector<TestKey> keys = {kAlice, kBob, kCarol, kDave};
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    app::AppOptions options = PoolOptions(12);
    options.mempool.max_txs_per_sender = 5;
    TestChain chain = Chain(options);
    chain.Block({}, kT0);
    std::int64_t t = kT0;
    std::vector<std::uint64_t> committed_seq(keys.size(), 0);
    for (int step = 0; step < 120; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const std::size_t who = rng() % keys.size();
      const TestKey& to = keys[(who + 1) % keys.size()];
      if (op < 7) {
        SendOptions o = At(committed_seq[who] + rng() % 4, 1 + rng() % 20, who);
        if (rng() % 5 == 0) {
          o = SendOptions{};
          o.account_number = who;
          o.unordered = true;
          o.timeout_unix_nanos = t + static_cast<std::int64_t>(1 + rng() % 20) * kSecond;
          o.fee = std::to_string((1 + rng() % 20) * kGas) + "stake";
        }
        if (rng() % 8 == 0) o.fee = "999999999999stake";  // cannot pay: refused by the ante
        chain.Check(chain.Send(keys[who], to, std::to_string(1 + rng() % 5) + "stake", o));
      } else {
        t += kSecond;
        const std::int64_t room = 300 + static_cast<std::int64_t>(rng() % 1500);
        const auto block = Prepare(chain, t, room);
        std::int64_t total = 0;
        for (const auto& tx : block) total += app::ProtoSizeOfTx(tx);
        CHECK(total <= room);
        REQUIRE(chain.Process(block, t).status() == abci_pb::ResponseProcessProposal::ACCEPT);
        auto res = chain.Block(block, t);
        for (const auto& r : res.tx_results()) REQUIRE(r.code() == 0);
        for (std::size_t i = 0; i < keys.size(); ++i) {
          abci_pb::RequestQuery q;
          q.set_path("/cosmos.auth.v1beta1.Query/Account");
          cosmos::auth::v1beta1::QueryAccountRequest r;
          r.set_address(keys[i].bech32);
          q.set_data(r.SerializeAsString());
          auto ans = chain.app().Query(q);
          if (ans.code() != 0) continue;
          cosmos::auth::v1beta1::QueryAccountResponse acc;
          REQUIRE(acc.ParseFromString(ans.value()));
          cosmos::auth::v1beta1::BaseAccount base;
          REQUIRE(acc.account().UnpackTo(&base));
          committed_seq[i] = base.sequence();
        }
      }
    }
  }
}

}  // namespace kairos::test
