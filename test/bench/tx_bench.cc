// tx_bench: the cost of real Cosmos transactions in Kairos, each figure printed beside a baseline
// measured in the same run.
//
//   1. CheckTx of valid, distinct MsgSend txs over the ABCI socket (one app executor thread,
//      pipelined as CometBFT does), against the raw libsecp256k1 verify rate of the same
//      signatures on one thread. Goal: CheckTx >= 80% of the raw rate.
//   2. FinalizeBlock + Commit of one block of --accounts transfers among as many accounts:
//      cold (signatures not seen before, verified in parallel on --threads), and warm (the
//      same block after CheckTx saw its txs, as on a validator). Goal: <= 0.5 s.
//   3. The proposal of that block, after CheckTx filled the pool: PrepareProposal (reaps the
//      pool and runs each tx whole, ante and messages, on a scratch branch) and ProcessProposal
//      (runs each tx's ante only), beside FinalizeBlock of the same block (which runs both and
//      records events): what running the messages in ProcessProposal too would cost.
//   4. With --flood 1, only the hash-flood reproduction (issue 20): FinalizeBlock and Commit of
//      a block of --accounts one-coin sends to new recipients, and of the next block (the same
//      sends again), with recipients whose account keys collide under libstdc++'s fixed-seed
//      std::hash, beside random recipients.
//
// Usage: tx_bench [--accounts N] [--threads T] [--rounds R] [--only-check 1] [--flood 1].
// Prints key=value lines and one JSON line. The CheckTx ratio is the best of R alternating rounds
// of each side.
// Not a test: it asserts only that every tx is accepted (a rejected tx means a broken bench).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "abci/frame.h"
#include "abci/server.h"
#include "ante/sign_doc.h"
#include "app/auth/keeper.h"
#include "app/kairos_app.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "store/merkle_store.h"
#include "test/bench/bench_chain.h"
#include "test/std_hash_collisions.h"

namespace {

using namespace kairos;
using Clock = std::chrono::steady_clock;
namespace pb = ::tendermint::abci;

constexpr char kChainId[] = "kairos-bench";
constexpr std::int64_t kT0 = 1767225600LL * 1'000'000'000;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

using bench::Account;
using bench::Die;
using bench::FundedAppState;
using bench::MakeAccounts;

std::string SignedSend(const Account& from, std::uint64_t account_number, std::uint64_t sequence,
                       const std::string& to) {
  return bench::SignedSend(from, account_number, sequence, to, kChainId);
}

struct Fixture {
  std::vector<Account> accounts;
  std::vector<std::string> txs;         // account i -> account i+1, sequence 0
  std::vector<std::string> sign_bytes;  // parallel to txs
  std::vector<std::string> signatures;
  std::string app_state;
};

Fixture Build(std::size_t n) {
  Fixture f;
  f.accounts = MakeAccounts(n);
  f.app_state = FundedAppState(f.accounts);
  for (std::size_t i = 0; i < n; ++i) {
    f.txs.push_back(SignedSend(f.accounts[i], i, 0, f.accounts[(i + 1) % n].address));
    auto decoded = app::DecodeTx(f.txs.back());
    if (!std::holds_alternative<ante::Tx>(decoded)) Die("a built tx does not decode");
    const ante::Tx& tx = std::get<ante::Tx>(decoded);
    f.sign_bytes.push_back(ante::SignDocBytes(tx.body_bytes, tx.auth_info_bytes, kChainId, i));
    f.signatures.push_back(tx.signatures[0]);
  }
  return f;
}

struct Chain {
  std::string dir;
  std::unique_ptr<app::KairosApp> app;

