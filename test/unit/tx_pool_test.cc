// The app mempool through KairosApp's ABCI methods (app/tx_pool.h): CheckTx and InsertTx fill
// it, PrepareProposal builds blocks from it, Commit updates it, Recheck answers from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
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

// A transfer paying `fee` stake for `gas`: realistic gas prices are below 1 per gas.
SendOptions Paying(std::uint64_t sequence, std::uint64_t fee, std::uint64_t account_number,
                   std::uint64_t gas = kGas) {
  SendOptions o;
  o.account_number = account_number;
  o.sequence = sequence;
  o.gas = gas;
  o.fee = std::to_string(fee) + "stake";
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
  CHECK_THAT(refused.log(), Catch::Contains("a tx needs a fee per gas above 1 to evict (this one "
                                            "offers 1); with its gas limit of 200000 that is a "
                                            "fee of at least 200001stake"));
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
  // 10% over 10 is 11 per gas: one unit of fee less is not enough.
  auto refused = chain.Check(chain.Send(kAlice, kBob, "10stake", Paying(0, 11 * kGas - 1, 0)));
  CHECK(refused.code() == 13);
  CHECK(refused.log() == "replacement of sequence 0 needs a fee per gas of at least 11 (+10%), got "
                         "10.999995; with its gas limit of 200000 that is a fee of at least "
                         "2200000stake");
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

TEST_CASE("gas prices below 1 per gas order, evict and replace by the exact fee per gas",
          "[tx_pool]") {
  // 5000stake for 200000 gas is 0.025 per gas, a usual Cosmos fee level. Priority as an integer
  // fee / gas made every one of these 0: arrival order, and no replacement ("needs priority >=
  // 1, got 0").
  TestChain chain = Chain(PoolOptions(3));
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kDave, "1stake", Paying(0, 5000, 0));
  const std::string b = chain.Send(kBob, kDave, "1stake", Paying(0, 5001, 1));
  const std::string c = chain.Send(kCarol, kDave, "1stake", Paying(0, 2500, 2, 100000));  // 0.025
  for (const auto& tx : {a, b, c}) REQUIRE(chain.Check(tx).code() == 0);
  CHECK(Prepare(chain, kT0 + kSecond) == std::vector<std::string>{b, a, c});

  // Full: 0.025 evicts nothing (ties stay), and the answer says which fee would.
  auto refused = chain.Check(chain.Send(kDave, kAlice, "1stake", Paying(0, 5000, 3)));
  CHECK(refused.code() == 20);
  CHECK(refused.log() == "mempool is full: 3 txs, " + std::to_string(a.size() + b.size() + c.size()) +
                             " bytes; a tx needs a fee per gas above 0.025 to evict (this one "
                             "offers 0.025); with its gas limit of 200000 that is a fee of at "
                             "least 5001stake");
  const std::string d = chain.Send(kDave, kAlice, "1stake", Paying(0, 5001, 3));
  REQUIRE(chain.Check(d).code() == 0);  // evicts carol's, the newer of the two at 0.025
  CHECK(chain.Check(c, /*recheck=*/true).code() == 20);

  // Replacement: +10% of 0.025 is 0.0275, i.e. 5500 for 200000 gas.
  auto under = chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(0, 5499, 0)));
  CHECK(under.code() == 13);
  CHECK(under.log() == "replacement of sequence 0 needs a fee per gas of at least 0.0275 (+10%), "
                       "got 0.027495; with its gas limit of 200000 that is a fee of at least "
                       "5500stake");
  const std::string a2 = chain.Send(kAlice, kBob, "1stake", Paying(0, 5500, 0));
  REQUIRE(chain.Check(a2).code() == 0);
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{a2, b, d});
  const auto res = chain.Block(block, kT0 + kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(chain.Balance(kAlice) == std::to_string(1000000000 - 5500 - 1 + 1));  // dave sent 1
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
  CHECK(Count(Stats(chain).expiries(), "expired_parked") == 2);
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

namespace kairos::test {
namespace {

abci_pb::RequestQuery SenderTxsQuery(const TestKey& key) {
  kairos::mempool::v1::QuerySenderTxsRequest q;
  q.set_address(key.bech32);
  abci_pb::RequestQuery req;
  req.set_path("/kairos.mempool.v1.Query/SenderTxs");
  req.set_data(q.SerializeAsString());
  return req;
}

kairos::mempool::v1::QuerySenderTxsResponse SenderTxs(TestChain& chain, const TestKey& key) {
  const auto res = chain.app().Query(SenderTxsQuery(key));
  REQUIRE(res.code() == 0);
  kairos::mempool::v1::QuerySenderTxsResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  return r;
}

// A pool that is not rechecked at commit (budget 0): what it admitted stays there whatever
// blocks from elsewhere did.
app::AppOptions WithoutRecheck() {
  app::AppOptions options;
  options.mempool_recheck_budget_nanos = 0;
  return options;
}

// Commits a block from elsewhere at kT0 + 1s: alice's unordered tx (never in this pool) sending
// `amount` to carol, for a fee of 200stake.
void AliceSpendsElsewhere(TestChain& chain, const std::string& amount) {
  SendOptions u = Paying(0, 200, 0);
  u.unordered = true;
  u.timeout_unix_nanos = kT0 + 60 * kSecond;
  chain.Block({chain.Send(kAlice, kCarol, amount, u)}, kT0 + kSecond);
}

// `n` keys funded with `coins` each, named prefix0, prefix1, ...
std::vector<std::pair<TestKey, std::string>> Funded(const std::string& prefix, int n,
                                                    const std::string& coins) {
  std::vector<std::pair<TestKey, std::string>> out;
  for (int i = 0; i < n; ++i) out.emplace_back(MakeKey(prefix + std::to_string(i)), coins);
  return out;
}

}  // namespace

TEST_CASE("a parked tx's answer says it is parked and what it waits for, and SenderTxs lists states",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const auto parked = chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(2, 5000, 0)));
  CHECK(parked.code() == 0);
  CHECK(parked.info() == "parked; waiting for sequence 0");
  CHECK(parked.log() == "parked: waiting for sequence 0 of " + kAlice.bech32 +
                            " (this tx has sequence 2); it is not proposed before the txs from "
                            "sequence 0 on reach the mempool, and it is dropped after 20 blocks "
                            "without them (mempool.parked_ttl_blocks)");
  const auto ready = chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(0, 5000, 0)));
  CHECK(ready.code() == 0);
  CHECK(ready.log().empty());
  CHECK(ready.info().empty());

  const auto r = SenderTxs(chain, kAlice);
  CHECK(r.committed_sequence() == 0);
  CHECK(r.next_sequence() == 1);
  REQUIRE(r.txs_size() == 2);
  CHECK(r.txs(0).sequence() == 0);
  CHECK(r.txs(0).state() == kairos::mempool::v1::PooledTx::STATE_READY);
  CHECK(r.txs(0).fee_per_gas() == "0.025");
  CHECK(r.txs(0).gas_wanted() == kGas);
  CHECK(r.txs(1).sequence() == 2);
  CHECK(r.txs(1).state() == kairos::mempool::v1::PooledTx::STATE_PARKED);
  CHECK(SenderTxs(chain, kBob).txs_size() == 0);

  // Bad requests: code 18 naming what is wrong.
  abci_pb::RequestQuery req;
  req.set_path("/kairos.mempool.v1.Query/SenderTxs");
  req.set_data("\xff\xff");
  auto res = chain.app().Query(req);
  CHECK(res.code() == 18);
  CHECK(res.log() == "invalid request: /kairos.mempool.v1.Query/SenderTxs: data is not a "
                     "QuerySenderTxsRequest");
  kairos::mempool::v1::QuerySenderTxsRequest q;
  q.set_address("kairos1nope");
  req.set_data(q.SerializeAsString());
  res = chain.app().Query(req);
  CHECK(res.code() == 18);
  CHECK(res.log() == "invalid request: /kairos.mempool.v1.Query/SenderTxs: invalid address "
                     "\"kairos1nope\"");
}

