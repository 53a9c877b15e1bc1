// ADR-070 unordered transactions, end to end through KairosApp (real store, real signatures):
// every case the issue names, plus where the nonce lives when a tx fails.
#include <catch2/catch.hpp>

#include "app/auth/keeper.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "kairos/auth/v1/query.pb.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

const TestKey kAlice = MakeKey("alice");
const TestKey kBob = MakeKey("bob");
const TestKey kCarol = MakeKey("carol", crypto::KeyType::kEd25519);

// alice = account 0, bob = 1, carol = 2.
std::vector<std::pair<TestKey, std::string>> Funded() {
  return {{kAlice, "1000000stake"}, {kBob, "1000stake"}, {kCarol, "500000stake"}};
}

SendOptions Unordered(std::int64_t timeout, std::uint64_t account_number = 0) {
  SendOptions o;
  o.unordered = true;
  o.timeout_unix_nanos = timeout;
  o.account_number = account_number;
  o.fee = "100stake";
  return o;
}

bool NonceUsed(TestChain& chain, const TestKey& signer, std::int64_t timeout) {
  kairos::auth::v1::QueryUnorderedNonceRequest q;
  q.set_signer(signer.bech32);
  q.set_timeout_unix_nanos(timeout);
  abci_pb::RequestQuery req;
  req.set_path("/kairos.auth.v1.Query/UnorderedNonce");
  req.set_data(q.SerializeAsString());
  const auto res = chain.app().Query(req);
  REQUIRE(res.code() == 0);
  kairos::auth::v1::QueryUnorderedNonceResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  return r.used();
}

// Starts a chain: its last block is at kT0.
void Start(TestChain& chain) { chain.Block({}, kT0); }

}  // namespace

TEST_CASE("an unordered tx moves funds, pays its fee, and keeps the sequence", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  auto res = chain.Block({chain.Send(kAlice, kBob, "10stake", Unordered(timeout))}, kT0 + kSecond);
  REQUIRE(res.tx_results(0).code() == 0);
  CHECK(chain.Balance(kBob) == "1010");
  CHECK(chain.Balance(kAlice) == "999890");  // 10 sent + 100 fee
  CHECK(NonceUsed(chain, kAlice, timeout));
  // The sequence did not move: an ordered tx with sequence 0 still goes through.
  SendOptions ordered;
  ordered.fee = "100stake";
  res = chain.Block({chain.Send(kAlice, kBob, "1stake", ordered)}, kT0 + 2 * kSecond);
  CHECK(res.tx_results(0).code() == 0);
}

TEST_CASE("unordered: a duplicate in the same block fails, and ProcessProposal rejects it",
          "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  const std::string first = chain.Send(kAlice, kBob, "10stake", Unordered(timeout));
  const std::string second = chain.Send(kAlice, kBob, "20stake", Unordered(timeout));  // same nonce
  REQUIRE(first != second);
  CHECK(chain.Process({first, second}, kT0 + kSecond).status() ==
        abci_pb::ResponseProcessProposal::REJECT);
  CHECK(chain.Process({first}, kT0 + kSecond).status() ==
        abci_pb::ResponseProcessProposal::ACCEPT);
  auto res = chain.Block({first, second}, kT0 + kSecond);
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == 18);
  CHECK_THAT(res.tx_results(1).log(),
             Catch::Contains("sender " + kAlice.bech32 + " has already used timeout " +
                             std::to_string(timeout)));
  CHECK(chain.Balance(kBob) == "1010");
}

TEST_CASE("unordered: a duplicate across blocks fails, also in CheckTx", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  const std::string tx = chain.Send(kAlice, kBob, "10stake", Unordered(timeout));
  CHECK(chain.Check(tx).code() == 0);
  CHECK(chain.Check(tx).code() == 19);  // the same bytes: already in the mempool
  // Other bytes on the same nonce: the check state has seen the nonce already.
  CHECK(chain.Check(chain.Send(kAlice, kBob, "11stake", Unordered(timeout))).code() == 18);
  REQUIRE(chain.Block({tx}, kT0 + kSecond).tx_results(0).code() == 0);
  CHECK(chain.Check(tx).code() == 18);
  auto res = chain.Block({tx}, kT0 + 2 * kSecond);
  CHECK(res.tx_results(0).code() == 18);
  CHECK(chain.Balance(kBob) == "1010");
}

