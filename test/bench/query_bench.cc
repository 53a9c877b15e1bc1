// query_bench: what a client hammering proofs at past heights does to block times.
//
// One KairosApp behind the ABCI socket server, as kairosd runs it. A consensus client sends
// FinalizeBlock + Commit of --block-txs transfers over one connection, pausing --pause-ms
// between blocks as CometBFT's timeout_commit does, and times each block's round trip. A query
// client, on another connection, asks without pause for the proof of a random account at a
// random kept height older than the store's in-memory versions, so that nearly every query
// rebuilds a past tree (a few changesets to a checkpoint interval of them). In one process,
// three phases of --blocks blocks on the same chain:
//   baseline     no queries;
//   executor     queries, with query_threads = 0: every query runs on the application executor,
//                as every query did until this change;
//   query thread queries, with query_threads = 1 (kairosd's default): beside the executor.
// Prints each phase's block round trip (p50, p90, max) and the queries answered.
//
// Usage: query_bench [--accounts N] [--block-txs T] [--warmup W] [--blocks B] [--pause-ms P]
// Not a test: it asserts only that every tx and query succeeds.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "abci/frame.h"
#include "abci/server.h"
#include "app/auth.h"
#include "app/hex.h"
#include "app/kairos_app.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "store/merkle_store.h"

namespace {

using namespace kairos;
using Clock = std::chrono::steady_clock;
namespace pb = ::tendermint::abci;

constexpr char kChainId[] = "kairos-query-bench";
constexpr std::int64_t kT0 = 1767225600LL * 1'000'000'000;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "query_bench: %s\n", why.c_str());
  std::exit(1);
}

struct Account {
  std::string priv, address, bech32;
  std::uint64_t sequence = 0;
};

// A blocking ABCI client on a unix socket: one request, then its answer.
class AbciClient {
 public:
  explicit AbciClient(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) Die("connect");
  }
  ~AbciClient() { ::close(fd_); }
  // Sends the requests in one write, then reads as many answers.
  std::vector<pb::Response> Call(const std::vector<pb::Request>& requests) {
    std::string out;
    for (const pb::Request& r : requests) abci::AppendFrame(r, &out);
    for (std::size_t off = 0; off < out.size();) {
      const ssize_t n = ::write(fd_, out.data() + off, out.size() - off);
      if (n <= 0) Die("write failed");
      off += static_cast<std::size_t>(n);
    }
    std::vector<pb::Response> answers;
    while (answers.size() < requests.size()) {
      std::span<const std::uint8_t> frame;
      const auto st = decoder_.Next(&frame);
      if (st == abci::FrameDecoder::Status::kError) Die(decoder_.error());
      if (st == abci::FrameDecoder::Status::kNeedMore) {
        auto buf = decoder_.Prepare(1 << 16);
        const ssize_t n = ::read(fd_, buf.data(), buf.size());
        if (n <= 0) Die("the server closed the connection");
        decoder_.Commit(static_cast<std::size_t>(n));
        continue;
      }
      pb::Response res;
      if (!res.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) Die("bad answer");
      answers.push_back(std::move(res));
    }
    return answers;
  }

 private:
  int fd_ = -1;
  abci::FrameDecoder decoder_{256 << 20};
};

struct Options {
  std::size_t accounts = 20000;
  std::size_t block_txs = 1000;
  std::size_t warmup = 60;
  std::size_t blocks = 20;
  int pause_ms = 200;
};