TEST_CASE("SenderTxs answers consistent snapshots from another thread while txs arrive and park",
          "[tx_pool]") {
  // The query thread's path (app/query_router.h): KairosApp::Query from a second thread while
  // this one runs CheckTx (parking and promoting alice's txs) and blocks. Each answer must be one
  // state of the pool: sequences increasing from the committed one, the ready ones contiguous up
  // to next_sequence, the rest parked above it.
  TestChain chain = Chain();
  chain.Block({}, kT0);
  std::atomic<bool> done{false}, failed{false};
  std::atomic<int> answers{0};
  std::string error;  // the first inconsistency: written by the reader before `failed`
  std::thread reader([&] {
    while (!done.load() && error.empty()) {
      const auto res = chain.app().Query(SenderTxsQuery(kAlice));  // no Catch macros here
      kairos::mempool::v1::QuerySenderTxsResponse r;
      if (res.code() != 0 || !r.ParseFromString(res.value())) {
        error = "answer " + std::to_string(res.code()) + ": " + res.log();
        failed = true;
        break;
      }
      std::uint64_t ready = 0, last = 0;
      for (int i = 0; i < r.txs_size(); ++i) {
        const auto& t = r.txs(i);
        const bool is_parked = t.state() == kairos::mempool::v1::PooledTx::STATE_PARKED;
        if ((i > 0 && t.sequence() <= last) || t.sequence() < r.committed_sequence() ||
            t.sequence() == r.next_sequence() || is_parked != (t.sequence() > r.next_sequence())) {
          error = "inconsistent answer: " + r.ShortDebugString();
          break;
        }
        last = t.sequence();
        ready += is_parked ? 0 : 1;
      }
      if (error.empty() && ready != r.next_sequence() - r.committed_sequence()) {
        error = "ready txs not contiguous: " + r.ShortDebugString();
      }
      if (!error.empty()) failed = true;
      answers.fetch_add(1);
    }
  });
  std::uint64_t sequence = 0;
  for (int block = 1; block <= 6 && !failed.load(); ++block) {
    for (int pair = 0; pair < 4; ++pair, sequence += 2) {
      // The later sequence first (parked), then the one it waits for (both become ready).
      CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(sequence + 1, 5000, 0)))
                .info() == "parked; waiting for sequence " + std::to_string(sequence));
      CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(sequence, 5000, 0))).code() ==
            0);
    }
    const auto txs = Prepare(chain, kT0 + block * kSecond);
    CHECK(txs.size() == 8);
    chain.Block(txs, kT0 + block * kSecond);
  }
  // Let the reader see the final state at least once (bounded by its progress, not by time).
  const int seen = answers.load();
  while (answers.load() < seen + 2 && !failed.load()) std::this_thread::yield();
  done = true;
  reader.join();
  INFO(error);
  CHECK(error.empty());
  CHECK(answers.load() > 2);
  // Every tx was included: the pool holds none of alice's (and knows no sequence of hers).
  const auto last = SenderTxs(chain, kAlice);
  CHECK(last.txs_size() == 0);
  CHECK(last.committed_sequence() == 0);
}

