#include "app/client/bench_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <CLI/CLI.hpp>

#include "ante/coins.h"
#include "ante/context.h"
#include "ante/tx.h"
#include "app/client/chain_queries.h"
#include "app/client/cli_util.h"
#include "app/client/encoding.h"
#include "app/client/keyring.h"
#include "app/client/prompt.h"
#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"
#include "crypto/keys.h"
#include "app/bank/msgs.h"

namespace kairos::client {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;
using json = OrderedJson;

constexpr std::size_t kMsgsPerFundingTx = 100;
constexpr std::int32_t kRpcError = -1;  // TxState::code: no CheckTx answer (connection, RPC error)
constexpr std::int32_t kNotSent = -2;
constexpr std::int32_t kInFlight = -3;
constexpr std::chrono::milliseconds kFollowPoll{50};
constexpr std::chrono::seconds kRequestTimeout{30};
constexpr char kAccountSeedPrefix[] = "kairos bench load accounts: ";

struct BenchFlags {
  double rate = 0;
  std::string duration = "60s";
  std::uint32_t accounts = 100;
  double unordered_share = 0;
  std::vector<std::string> nodes;
  std::vector<std::string> api;  // kairosd REST addresses, one per node: send through them
  std::string seed = "kairos-bench";
  std::string fund_from;
  std::string fund_amount = "100000000stake";
  std::string amount = "1stake";
  std::string fees = "200stake";
  std::uint64_t gas = 200000;
  unsigned connections = 8;
  std::string drain = "30s";
  std::string unordered_ttl = "120s";
  bool kvstore = false;
  std::size_t tx_size = 0;
  std::string chain_id;
  std::string passphrase_file;
  std::string tx_log;
  std::string output;  // "" = client.toml's
};

// One coin of one denom as a uint64 (the amounts a bench run needs are small).
struct SimpleCoin {
  std::string denom;
  std::uint64_t amount = 0;
  std::string ToString() const { return std::to_string(amount) + denom; }
};

SimpleCoin ParseSimpleCoin(const std::string& text, const std::string& flag) {
  const ante::Coins coins = Take(ante::Coins::Parse(text), kExitUsage, "invalid " + flag + ": ");
  if (coins.coins().size() != 1) {
    Fail(kExitUsage, flag + " must be one coin, e.g. 200stake, not '" + text + "'");
  }
  const ante::Coin& c = coins.coins()[0];
  if (c.amount > std::numeric_limits<std::uint64_t>::max() / 4) {
    Fail(kExitUsage, flag + " is too large: " + text);
  }
  return {c.denom, static_cast<std::uint64_t>(c.amount)};
}

ante::Coins ToCoins(const SimpleCoin& c) {
  return *ante::Coins::FromSorted({ante::Coin{c.denom, ante::Uint256(c.amount)}});
}

struct BenchAccount {
  std::string private_key;
  std::string raw;      // 20-byte address
  std::string address;  // bech32
  std::uint64_t account_number = 0;
  std::uint64_t sequence = 0;
};

// The K bench keys (see the file comment of bench_load.h).
std::vector<BenchAccount> DeriveAccounts(const std::string& seed, std::uint32_t count) {
  const std::string mnemonic =
      crypto::MnemonicFromEntropy(crypto::Sha256(kAccountSeedPrefix + seed));
  const crypto::ExtendedKey master =
      crypto::MasterKeyFromSeed(crypto::MnemonicToSeed(mnemonic, ""));
  std::vector<BenchAccount> out(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const crypto::ExtendedKey key =
        Take(crypto::DerivePath(master, "m/44'/118'/0'/0/" + std::to_string(i)));
    const std::optional<std::string> pub = crypto::Secp256k1PublicKey(key.private_key);
    if (!pub) Fail(kExitFailure, "bench key " + std::to_string(i) + " is not a valid key");
    out[i].private_key = key.private_key;
    out[i].raw = crypto::AddressOf(crypto::KeyType::kSecp256k1, *pub);
    out[i].address = crypto::EncodeAccountAddress(out[i].raw);
  }
  return out;
}

std::uint64_t BalanceOf(RpcClient& rpc, const std::string& address, const std::string& denom) {
  const CoinAmount c = Take(QueryBalance(rpc, address, denom, 0), kExitFailure,
                            "balance of " + address + ": ");
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const Result<ante::Uint256> amount = ante::ParseAmount(c.amount);
  if (!amount.ok()) return 0;
  return *amount > kMax ? kMax : static_cast<std::uint64_t>(*amount);
}

std::string Now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%H:%M:%S");
  return out.str();
}

void Note(const std::string& text) { std::cerr << "[" << Now() << "] bench: " << text << "\n"; }