TEST_CASE("unordered: a duplicate after a restart fails", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  const std::string tx = chain.Send(kAlice, kBob, "10stake", Unordered(timeout));
  REQUIRE(chain.Block({tx}, kT0 + kSecond).tx_results(0).code() == 0);
  chain.Reopen();
  CHECK(NonceUsed(chain, kAlice, timeout));
  CHECK(chain.Check(tx).code() == 18);
  CHECK(chain.Block({tx}, kT0 + 2 * kSecond).tx_results(0).code() == 18);
}

TEST_CASE("unordered: a timeout equal to the block time is rejected", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t t = kT0 + 5 * kSecond;
  auto res = chain.Block({chain.Send(kAlice, kBob, "10stake", Unordered(t))}, t);
  CHECK(res.tx_results(0).code() == 18);
  CHECK_THAT(res.tx_results(0).log(), Catch::Contains("equals the block time"));
  CHECK_FALSE(NonceUsed(chain, kAlice, t));
  CHECK(chain.Balance(kAlice) == "1000000");  // no fee: the ante rolled back
}

TEST_CASE("unordered: a timeout in the past is rejected (tx timeout, code 42)", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t t = kT0 + 5 * kSecond;
  auto res = chain.Block({chain.Send(kAlice, kBob, "10stake", Unordered(t - 1))}, t);
  CHECK(res.tx_results(0).code() == 42);
  CHECK_THAT(res.tx_results(0).log(), Catch::Contains("timeout timestamp") &&
                                          Catch::Contains("tx timeout"));
}

TEST_CASE("unordered: a timeout beyond the max is rejected, the max itself is accepted",
          "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t t = kT0 + kSecond;
  const std::int64_t max = 10LL * 60 * kSecond;
  auto res = chain.Block({chain.Send(kAlice, kBob, "10stake", Unordered(t + max + 1)),
                          chain.Send(kAlice, kBob, "10stake", Unordered(t + max))},
                         t);
  CHECK(res.tx_results(0).code() == 18);
  CHECK_THAT(res.tx_results(0).log(), Catch::Contains("unordered tx ttl exceeds 10m0s"));
  CHECK(res.tx_results(1).code() == 0);
}

TEST_CASE("unordered: a non-zero sequence is rejected", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  SendOptions o = Unordered(kT0 + 60 * kSecond);
  const std::string tx = app::BuildSignedTx(SpecOf({MakeSend(kAlice, kBob, "10stake")}, o),
                                            {SignerOf(kAlice, 0, /*sequence=*/1)},
                                            TestChain::kChainId);
  auto res = chain.Block({tx}, kT0 + kSecond);
  CHECK(res.tx_results(0).code() == 18);
  CHECK_THAT(res.tx_results(0).log(),
             Catch::Contains("sequence is not allowed for unordered transactions"));
}

TEST_CASE("unordered: a multi-signer tx fails if one signer's nonce is used, and writes none",
          "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  REQUIRE(chain.Block({chain.Send(kCarol, kBob, "5stake", Unordered(timeout, 2))}, kT0 + kSecond)
              .tx_results(0)
              .code() == 0);
  SendOptions o = Unordered(timeout);
  const std::string multi = app::BuildSignedTx(
      SpecOf({MakeSend(kAlice, kBob, "10stake"), MakeSend(kCarol, kBob, "10stake")}, o),
      {SignerOf(kAlice, 0, 0), SignerOf(kCarol, 2, 0)}, TestChain::kChainId);
  auto res = chain.Block({multi}, kT0 + 2 * kSecond);
  CHECK(res.tx_results(0).code() == 18);
  CHECK_THAT(res.tx_results(0).log(), Catch::Contains(kCarol.bech32));
  CHECK_FALSE(NonceUsed(chain, kAlice, timeout));  // rolled back with the fee
  CHECK(chain.Balance(kAlice) == "1000000");
  // With a fresh timeout both signers' nonces are written.
  const std::string ok = app::BuildSignedTx(
      SpecOf({MakeSend(kAlice, kBob, "10stake"), MakeSend(kCarol, kBob, "10stake")},
             Unordered(timeout + 1)),
      {SignerOf(kAlice, 0, 0), SignerOf(kCarol, 2, 0)}, TestChain::kChainId);
  REQUIRE(chain.Block({ok}, kT0 + 3 * kSecond).tx_results(0).code() == 0);
  CHECK(NonceUsed(chain, kAlice, timeout + 1));
  CHECK(NonceUsed(chain, kCarol, timeout + 1));
}

