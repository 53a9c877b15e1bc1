// Test helper: a Kairos chain in a temp dir (a real MerkleStore and KairosApp), funded test
// keys, and signed MsgSend txs built with app/tx_codec. Blocks are driven by calling the ABCI
// methods directly, with block times chosen by the test.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/kairos_app.h"
#include "app/tx_codec.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "store/merkle_store.h"
#include "temp_dir.h"
#include "app/bank/msgs.h"

namespace kairos::test {

namespace abci_pb = ::tendermint::abci;

inline constexpr std::int64_t kSecond = 1'000'000'000;
// 2026-01-01T00:00:00Z: block times in tests count from here.
inline constexpr std::int64_t kT0 = 1767225600LL * kSecond;

struct TestKey {
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string priv;
  std::string pub;
  std::string address;  // raw 20 bytes
  std::string bech32;
};

// A deterministic key: the private key is SHA-256 of the name.
inline TestKey MakeKey(const std::string& name,
                       crypto::KeyType type = crypto::KeyType::kSecp256k1) {
  TestKey k;
  k.type = type;
  k.priv = crypto::Sha256(name);
  k.pub = type == crypto::KeyType::kSecp256k1 ? *crypto::Secp256k1PublicKey(k.priv)
                                              : crypto::Ed25519PublicKey(k.priv);
  k.address = crypto::AddressOf(type, k.pub);
  k.bech32 = crypto::EncodeAccountAddress(k.address);
  return k;
}

struct SendOptions {
  std::uint64_t account_number = 0;
  std::uint64_t sequence = 0;
  bool unordered = false;
  std::optional<std::int64_t> timeout_unix_nanos;
  std::string fee = "";  // e.g. "200stake"
  std::uint64_t gas = 200000;
  std::string memo;
  std::uint64_t timeout_height = 0;
};

inline app::bank::MsgSend MakeSend(const TestKey& from, const TestKey& to, const std::string& amount) {
  app::bank::MsgSend m;
  m.from_address = from.bech32;
  m.to_address = to.bech32;
  m.from = from.address;
  m.to = to.address;
  auto coins = ante::Coins::Parse(amount);
  REQUIRE(coins.ok());
  m.amount = *coins;
  return m;
}

inline app::SignerKey SignerOf(const TestKey& k, std::uint64_t account_number,
                               std::uint64_t sequence) {
  app::SignerKey s;
  s.type = k.type;
  s.private_key = k.priv;
  s.account_number = account_number;
  s.sequence = sequence;
  return s;
}

inline app::TxSpec SpecOf(std::vector<ante::Msg> msgs, const SendOptions& o) {
  app::TxSpec spec;
  spec.msgs = std::move(msgs);
  spec.memo = o.memo;
  spec.timeout_height = o.timeout_height;
  spec.unordered = o.unordered;
  spec.timeout_unix_nanos = o.timeout_unix_nanos;
  if (!o.fee.empty()) {
    auto fee = ante::Coins::Parse(o.fee);
    REQUIRE(fee.ok());
    spec.fee = *fee;
  }
  spec.gas_limit = o.gas;
  return spec;
}

// The genesis app_state (app/genesis.h) that funds `funded` (in account-number order) in the
// denom "stake"; `auth_params_json` is the inside of app_state.auth.params; `more_sections`
// (e.g. R"(,"poa":{...})") is appended to app_state, `more_bank` (e.g. R"(,"params":{...})")
// to app_state.bank.
inline std::string AppStateJson(const std::vector<std::pair<TestKey, std::string>>& funded,
                                const std::string& auth_params_json = "",
                                const std::string& more_sections = "",
                                const std::string& more_bank = "") {
  std::string balances;
  for (const auto& [key, coins] : funded) {
    auto parsed = ante::Coins::Parse(coins);
    REQUIRE(parsed.ok());
    std::string list;
    for (const auto& c : parsed->coins()) {
      list += std::string(list.empty() ? "" : ",") + R"({"denom":")" + c.denom +
              R"(","amount":")" + ante::ToString(c.amount) + "\"}";
    }
    balances += std::string(balances.empty() ? "" : ",") + R"({"address":")" + key.bech32 +
                R"(","coins":[)" + list + "]}";
  }
  return R"({"auth":{"params":{)" + auth_params_json +
         R"(}},"bank":{"denom":"stake","balances":[)" + balances + "]" + more_bank + "}" +
         more_sections + "}";
}

class TestChain {
 public:
  static constexpr char kChainId[] = "kairos-test";

