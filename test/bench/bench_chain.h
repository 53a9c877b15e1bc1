// What the benchmarks share: funded accounts, genesis, signed one-coin transfers, and a blocking
// ABCI client on a unix socket. Header-only; each benchmark is one translation unit.
// Thread-compatible: an AbciClient is used by one thread.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "abci/frame.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "tendermint/abci/types.pb.h"
#include "app/bank/msgs.h"

namespace kairos::bench {

[[noreturn]] inline void Die(const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(1);
}

struct Account {
  std::string priv, pub, address, bech32;
};

// `n` secp256k1 accounts whose keys derive from `tag` and their index (the same every run).
inline std::vector<Account> MakeAccounts(std::size_t n, const std::string& tag = "bench-account-") {
  std::vector<Account> accounts;
  for (std::size_t i = 0; i < n; ++i) {
    Account a;
    a.priv = crypto::Sha256(tag + std::to_string(i));
    a.pub = *crypto::Secp256k1PublicKey(a.priv);
    a.address = crypto::AddressOf(crypto::KeyType::kSecp256k1, a.pub);
    a.bech32 = crypto::EncodeAccountAddress(a.address);
    accounts.push_back(std::move(a));
  }
  return accounts;
}

// A genesis app_state that funds every account with `amount` stake (account numbers in this
// order).
inline std::string FundedAppState(const std::vector<Account>& accounts,
                                  const std::string& amount = "1000000") {
  std::string balances;
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    balances += std::string(i ? "," : "") + R"({"address":")" + accounts[i].bech32 +
                R"(","coins":[{"denom":"stake","amount":")" + amount + R"("}]})";
  }
  return R"({"bank":{"denom":"stake","balances":[)" + balances + "]}}";
}

// A MsgSend of 1stake from `from` to the raw address `to`.
inline app::bank::MsgSend OneCoin(const Account& from, const std::string& to) {
  app::bank::MsgSend m;
  m.from_address = from.bech32;
  m.to_address = crypto::EncodeAccountAddress(to);
  m.from = from.address;
  m.to = to;
  m.amount = *ante::Coins::Parse("1stake");
  return m;
}

// A signed tx of one MsgSend of 1stake from `from` (genesis account `account_number`) to the
// raw address `to`, fee 10stake, gas limit 100000.
inline std::string SignedSend(const Account& from, std::uint64_t account_number,
                              std::uint64_t sequence, const std::string& to,
                              const std::string& chain_id) {
  app::TxSpec spec;
  spec.msgs = {OneCoin(from, to)};
  spec.fee = *ante::Coins::Parse("10stake");
  spec.gas_limit = 100000;
  app::SignerKey k;
  k.private_key = from.priv;
  k.account_number = account_number;
  k.sequence = sequence;
  return app::BuildSignedTx(spec, {k}, chain_id);
}

// A blocking ABCI client on a unix socket.
class AbciClient {
 public:
  explicit AbciClient(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      Die("cannot connect to " + path);
    }
  }
  ~AbciClient() { ::close(fd_); }
  AbciClient(const AbciClient&) = delete;
  AbciClient& operator=(const AbciClient&) = delete;

  void Send(const std::string& frames) {
    for (std::size_t off = 0; off < frames.size();) {
      const ssize_t n = ::write(fd_, frames.data() + off, frames.size() - off);
      if (n <= 0) Die("write failed");
      off += static_cast<std::size_t>(n);
    }
  }
  // The next answer.
  tendermint::abci::Response Read() {
    for (;;) {
      std::span<const std::uint8_t> frame;
      const auto st = decoder_.Next(&frame);
      if (st == abci::FrameDecoder::Status::kError) Die(decoder_.error());
      if (st == abci::FrameDecoder::Status::kFrame) {
        tendermint::abci::Response res;
        if (!res.ParseFromArray(frame.data(), static_cast<int>(frame.size()))) Die("bad answer");
        return res;
      }
      auto buf = decoder_.Prepare(1 << 16);
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n <= 0) Die("the server closed the connection");
      decoder_.Commit(static_cast<std::size_t>(n));
    }
  }
  // Sends the requests in one write, then reads as many answers.
  std::vector<tendermint::abci::Response> Call(
      const std::vector<tendermint::abci::Request>& requests) {
    std::string out;
    for (const auto& r : requests) abci::AppendFrame(r, &out);
    Send(out);
    std::vector<tendermint::abci::Response> answers;
    while (answers.size() < requests.size()) answers.push_back(Read());
    return answers;
  }

 private:
  int fd_ = -1;
  abci::FrameDecoder decoder_{256u << 20};
};

}  // namespace kairos::bench