  Chain(const Fixture& f, std::size_t threads) : Chain(f.app_state, f.txs.size(), threads) {}
  Chain(const std::string& app_state, std::size_t block_txs, std::size_t threads) {
    char pattern[] = "/tmp/kairos-txbench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
    dir = pattern;
    store::StoreOptions so;
    so.dir = dir + "/data";
    auto db = store::MerkleStore::Open(so);
    if (!db.ok()) Die(db.status().ToString());
    app::AppOptions options;
    options.signature_threads = threads;
    options.mempool.max_txs = 2 * block_txs;  // every tx fits: the pool is not what is measured
    auto a = app::KairosApp::Open(std::move(*db), options);
    if (!a.ok()) Die(a.status().ToString());
    app = std::move(*a);
    pb::RequestInitChain init;
    init.set_chain_id(kChainId);
    init.set_initial_height(1);
    init.set_app_state_bytes(app_state);
    app->InitChain(init);
    Finalize({}, kT0);
    app->Commit({});
  }
  ~Chain() { std::system(("rm -rf " + dir).c_str()); }

  pb::ResponseFinalizeBlock Finalize(const std::vector<std::string>& txs, std::int64_t t) {
    pb::RequestFinalizeBlock req;
    req.set_height(app->last_height() + 1);
    req.mutable_time()->set_seconds(t / 1'000'000'000);
    for (const auto& tx : txs) req.add_txs(tx);
    return app->FinalizeBlock(req);
  }
};

// CPU seconds used so far by the calling thread, or by the whole process.
double CpuSeconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A rate two ways: per wall-clock second, and per CPU second of the code measured. On a shared
// machine the wall figure moves with other processes' load; the CPU figure much less.
struct Rate {
  double wall = 0, cpu = 0;
  void KeepBest(const Rate& r) {
    wall = std::max(wall, r.wall);
    cpu = std::max(cpu, r.cpu);
  }
};

Rate RawVerifyRate(const Fixture& f, const std::vector<std::string>& pubs) {
  const auto start = Clock::now();
  const double cpu0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  for (std::size_t i = 0; i < f.txs.size(); ++i) {
    if (!crypto::VerifySignature(crypto::KeyType::kSecp256k1, pubs[i], f.sign_bytes[i],
                                 f.signatures[i])) {
      Die("a signature does not verify");
    }
  }
  const double n = static_cast<double>(f.txs.size());
  return {n / Seconds(start, Clock::now()), n / (CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu0)};
}

// CheckTx of every tx over a unix socket, pipelined in groups of 100 with a Flush after each
// (as CometBFT's socket client). Returns txs per second of wall time, and per CPU second of the
// server (the process's CPU time minus the client threads' own).
Rate CheckTxRate(Chain& chain, const Fixture& f) {
  const std::string path = chain.dir + "/abci.sock";
  abci::ServerOptions options;
  options.address = "unix://" + path;
  options.handle_signals = false;
  abci::Server server(*chain.app, options);
  std::string error;
  if (!server.Listen(&error)) Die(error);
  std::thread serving([&] { server.Run(); });

  bench::AbciClient client(path);

  std::string out;
  std::size_t expected_responses = 0;
  for (std::size_t i = 0; i < f.txs.size(); ++i) {
    pb::Request req;
    req.mutable_check_tx()->set_tx(f.txs[i]);
    abci::AppendFrame(req, &out);
    ++expected_responses;
    if ((i + 1) % 100 == 0 || i + 1 == f.txs.size()) {
      pb::Request flush;
      flush.mutable_flush();
      abci::AppendFrame(flush, &out);
      ++expected_responses;
    }
  }
  const auto start = Clock::now();
  const double process_cpu0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
  const double reader_cpu0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
  double writer_cpu = 0;
  std::thread writer([&] {  // the reader below reads the answers meanwhile
    const double cpu0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    client.Send(out);
    writer_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  });
  std::size_t got = 0, rejected = 0;
  std::string first_rejection;
  while (got < expected_responses) {
    const pb::Response res = client.Read();
    if (res.has_check_tx() && res.check_tx().code() != 0) {
      if (rejected++ == 0) first_rejection = res.check_tx().log();
    }
    ++got;
  }
  const double secs = Seconds(start, Clock::now());
  const double reader_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - reader_cpu0;
  writer.join();
  const double server_cpu =
      CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu0 - reader_cpu - writer_cpu;
  server.Stop();
  serving.join();
  if (rejected) Die(std::to_string(rejected) + " CheckTx rejected, first: " + first_rejection);
  const double n = static_cast<double>(f.txs.size());
  return {n / secs, n / server_cpu};
}

// The per-tx cost of CheckTx's parts, in process (no socket), in microseconds: decoding alone,
// and a whole CheckTx whose signature is already in the cache (everything but the verify).
struct CheckTxParts {
  double decode_us = 0, check_cached_sig_us = 0;
};
CheckTxParts MeasureParts(const Fixture& f, std::size_t threads) {
  CheckTxParts parts;
  auto start = Clock::now();
  for (const auto& tx : f.txs) {
    if (!std::holds_alternative<ante::Tx>(app::DecodeTx(tx))) Die("decode failed");
  }
  parts.decode_us = 1e6 * Seconds(start, Clock::now()) / static_cast<double>(f.txs.size());
  Chain chain(f, threads);
  chain.Finalize(f.txs, kT0 + 1'000'000'000);  // verifies every signature into the cache
  // Not committed: CheckTx runs against the state before the block, with a warm cache.
  pb::RequestCheckTx req;
  start = Clock::now();
  for (const auto& tx : f.txs) {
    req.set_tx(tx);
    if (chain.app->CheckTx(req).code() != 0) Die("CheckTx rejected a tx");
  }
  parts.check_cached_sig_us = 1e6 * Seconds(start, Clock::now()) / static_cast<double>(f.txs.size());
  return parts;
}

// PrepareProposal of a block from the pool (every tx: the block's max gas and bytes hold them
// all), then ProcessProposal of what it returned; seconds each.
struct ProposalTimes {
  double prepare = 0, process = 0;
};
ProposalTimes ProposalSeconds(Chain& chain, const Fixture& f) {
  pb::RequestPrepareProposal prepare;
  prepare.set_height(chain.app->last_height() + 1);
  prepare.mutable_time()->set_seconds((kT0 + 1'000'000'000) / 1'000'000'000);
  prepare.set_max_tx_bytes(1ll << 40);
  auto start = Clock::now();
  const pb::ResponsePrepareProposal proposal = chain.app->PrepareProposal(prepare);
  ProposalTimes t;
  t.prepare = Seconds(start, Clock::now());
  if (static_cast<std::size_t>(proposal.txs_size()) != f.txs.size()) {
    Die("PrepareProposal took " + std::to_string(proposal.txs_size()) + " of " +
        std::to_string(f.txs.size()) + " txs");
  }
  pb::RequestProcessProposal process;
  process.set_height(prepare.height());
  *process.mutable_time() = prepare.time();
  *process.mutable_txs() = proposal.txs();
  start = Clock::now();
  if (chain.app->ProcessProposal(process).status() != pb::ResponseProcessProposal::ACCEPT) {
    Die("ProcessProposal rejected the proposal");
  }
  t.process = Seconds(start, Clock::now());
  return t;
}

double BlockSeconds(Chain& chain, const Fixture& f) {
  const auto start = Clock::now();
  auto res = chain.Finalize(f.txs, kT0 + 1'000'000'000);
  chain.app->Commit({});
  const double secs = Seconds(start, Clock::now());
  for (const auto& r : res.tx_results()) {
    if (r.code() != 0) Die("a block tx failed: " + r.log());
  }
  return secs;
}

// The hash-flood reproduction (issue 20, item 1): one block of one-coin sends, one from each
// of `senders`, to new recipients, then a second block of the same sends (sequence 1), each
// timed in FinalizeBlock and in Commit.
struct FloodTimes {
  double finalize1 = 0, commit1 = 0, finalize2 = 0, commit2 = 0;
  std::size_t tx_bytes = 0;
};
FloodTimes FloodBlocks(const std::vector<Account>& senders, const std::string& app_state,
                       const std::vector<std::string>& recipients, std::size_t threads) {
  std::vector<std::string> blocks[2];
  FloodTimes t;
  for (std::uint64_t seq = 0; seq < 2; ++seq) {
    for (std::size_t i = 0; i < senders.size(); ++i) {
      blocks[seq].push_back(SignedSend(senders[i], i, seq, recipients[i]));
      t.tx_bytes += seq == 0 ? blocks[seq].back().size() : 0;
    }
  }
  Chain chain(app_state, senders.size(), threads);
  for (int b = 0; b < 2; ++b) {
    const auto start = Clock::now();
    auto res = chain.Finalize(blocks[b], kT0 + (b + 1) * 1'000'000'000LL);
    const auto finalized = Clock::now();
    chain.app->Commit({});
    const auto committed = Clock::now();
    for (const auto& r : res.tx_results()) {
      if (r.code() != 0) Die("a flood tx failed: " + r.log());
    }
    (b == 0 ? t.finalize1 : t.finalize2) = Seconds(start, finalized);
    (b == 0 ? t.commit1 : t.commit2) = Seconds(finalized, committed);
  }
  return t;
}

void RunFlood(std::size_t n, std::size_t threads) {
  std::printf("building %zu funded senders...\n", n);
  const std::vector<Account> senders = MakeAccounts(n);
  const std::string app_state = FundedAppState(senders);
  // Recipients crafted so that their auth/acc/<address> keys (the account each send creates)
  // all have one value of libstdc++'s fixed-seed std::hash<std::string_view>, and a baseline of
  // random recipients, measured in the same run.
  const auto crafted = test::StdHashCollidingAddresses(n, &app::auth::AuthKeeper::AccountKey, 1);
  const auto random = test::RandomAddresses(n, 2);
  const FloodTimes r = FloodBlocks(senders, app_state, random, threads);
  const FloodTimes c = FloodBlocks(senders, app_state, crafted, threads);
  std::printf("flood: %zu one-coin sends to new recipients, %.2f MB of txs a block\n", n,
              static_cast<double>(r.tx_bytes) / 1e6);
  for (const auto& [name, t] : {std::pair{"random", r}, std::pair{"crafted", c}}) {
    std::printf("recipients=%-7s block1_finalize_s=%.3f block1_commit_s=%.3f "
                "block2_finalize_s=%.3f block2_commit_s=%.3f\n",
                name, t.finalize1, t.commit1, t.finalize2, t.commit2);
  }
  std::printf("crafted/random: block1_finalize=%.1fx block1_commit=%.1fx block2_finalize=%.1fx "
              "block2_commit=%.1fx\n",
              c.finalize1 / r.finalize1, c.commit1 / r.commit1, c.finalize2 / r.finalize2,
              c.commit2 / r.commit2);
  std::printf("{\"flood_sends\":%zu,\"random\":[%.4f,%.4f,%.4f,%.4f],"
              "\"crafted\":[%.4f,%.4f,%.4f,%.4f]}\n",
              n, r.finalize1, r.commit1, r.finalize2, r.commit2, c.finalize1, c.commit1,
              c.finalize2, c.commit2);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 10000, threads = 2, rounds = 3;
  bool only_check = false;  // --only-check 1: for profiling CheckTx alone
  bool flood = false;       // --flood 1: the hash-flood reproduction alone
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--accounts") n = std::stoul(argv[i + 1]);
    else if (flag == "--threads") threads = std::stoul(argv[i + 1]);
    else if (flag == "--rounds") rounds = std::max<std::size_t>(1, std::stoul(argv[i + 1]));
    else if (flag == "--only-check") only_check = argv[i + 1] == std::string("1");
    else if (flag == "--flood") flood = argv[i + 1] == std::string("1");
    else Die("unknown flag " + flag);
  }
  if (flood) {
    RunFlood(n, threads);
    return 0;
  }
  std::printf("building %zu accounts and signed txs...\n", n);
  const Fixture f = Build(n);
  std::vector<std::string> pubs;
  for (std::size_t i = 0; i < n; ++i) pubs.push_back(f.accounts[i].pub);

  // Raw verify and CheckTx alternate for --rounds rounds and the best round of each counts, so
  // that load from other processes on a shared machine skews both alike.
  Rate raw, check;
  double warm = 0;
  ProposalTimes proposal;
  for (std::size_t round = 0; round + 1 < rounds; ++round) {
    raw.KeepBest(RawVerifyRate(f, pubs));
    Chain chain(f, threads);
    check.KeepBest(CheckTxRate(chain, f));
  }
  raw.KeepBest(RawVerifyRate(f, pubs));
  {
    Chain chain(f, threads);
    check.KeepBest(CheckTxRate(chain, f));
    if (only_check) {
      const CheckTxParts parts = MeasureParts(f, threads);
      std::printf("per cpu: checktx=%.0f raw=%.0f (%.0f%%); wall: checktx=%.0f raw=%.0f (%.0f%%); "
                  "raw_us=%.1f decode_us=%.2f check_without_verify_us=%.2f\n",
                  check.cpu, raw.cpu, 100 * check.cpu / raw.cpu, check.wall, raw.wall,
                  100 * check.wall / raw.wall, 1e6 / raw.cpu, parts.decode_us,
                  parts.check_cached_sig_us);
      return 0;
    }
    warm = BlockSeconds(chain, f);  // CheckTx filled the signature cache
  }
  {
    // Its own chain, so that the proposal's reads do not warm the block above.
    Chain chain(f, threads);
    (void)CheckTxRate(chain, f);  // fills the pool
    proposal = ProposalSeconds(chain, f);
  }
  double cold = 0, cold1 = 0;
  {
    Chain chain(f, threads);
    cold = BlockSeconds(chain, f);
  }
  {
    Chain chain(f, 1);
    cold1 = BlockSeconds(chain, f);
  }
  std::printf("raw_secp256k1_verify_per_cpu_s=%.0f (wall %.0f/s)\n", raw.cpu, raw.wall);
  std::printf("checktx_per_server_cpu_s=%.0f (%.0f%% of raw; goal >= 80%%)\n", check.cpu,
              100 * check.cpu / raw.cpu);
  std::printf("checktx_per_wall_s=%.0f (%.0f%% of raw's wall rate)\n", check.wall,
              100 * check.wall / raw.wall);
  std::printf("block_%zu_transfers_cold_s=%.3f (signature threads %zu)\n", n, cold, threads);
  std::printf("block_%zu_transfers_cold_1thread_s=%.3f\n", n, cold1);
  std::printf("block_%zu_transfers_warm_s=%.3f (after CheckTx; goal <= 0.5 s)\n", n, warm);
  std::printf("prepare_proposal_%zu_s=%.3f (each tx whole: ante and messages)\n", n,
              proposal.prepare);
  std::printf("process_proposal_%zu_s=%.3f (each tx's ante)\n", n, proposal.process);
  std::printf("{\"accounts\":%zu,\"raw_verify_per_cpu_s\":%.0f,\"checktx_per_cpu_s\":%.0f,"
              "\"checktx_vs_raw_cpu\":%.3f,\"raw_verify_per_wall_s\":%.0f,"
              "\"checktx_per_wall_s\":%.0f,\"block_cold_s\":%.4f,"
              "\"block_cold_1thread_s\":%.4f,\"block_warm_s\":%.4f,"
              "\"prepare_proposal_s\":%.4f,\"process_proposal_s\":%.4f}\n",
              n, raw.cpu, check.cpu, check.cpu / raw.cpu, raw.wall, check.wall, cold, cold1,
              warm, proposal.prepare, proposal.process);
  return 0;
}