TEST_CASE("unordered: PreBlock purges timeouts <= the block time and keeps later ones",
          "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t t = kT0 + 30 * kSecond;
  REQUIRE(chain.Block({chain.Send(kAlice, kBob, "1stake", Unordered(t)),
                       chain.Send(kAlice, kBob, "1stake", Unordered(t + 1))},
                      kT0 + kSecond)
              .tx_results(1)
              .code() == 0);
  chain.Block({}, t - 1);
  CHECK(NonceUsed(chain, kAlice, t));
  CHECK(NonceUsed(chain, kAlice, t + 1));
  chain.Block({}, t);
  CHECK_FALSE(NonceUsed(chain, kAlice, t));
  CHECK(NonceUsed(chain, kAlice, t + 1));
  chain.Block({}, t + 1);
  CHECK_FALSE(NonceUsed(chain, kAlice, t + 1));
}

TEST_CASE("unordered: the off param rejects unordered txs with code 37", "[unordered]") {
  TestChain chain(Funded(), R"("unordered_enabled": false)");
  Start(chain);
  auto res = chain.Block({chain.Send(kAlice, kBob, "10stake", Unordered(kT0 + 60 * kSecond))},
                         kT0 + kSecond);
  CHECK(res.tx_results(0).code() == 37);
  CHECK_THAT(res.tx_results(0).log(),
             Catch::Contains("unordered transactions are not enabled: feature not supported"));
  SendOptions ordered;
  CHECK(chain.Block({chain.Send(kAlice, kBob, "10stake", ordered)}, kT0 + 2 * kSecond)
            .tx_results(0)
            .code() == 0);
}

TEST_CASE("unordered: a failed message keeps the nonce and the fee; a failed ante keeps neither",
          "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t t1 = kT0 + 60 * kSecond;
  // bob has 1000stake: 100 fee is fine, sending 5000 fails in the message.
  auto res = chain.Block({chain.Send(kBob, kAlice, "5000stake", Unordered(t1, 1))}, kT0 + kSecond);
  CHECK(res.tx_results(0).code() == 5);
  CHECK_THAT(res.tx_results(0).log(), Catch::Contains("spendable balance 900stake is smaller than "
                                                      "5000stake"));
  CHECK(NonceUsed(chain, kBob, t1));
  CHECK(chain.Balance(kBob) == "900");
  // A bad signature (wrong account number in the sign bytes) fails in the ante.
  const std::int64_t t2 = t1 + 1;
  res = chain.Block({chain.Send(kBob, kAlice, "1stake", Unordered(t2, 7))}, kT0 + 2 * kSecond);
  CHECK(res.tx_results(0).code() == 4);
  CHECK_FALSE(NonceUsed(chain, kBob, t2));
  CHECK(chain.Balance(kBob) == "900");
}

TEST_CASE("unordered: Simulate reads and writes no nonce", "[unordered]") {
  TestChain chain(Funded());
  Start(chain);
  const std::int64_t timeout = kT0 + 60 * kSecond;
  const std::string tx = chain.Send(kAlice, kBob, "10stake", Unordered(timeout));
  cosmos::tx::v1beta1::SimulateRequest q;
  q.set_tx_bytes(tx);
  abci_pb::RequestQuery req;
  req.set_path("/cosmos.tx.v1beta1.Service/Simulate");
  req.set_data(q.SerializeAsString());
  for (int i = 0; i < 2; ++i) {
    const auto res = chain.app().Query(req);
    REQUIRE(res.code() == 0);
    cosmos::tx::v1beta1::SimulateResponse r;
    REQUIRE(r.ParseFromString(res.value()));
    CHECK(r.gas_info().gas_used() > 2240);
  }
  CHECK(chain.Check(tx).code() == 0);  // simulating twice did not use the nonce
}

}  // namespace kairos::test