// The funding phase: sends `each` to every account holding less than `need`.
void FundAccounts(const std::string& home, const BenchFlags& f, RpcClient& rpc,
                  const std::string& chain_id, const std::vector<BenchAccount>& accounts,
                  const SimpleCoin& each, std::uint64_t need, const SimpleCoin& fee) {
  const Keyring keyring(KeyringPath(home));
  const KeyInfo from = Take(keyring.Find(f.fund_from), kExitFailure, "--fund-from: ");
  std::vector<const BenchAccount*> poor;
  for (const BenchAccount& a : accounts) {
    if (BalanceOf(rpc, a.address, each.denom) < need) poor.push_back(&a);
  }
  if (poor.empty()) {
    Note("all " + std::to_string(accounts.size()) + " bench accounts hold enough; no funding");
    return;
  }
  const Account funder = Take(QueryAccount(rpc, from.address, 0), kExitFailure,
                              "--fund-from " + f.fund_from + ": ");
  const std::string passphrase =
      Take(KeyringPassphrase(f.passphrase_file, "Passphrase for key '" + from.name + "': ", false));
  const KeySecret secret = Take(keyring.Unlock(from.name, passphrase));
  app::SignerKey signer;
  signer.type = from.type;
  signer.private_key = secret.private_key;
  signer.account_number = funder.account_number;
  auto spec_for = [&](std::size_t first, std::size_t count) {
    app::TxSpec spec;
    spec.fee = ToCoins(fee);
    for (std::size_t i = first; i < first + count; ++i) {
      app::bank::MsgSend msg;
      msg.from_address = from.address;
      msg.to_address = poor[i]->address;
      msg.from = *crypto::DecodeAccountAddress(from.address);
      msg.to = poor[i]->raw;
      msg.amount = ToCoins(each);
      spec.msgs.push_back(std::move(msg));
    }
    return spec;
  };
  // The gas of a full batch, simulated once (every batch has at most as many messages).
  const std::size_t first_batch = std::min(poor.size(), kMsgsPerFundingTx);
  app::TxSpec probe = spec_for(0, first_batch);
  probe.gas_limit = 0;
  signer.sequence = funder.sequence;
  const GasEstimate estimate = Take(Simulate(rpc, app::BuildSignedTx(probe, {signer}, chain_id)),
                                    kExitFailure, "simulating a funding tx failed: ");
  const std::uint64_t gas_limit = estimate.gas_used * 3 / 2 + 10000;
  std::vector<std::string> hashes;
  for (std::size_t first = 0; first < poor.size(); first += kMsgsPerFundingTx) {
    app::TxSpec spec = spec_for(first, std::min(kMsgsPerFundingTx, poor.size() - first));
    spec.gas_limit = gas_limit;
    signer.sequence = funder.sequence + hashes.size();
    const std::string tx = app::BuildSignedTx(spec, {signer}, chain_id);
    const BroadcastResponse sent = Take(rpc.BroadcastTxSync(tx), kExitFailure, "funding tx: ");
    if (sent.code != 0) {
      Fail(kExitFailure, "funding tx rejected: " + CodeAndLog(sent.code, sent.codespace, sent.log));
    }
    hashes.push_back(crypto::Sha256(tx));
  }
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (const std::string& hash : hashes) {
    while (true) {
      const std::optional<TxResponse> r = Take(rpc.FindTx(hash), kExitFailure, "funding tx: ");
      if (r) {
        if (r->code != 0) {
          Fail(kExitFailure, "funding tx " + app::HexEncode(hash, true) + " failed in block " +
                                 std::to_string(r->height) + ": " +
                                 CodeAndLog(r->code, r->codespace, r->log));
        }
        break;
      }
      if (Clock::now() >= deadline) {
        Fail(kExitFailure,
             "funding tx " + app::HexEncode(hash, true) + " not in a block within 60s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  Note("funded " + std::to_string(poor.size()) + " bench accounts with " + each.ToString() +
       " each from " + from.name + " in " + std::to_string(hashes.size()) + " txs");
}

// ---- the plan: every tx signed and its HTTP request written before the clock starts -------

struct PlannedTx {
  std::string request;  // the whole HTTP request
  std::string hash;     // SHA-256 of the tx (raw)
  std::int64_t due_ns = 0;
  std::uint32_t account = 0;
  std::uint32_t node = 0;
  std::uint32_t bytes = 0;
  bool unordered = false;
};

// Written by the sender thread (sent_ns, code) and the follower (the rest); the follower reads
// code only after the send loop ended.
struct TxState {
  std::atomic<std::int64_t> sent_ns{-1};
  std::atomic<std::int32_t> code{kNotSent};
  std::int64_t included_ns = -1;
  std::int64_t height = 0;
  std::uint32_t result_code = 0;
  bool result_known = false;  // result_code came from /block_results
  std::uint32_t inclusions = 0;
  // Accepted (code 0) but parked behind a sequence gap (the log says "parked: ..."): the sender
  // thread writes it before the follower can see the tx included.
  std::atomic<bool> parked{false};
};

// A tx's HTTP request: CometBFT's JSON-RPC broadcast_tx_sync, or (`rest`) kairosd's REST
// BroadcastTx, POST /cosmos/tx/v1beta1/txs (app/api/tx_service.h).
std::string HttpRequest(const NodeUrl& node, std::string_view tx, std::size_t id, bool rest) {
  const std::string body =
      rest ? R"({"tx_bytes":")" + Base64Encode(tx) + R"(","mode":"BROADCAST_MODE_SYNC"})"
           : R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                 R"(,"method":"broadcast_tx_sync","params":{"tx":")" + Base64Encode(tx) +
                 R"("}})";
  const std::string target = node.base_path + (rest ? "/cosmos/tx/v1beta1/txs" : "/");
  return "POST " + target + " HTTP/1.1\r\nHost: " + node.host + ":" + node.port +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

std::string KvstoreTx(const std::string& run_id, std::size_t j, std::size_t size,
                      std::mt19937_64& rng) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string tx = "bench-" + run_id + "-" + std::to_string(j) + "=";
  while (tx.size() < size) tx.push_back(kLetters[rng() % (sizeof(kLetters) - 1)]);
  return tx;
}

// ---- the send loop ------------------------------------------------------------------------

struct Rejection {
  std::uint64_t count = 0;
  std::string example;
};

struct NodeRun {
  NodeUrl url;
  asio::ip::tcp::endpoint endpoint;
  std::vector<std::uint32_t> queue;  // indexes into the plan, in due order
  std::size_t next = 0;
};

