// Test helper for the locks module: a chain that runs signed Cosmos txs through the real message
// path, one block per call, from a genesis app_state with app_state.locks. Keys are funded in
// genesis; the chain tracks their account numbers and sequences, so a test only says who sends
// what at which height. Two drivers:
//   kApp     a real KairosApp over a MerkleStore in a temp dir: InitChain, FinalizeBlock (PreBlock,
//            DecodeTx -> TxRunner: ValidateBasic, the ante pipeline, the router, the locks msg
//            server; then the locks EndBlock), Commit, and Query (with proofs on request).
//   kRunner  the same functions FinalizeBlock calls (ParseGenesis, locks::InitGenesis, DecodeTx,
//            TxRunner::Run, LocksKeeper::RunEndBlock, locks::HandleQuery) on an in-memory
//            branch, which lets an Observer see the state between the txs of a block.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/bank/keeper.h"
#include "app/genesis.h"
#include "app/hex.h"
#include "app/kairos_app.h"
#include "app/locks/keeper.h"
#include "app/locks/queries.h"
#include "app/tx_codec.h"
#include "app/auth/module.h"
#include "app/bank/module.h"
#include "app/locks/module.h"
#include "app/module_list.h"
#include "app/tx_runner.h"
#include "store/branch.h"
#include "store/merkle_store.h"
#include "temp_dir.h"
#include "test_chain.h"
#include "app/locks/msgs.h"
#include "app/auth/genesis.h"
#include "app/bank/genesis.h"
#include "app/locks/genesis.h"

namespace kairos::test {

// One tx's result, as FinalizeBlock reports it.
struct LockTxResult {
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
  std::vector<tendermint::abci::Event> events;
  std::int64_t gas_used = 0;
  bool ok() const { return code == 0; }
};

// The value of attribute `key` of the first event of `type`, or nullopt.
inline std::optional<std::string> EventAttr(const std::vector<tendermint::abci::Event>& events,
                                            const std::string& type, const std::string& key) {
  for (const auto& e : events) {
    if (e.type() != type) continue;
    for (const auto& a : e.attributes()) {
      if (a.key() == key) return a.value();
    }
  }
  return std::nullopt;
}

inline std::size_t CountEvents(const std::vector<tendermint::abci::Event>& events,
                               const std::string& type) {
  std::size_t n = 0;
  for (const auto& e : events) n += e.type() == type;
  return n;
}

inline app::locks::LockSlot Slot(std::string resource, std::string key = "") {
  return {std::move(resource), std::move(key)};
}

// Message builders (the sender is a test key).
inline app::locks::MsgRegister MsgRegister(const TestKey& k) { return {k.bech32, k.address}; }
inline app::locks::MsgRefundRegistration MsgRefund(const TestKey& sender, const TestKey& of) {
  return {sender.bech32, sender.address, of.bech32, of.address};
}
inline app::locks::MsgAcquire MsgAcquire(const TestKey& k, std::vector<app::locks::LockSlot> slots,
                                        ante::Uint256 max_deposit = 1'000'000'000) {
  return {k.bech32, k.address, std::move(slots), max_deposit};
}
inline app::locks::MsgWrite MsgWrite(const TestKey& k, app::locks::LockSlot slot, app::locks::LockWriteOp op,
                                    std::int64_t value, ante::Uint256 max_deposit = 1'000'000'000) {
  return {k.bech32, k.address, std::move(slot), op, value, max_deposit};
}
inline app::locks::MsgRelease MsgRelease(const TestKey& sender, const TestKey& holder) {
  return {sender.bech32, sender.address, holder.bech32, holder.address};
}

// app_state.locks.params for the spec's test vectors: a=5, b=10, c=45, d=90, D0=1000, Y=100000,
// L=3, beta=0 (also the defaults).
inline constexpr char kVectorParams[] =
    R"({"session_period":"5","cooloff_period":"10","whitelist_period":"45",)"
    R"("refund_holding_period":"90","base_deposit":"1000","whitelist_fee":"100000",)"
    R"("max_locks_per_session":"3","scale_refund":true,"release_bounty_bps":0,)"
    R"("forfeit_sink":"burn"})";

class LocksChain {
 public:
  static constexpr char kChainId[] = "kairos-locks-test";
  static constexpr std::uint64_t kGas = 2'000'000;
  enum class Driver { kApp, kRunner };

  // `funded`: keys with genesis coins (account numbers in this order). `locks_json`: the value
  // of app_state.locks. The chain starts at first_height - 1 with an empty block that commits
  // the genesis state, so the first block a test runs is `first_height`. REQUIRES: it is >= 2.
  LocksChain(std::vector<std::pair<TestKey, std::string>> funded, const std::string& locks_json,
             std::int64_t first_height = 2, Driver driver = Driver::kApp)
      : driver_(driver), root_(empty_, store::KvLimits{}), next_height_(first_height - 1) {
    REQUIRE(first_height >= 2);
    Init(funded, locks_json);
    Block();
  }

