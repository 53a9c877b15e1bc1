// BlockSignatureCheck (app/block_signatures.h) on its own, and FinalizeBlock's results with 1, 2
// and 4 signature threads.
#include "app/block_signatures.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "test_chain.h"

namespace kairos::test {
namespace {

using app::BlockSignatureCheck;

struct SignedJob {
  ante::PubKey key;
  std::string sign_bytes;
  std::string signature;
};

// `n` signatures by alternating secp256k1 and ed25519 keys; every `bad`-th one is corrupted.
std::vector<SignedJob> MakeJobs(std::size_t n, std::size_t bad) {
  std::vector<SignedJob> jobs;
  for (std::size_t i = 0; i < n; ++i) {
    const auto type = i % 2 == 0 ? crypto::KeyType::kSecp256k1 : crypto::KeyType::kEd25519;
    const TestKey k = MakeKey("signer" + std::to_string(i), type);
    SignedJob j;
    j.key = {type, k.pub};
    j.sign_bytes = "sign bytes of tx " + std::to_string(i);
    j.signature = type == crypto::KeyType::kSecp256k1 ? crypto::Secp256k1Sign(k.priv, j.sign_bytes)
                                                      : crypto::Ed25519Sign(k.priv, j.sign_bytes);
    if (bad != 0 && i % bad == bad - 1) j.signature[5] ^= 1;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

bool Cached(const ante::SignatureCache& cache, const SignedJob& j) {
  return cache.Contains(ante::SignatureCache::KeyOf(j.key, j.sign_bytes, j.signature));
}

// Two jobs per tx, in order.
void AddAll(BlockSignatureCheck& check, const std::vector<SignedJob>& jobs) {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (i % 2 == 0) check.AddTx();
    check.Add({jobs[i].key, jobs[i].sign_bytes, &jobs[i].signature});
  }
}

TEST_CASE("block signatures: the helpers verify every job the executor leaves them",
          "[block_signatures]") {
  const auto jobs = MakeJobs(40, 7);
  ante::SignatureCache cache;
  std::size_t verified = 0;
  {
    BlockSignatureCheck check(&cache, 2);
    AddAll(check, jobs);
    check.Start();
    // The executor holds back until the helpers have taken every job: nothing is left to claim.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (check.helper_verified() < jobs.size() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (std::size_t tx = 0; tx < jobs.size() / 2; ++tx) check.BeforeTx(tx);
    verified = check.helper_verified();
  }
  CHECK(verified == jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job " << i);
    // Only a valid signature goes into the cache.
    CHECK(Cached(cache, jobs[i]) == (i % 7 != 6));
  }
}

TEST_CASE("block signatures: the executor claims what no helper has taken, and the two never "
          "verify the same job",
          "[block_signatures]") {
  const auto jobs = MakeJobs(64, 0);
  ante::SignatureCache cache;
  std::size_t helper_verified = 0;
  {
    BlockSignatureCheck check(&cache, 1);
    AddAll(check, jobs);
    check.Start();
    for (std::size_t tx = 0; tx < jobs.size() / 2; ++tx) check.BeforeTx(tx);
    // After BeforeTx the helper takes nothing more: its count is final (up to a job it was
    // verifying, which BeforeTx waited for).
    helper_verified = check.helper_verified();
  }
  // A job is in the cache exactly when the helper verified it: the executor's claims are left to
  // the ante, so they are not in it.
  std::size_t cached = 0;
  for (const SignedJob& j : jobs) cached += Cached(cache, j) ? 1 : 0;
  CHECK(cached == helper_verified);
  // The helper works from the back: what it verified is a suffix of the block.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job " << i);
    CHECK(Cached(cache, jobs[i]) == (i >= jobs.size() - helper_verified));
  }
}

TEST_CASE("block signatures: without helpers nothing is verified ahead and BeforeTx is a no-op",
          "[block_signatures]") {
  const auto jobs = MakeJobs(4, 0);
  ante::SignatureCache cache;
  {
    BlockSignatureCheck check(&cache, 0);
    AddAll(check, jobs);
    check.Start();
    check.BeforeTx(0);
    check.BeforeTx(1);
    check.BeforeTx(5);  // past the end: ignored
    CHECK(check.helper_verified() == 0);
  }
  for (const SignedJob& j : jobs) CHECK_FALSE(Cached(cache, j));
}

TEST_CASE("FinalizeBlock gives the same results and app hash with 1, 2 and 4 signature threads",
          "[block_signatures][kairos_app]") {
  // 80 senders (more than the 64 txs a helper needs), each sending twice in the block. Bad
  // signatures: the block's last tx (corrupted) and the one before it (signed for the wrong
  // account number), which the helper verifies first as it starts from the back, and sender
  // 17's first tx (wrong account number), whose second tx then fails on its sequence.
  std::vector<std::pair<TestKey, std::string>> funded;
  for (int i = 0; i < 80; ++i) {
    funded.emplace_back(MakeKey("sender" + std::to_string(i),
                                i % 3 == 0 ? crypto::KeyType::kEd25519
                                           : crypto::KeyType::kSecp256k1),
                        "1000000stake");
  }
  const TestKey sink = MakeKey("sink");
  std::vector<std::string> txs;
  for (std::uint64_t seq = 0; seq < 2; ++seq) {
    for (std::size_t i = 0; i < funded.size(); ++i) {
      SendOptions o;
      o.account_number = i;
      o.sequence = seq;
      o.fee = "10stake";
      if ((seq == 0 && i == 17) || (seq == 1 && i == 78)) o.account_number = 99;
      std::string tx = app::BuildSignedTx(SpecOf({MakeSend(funded[i].first, sink, "5stake")}, o),
                                          {SignerOf(funded[i].first, o.account_number, seq)},
                                          TestChain::kChainId);
      if (seq == 1 && i == 79) tx[tx.size() - 3] ^= 1;  // in the signature, the tx's last field
      txs.push_back(std::move(tx));
    }
  }
  std::vector<std::string> results;
  for (std::size_t threads : {1, 2, 4}) {
    app::AppOptions options;
    options.signature_threads = threads;
    TestChain chain(funded, "", options);
    chain.Block({}, kT0);  // commits the genesis accounts, whose keys the helpers start from
    const auto res = chain.Block(txs, kT0 + kSecond);
    REQUIRE(res.tx_results_size() == static_cast<int>(txs.size()));
    std::size_t failed = 0;
    for (int i = 0; i < res.tx_results_size(); ++i) {
      if (res.tx_results(i).code() != 0) ++failed;
    }
    CHECK(res.tx_results(17).code() == 4);
    CHECK(res.tx_results(80 + 17).code() == 32);  // its first tx never ran
    CHECK(res.tx_results(80 + 78).code() == 4);
    CHECK(res.tx_results(80 + 79).code() == 4);
    CHECK(failed == 4);
    results.push_back(res.SerializeAsString());
  }
  CHECK(results[0] == results[1]);
  CHECK(results[0] == results[2]);
}

}  // namespace
}  // namespace kairos::test