struct Run {
  std::vector<PlannedTx> plan;
  std::unique_ptr<TxState[]> state;
  std::unordered_map<std::string, std::uint32_t> by_hash;
  std::vector<NodeRun> nodes;
  Clock::time_point t0;
  std::map<std::string, Rejection> rejections;  // sender thread only
  std::int64_t max_lag_ns = 0;                   // sender thread only
  std::int64_t last_sent_ns = 0;                 // sender thread only
  std::atomic<bool> sending_done{false};
  bool rest = false;  // txs go to kairosd's REST BroadcastTx (--api), not CometBFT's RPC
};

std::int64_t SinceT0(const Run& run) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - run.t0).count();
}

void Reject(Run& run, const std::string& key, const std::string& detail) {
  Rejection& r = run.rejections[key];
  if (r.count++ == 0) r.example = detail;
}

// Decodes broadcast_tx_sync's answer (or, `rest`, BroadcastTx's) into the tx's code (or an RPC
// error). The two carry the check in different places: CometBFT's "result" {code, codespace,
// log}, the SDK's "tx_response" {code, codespace, raw_log}.
void RecordAnswer(Run& run, std::uint32_t i, unsigned status, const std::string& body,
                  bool rest) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  TxState& st = run.state[i];
  const std::string kind = rest ? "rest error: " : "rpc error: ";
  if (j.is_discarded() || !j.is_object()) {
    st.code = kRpcError;
    Reject(run, kind + "not JSON", body.substr(0, 200));
    return;
  }
  if (rest && status != 200) {  // grpc-gateway's error body: {"code", "message", "details"}
    const std::string what = "HTTP " + std::to_string(status) + ": " +
                             j.value("message", std::string("error"));
    st.code = kRpcError;
    Reject(run, kind + what, what);
    return;
  }
  if (!rest && j.contains("error") && !j["error"].is_null()) {
    const nlohmann::json& e = j["error"];
    std::string what = e.value("message", std::string("error"));
    if (e.contains("data") && e["data"].is_string()) what += ": " + e["data"].get<std::string>();
    st.code = kRpcError;
    Reject(run, kind + what, what);
    return;
  }
  try {
    const nlohmann::json& r = j.at(rest ? "tx_response" : "result");
    const std::string log = r.value(rest ? "raw_log" : "log", std::string());
    const auto code = static_cast<std::uint32_t>(JsonInt(r, "code"));
    if (code == 0 && ParkedWaitingFor(log)) st.parked = true;
    st.code = static_cast<std::int32_t>(code);
    if (code != 0) {
      const std::string codespace = r.value("codespace", std::string());
      Reject(run,
             "code " + std::to_string(code) + (codespace.empty() ? "" : " (" + codespace + ")"),
             log);
    }
  } catch (const std::exception& e) {
    st.code = kRpcError;
    Reject(run, kind + "unexpected reply", e.what());
  }
}

