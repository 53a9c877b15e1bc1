// Test helper for the locks module: a chain that runs signed Cosmos txs through the real message
// path, DecodeTx -> TxRunner (ValidateBasic, the ante pipeline, the router) -> the locks msg
// server, then the locks EndBlock, one block per call, from a genesis app_state parsed by
// app/genesis (ParseGenesis + locks::InitGenesis). Keys are funded in genesis; the chain tracks
// their account numbers and sequences, so a test only says who sends what at which height.
//
// The state is an in-memory branch; Query answers locks queries through locks::HandleQuery, the
// same function the app's Query calls.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/bank.h"
#include "app/genesis.h"
#include "app/locks/keeper.h"
#include "app/locks/queries.h"
#include "app/tx_codec.h"
#include "app/tx_runner.h"
#include "store/branch.h"
#include "test_chain.h"

namespace kairos::test {

// One tx's result, as FinalizeBlock reports it.
struct LockTxResult {
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
  std::vector<tendermint::abci::Event> events;
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

inline ante::LockSlot Slot(std::string resource, std::string key = "") {
  return {std::move(resource), std::move(key)};
}

// Message builders (the sender is a test key).
inline ante::MsgLocksRegister MsgRegister(const TestKey& k) { return {k.bech32, k.address}; }
inline ante::MsgLocksRefundRegistration MsgRefund(const TestKey& sender, const TestKey& of) {
  return {sender.bech32, sender.address, of.bech32, of.address};
}
inline ante::MsgLocksAcquire MsgAcquire(const TestKey& k, std::vector<ante::LockSlot> slots,
                                        ante::Uint256 max_deposit = 1'000'000'000) {
  return {k.bech32, k.address, std::move(slots), max_deposit};
}
inline ante::MsgLocksWrite MsgWrite(const TestKey& k, ante::LockSlot slot, ante::LockWriteOp op,
                                    std::int64_t value, ante::Uint256 max_deposit = 1'000'000'000) {
  return {k.bech32, k.address, std::move(slot), op, value, max_deposit};
}
inline ante::MsgLocksRelease MsgRelease(const TestKey& sender, const TestKey& holder) {
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

  // `funded`: keys with genesis coins (account numbers in this order). `locks_json`: the value
  // of app_state.locks. The first block is `first_height`.
  LocksChain(std::vector<std::pair<TestKey, std::string>> funded, const std::string& locks_json,
             std::int64_t first_height = 1)
      : root_(empty_, store::KvLimits{}), next_height_(first_height) {
    std::string app_state = AppStateJson(funded);
    app_state.pop_back();  // the closing brace
    app_state += R"(,"locks":)" + locks_json + "}";
    auto genesis = app::ParseGenesis(app_state);
    REQUIRE(genesis.ok());
    auth_.set_params(genesis->auth_params);
    REQUIRE(root_.Set(app::BankKeeper::kDenomKey, genesis->denom).ok());
    std::uint64_t number = 0;
    for (const auto& b : genesis->balances) {
      REQUIRE(auth_.NewAccount(root_, b.address).ok());
      REQUIRE(bank_.Mint(root_, b.address, b.coins).ok());
      numbers_[b.address] = number++;
    }
    Status s = app::locks::InitGenesis(root_, keeper_, genesis->locks, first_height);
    INFO(s.message());
    REQUIRE(s.ok());
  }

  std::int64_t next_height() const { return next_height_; }
  std::int64_t last_height() const { return next_height_ - 1; }

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

  // Called around each tx of a block with the block's state as it stands then.
  struct Observer {
    std::function<void(std::size_t, const store::KvReader&)> before;
    std::function<void(std::size_t, const LockTxResult&, const store::KvReader&)> after;
  };

  // Runs the next block with `txs`; returns each tx's result. REQUIRES: the ante accepts each
  // (a message may fail: its sequence is still used).
  std::vector<LockTxResult> Block(const std::vector<std::string>& txs = {},
                                  const Observer& observer = {}) {
    const ante::BlockInfo info{kChainId, next_height_, kT0 + next_height_ * kSecond, -1};
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
      if (observer.after) observer.after(results.size(), r, block);
      results.push_back(std::move(r));
    }
    std::size_t ended = 0;
    end_block_events_.clear();
    Status s = keeper_.RunEndBlock(block, info, &end_block_events_, &ended);
    INFO(s.message());
    REQUIRE(s.ok());
    root_.Apply(block.changes());
    ++next_height_;
    return results;
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

  const std::vector<tendermint::abci::Event>& end_block_events() const {
    return end_block_events_;
  }

  // A locks query on the last committed state.
  template <class Response>
  Response Query(const std::string& name, const google::protobuf::MessageLite& request) {
    auto a = app::locks::HandleQuery(keeper_, std::string(app::locks::kQueryPathPrefix) + name,
                                     request.SerializeAsString(), root_, last_height());
    REQUIRE(a.ok());
    INFO(a->log);
    REQUIRE(a->code == 0);
    Response r;
    REQUIRE(r.ParseFromString(a->value));
    return r;
  }

  ante::Uint256 Balance(const std::string& address) {
    auto b = bank_.GetBalance(root_, address, "stake");
    REQUIRE(b.ok());
    return *b;
  }
  ante::Uint256 Balance(const TestKey& k) { return Balance(k.address); }
  ante::Uint256 Supply() {
    auto s = bank_.GetSupply(root_, "stake");
    REQUIRE(s.ok());
    return *s;
  }

  // The spec's state invariants (1, 2, 8 and the bookkeeping) on the committed state.
  void CheckInvariants() {
    Status s = keeper_.CheckInvariants(root_, last_height());
    INFO(s.message());
    REQUIRE(s.ok());
  }

  const app::locks::LocksKeeper& keeper() const { return keeper_; }
  const store::KvReader& state() const { return root_; }
  std::uint64_t sequence(const TestKey& k) { return sequences_[k.address]; }

 private:
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

  EmptyReader empty_;
  store::Branch root_;
  app::AuthKeeper auth_;
  app::BankKeeper bank_{auth_};
  app::TxRunner runner_{auth_, bank_, nullptr};
  app::locks::LocksKeeper keeper_{bank_};
  std::map<std::string, std::uint64_t> numbers_;
  std::map<std::string, std::uint64_t> sequences_;
  std::int64_t next_height_;
  std::vector<tendermint::abci::Event> end_block_events_;
};

}  // namespace kairos::test