TEST_CASE("fees and sends are reserved across a payer's pooled txs, ready and parked",
          "[tx_pool]") {
  // Alice has 1,000,000,000. A parked tx reserves its fee and send although it pays nothing yet.
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string p1 = chain.Send(kAlice, kBob, "1stake", Paying(1, 600'000'000, 0));
  REQUIRE(chain.Check(p1).code() == 0);
  const app::TxPool& pool = chain.app().tx_pool();
  CHECK(pool.Reserved(kAlice.address).ToString() == "600000001stake");
  // Another parked tx offering the same: it could only pay if p1 did not.
  auto refused = chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(2, 600'000'000, 0)));
  CHECK(refused.code() == 5);
  CHECK(refused.codespace() == "sdk");
  CHECK(refused.log() == "insufficient funds: " + kAlice.bech32 +
                             " has 1000000000stake committed, its txs in the mempool reserve "
                             "600000001stake for fees and sends (ready and parked alike), and "
                             "this tx needs 600000001stake more");
  // Nor may a ready one take what p1 reserved.
  CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(0, 400'000'000, 0))).code() == 5);
  // Its send counts as much as its fee: 399,999,999 of fee and send leave nothing.
  const std::string s0 =
      chain.Send(kAlice, kBob, "199999999stake", Paying(0, 200'000'000, 0));
  REQUIRE(chain.Check(s0).code() == 0);
  CHECK(pool.Reserved(kAlice.address).ToString() == "1000000000stake");
  CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", Paying(2, 1, 0))).code() == 5);
  // A replacement counts in place of the tx it replaces: the same fee for half the gas (twice
  // the fee per gas) takes what p1 reserved, no more.
  const std::string p1b = chain.Send(kAlice, kBob, "1stake", Paying(1, 600'000'000, 0, 100000));
  CHECK(chain.Check(p1b).code() == 0);
  CHECK(pool.Reserved(kAlice.address).ToString() == "1000000000stake");
  // Nothing is credited before it is committed: bob cannot spend what alice sends him.
  CHECK(pool.Reserved(kBob.address).empty());

  // Both land; the reservations go with them.
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{s0, p1b});
  const auto res = chain.Block(block, kT0 + kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(pool.Reserved(kAlice.address).empty());
  CHECK(chain.Balance(kAlice) == "0");
  CHECK(chain.Balance(kBob) == std::to_string(1000000000 + 199999999 + 1));
  // Eviction and expiry release them too.
  app::AppOptions small = PoolOptions(1);
  small.mempool_parked_ttl_blocks = 1;
  TestChain c2 = Chain(small);
  c2.Block({}, kT0);
  REQUIRE(c2.Check(c2.Send(kBob, kCarol, "1stake", Paying(3, 1000, 1))).code() == 0);  // parked
  CHECK(c2.app().tx_pool().Reserved(kBob.address).ToString() == "1001stake");
  REQUIRE(c2.Check(c2.Send(kCarol, kBob, "1stake", Paying(0, 1000, 2))).code() == 0);  // evicts
  CHECK(c2.app().tx_pool().Reserved(kBob.address).empty());
  CHECK(c2.app().tx_pool().Reserved(kCarol.address).ToString() == "1001stake");
  REQUIRE(c2.Check(c2.Send(kCarol, kBob, "1stake", Paying(0, 2000, 2))).code() == 0);  // replaces
  CHECK(c2.app().tx_pool().Reserved(kCarol.address).ToString() == "2001stake");
}