class Bench {
 public:
  explicit Bench(const Options& o) : o_(o) {
    char pattern[] = "/tmp/kairos-querybench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
    dir_ = pattern;
    std::string balances;
    for (std::size_t i = 0; i < o.accounts; ++i) {
      Account a;
      a.priv = crypto::Sha256("query-bench-account-" + std::to_string(i));
      a.address = crypto::AddressOf(crypto::KeyType::kSecp256k1,
                                    *crypto::Secp256k1PublicKey(a.priv));
      a.bech32 = crypto::EncodeAccountAddress(a.address);
      balances += std::string(i ? "," : "") + R"({"address":")" + a.bech32 +
                  R"(","coins":[{"denom":"stake","amount":"1000000000"}]})";
      accounts_.push_back(std::move(a));
    }
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
    init.set_app_state_bytes(R"({"bank":{"denom":"stake","balances":[)" + balances + "]}}");
    app_->InitChain(init);
  }
  ~Bench() {
    app_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  // `blocks` blocks through a server with `query_threads`, the query client hammering when
  // `hammer`; each block's round trip in milliseconds, and the queries answered.
  std::pair<std::vector<double>, std::size_t> Run(std::size_t blocks, bool hammer,
                                                  std::size_t query_threads) {
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
      if (!hammer) return;
      AbciClient client(path);
      std::mt19937_64 rng(7);
      while (!done.load()) {
        // Kept heights (keep_recent 100, pruned every 10) older than the in-memory versions.
        const std::int64_t latest = store_->LatestCommitted().version;
        const std::int64_t earliest = std::max<std::int64_t>(1, latest - 85);
        const std::int64_t newest_old = latest - 6;
        if (newest_old <= earliest) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        pb::Request q;
        q.mutable_query()->set_path(
            "/store/" + app::HexEncode(app::AuthKeeper::AccountKey(
                            accounts_[rng() % accounts_.size()].address)));
        q.mutable_query()->set_height(
            earliest + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(
                                                             newest_old - earliest)));
        q.mutable_query()->set_prove(true);
        const pb::Response res = client.Call({q})[0];
        if (res.query().code() != 0 || res.query().proof_ops().ops_size() != 1) {
          Die("a query failed: " + res.query().log());
        }
        answered.fetch_add(1);
      }
    });
    std::vector<double> ms;
    {
      AbciClient consensus(path);
      for (std::size_t b = 0; b < blocks; ++b) {
        std::vector<pb::Request> reqs(2);
        pb::RequestFinalizeBlock* f = reqs[0].mutable_finalize_block();
        f->set_height(++height_);
        f->mutable_time()->set_seconds((kT0 / 1'000'000'000) + height_);
        for (std::string& tx : NextTxs()) f->add_txs(std::move(tx));
        reqs[1].mutable_commit();
        const auto start = Clock::now();
        const auto answers = consensus.Call(reqs);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
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

 private:
  // The next block's transfers: consecutive senders, each to a random other account.
  std::vector<std::string> NextTxs() {
    std::vector<std::string> txs;
    for (std::size_t i = 0; i < o_.block_txs; ++i) {
      Account& from = accounts_[next_sender_];
      const std::size_t number = next_sender_;  // genesis order
      next_sender_ = (next_sender_ + 1) % accounts_.size();
      const Account& to = accounts_[rng_() % accounts_.size()];
      ante::MsgSend m;
      m.from_address = from.bech32;
      m.to_address = to.bech32;
      m.from = from.address;
      m.to = to.address;
      m.amount = *ante::Coins::Parse("1stake");
      app::TxSpec spec;
      spec.msgs = {m};
      spec.fee = *ante::Coins::Parse("10stake");
      spec.gas_limit = 100000;
      app::SignerKey k;
      k.private_key = from.priv;
      k.account_number = number;
      k.sequence = from.sequence++;
      txs.push_back(app::BuildSignedTx(spec, {k}, kChainId));
    }
    return txs;
  }

  Options o_;
  std::string dir_;
  std::vector<Account> accounts_;
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
  std::printf("%-13s block round trip p50=%.1f ms p90=%.1f ms max=%.1f ms; queries answered %zu\n",
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
    else Die("unknown flag " + flag);
  }
  std::printf("genesis of %zu accounts, %zu warm-up blocks of %zu transfers...\n", o.accounts,
              o.warmup, o.block_txs);
  Bench bench(o);
  bench.Run(o.warmup, false, 1);
  const auto [base, base_q] = bench.Run(o.blocks, false, 1);
  const auto [exec, exec_q] = bench.Run(o.blocks, true, 0);
  const auto [thread, thread_q] = bench.Run(o.blocks, true, 1);
  Print("baseline", base, base_q);
  Print("executor", exec, exec_q);
  Print("query thread", thread, thread_q);
  return 0;
}