  std::int64_t next_height() const { return next_height_; }
  std::int64_t last_height() const { return next_height_ - 1; }
  app::KairosApp& app() { return *app_; }  // REQUIRES: Driver::kApp

 private:
  void Init(const std::vector<std::pair<TestKey, std::string>>& funded,
            const std::string& locks_json) {
    const std::int64_t initial_height = next_height_;
    std::string app_state = AppStateJson(funded);
    app_state.pop_back();  // the closing brace
    app_state += R"(,"locks":)" + locks_json + "}";
    for (std::size_t i = 0; i < funded.size(); ++i) numbers_[funded[i].first.address] = i;
    if (driver_ == Driver::kApp) {
      store::StoreOptions so;
      so.dir = dir_ / "data";
      so.keep_recent = 0;
      so.page_cache_pages = 4096;  // small: tests open many stores
      so.block_cache_bytes = 1u << 20;
      so.write_buffer_bytes = 1u << 20;
      auto db = store::MerkleStore::Open(so);
      REQUIRE(db.ok());
      store_ = db->get();  // owned by the app; read here for the invariants
      auto a = app::KairosApp::Open(std::move(*db), app::AppOptions{});
      REQUIRE(a.ok());
      app_ = std::move(*a);
      tendermint::abci::RequestInitChain req;
      req.set_chain_id(kChainId);
      req.set_initial_height(initial_height);
      req.set_app_state_bytes(app_state);
      app_->InitChain(req);
      return;
    }
    auto genesis = app::ParseGenesis(app_state);
    REQUIRE(genesis.ok());
    auth_.set_params(genesis->Of<kairos::app::auth::GenesisState>().params);
    REQUIRE(root_.Set(app::bank::BankKeeper::kDenomKey, genesis->Of<kairos::app::bank::GenesisState>().denom).ok());
    for (const auto& b : genesis->Of<kairos::app::bank::GenesisState>().balances) {
      REQUIRE(auth_.NewAccount(root_, b.address).ok());
      REQUIRE(bank_.Mint(root_, b.address, b.coins).ok());
    }
    Status s = app::locks::InitGenesis(root_, keeper_, genesis->Of<kairos::app::locks::GenesisState>(), initial_height);
    INFO(s.message());
    REQUIRE(s.ok());
  }

 public:
  // A signed tx from `from` with these messages, at its next sequence.
  std::string Tx(const TestKey& from, std::vector<ante::Msg> msgs) {
    app::TxSpec spec;
    spec.msgs = std::move(msgs);
    spec.gas_limit = kGas;
    const std::uint64_t seq = sequences_[from.address]++;
    return app::BuildSignedTx(spec, {SignerOf(from, numbers_.at(from.address), seq)}, kChainId);
  }
  template <class M>
  std::string Tx(const TestKey& from, M msg) {
    return Tx(from, std::vector<ante::Msg>{std::move(msg)});
  }

  // Called around each tx of a block with the block's state as it stands then (kRunner only).
  struct Observer {
    std::function<void(std::size_t, const store::KvReader&)> before;
    std::function<void(std::size_t, const LockTxResult&, const store::KvReader&)> after;
  };

  // Runs (and commits) the next block with `txs`; returns each tx's result. REQUIRES: the ante
  // accepts each (a message may fail: its sequence is still used).
  std::vector<LockTxResult> Block(const std::vector<std::string>& txs = {},
                                  const Observer& observer = {}) {
    const std::int64_t time = kT0 + next_height_ * kSecond;
    ++next_height_;
    return driver_ == Driver::kApp ? AppBlock(txs, time) : RunnerBlock(txs, time, observer);
  }

  // Runs empty blocks until the next block is `height`.
  void AdvanceTo(std::int64_t height) {
    REQUIRE(height >= next_height_);
    while (next_height_ < height) Block();
  }

  // One tx in the block at `height` (empty blocks before it).
  LockTxResult At(std::int64_t height, const std::string& tx) {
    AdvanceTo(height);
    return Block({tx}).front();
  }

  // The events of the last block's EndBlock.
  const std::vector<tendermint::abci::Event>& end_block_events() const {
    return end_block_events_;
  }

  // A locks query at the latest height: the raw answer (code, log, key, value, proof ops).
  tendermint::abci::ResponseQuery RawQuery(const std::string& name, const std::string& data,
                                           bool prove = false) {
    const std::string path = std::string(app::locks::kQueryPathPrefix) + name;
    if (driver_ == Driver::kApp) {
      tendermint::abci::RequestQuery req;
      req.set_path(path);
      req.set_data(data);
      req.set_prove(prove);
      return app_->Query(req);
    }
    auto a = app::locks::HandleQuery(keeper_, path, data, root_, last_height());
    REQUIRE(a.ok());
    tendermint::abci::ResponseQuery res;
    res.set_code(a->code);
    res.set_log(a->log);
    res.set_key(a->key);
    res.set_value(a->value);
    res.set_height(last_height());
    return res;
  }