asio::awaitable<void> SendLoop(Run& run, NodeRun& node) {
  auto ex = co_await asio::this_coro::executor;
  beast::tcp_stream stream(ex);
  beast::flat_buffer buffer;
  asio::steady_timer timer(ex);
  bool connected = false;
  while (node.next < node.queue.size()) {
    const std::uint32_t i = node.queue[node.next++];
    const PlannedTx& tx = run.plan[i];
    const Clock::time_point due = run.t0 + std::chrono::nanoseconds(tx.due_ns);
    beast::error_code ec;
    if (Clock::now() < due) {
      timer.expires_at(due);
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    TxState& st = run.state[i];
    if (!connected) {
      stream.expires_after(std::chrono::seconds(5));
      co_await stream.async_connect(node.endpoint, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        stream.close();
        st.code = kRpcError;
        Reject(run, "rpc error: connect to " + node.url.text + ": " + ec.message(), ec.message());
        continue;
      }
      connected = true;
      buffer.clear();
    }
    const std::int64_t now = SinceT0(run);
    run.max_lag_ns = std::max(run.max_lag_ns, now - tx.due_ns);
    st.code = kInFlight;
    st.sent_ns = now;
    run.last_sent_ns = std::max(run.last_sent_ns, now);
    stream.expires_after(kRequestTimeout);
    co_await asio::async_write(stream, asio::buffer(tx.request),
                               asio::redirect_error(asio::use_awaitable, ec));
    http::response<http::string_body> res;
    if (!ec) {
      co_await http::async_read(stream, buffer, res, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec) {
      st.code = kRpcError;
      Reject(run, "rpc error: " + node.url.text + ": " + ec.message(), ec.message());
      beast::error_code ignored;
      stream.socket().close(ignored);
      connected = false;
      continue;
    }
    RecordAnswer(run, i, res.result_int(), res.body(), run.rest);
    if (!res.keep_alive()) {
      beast::error_code ignored;
      stream.socket().close(ignored);
      connected = false;
    }
  }
}

// ---- the follower -------------------------------------------------------------------------

struct FollowStats {
  std::int64_t first_height = 0;
  std::int64_t last_height = 0;
  std::uint64_t blocks = 0;
  std::uint64_t block_txs = 0;  // every tx in the blocks seen, the run's or not
  std::uint64_t duplicates = 0;  // a run tx seen in a second block
  std::uint64_t errors = 0;
  std::int64_t last_inclusion_ns = 0;
  std::string last_error;
};

// /block of a height not committed yet, or /block_results of a block whose results are not
// saved yet (CometBFT stores the block first).
bool NotYet(const Status& s) {
  return s.message().find("must be less than or equal to") != std::string::npos ||
         s.message().find("could not find results") != std::string::npos;
}

// The run's txs in one block: (plan index, position in the block).
using RunTxsInBlock = std::vector<std::pair<std::uint32_t, std::size_t>>;

// The result codes of the run's txs in the blocks seen: /block_results of each such block,
// asked once the run is over. During the run the follower reads /block only: a node renders
// /block_results as JSON through reflection, event by event, and for a Cosmos app's txs (a
// dozen events each) that took a fifth of the followed node's CPU at 800 tx/s, load that the
// generator itself put on the network it measures.
void FetchResultCodes(Run& run, std::vector<RpcClient>& rpcs, std::size_t which,
                      const std::vector<std::pair<std::int64_t, RunTxsInBlock>>& blocks,
                      FollowStats& stats) {
  for (const auto& [height, ours] : blocks) {
    // The last block's results are saved a moment after the block (FinalizeBlock runs after
    // CometBFT stores it): "not yet" is waited out, up to 10 s; other errors try the next
    // node, each node twice at most. A code that never came stays unknown (reported).
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    std::size_t failures = 0;
    while (true) {
      Result<nlohmann::json> results =
          rpcs[which].Get("block_results", {{"height", std::to_string(height)}});
      Status error = results.status();
      if (results.ok()) {
        try {
          const nlohmann::json& r = results->at("txs_results");
          for (const auto& [index, pos] : ours) {
            TxState& st = run.state[index];
            if (st.height == height && r.is_array() && pos < r.size()) {
              st.result_code = static_cast<std::uint32_t>(JsonInt(r[pos], "code"));
              st.result_known = true;
            }
          }
          break;
        } catch (const std::exception& e) {
          error = Status::IOError("block_results " + std::to_string(height) + ": " + e.what());
        }
      }
      if (NotYet(error) && Clock::now() < deadline) {
        std::this_thread::sleep_for(kFollowPoll);
        continue;
      }
      ++stats.errors;
      stats.last_error = error.message();
      which = (which + 1) % rpcs.size();
      if (++failures >= 2 * rpcs.size() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(kFollowPoll);
    }
  }
}

void Follow(Run& run, std::vector<RpcClient>& rpcs, std::int64_t from_height,
            std::chrono::nanoseconds drain, FollowStats& stats) {
  std::size_t which = 0;
  std::int64_t h = from_height + 1;
  stats.first_height = h;
  std::uint64_t pending_accepted = 0;  // after sending: accepted and not yet seen
  std::int64_t seen_height = 0, seen_at = 0;
  Clock::time_point send_end{};
  std::vector<std::pair<std::int64_t, RunTxsInBlock>> ours_by_block;  // (height, its run txs)
  auto switch_node = [&](const Status& s) {
    ++stats.errors;
    stats.last_error = s.message();
    which = (which + 1) % rpcs.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  while (true) {
    if (run.sending_done && send_end == Clock::time_point{}) {
      send_end = Clock::now();
      for (std::size_t i = 0; i < run.plan.size(); ++i) {
        if (run.state[i].code == 0 && run.state[i].included_ns < 0) ++pending_accepted;
      }
    }
    if (send_end != Clock::time_point{} &&
        (pending_accepted == 0 || Clock::now() >= send_end + drain)) {
      break;
    }
    Result<nlohmann::json> block = rpcs[which].Get("block", {{"height", std::to_string(h)}});
    if (!block.ok()) {
      if (NotYet(block.status())) {
        std::this_thread::sleep_for(kFollowPoll);
      } else {
        switch_node(block.status());
      }
      continue;
    }
    // When /block first answered for h (a retry after an unreadable answer keeps that moment).
    if (seen_height != h) {
      seen_height = h;
      seen_at = SinceT0(run);
    }
    const std::int64_t seen = seen_at;
    RunTxsInBlock ours;
    std::size_t block_txs = 0;
    try {
      const nlohmann::json& txs = block->at("block").at("data").at("txs");
      if (txs.is_array()) {
        block_txs = txs.size();
        for (std::size_t pos = 0; pos < txs.size(); ++pos) {
          const std::optional<std::string> raw = Base64Decode(txs[pos].get<std::string>());
          if (!raw) continue;
          const auto it = run.by_hash.find(crypto::Sha256(*raw));
          if (it != run.by_hash.end()) ours.emplace_back(it->second, pos);
        }
      }
    } catch (const std::exception& e) {
      switch_node(Status::IOError(std::string("block ") + std::to_string(h) + ": " + e.what()));
      continue;
    }
    for (const auto& [index, pos] : ours) {
      TxState& st = run.state[index];
      if (st.inclusions++ == 0) {
        st.included_ns = seen;
        st.height = h;
        stats.last_inclusion_ns = seen;
        if (send_end != Clock::time_point{} && st.code == 0 && pending_accepted > 0) {
          --pending_accepted;
        }
      } else {
        ++stats.duplicates;
      }
    }
    if (!ours.empty()) ours_by_block.emplace_back(h, std::move(ours));
    ++stats.blocks;
    stats.block_txs += block_txs;
    stats.last_height = h;
    ++h;
  }
  FetchResultCodes(run, rpcs, which, ours_by_block, stats);
}

// ---- the command --------------------------------------------------------------------------

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::nan("");
  const std::size_t rank =
      static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size()))) - 1;
  return sorted[std::min(rank, sorted.size() - 1)];
}

json Millis(double ms) {
  if (std::isnan(ms)) return nullptr;
  if (std::isinf(ms)) return nullptr;
  return std::llround(ms);
}

std::string MillisText(double ms) {
  if (std::isnan(ms)) return "-";
  if (std::isinf(ms)) return "none (txs missing)";
  std::ostringstream out;
  out << std::fixed << std::setprecision(0) << ms << " ms";
  return out.str();
}