TEST_CASE("the fee an underpriced tx would need is named in its denoms, or the chain's",
          "[tx_pool]") {
  TestChain chain({{kAlice, "1000000000stake"}, {kBob, "1000000000atom,1000000000stake"}}, "",
                  PoolOptions(1));
  chain.Block({}, kT0);
  REQUIRE(chain.Check(chain.Send(kAlice, kDave, "1stake", Paying(0, 2 * kGas, 0))).code() == 0);
  // Two fee coins: the priority is the least one's, so each must reach the fee named.
  SendOptions two = Paying(0, 0, 1);
  two.fee = "300000atom,300000stake";
  auto refused = chain.Check(chain.Send(kBob, kDave, "1stake", two));
  CHECK(refused.code() == 20);
  CHECK(refused.log() == "mempool is full: 1 txs, " +
                             std::to_string(chain.Send(kAlice, kDave, "1stake",
                                                       Paying(0, 2 * kGas, 0))
                                                .size()) +
                             " bytes; a tx needs a fee per gas above 2 to evict (this one offers "
                             "1.5); with its gas limit of 200000 that is a fee of at least 400001 "
                             "of each of atom, stake");
  // No fee at all: the chain's denom.
  SendOptions none = Paying(0, 0, 1);
  none.fee = "";
  refused = chain.Check(chain.Send(kBob, kDave, "1stake", none));
  CHECK(refused.code() == 20);
  CHECK_THAT(refused.log(), Catch::EndsWith("(this one offers 0); with its gas limit of 200000 "
                                            "that is a fee of at least 400001stake"));
}

TEST_CASE("a tx whose fee and sends add up past 2^256 is refused with code 5", "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const std::string max256 =
      "115792089237316195423570985008687907853269984665640564039457584007913129639935";
  const auto res = chain.Check(chain.Send(kAlice, kBob, max256 + "stake", Paying(0, 1, 0)));
  CHECK(res.code() == 5);
  CHECK(res.log() == "insufficient funds: the tx's fee and sends add up past any balance");
  // Below that, a send the balance cannot cover is refused by the reservation check.
  const auto big = chain.Check(chain.Send(kAlice, kBob, "2000000000stake", Paying(0, 1, 0)));
  CHECK(big.code() == 5);
  CHECK(big.log() == "insufficient funds: " + kAlice.bech32 +
                         " has 1000000000stake committed, its txs in the mempool reserve 0stake "
                         "for fees and sends (ready and parked alike), and this tx needs "
                         "2000000001stake more");
}