  // A locks query that must succeed, parsed.
  template <class Response>
  Response Query(const std::string& name, const google::protobuf::MessageLite& request) {
    const auto res = RawQuery(name, request.SerializeAsString());
    INFO(res.log());
    REQUIRE(res.code() == 0);
    Response r;
    REQUIRE(r.ParseFromString(res.value()));
    return r;
  }

  // The committed state.
  const store::KvReader& state() const {
    return driver_ == Driver::kApp ? static_cast<const store::KvReader&>(*store_) : root_;
  }

  ante::Uint256 Balance(const std::string& address) {
    auto b = bank_.GetBalance(state(), address, "stake");
    REQUIRE(b.ok());
    return *b;
  }
  ante::Uint256 Balance(const TestKey& k) { return Balance(k.address); }
  ante::Uint256 Supply() {
    auto s = bank_.GetSupply(state(), "stake");
    REQUIRE(s.ok());
    return *s;
  }

  // The spec's state invariants (1, 2, 8 and the bookkeeping) on the committed state.
  void CheckInvariants() {
    Status s = keeper_.CheckInvariants(state(), last_height());
    INFO(s.message());
    REQUIRE(s.ok());
  }

  const app::locks::LocksKeeper& keeper() const { return keeper_; }

 private:
  std::vector<LockTxResult> AppBlock(const std::vector<std::string>& txs, std::int64_t time) {
    tendermint::abci::RequestFinalizeBlock req;
    req.set_height(last_height());
    req.mutable_time()->set_seconds(time / kSecond);
    req.mutable_time()->set_nanos(static_cast<std::int32_t>(time % kSecond));
    for (const auto& tx : txs) req.add_txs(tx);
    const auto res = app_->FinalizeBlock(req);
    app_->Commit({});
    std::vector<LockTxResult> results;
    for (const auto& r : res.tx_results()) {
      results.push_back({r.code(), r.codespace(), r.log(),
                         {r.events().begin(), r.events().end()}, r.gas_used()});
    }
    end_block_events_.assign(res.events().begin(), res.events().end());
    return results;
  }

  std::vector<LockTxResult> RunnerBlock(const std::vector<std::string>& txs, std::int64_t time,
                                        const Observer& observer) {
    const ante::BlockInfo info{kChainId, last_height(), time, -1};
    store::Branch block(root_, root_.limits());
    std::vector<LockTxResult> results;
    for (const std::string& raw : txs) {
      if (observer.before) observer.before(results.size(), block);
      LockTxResult r;
      auto decoded = app::DecodeTx(raw);
      if (auto* err = std::get_if<app::TxError>(&decoded)) {
        r.code = err->code;
        r.codespace = "sdk";
        r.log = err->log;
        results.push_back(std::move(r));
        continue;
      }
      app::TxOutcome out =
          runner_.Run(ante::ExecMode::kFinalize, std::get<ante::Tx>(decoded), block, info);
      REQUIRE_FALSE(out.status.store_failure());
      r.code = out.status.code();
      r.codespace = std::string(out.status.codespace());
      r.log = out.status.log();
      r.events = std::move(out.events);
      r.gas_used = static_cast<std::int64_t>(out.gas_used);
      if (observer.after) observer.after(results.size(), r, block);
      results.push_back(std::move(r));
    }
    std::size_t ended = 0;
    end_block_events_.clear();
    Status s = keeper_.RunEndBlock(block, info, &end_block_events_, &ended);
    INFO(s.message());
    REQUIRE(s.ok());
    root_.Apply(block.changes());
    return results;
  }

  class EmptyIterator final : public store::KvIterator {
   public:
    bool Valid() const override { return false; }
    std::string_view key() const override { return {}; }
    std::string_view value() const override { return {}; }
    void Next() override {}
  };
  class EmptyReader final : public store::KvReader {
   public:
    Status Get(std::string_view, std::string*) const override { return Status::NotFound(""); }
    std::unique_ptr<store::KvIterator> Iterate(std::string_view, std::string_view) const override {
      return std::make_unique<EmptyIterator>();
    }
  };

  Driver driver_;
  TempDir dir_;
  const store::MerkleStore* store_ = nullptr;  // kApp: the app's store
  std::unique_ptr<app::KairosApp> app_;
  EmptyReader empty_;
  store::Branch root_;  // kRunner: the committed state
  // kRunner: the chain's modules, as the app wires them.
  std::unique_ptr<app::ModuleList> modules_ = app::ModuleList::Chain();
  app::auth::AuthKeeper& auth_ = modules_->Get<app::auth::AuthModule>()->mutable_keeper();
  const app::bank::BankKeeper& bank_ = modules_->Get<app::bank::BankModule>()->keeper();
  app::TxRunner runner_{*modules_, nullptr};
  const app::locks::LocksKeeper& keeper_ = modules_->Get<app::locks::LocksModule>()->keeper();
  std::map<std::string, std::uint64_t> numbers_;
  std::map<std::string, std::uint64_t> sequences_;
  std::int64_t next_height_;
  std::vector<tendermint::abci::Event> end_block_events_;
};

}  // namespace kairos::test