void RunBenchLoad(const std::string& home, const BenchFlags& f) {
  // ---- flags (exit 2)
  if (!(f.rate > 0) || !std::isfinite(f.rate) || f.rate > 1e6) {
    Fail(kExitUsage, "--rate must be a number of txs per second in (0, 1000000]");
  }
  const std::int64_t duration_ns =
      Take(ante::ParseDuration(f.duration), kExitUsage, "--duration: ");
  const std::int64_t drain_ns = Take(ante::ParseDuration(f.drain), kExitUsage, "--drain: ");
  const std::int64_t ttl_ns =
      Take(ante::ParseDuration(f.unordered_ttl), kExitUsage, "--unordered-ttl: ");
  if (!(f.unordered_share >= 0 && f.unordered_share <= 1)) {
    Fail(kExitUsage, "--unordered-share must be in [0, 1]");
  }
  if (f.nodes.empty()) Fail(kExitUsage, "--node: at least one CometBFT RPC address is needed");
  if (f.connections == 0 || f.connections > 256) {
    Fail(kExitUsage, "--connections must be in 1..256");
  }
  const double total_d = std::floor(f.rate * static_cast<double>(duration_ns) / 1e9);
  if (total_d < 1) Fail(kExitUsage, "--rate x --duration gives no tx to send");
  if (total_d > 5e6) Fail(kExitUsage, "--rate x --duration is over 5,000,000 txs");
  const std::size_t total = static_cast<std::size_t>(total_d);
  if (!f.kvstore) {
    if (f.accounts == 0) Fail(kExitUsage, "--accounts must be at least 1");
    if (f.accounts > 100000) Fail(kExitUsage, "--accounts must be at most 100000");
    if (f.unordered_share > 0 && ttl_ns + duration_ns > 9LL * 60 * 1000000000) {
      Fail(kExitUsage, "with unordered txs --duration + --unordered-ttl must stay under 9m (the "
                       "chain refuses a timeout_timestamp over 10m ahead of the block time)");
    }
  } else if (!f.fund_from.empty()) {
    Fail(kExitUsage, "--fund-from does not apply to --kvstore (it has no accounts)");
  } else if (f.unordered_share > 0) {
    Fail(kExitUsage, "--unordered-share does not apply to --kvstore");
  }
  const SimpleCoin amount = ParseSimpleCoin(f.amount, "--amount");
  const SimpleCoin fee = ParseSimpleCoin(f.fees, "--fees");
  const SimpleCoin fund_each = ParseSimpleCoin(f.fund_amount, "--fund-amount");
  if (amount.denom != fee.denom || fund_each.denom != fee.denom) {
    Fail(kExitUsage, "--amount, --fees and --fund-amount must be in one denom");
  }
  std::vector<NodeUrl> urls;
  for (const std::string& n : f.nodes) urls.push_back(Take(ParseNodeUrl(n), kExitUsage));
  std::vector<NodeUrl> api_urls;
  for (const std::string& a : f.api) {
    Result<NodeUrl> u = ParseNodeUrl(a);
    if (!u.ok()) Fail(kExitUsage, "--api " + a + ": " + u.status().message());
    api_urls.push_back(*u);
  }
  if (!api_urls.empty() && api_urls.size() != urls.size()) {
    Fail(kExitUsage, "--api: one kairosd REST address per --node (" +
                         std::to_string(urls.size()) + "), got " +
                         std::to_string(api_urls.size()));
  }
  if (!api_urls.empty() && f.kvstore) Fail(kExitUsage, "--api does not apply to --kvstore");
  const bool json_out = IsJson(f.output);

  // ---- the nodes: reachable, one chain
  std::vector<RpcClient> rpcs;
  for (const NodeUrl& u : urls) rpcs.emplace_back(u);
  std::string chain_id = f.chain_id;
  for (RpcClient& rpc : rpcs) {
    const std::string id = Take(rpc.ChainId(), kExitFailure);
    if (chain_id.empty()) chain_id = id;
    if (id != chain_id) {
      Fail(kExitFailure, rpc.node().text + " is on chain '" + id + "', not '" + chain_id + "'");
    }
  }

  // ---- accounts (not for kvstore)
  std::vector<BenchAccount> accounts;
  const std::uint32_t k = f.kvstore ? 1 : f.accounts;
  const std::uint64_t per_account = (total + k - 1) / k + 1;
  const std::uint64_t need = per_account * (amount.amount + fee.amount);
  if (!f.kvstore) {
    accounts = DeriveAccounts(f.seed, k);
    if (!f.fund_from.empty()) {
      if (fund_each.amount < need) {
        Fail(kExitUsage, "--fund-amount " + fund_each.ToString() + " is less than the " +
                             std::to_string(need) + fund_each.denom + " each account needs");
      }
      FundAccounts(home, f, rpcs[0], chain_id, accounts, fund_each, need, fee);
    }
    for (std::size_t i = 0; i < accounts.size(); ++i) {
      BenchAccount& a = accounts[i];
      Result<Account> acc = QueryAccount(rpcs[0], a.address, 0);
      if (!acc.ok()) {
        if (acc.status().IsNotFound()) {
          Fail(kExitFailure, "bench account " + std::to_string(i) + " (" + a.address +
                                 ") does not exist on the chain: fund the accounts first with "
                                 "--fund-from KEY (a funded key in the --home keyring)");
        }
        Fail(kExitFailure, "query account " + a.address + ": " + acc.status().message());
      }
      a.account_number = acc->account_number;
      a.sequence = acc->sequence;
      const std::uint64_t have = BalanceOf(rpcs[0], a.address, fee.denom);
      if (have < need) {
        Fail(kExitFailure, "bench account " + std::to_string(i) + " (" + a.address + ") holds " +
                               std::to_string(have) + fee.denom + ", this run needs " +
                               std::to_string(need) + fee.denom +
                               " per account: fund them with --fund-from KEY");
      }
    }
  }

  // ---- the plan
  Run run;
  run.plan.resize(total);
  run.state = std::make_unique<TxState[]>(total);
  run.nodes.resize(urls.size());
  run.rest = !api_urls.empty();
  std::mt19937_64 rng(std::random_device{}());
  const std::string run_id = app::HexEncode(crypto::Sha256(std::to_string(rng())).substr(0, 4));
  std::size_t tx_size = f.tx_size;
  app::SignerKey signer;
  signer.type = crypto::KeyType::kSecp256k1;
  auto spec_for = [&](std::size_t j) {
    app::TxSpec spec;
    const BenchAccount& from = accounts[j % k];
    const BenchAccount& to = accounts[(j + 1) % k];
    app::bank::MsgSend msg;
    msg.from_address = from.address;
    msg.to_address = to.address;
    msg.from = from.raw;
    msg.to = to.raw;
    msg.amount = ToCoins(amount);
    spec.msgs.push_back(std::move(msg));
    spec.fee = ToCoins(fee);
    spec.gas_limit = f.gas;
    // The run's id: a run that signs a sequence an earlier run also signed (its txs were never
    // included: refused, evicted) makes other bytes. The same bytes would be refused as "tx
    // already seen" by CometBFT v0.40's app-mempool mode, which remembers every tx it passed
    // on to the app.
    spec.memo = run_id;
    return spec;
  };
  if (f.kvstore && tx_size == 0) {  // the size of a signed transfer of this shape
    const std::vector<BenchAccount> two = DeriveAccounts(f.seed, 2);
    app::TxSpec spec;
    app::bank::MsgSend msg;
    msg.from_address = two[0].address;
    msg.to_address = two[1].address;
    msg.from = two[0].raw;
    msg.to = two[1].raw;
    msg.amount = ToCoins(amount);
    spec.msgs.push_back(std::move(msg));
    spec.fee = ToCoins(fee);
    spec.gas_limit = f.gas;
    spec.memo = run_id;
    app::SignerKey probe;
    probe.private_key = two[0].private_key;
    probe.account_number = 1000;  // a few-digit account number and sequence, as on a real chain
    probe.sequence = 1000;
    tx_size = app::BuildSignedTx(spec, {probe}, chain_id).size();
  }
  const auto sign_start = std::chrono::system_clock::now();
  const std::int64_t sign_start_unix =
      std::chrono::duration_cast<std::chrono::nanoseconds>(sign_start.time_since_epoch()).count();
  const auto t_sign = Clock::now();
  std::vector<std::uint64_t> next_seq;
  for (const BenchAccount& a : accounts) next_seq.push_back(a.sequence);
  std::size_t unordered_count = 0;
  std::uint64_t tx_bytes = 0;
  for (std::size_t j = 0; j < total; ++j) {
    PlannedTx& p = run.plan[j];
    p.due_ns = static_cast<std::int64_t>(static_cast<double>(j) * 1e9 / f.rate);
    p.account = static_cast<std::uint32_t>(j % k);
    p.node = static_cast<std::uint32_t>(f.kvstore ? j % urls.size() : p.account % urls.size());
    std::string tx;
    if (f.kvstore) {
      tx = KvstoreTx(run_id, j, tx_size, rng);
    } else {
      // Unordered where the running share first reaches the next whole tx: evenly spread.
      p.unordered = static_cast<double>(unordered_count) <
                    std::floor(f.unordered_share * static_cast<double>(j + 1));
      app::TxSpec spec = spec_for(j);
      const BenchAccount& from = accounts[p.account];
      signer.private_key = from.private_key;
      signer.account_number = from.account_number;
      if (p.unordered) {
        ++unordered_count;
        spec.unordered = true;
        spec.timeout_unix_nanos = sign_start_unix + p.due_ns + ttl_ns;
        signer.sequence = 0;
      } else {
        signer.sequence = next_seq[p.account]++;
      }
      tx = app::BuildSignedTx(spec, {signer}, chain_id);
    }
    p.bytes = static_cast<std::uint32_t>(tx.size());
    tx_bytes += tx.size();
    p.hash = crypto::Sha256(tx);
    p.request = HttpRequest(run.rest ? api_urls[p.node] : urls[p.node], tx, j, run.rest);
    if (!run.by_hash.emplace(p.hash, static_cast<std::uint32_t>(j)).second) {
      Fail(kExitFailure, "two planned txs have the same hash (tx " + std::to_string(j) + ")");
    }
    run.nodes[p.node].queue.push_back(static_cast<std::uint32_t>(j));
  }
  const double sign_seconds =
      std::chrono::duration<double>(Clock::now() - t_sign).count();
  Note((f.kvstore ? "built " : "signed ") + std::to_string(total) + " txs (" +
       std::to_string(unordered_count) + " unordered, " +
       std::to_string(tx_bytes / total) + " bytes on average) in " +
       std::to_string(static_cast<int>(sign_seconds * 1000)) + " ms");

  // ---- resolve the nodes, find the height to follow from
  asio::io_context ioc(1);
  for (std::size_t n = 0; n < urls.size(); ++n) {
    const NodeUrl& send_to = run.rest ? api_urls[n] : urls[n];
    asio::ip::tcp::resolver resolver(ioc);
    beast::error_code ec;
    const auto results = resolver.resolve(send_to.host, send_to.port, ec);
    if (ec || results.empty()) {
      Fail(kExitFailure, "cannot resolve " + send_to.text + ": " + ec.message());
    }
    run.nodes[n].url = send_to;
    run.nodes[n].endpoint = results.begin()->endpoint();
  }
  std::int64_t start_height = 0;
  {
    Result<nlohmann::json> st = rpcs[0].Get("status", {});
    if (!st.ok()) Fail(kExitFailure, st.status().message());
    try {
      start_height = JsonInt(st->at("sync_info"), "latest_block_height");
    } catch (const std::exception& e) {
      Fail(kExitFailure, "status at " + urls[0].text + ": " + e.what());
    }
  }

  // ---- run
  std::ostringstream rate_text;
  rate_text << f.rate;
  Note("sending " + std::to_string(total) + " txs at " + rate_text.str() + "/s to " +
       std::to_string(urls.size()) + " node(s), " + std::to_string(f.connections) +
       " connections each; following blocks from height " + std::to_string(start_height + 1));
  run.t0 = Clock::now() + std::chrono::milliseconds(100);
  FollowStats follow;
  std::thread follower([&] {
    Follow(run, rpcs, start_height, std::chrono::nanoseconds(drain_ns), follow);
  });
  for (NodeRun& node : run.nodes) {
    for (unsigned c = 0; c < f.connections && c < node.queue.size(); ++c) {
      asio::co_spawn(ioc, SendLoop(run, node), asio::detached);
    }
  }
  ioc.run();
  run.sending_done = true;
  follower.join();
  const std::int64_t end_ns = SinceT0(run);

  // ---- report
  std::uint64_t sent = 0, accepted = 0, included = 0, included_failed = 0, rpc_errors = 0;
  std::uint64_t included_result_unknown = 0;
  std::uint64_t accepted_missing = 0;
  std::uint64_t parked = 0, parked_missing = 0;  // accepted behind a sequence gap
  std::map<std::uint32_t, std::uint64_t> failed_codes;
  std::vector<double> latencies;  // ms, accepted txs; +inf when never seen in a block
  for (std::size_t i = 0; i < total; ++i) {
    const TxState& st = run.state[i];
    const std::int32_t code = st.code;
    if (code != kNotSent) ++sent;
    if (code == kRpcError) ++rpc_errors;
    if (st.inclusions > 0) {
      ++included;
      if (!st.result_known) ++included_result_unknown;
      if (st.result_code != 0) {
        ++included_failed;
        ++failed_codes[st.result_code];
      }
    }
    if (code == 0) {
      ++accepted;
      if (st.parked) {
        ++parked;
        if (st.inclusions == 0) ++parked_missing;
      }
      if (st.inclusions > 0) {
        latencies.push_back(static_cast<double>(st.included_ns - st.sent_ns) / 1e6);
      } else {
        ++accepted_missing;
        latencies.push_back(std::numeric_limits<double>::infinity());
      }
    }
  }
  std::sort(latencies.begin(), latencies.end());
  const double p50 = Percentile(latencies, 0.50), p99 = Percentile(latencies, 0.99);
  const double max_ms = latencies.empty() ? std::nan("") : latencies.back();
  const double send_span_s = static_cast<double>(run.last_sent_ns) / 1e9;
  const double window_s =
      std::max({send_span_s, static_cast<double>(follow.last_inclusion_ns) / 1e9, 1e-9});
  const double tps = static_cast<double>(included) / window_s;
  const double send_rate = send_span_s > 0 ? static_cast<double>(sent) / send_span_s : 0;

  if (!f.tx_log.empty()) {
    std::ofstream out(f.tx_log, std::ios::trunc);
    if (!out) Fail(kExitFailure, "cannot write --tx-log " + f.tx_log);
    for (std::size_t i = 0; i < total; ++i) {
      const TxState& st = run.state[i];
      const std::int32_t code = st.code;
      out << app::HexEncode(run.plan[i].hash, true) << ' ' << run.plan[i].account << ' '
          << (run.plan[i].unordered ? 'u' : 'o') << ' ' << run.plan[i].node << ' '
          << (code == kNotSent ? -2 : code == kRpcError || code == kInFlight ? -1 : code) << ' '
          << st.height << '\n';
    }
    if (!out.flush()) Fail(kExitFailure, "cannot write --tx-log " + f.tx_log);
  }

  if (json_out) {
    json rej = json::object();
    for (const auto& [key, r] : run.rejections) {
      rej[key] = {{"count", r.count}, {"example", r.example}};
    }
    json failed = json::object();
    for (const auto& [code, n] : failed_codes) failed[std::to_string(code)] = n;
    json nodes = json::array();
    for (const NodeUrl& u : urls) nodes.push_back(u.text);
    PrintJson({{"mode", f.kvstore ? "kvstore" : "kairos"},
               {"chain_id", chain_id},
               {"nodes", nodes},
               {"rate", f.rate},
               {"duration_s", static_cast<double>(duration_ns) / 1e9},
               {"accounts", f.kvstore ? 0 : k},
               {"unordered", unordered_count},
               {"tx_bytes_avg", tx_bytes / total},
               {"planned", total},
               {"sent", sent},
               {"accepted", accepted},
               {"accepted_ready", accepted - parked},
               {"accepted_parked", parked},
               {"parked_not_included", parked_missing},
               {"rpc_errors", rpc_errors},
               {"rejections", rej},
               {"included", included},
               {"included_failed", included_failed},
               {"included_failed_codes", failed},
               {"accepted_not_included", accepted_missing},
               {"included_result_unknown", included_result_unknown},
               {"duplicate_inclusions", follow.duplicates},
               {"tps", std::round(tps * 10) / 10},
               {"send_rate", std::round(send_rate * 10) / 10},
               {"send_seconds", std::round(send_span_s * 100) / 100},
               {"max_send_lag_ms", run.max_lag_ns / 1000000},
               {"latency_ms",
                {{"p50", Millis(p50)}, {"p99", Millis(p99)}, {"max", Millis(max_ms)}}},
               {"blocks", follow.blocks},
               {"first_height", follow.first_height},
               {"last_height", follow.last_height},
               {"block_txs", follow.block_txs},
               {"follower_errors", follow.errors},
               {"sign_seconds", std::round(sign_seconds * 100) / 100},
               {"wall_seconds", std::round(static_cast<double>(end_ns) / 1e7) / 100}});
  } else {
    std::cout << std::fixed << std::setprecision(1)
              << "mode:        " << (f.kvstore ? "kvstore" : "kairos") << " (chain " << chain_id
              << ", " << urls.size() << " nodes)\n"
              << "target:      " << f.rate << " tx/s for " << static_cast<double>(duration_ns) / 1e9
              << " s = " << total << " txs of " << tx_bytes / total << " bytes";
    if (!f.kvstore) {
      std::cout << ", " << k << " accounts, " << unordered_count << " unordered";
    }
    std::cout << "\nsent:        " << sent << " in " << send_span_s << " s (" << send_rate
              << " tx/s; at most " << run.max_lag_ns / 1000000 << " ms behind schedule)\n"
              << "accepted:    " << accepted << " (CheckTx code 0): " << accepted - parked
              << " ready, " << parked << " parked behind a sequence gap";
    if (parked) std::cout << " (" << parked_missing << " of them never included)";
    std::cout << "\n";
    for (const auto& [key, r] : run.rejections) {
      std::cout << "  rejected:  " << r.count << " x " << key << ": " << r.example << "\n";
    }
    std::cout << "included:    " << included << " in blocks " << follow.first_height << ".."
              << follow.last_height;
    if (included_failed) std::cout << " (" << included_failed << " failed in the block)";
    if (included_result_unknown) {
      std::cout << " (" << included_result_unknown << " with no result code: /block_results "
                << "did not answer)";
    }
    if (accepted_missing) std::cout << "; " << accepted_missing << " accepted txs never seen";
    if (follow.duplicates) std::cout << "; " << follow.duplicates << " seen in a second block!";
    std::cout << "\nTPS:         " << tps << " (included / " << window_s << " s)\n"
              << "latency:     p50 " << MillisText(p50) << ", p99 " << MillisText(p99)
              << ", max " << MillisText(max_ms) << " (send -> block seen)\n";
  }
}

}  // namespace

void AddBenchCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand("bench", "Load tests against running nodes");
  bench->require_subcommand(1);
  CLI::App* load = bench->add_subcommand(
      "load", "Send signed transfers at a fixed rate and report acceptance, inclusion, TPS and "
              "latency");
  load->add_option("--rate", f->rate, "Txs per second (all nodes together)")->required();
  load->add_option("--duration", f->duration, "How long to send, e.g. 60s")->capture_default_str();
  load->add_option("--accounts", f->accounts, "Sender accounts (derived from --seed)")
      ->capture_default_str();
  load->add_option("--unordered-share", f->unordered_share,
                   "Fraction of unordered (ADR-070) txs, 0..1")
      ->capture_default_str();
  load->add_option("--node", f->nodes, "CometBFT RPC addresses (repeat, or list after one flag)")
      ->required();
  load->add_option("--api", f->api,
                   "Send through kairosd's REST API (POST /cosmos/tx/v1beta1/txs) at these "
                   "addresses, one per --node, instead of CometBFT's broadcast_tx_sync; blocks "
                   "are still followed through --node");
  load->add_option("--seed", f->seed, "Derive the bench accounts from this text")
      ->capture_default_str();
  load->add_option("--fund-from", f->fund_from,
                   "First fund the accounts that are short from this keyring key");
  load->add_option("--fund-amount", f->fund_amount, "What --fund-from sends each account")
      ->capture_default_str();
  load->add_option("--amount", f->amount, "What each transfer sends")->capture_default_str();
  load->add_option("--fees", f->fees, "Fee of each transfer")->capture_default_str();
  load->add_option("--gas", f->gas, "Gas limit of each transfer")->capture_default_str();
  load->add_option("--connections", f->connections, "Keep-alive HTTP connections per node")
      ->capture_default_str();
  load->add_option("--drain", f->drain,
                   "After the last send, wait up to this long for accepted txs to be included")
      ->capture_default_str();
  load->add_option("--unordered-ttl", f->unordered_ttl,
                   "timeout_timestamp of an unordered tx = its due time + this")
      ->capture_default_str();
  load->add_flag("--kvstore", f->kvstore,
                 "Baseline against CometBFT's kvstore app: key=value txs, no signing");
  load->add_option("--tx-size", f->tx_size,
                   "With --kvstore: bytes per tx (default: a signed transfer's size)");
  load->add_option("--chain-id", f->chain_id, "Chain id (default: the nodes')");
  load->add_option("--passphrase-file", f->passphrase_file,
                   "The keyring passphrase for --fund-from (else $KAIROS_KEYRING_PASSPHRASE)");
  load->add_option("--tx-log", f->tx_log, "Write one line per tx here after the run");
  AddOutputFlag(load, &f->output);
  load->callback([&home, f] { RunBenchLoad(home, *f); });
}

}  // namespace kairos::client