TEST_CASE("parked txs expire with their own reason, counted and answered", "[tx_pool]") {
  app::AppOptions options;
  options.mempool_parked_ttl_blocks = 1;
  TestChain chain = Chain(options);
  chain.Block({}, kT0);
  const std::string p = chain.Send(kAlice, kBob, "1stake", Paying(4, 5000, 0));
  REQUIRE(chain.Check(p).code() == 0);
  chain.Block({}, kT0 + kSecond);
  chain.Block({}, kT0 + 2 * kSecond);
  CHECK(Stats(chain).size() == 0);
  CHECK(Count(Stats(chain).expiries(), "expired_parked") == 1);
  CHECK(Count(Stats(chain).expiries(), "expired_blocks") == 0);
  CHECK(chain.app().tx_pool().Reserved(kAlice.address).empty());
  const auto recheck = chain.Check(p, /*recheck=*/true);
  CHECK(recheck.code() == 20);
  CHECK(recheck.log() == "expired from the mempool (expired_parked): parked behind a sequence gap "
                         "that no tx filled for more than mempool.parked_ttl_blocks blocks");
}

TEST_CASE("a flood of parked txs offering the whole balance evicts no ready tx", "[tx_pool]") {
  // The numbers: a pool of 320 holding 300 ready honest txs; 5 accounts send 64 parked
  // txs each. Before: each offered the whole balance as fee, each was checked against the
  // balance alone and evicted a ready tx; all 300 went, the next honest tx got code 20 and the
  // next proposal held nothing, for free.
  auto funded = Funded("honest", 30, "1000000000stake");         // account numbers 0..29
  for (auto& f : Funded("attacker", 5, "1000000stake")) funded.push_back(f);  // 30..34
  for (auto& f : Funded("spreader", 5, "1000000stake")) funded.push_back(f);  // 35..39
  funded.emplace_back(MakeKey("late"), "1000000000stake");                    // 40
  app::AppOptions options = PoolOptions(320);
  TestChain chain(funded, "", options);
  chain.Block({}, kT0);
  std::vector<std::string> honest;
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    for (std::uint64_t i = 0; i < 30; ++i) {
      honest.push_back(
          chain.Send(funded[i].first, kAlice, "1stake", Paying(seq, 5000, i)));
      REQUIRE(chain.Check(honest.back()).code() == 0);
    }
  }
  std::map<std::uint32_t, int> codes;
  for (std::uint64_t a = 30; a < 35; ++a) {
    for (std::uint64_t seq = 1; seq <= 64; ++seq) {  // sequence 0 never comes
      ++codes[chain.Check(chain.Send(funded[a].first, kAlice, "1stake",
                                     Paying(seq, 1000000 - 1, a)))
                  .code()];
    }
  }
  // One parked tx per attacker: its fee reserves the whole balance; the others cannot pay.
  CHECK(codes[0] == 5);
  CHECK(codes[5] == 5 * 63);
  CHECK(Stats(chain).size() == 305);
  CHECK(Stats(chain).parked() == 5);
  CHECK(Count(Stats(chain).evictions(), "evicted") == 0);

  // Others spread their balance so the reservations allow all 64 (1/64 each): the free room
  // (15) and the per-sender cap (16) bound them, and none evicts a ready tx.
  codes.clear();
  for (std::uint64_t a = 35; a < 40; ++a) {
    for (std::uint64_t seq = 1; seq <= 64; ++seq) {
      ++codes[chain.Check(chain.Send(funded[a].first, kAlice, "1stake",
                                     Paying(seq, 1000000 / 64 - 1, a)))
                  .code()];
    }
  }
  CHECK(Stats(chain).size() == 320);
  CHECK(Stats(chain).parked() == 20);
  CHECK(codes[0] == 15);
  CHECK(Count(Stats(chain).evictions(), "evicted") == 0);
  // The next honest tx gets in: it evicts a parked one, never a ready one.
  const std::string next = chain.Send(funded[40].first, kBob, "1stake", Paying(0, 5000, 40));
  CHECK(chain.Check(next).code() == 0);
  CHECK(Count(Stats(chain).evictions(), "evicted") == 1);
  CHECK(Stats(chain).parked() == 19);
  // The next blocks hold the honest txs, 50 a block (10M gas).
  std::set<std::string> included;
  for (int b = 1; b <= 7; ++b) {
    const auto block = Prepare(chain, kT0 + b * kSecond);
    const auto res = chain.Block(block, kT0 + b * kSecond);
    for (const auto& r : res.tx_results()) {
      CHECK(r.code() == 0);
    }
    included.insert(block.begin(), block.end());
  }
  for (const auto& tx : honest) CHECK(included.count(tx) == 1);
  CHECK(included.count(next) == 1);
  CHECK(included.size() == honest.size() + 1);
}

