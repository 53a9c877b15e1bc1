// signers_bench: what one tx with many signers costs a node's CheckTx, against a one-signer tx
// in the same run, measured over the ABCI socket of a running kairosd (any build: the "before"
// and "after" binaries are measured by the same client).
//
// The client starts a fresh chain on the node (InitChain with --signers funded accounts, an
// empty block 1), then alternates, --rounds times: CheckTx of the many-signer tx (one MsgSend
// per signer, each signer's key in its signer info, sequence 0, one fee from the first signer)
// and CheckTx of a valid one-signer send (the next sequence of another account each round).
// The many-signer tx is over the default tx_sig_limit (7), so the node refuses it (code 14)
// and keeps nothing: each round does the same work again. Each figure is one request's wall
// time from the write to its response, a Flush after each request (as CometBFT sends).
//
// --sequence S signs the many-signer tx at sequence S (default 0): S > 0 is a gap, so the
// node's mempool parks the tx and checks it on a branch where it first sets each signer's
// sequence (app/tx_pool.cc RunDetached), per signer, before the ante runs.
//
// Usage: signers_bench --address unix:///PATH|tcp://HOST:PORT [--signers N] [--rounds R]
//                      [--sequence S]
// Prints key=value lines: the genesis and block 1 app hashes (equal on every node, whatever its
// config), tx bytes, the node's answer, and min / median milliseconds of each.
// Not a test: it exits non-zero only when the node answers something unexpected.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "abci/frame.h"
#include "app/hex.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "tendermint/abci/types.pb.h"
#include "app/bank/msgs.h"

namespace {

using namespace kairos;
using Clock = std::chrono::steady_clock;
namespace pb = ::tendermint::abci;

constexpr char kChainId[] = "kairos-signers-bench";
constexpr std::int64_t kT0Seconds = 1767225600;

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "signers_bench: %s\n", why.c_str());
  std::exit(1);
}

struct Key {
  std::string priv, address, bech32;
};

int Connect(const std::string& address) {
  if (address.rfind("unix://", 0) == 0) {
    const std::string path = address.substr(7);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      Die("cannot connect to " + address);
    }
    return fd;
  }
  if (address.rfind("tcp://", 0) != 0) Die("--address must be unix:///PATH or tcp://HOST:PORT");
  const std::string hostport = address.substr(6);
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) Die("no port in " + address);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(hostport.substr(0, colon).c_str(), hostport.substr(colon + 1).c_str(), &hints,
                    &res) != 0) {
    Die("cannot resolve " + address);
  }
  const int fd = ::socket(res->ai_family, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd, res->ai_addr, res->ai_addrlen) != 0) Die("cannot connect to " + address);
  ::freeaddrinfo(res);
  return fd;
}

// One ABCI connection used as CometBFT's socket client does: each request followed by a Flush.
class Connection {
 public:
  explicit Connection(const std::string& address) : fd_(Connect(address)) {}
  ~Connection() { ::close(fd_); }

  // Sends `req` and a Flush; returns the response to `req` and the wall seconds it took.
  pb::Response Call(const pb::Request& req, double* seconds = nullptr) {
    std::string out;
    abci::AppendFrame(req, &out);
    pb::Request flush;
    flush.mutable_flush();
    abci::AppendFrame(flush, &out);
    const auto start = Clock::now();
    for (std::size_t off = 0; off < out.size();) {
      const ssize_t n = ::write(fd_, out.data() + off, out.size() - off);
      if (n <= 0) Die("write failed");
      off += static_cast<std::size_t>(n);
    }
    pb::Response res = Read();
    if (seconds != nullptr) {
      *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (!Read().has_flush()) Die("expected a Flush response");
    if (res.has_exception()) Die("the node answered an exception: " + res.exception().error());
    return res;
  }

 private:
  pb::Response Read() {
    for (;;) {
      std::span<const std::uint8_t> frame;
      const auto st = decoder_.Next(&frame);
      if (st == abci::FrameDecoder::Status::kError) Die(decoder_.error());
      if (st == abci::FrameDecoder::Status::kFrame) {
        pb::Response res;
        if (!res.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
          Die("a response does not parse");
        }
        return res;
      }
      auto buf = decoder_.Prepare(1 << 16);
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n <= 0) Die("the node closed the connection");
      decoder_.Commit(static_cast<std::size_t>(n));
    }
  }

  int fd_;
  abci::FrameDecoder decoder_{64 << 20};
};

