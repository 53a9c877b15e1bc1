// query_bench: what a client hammering queries does to block times, and what one Simulate of a
// tx crafted to flood hash tables costs.
//
// One KairosApp behind the ABCI socket server, as kairosd runs it. A consensus client sends
// FinalizeBlock + Commit of --block-txs transfers over one connection, pausing --pause-ms
// between blocks as CometBFT's timeout_commit does, and times each block's round trip. A query
// client on another connection asks without pause. Phases of --blocks blocks on one chain:
//   baseline       no queries;
//   proofs/exec    the proof of a random account at a random kept height older than the store's
//                  in-memory versions (so nearly every query rebuilds a past tree: a few
//                  changesets to a checkpoint interval of them), with query_threads = 0: every
//                  query on the application executor, as every query ran until issue 20;
//   proofs/thread  the same with query_threads = 1 (kairosd's default): beside the executor;
//   simulate       Simulate of a tx of --simulate-sends one-coin sends (within the default
//                  limit of 1000 messages) to recipients whose account keys collide under
//                  libstdc++'s fixed-seed std::hash, query_threads = 1.
// Then, alone: Simulate of 5,000 such sends (over the limit: refused before it runs), and of
// --simulate-sends crafted sends against as many random ones.
//
// Usage: query_bench [--accounts N] [--block-txs T] [--warmup W] [--blocks B] [--pause-ms P]
//                    [--simulate-sends S]
// Not a test: it asserts only that every tx succeeds and every query gets the answer expected.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "abci/server.h"
#include "app/auth/keeper.h"
#include "app/hex.h"
#include "app/kairos_app.h"
#include "app/tx_codec.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "store/merkle_store.h"
#include "test/bench/bench_chain.h"
#include "test/std_hash_collisions.h"

namespace {

using namespace kairos;
using bench::Die;
using Clock = std::chrono::steady_clock;
namespace pb = ::tendermint::abci;

constexpr char kChainId[] = "kairos-query-bench";
constexpr std::int64_t kT0 = 1767225600LL * 1'000'000'000;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Options {
  std::size_t accounts = 20000;
  std::size_t block_txs = 1000;
  std::size_t warmup = 60;
  std::size_t blocks = 20;
  int pause_ms = 200;
  std::size_t simulate_sends = 1000;
};

// A query client's next request.
using NextQuery = std::function<pb::Request(std::mt19937_64&)>;