TEST_CASE("a sender spending its balance cannot make its later high-fee txs free",
          "[tx_pool]") {
  // The attack: tx 0 sends the attacker's balance away; its next 23 txs, at twice the
  // honest fee per gas, passed every check (fees against a balance the send had not touched),
  // took 4.6M of a 10M-gas block and failed their fee in FinalizeBlock, paying nothing, while
  // honest txs waited. The honest txs included must be the same with and without them.
  const auto run = [](bool attack) {
    // Whole fees per gas (1 and 2), so that the attack is the same with priorities as integers.
    auto funded = Funded("honest", 16, "1000000000stake");
    funded.emplace_back(MakeKey("attacker"), "10000000stake");
    TestChain chain(funded, "", PoolOptions(1000));
    chain.Block({}, kT0);
    const TestKey& attacker = funded.back().first;
    // Tx 0 sends everything but its fee; it pays 2 per gas.
    const std::string spend =
        chain.Send(attacker, kAlice, std::to_string(10000000 - 2 * kGas) + "stake",
                   Paying(0, 2 * kGas, 16));
    REQUIRE(chain.Check(spend).code() == 0);
    std::vector<std::string> honest;  // 80 txs at 1 per gas
    for (std::uint64_t seq = 0; seq < 5; ++seq) {
      for (std::uint64_t i = 0; i < 16; ++i) {
        honest.push_back(chain.Send(funded[i].first, kAlice, "1stake", Paying(seq, kGas, i)));
        REQUIRE(chain.Check(honest.back()).code() == 0);
      }
    }
    int refused = 0;
    if (attack) {
      for (std::uint64_t seq = 1; seq <= 23; ++seq) {
        const auto res =
            chain.Check(chain.Send(attacker, kAlice, "1stake", Paying(seq, 2 * kGas, 16)));
        if (res.code() == 5) ++refused;
      }
    }
    const auto block = Prepare(chain, kT0 + kSecond);
    REQUIRE(chain.Process(block, kT0 + kSecond).status() ==
            abci_pb::ResponseProcessProposal::ACCEPT);
    int failed = 0;
    const auto res = chain.Block(block, kT0 + kSecond);
    for (const auto& r : res.tx_results()) failed += r.code() != 0;
    std::set<std::string> in_block(block.begin(), block.end());
    int honest_in = 0;
    for (const auto& tx : honest) honest_in += static_cast<int>(in_block.count(tx));
    return std::tuple{honest_in, failed, refused, block.size()};
  };
  const auto [quiet_honest, quiet_failed, quiet_refused, quiet_size] = run(false);
  const auto [honest, failed, refused, size] = run(true);
  INFO("without the attack: " << quiet_honest << " honest txs in the block of " << quiet_size
                              << "; with it: " << honest << " of " << size << ", " << failed
                              << " failed in the block, " << refused << " refused at CheckTx");
  CHECK(quiet_honest == 49);  // 50 txs of 200000 gas fill 10M: the attacker's send and 49
  CHECK(honest == quiet_honest);
  CHECK(failed == 0);
  CHECK(refused == 23);
  CHECK(quiet_failed == 0);
  CHECK(quiet_refused == 0);
}