  // `funded`: keys with their genesis coins, in account-number order. `auth_params_json`: the
  // inside of app_state.auth.params, e.g. R"("unordered_enabled": false)".
  // `more_sections`, `more_bank`: appended to app_state and app_state.bank (AppStateJson).
  explicit TestChain(std::vector<std::pair<TestKey, std::string>> funded,
                     std::string auth_params_json = "", app::AppOptions options = {},
                     const std::string& more_sections = "", const std::string& more_bank = "")
      : funded_(std::move(funded)), options_(std::move(options)) {
    Open();
    app_state_ = AppStateJson(funded_, auth_params_json, more_sections, more_bank);
    abci_pb::RequestInitChain req;
    req.set_chain_id(kChainId);
    req.set_initial_height(1);
    req.set_app_state_bytes(app_state_);
    req.mutable_consensus_params()->mutable_block()->set_max_gas(10'000'000);
    app_->InitChain(req);
  }

  app::KairosApp& app() { return *app_; }

  // Reopens the app on the same database: a restart.
  void Reopen() {
    app_.reset();
    Open();
  }

  abci_pb::ResponseFinalizeBlock Finalize(const std::vector<std::string>& txs,
                                          std::int64_t time_unix_nanos) {
    abci_pb::RequestFinalizeBlock req;
    req.set_height(app_->last_height() + 1);
    req.mutable_time()->set_seconds(time_unix_nanos / kSecond);
    req.mutable_time()->set_nanos(static_cast<std::int32_t>(time_unix_nanos % kSecond));
    for (const auto& tx : txs) req.add_txs(tx);
    return app_->FinalizeBlock(req);
  }

  // FinalizeBlock + Commit.
  abci_pb::ResponseFinalizeBlock Block(const std::vector<std::string>& txs,
                                       std::int64_t time_unix_nanos) {
    auto res = Finalize(txs, time_unix_nanos);
    app_->Commit({});
    return res;
  }

  abci_pb::ResponseCheckTx Check(const std::string& tx, bool recheck = false) {
    abci_pb::RequestCheckTx req;
    req.set_tx(tx);
    req.set_type(recheck ? abci_pb::RECHECK : abci_pb::NEW);
    return app_->CheckTx(req);
  }

  abci_pb::ResponseProcessProposal Process(const std::vector<std::string>& txs,
                                           std::int64_t time_unix_nanos) {
    abci_pb::RequestProcessProposal req;
    req.set_height(app_->last_height() + 1);
    req.mutable_time()->set_seconds(time_unix_nanos / kSecond);
    req.mutable_time()->set_nanos(static_cast<std::int32_t>(time_unix_nanos % kSecond));
    for (const auto& tx : txs) req.add_txs(tx);
    return app_->ProcessProposal(req);
  }

  // A signed MsgSend from `from` (single signer).
  std::string Send(const TestKey& from, const TestKey& to, const std::string& amount,
                   const SendOptions& o = {}) const {
    return app::BuildSignedTx(SpecOf({MakeSend(from, to, amount)}, o),
                              {SignerOf(from, o.account_number, o.unordered ? 0 : o.sequence)},
                              kChainId);
  }

  // The balance of `key` in `denom` at the latest height, through the Balance query.
  std::string Balance(const TestKey& key, const std::string& denom = "stake");

  const std::string& app_state() const { return app_state_; }

 private:
  void Open() {
    store::StoreOptions so;
    so.dir = dir_ / "data";
    so.keep_recent = 0;
    auto db = store::MerkleStore::Open(so);
    REQUIRE(db.ok());
    auto a = app::KairosApp::Open(std::move(*db), options_);
    REQUIRE(a.ok());
    app_ = std::move(*a);
  }

  TempDir dir_;
  std::vector<std::pair<TestKey, std::string>> funded_;
  app::AppOptions options_;
  std::string app_state_;
  std::unique_ptr<app::KairosApp> app_;
};

inline std::string TestChain::Balance(const TestKey& key, const std::string& denom) {
  cosmos::bank::v1beta1::QueryBalanceRequest q;
  q.set_address(key.bech32);
  q.set_denom(denom);
  abci_pb::RequestQuery req;
  req.set_path("/cosmos.bank.v1beta1.Query/Balance");
  req.set_data(q.SerializeAsString());
  const abci_pb::ResponseQuery res = app_->Query(req);
  REQUIRE(res.code() == 0);
  cosmos::bank::v1beta1::QueryBalanceResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  return r.balance().amount();
}

}  // namespace kairos::test