class Bench {
 public:
  explicit Bench(const Options& o) : o_(o), accounts_(bench::MakeAccounts(o.accounts, "qb-")) {
    sequences_.assign(accounts_.size(), 0);
    char pattern[] = "/tmp/kairos-querybench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
    dir_ = pattern;
    store::StoreOptions so;  // kairosd's defaults: keep 100, a checkpoint every 50
    so.dir = dir_ + "/data";
    auto db = store::MerkleStore::Open(so);
    if (!db.ok()) Die(db.status().ToString());
    store_ = db->get();
    app::AppOptions ao;
    ao.mempool.max_txs = 2 * o.block_txs;
    auto a = app::KairosApp::Open(std::move(*db), ao);
    if (!a.ok()) Die(a.status().ToString());
    app_ = std::move(*a);
    pb::RequestInitChain init;
    init.set_chain_id(kChainId);
    init.set_initial_height(1);
    init.set_app_state_bytes(bench::FundedAppState(accounts_, "1000000000"));
    app_->InitChain(init);
  }
  ~Bench() {
    app_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  const store::MerkleStore& store() const { return *store_; }
  const std::vector<bench::Account>& accounts() const { return accounts_; }

  // `blocks` blocks through a server with `query_threads`, a client sending `next` queries
  // without pause meanwhile (none when null), each answer checked by `ok`; each block's round
  // trip in milliseconds, and the queries answered.
  std::pair<std::vector<double>, std::size_t> Run(std::size_t blocks, std::size_t query_threads,
                                                  const NextQuery& next = nullptr) {
    const std::string path = dir_ + "/abci.sock";
    abci::ServerOptions so;
    so.address = "unix://" + path;
    so.handle_signals = false;
    so.query_threads = query_threads;
    abci::Server server(*app_, so);
    std::string error;
    if (!server.Listen(&error)) Die(error);
    std::thread serving([&] { server.Run(); });
    std::atomic<bool> done{false};
    std::atomic<std::size_t> answered{0};
    std::thread querier([&] {
      if (!next) return;
      bench::AbciClient client(path);
      std::mt19937_64 rng(7);
      while (!done.load()) {
        const pb::Request q = next(rng);
        const pb::Response res = client.Call({q})[0];
        if (res.query().code() != 0) Die("a query failed: " + res.query().log());
        answered.fetch_add(1);
      }
    });
    std::vector<double> ms;
    {
      bench::AbciClient consensus(path);
      for (std::size_t b = 0; b < blocks; ++b) {
        std::vector<pb::Request> reqs(2);
        pb::RequestFinalizeBlock* f = reqs[0].mutable_finalize_block();
        f->set_height(++height_);
        f->mutable_time()->set_seconds((kT0 / 1'000'000'000) + height_);
        for (std::string& tx : NextTxs()) f->add_txs(std::move(tx));
        reqs[1].mutable_commit();
        const auto start = Clock::now();
        const auto answers = consensus.Call(reqs);
        ms.push_back(MillisSince(start));
        for (const auto& r : answers[0].finalize_block().tx_results()) {
          if (r.code() != 0) Die("a block tx failed: " + r.log());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(o_.pause_ms));
      }
    }
    done = true;
    querier.join();
    server.Stop();
    serving.join();
    return {ms, answered.load()};
  }

  // The proof of a random account at a random kept height older than the in-memory versions.
  pb::Request PastProof(std::mt19937_64& rng) const {
    // Kept heights (keep_recent 100, pruned every 10) below the latest 6.
    const std::int64_t latest = store_->LatestCommitted().version;
    const std::int64_t earliest = std::max<std::int64_t>(1, latest - 85);
    const std::int64_t newest_old = std::max(earliest + 1, latest - 6);
    pb::Request q;
    q.mutable_query()->set_path("/store/" + app::HexEncode(app::auth::AuthKeeper::AccountKey(
                                                accounts_[rng() % accounts_.size()].address)));
    q.mutable_query()->set_height(
        earliest + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(
                                                         newest_old - earliest)));
    q.mutable_query()->set_prove(true);
    return q;
  }

  // A Simulate query of a tx of `recipients.size()` one-coin sends from account 0, unsigned.
  pb::Request Simulate(const std::vector<std::string>& recipients) const {
    app::TxSpec spec;
    for (const std::string& to : recipients) spec.msgs.push_back(bench::OneCoin(accounts_[0], to));
    spec.fee = *ante::Coins::Parse("10stake");
    spec.gas_limit = 100000;
    app::SignerKey k;
    k.private_key = accounts_[0].priv;
    k.sequence = sequences_[0];
    std::string tx = app::BuildSignedTx(spec, {k}, kChainId);
    cosmos::tx::v1beta1::SimulateRequest sim;
    sim.set_tx_bytes(std::move(tx));
    pb::Request q;
    q.mutable_query()->set_path("/cosmos.tx.v1beta1.Service/Simulate");
    q.mutable_query()->set_data(sim.SerializeAsString());
    return q;
  }

  // One query on the executor (no server), its time and answer.
  std::pair<double, pb::ResponseQuery> Direct(const pb::Request& q) {
    const auto start = Clock::now();
    pb::ResponseQuery res = app_->Query(q.query());
    return {MillisSince(start), std::move(res)};
  }

 private:
  // The next block's transfers: consecutive senders (account 0 left out: it simulates), each to
  // a random other account.
  std::vector<std::string> NextTxs() {
    std::vector<std::string> txs;
    for (std::size_t i = 0; i < o_.block_txs; ++i) {
      next_sender_ = next_sender_ % (accounts_.size() - 1) + 1;
      const std::size_t from = next_sender_;
      const bench::Account& to = accounts_[rng_() % accounts_.size()];
      txs.push_back(bench::SignedSend(accounts_[from], from, sequences_[from]++, to.address,
                                      kChainId));
    }
    return txs;
  }

  Options o_;
  std::vector<bench::Account> accounts_;
  std::vector<std::uint64_t> sequences_;
  std::string dir_;
  const store::MerkleStore* store_ = nullptr;
  std::unique_ptr<app::KairosApp> app_;
  std::size_t next_sender_ = 0;
  std::int64_t height_ = 0;
  std::mt19937_64 rng_{42};
};

void Print(const char* phase, std::vector<double> ms, std::size_t queries) {
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(ms.size()));
    return ms[std::min(ms.size() - 1, i)];
  };
  std::printf("%-14s block round trip p50=%.1f ms p90=%.1f ms max=%.1f ms; queries answered %zu\n",
              phase, at(0.5), at(0.9), ms.back(), queries);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::size_t v = std::stoul(argv[i + 1]);
    if (flag == "--accounts") o.accounts = v;
    else if (flag == "--block-txs") o.block_txs = v;
    else if (flag == "--warmup") o.warmup = v;
    else if (flag == "--blocks") o.blocks = v;
    else if (flag == "--pause-ms") o.pause_ms = static_cast<int>(v);
    else if (flag == "--simulate-sends") o.simulate_sends = v;
    else Die("query_bench: unknown flag " + flag);
  }
  std::printf("genesis of %zu accounts, %zu warm-up blocks of %zu transfers...\n", o.accounts,
              o.warmup, o.block_txs);
  Bench bench(o);
  bench.Run(o.warmup, 1);
  const auto crafted = test::StdHashCollidingAddresses(5000, &app::auth::AuthKeeper::AccountKey, 3);
  const auto within_limit = static_cast<std::ptrdiff_t>(std::min(o.simulate_sends, crafted.size()));
  const std::vector<std::string> within(crafted.begin(), crafted.begin() + within_limit);
  const auto proofs = [&](std::mt19937_64& rng) { return bench.PastProof(rng); };
  const auto simulations = [&, q = bench.Simulate(within)](std::mt19937_64&) { return q; };
  const auto [base, base_q] = bench.Run(o.blocks, 1);
  const auto [exec, exec_q] = bench.Run(o.blocks, 0, proofs);
  const auto [thread, thread_q] = bench.Run(o.blocks, 1, proofs);
  const auto [sim, sim_q] = bench.Run(o.blocks, 1, simulations);
  Print("baseline", base, base_q);
  Print("proofs/exec", exec, exec_q);
  Print("proofs/thread", thread, thread_q);
  Print("simulate", sim, sim_q);

  const auto [over_ms, over] = bench.Direct(bench.Simulate(crafted));
  std::printf("simulate %zu crafted sends: code %u in %.3f ms (%s)\n", crafted.size(),
              over.code(), over_ms, over.log().c_str());
  const auto [crafted_ms, c] = bench.Direct(bench.Simulate(within));
  const auto [random_ms, r] = bench.Direct(
      bench.Simulate(test::RandomAddresses(within.size(), 5)));
  if (c.code() != 0 || r.code() != 0) Die("a simulation failed: " + c.log() + r.log());
  std::printf("simulate %zu sends: crafted recipients %.1f ms, random %.1f ms (%.2fx)\n",
              within.size(), crafted_ms, random_ms, crafted_ms / random_ms);
  return 0;
}