TEST_CASE("PrepareProposal runs each tx whole: a fee an earlier send spent leaves the tx out",
          "[tx_pool]") {
  // The pool admitted alice's send and her next tx while her balance covered both; then a block
  // from elsewhere (her unordered tx, never in this pool, with no recheck since: budget 0) took
  // 201. Her send still succeeds, and leaves 4,799: not enough for the next tx's 4,999 fee. Run
  // ante-only, the proposal held both and the second failed in FinalizeBlock, paying nothing.
  TestChain chain = Chain(WithoutRecheck());
  chain.Block({}, kT0);
  const std::string send = chain.Send(kAlice, kBob, std::to_string(1000000000 - 10000) + "stake",
                                      Paying(0, 5000, 0));
  const std::string next = chain.Send(kAlice, kBob, "1stake", Paying(1, 4999, 0));
  REQUIRE(chain.Check(send).code() == 0);
  REQUIRE(chain.Check(next).code() == 0);
  AliceSpendsElsewhere(chain, "1stake");
  CHECK(Stats(chain).size() == 2);
  const auto block = Prepare(chain, kT0 + 2 * kSecond);
  CHECK(block == std::vector<std::string>{send});
  CHECK(chain.Process(block, kT0 + 2 * kSecond).status() ==
        abci_pb::ResponseProcessProposal::ACCEPT);
  const auto res = chain.Block(block, kT0 + 2 * kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(chain.Balance(kAlice) == std::to_string(10000 - 201 - 5000));
}

TEST_CASE("PrepareProposal includes a tx whose messages fail: it pays its fee in the block",
          "[tx_pool]") {
  // Alice's first tx sends more than she will have once a block from elsewhere took most of her
  // balance: its ante passes (the fee), its message fails. FinalizeBlock charges the fee and
  // sequence; the proposal includes it, and its scratch state is FinalizeBlock's (her next tx
  // follows it, its sequence taken).
  TestChain chain = Chain(WithoutRecheck());
  chain.Block({}, kT0);
  const std::string a = chain.Send(kAlice, kBob, "999000000stake", Paying(0, 5000, 0));
  const std::string b = chain.Send(kAlice, kBob, "1stake", Paying(1, 5000, 0));
  REQUIRE(chain.Check(a).code() == 0);
  REQUIRE(chain.Check(b).code() == 0);
  AliceSpendsElsewhere(chain, "990000000stake");  // a's send will fail, its fee will not
  const auto block = Prepare(chain, kT0 + 2 * kSecond);
  CHECK(block == std::vector<std::string>{a, b});
  const auto results = chain.Block(block, kT0 + 2 * kSecond).tx_results();
  REQUIRE(results.size() == 2);
  CHECK(results[0].code() == 5);  // the send fails; the fee is kept
  CHECK(results[1].code() == 0);
  CHECK(chain.Balance(kAlice) == std::to_string(1000000000 - 990000000 - 200 - 5000 - 5000 - 1));
}

TEST_CASE("a replacement that adds or drops a co-signer moves that co-signer's sequence",
          "[tx_pool]") {
  TestChain chain = Chain();
  chain.Block({}, kT0);
  const auto cosigned = [&](std::uint64_t fee) {
    SendOptions o = Paying(0, fee, 0);
    return app::BuildSignedTx(
        SpecOf({MakeSend(kAlice, kDave, "1stake"), MakeSend(kBob, kDave, "1stake")}, o),
        {SignerOf(kAlice, 0, 0), SignerOf(kBob, 1, 0)}, TestChain::kChainId);
  };
  // Alice's sequence 0, alone; then replaced by a tx bob co-signs with his sequence 0.
  REQUIRE(chain.Check(chain.Send(kAlice, kDave, "1stake", Paying(0, kGas, 0))).code() == 0);
  const std::string both = cosigned(2 * kGas);
  REQUIRE(chain.Check(both).code() == 0);
  // Bob's sequence 0 is taken: his next tx must use 1 (it used to be accepted with 0 again).
  const auto reuse = chain.Check(chain.Send(kBob, kDave, "1stake", Paying(0, kGas, 1)));
  CHECK(reuse.code() == 32);
  CHECK_THAT(reuse.log(), Catch::Contains("expected 1, got 0"));
  // Replaced again by alice alone: bob's sequence 0 is free again.
  const std::string alone = chain.Send(kAlice, kDave, "2stake", Paying(0, 3 * kGas, 0));
  REQUIRE(chain.Check(alone).code() == 0);
  const std::string bob0 = chain.Send(kBob, kDave, "1stake", Paying(0, kGas, 1));
  CHECK(chain.Check(bob0).code() == 0);
  const auto block = Prepare(chain, kT0 + kSecond);
  CHECK(block == std::vector<std::string>{alone, bob0});
  const auto res = chain.Block(block, kT0 + kSecond);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
}

}  // namespace kairos::test