// 1stake (BuildSignedTx writes the bech32 addresses from the raw ones).
app::bank::MsgSend Send(const Key& from, const Key& to) {
  app::bank::MsgSend m;
  m.from = from.address;
  m.to = to.address;
  m.amount = *ante::Coins::Parse("1stake");
  return m;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string address;
  std::size_t n = 4000, rounds = 5;
  std::uint64_t sequence = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--address") address = argv[i + 1];
    else if (flag == "--signers") n = std::max<std::size_t>(2, std::stoul(argv[i + 1]));
    else if (flag == "--rounds") rounds = std::max<std::size_t>(1, std::stoul(argv[i + 1]));
    else if (flag == "--sequence") sequence = std::stoull(argv[i + 1]);
    else Die("unknown flag " + flag);
  }
  if (address.empty()) Die("--address is required");

  // n signers, plus one more account for the one-signer baseline txs.
  std::vector<Key> keys;
  std::string balances;
  for (std::size_t i = 0; i <= n; ++i) {
    Key k;
    k.priv = crypto::Sha256("signers-bench-" + std::to_string(i));
    k.address = crypto::AddressOf(crypto::KeyType::kSecp256k1, *crypto::Secp256k1PublicKey(k.priv));
    k.bech32 = crypto::EncodeAccountAddress(k.address);
    balances += std::string(i ? "," : "") + R"({"address":")" + k.bech32 +
                R"(","coins":[{"denom":"stake","amount":"1000000"}]})";
    keys.push_back(std::move(k));
  }

  app::TxSpec many;
  std::vector<app::SignerKey> signers;
  for (std::size_t i = 0; i < n; ++i) {
    many.msgs.push_back(Send(keys[i], keys[(i + 1) % n]));
    app::SignerKey s;
    s.private_key = keys[i].priv;
    s.account_number = i;  // genesis order
    s.sequence = sequence;
    signers.push_back(s);
  }
  many.fee = *ante::Coins::Parse("1000stake");
  many.gas_limit = 100'000'000;
  const std::string many_tx = app::BuildSignedTx(many, signers, kChainId);

  Connection node(address);
  pb::Request req;
  auto* init = req.mutable_init_chain();
  init->set_chain_id(kChainId);
  init->set_initial_height(1);
  init->set_app_state_bytes(R"({"bank":{"denom":"stake","balances":[)" + balances + "]}}");
  init->mutable_time()->set_seconds(kT0Seconds);
  const pb::Response init_answer = node.Call(req);
  if (!init_answer.has_init_chain()) Die("InitChain failed");
  req.Clear();
  req.mutable_finalize_block()->set_height(1);
  req.mutable_finalize_block()->mutable_time()->set_seconds(kT0Seconds + 1);
  const pb::Response block1 = node.Call(req);
  if (!block1.has_finalize_block()) Die("FinalizeBlock failed");
  // The same genesis and block on every node must give the same hashes, whatever the node's
  // config.toml says (issue 20, item 4: two nodes run with different store limits).
  std::printf("genesis_app_hash=%s block1_app_hash=%s\n",
              app::HexEncode(init_answer.init_chain().app_hash()).c_str(),
              app::HexEncode(block1.finalize_block().app_hash()).c_str());
  req.Clear();
  req.mutable_commit();
  if (!node.Call(req).has_commit()) Die("Commit failed");

  std::vector<double> many_ms, one_ms;
  pb::ResponseCheckTx many_answer;
  for (std::size_t round = 0; round < rounds; ++round) {
    double seconds = 0;
    req.Clear();
    req.mutable_check_tx()->set_tx(many_tx);
    many_answer = node.Call(req, &seconds).check_tx();
    if (many_answer.code() == 0) Die("the many-signer tx was accepted");
    many_ms.push_back(1e3 * seconds);

    app::TxSpec one;
    one.msgs.push_back(Send(keys[n], keys[0]));
    one.fee = *ante::Coins::Parse("10stake");
    app::SignerKey s;
    s.private_key = keys[n].priv;
    s.account_number = n;
    s.sequence = round;
    req.Clear();
    req.mutable_check_tx()->set_tx(app::BuildSignedTx(one, {s}, kChainId));
    const pb::ResponseCheckTx answer = node.Call(req, &seconds).check_tx();
    if (answer.code() != 0) Die("the one-signer tx was refused: " + answer.log());
    one_ms.push_back(1e3 * seconds);
  }
  std::printf("signers=%zu sequence=%llu tx_bytes=%zu answer_code=%u answer=\"%s\"\n", n,
              static_cast<unsigned long long>(sequence), many_tx.size(), many_answer.code(),
              many_answer.log().c_str());
  std::printf("many_signers_checktx_ms min=%.2f median=%.2f\n",
              *std::min_element(many_ms.begin(), many_ms.end()), Median(many_ms));
  std::printf("one_signer_checktx_ms min=%.3f median=%.3f\n",
              *std::min_element(one_ms.begin(), one_ms.end()), Median(one_ms));
  return 0;
}
