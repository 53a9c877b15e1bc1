// The ante's work per signer stays bounded and cheap before the fee is taken: the signature
// limit is checked before any state is read, the account memo is keyed, tx decoding lists the
// unique signers in linear time; and a fee granter is refused (no x/feegrant) before any read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ante/decorators.h"
#include "ante/gas.h"
#include "app/auth/keeper.h"
#include "app/bank/keeper.h"
#include "empty_reader.h"
#include "store/branch.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

// A KvStore over another that counts every access.
class CountingKv final : public store::KvStore {
 public:
  explicit CountingKv(store::KvStore& inner) : inner_(inner) {}
  Status Get(std::string_view key, std::string* value) const override {
    ++accesses;
    return inner_.Get(key, value);
  }
  std::unique_ptr<store::KvIterator> Iterate(std::string_view start,
                                             std::string_view end) const override {
    ++accesses;
    return inner_.Iterate(start, end);
  }
  Status Set(std::string_view key, std::string_view value) override {
    ++accesses;
    return inner_.Set(key, value);
  }
  Status Delete(std::string_view key) override {
    ++accesses;
    return inner_.Delete(key);
  }
  mutable int accesses = 0;

 private:
  store::KvStore& inner_;
};

// `n` funded keys with accounts 0..n-1 (no public keys stored yet), over real keepers.
struct Signers {
  EmptyReader empty;
  store::Branch state{empty, store::KvLimits{}};
  app::auth::AuthKeeper auth;
  app::bank::BankKeeper bank{auth};
  std::vector<TestKey> keys;

  explicit Signers(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      keys.push_back(MakeKey("signer-" + std::to_string(i)));
      REQUIRE(auth.NewAccount(state, keys.back().address).ok());
      REQUIRE(bank.Mint(state, keys.back().address, *ante::Coins::Parse("1000stake")).ok());
    }
  }

  // One MsgSend per signer (signer i to signer i+1), all signed; `fee` from signer 0.
  ante::Tx Tx(const std::string& fee = "10stake", const std::string& granter = "") const {
    app::TxSpec spec;
    std::vector<app::SignerKey> signers;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      spec.msgs.push_back(MakeSend(keys[i], keys[(i + 1) % keys.size()], "1stake"));
      signers.push_back(SignerOf(keys[i], i, 0));
    }
    if (!fee.empty()) spec.fee = *ante::Coins::Parse(fee);
    spec.fee_granter = granter;
    auto decoded = app::DecodeTx(app::BuildSignedTx(spec, signers, TestChain::kChainId));
    REQUIRE(std::holds_alternative<ante::Tx>(decoded));
    return std::get<ante::Tx>(decoded);
  }

  ante::Context NewContext(ante::ExecMode mode = ante::ExecMode::kCheck) const {
    ante::Context ctx;
    ctx.mode = mode;
    ctx.block = {TestChain::kChainId, 10, kT0, -1};
    return ctx;
  }
};

}  // namespace

TEST_CASE("ValidateBasic refuses more signatures than tx_sig_limit (14) before any state read",
          "[ante]") {
  // Every decorator from DeductFee on reads or writes each signer's account; before this check
  // moved into ValidateBasic, a tx with thousands of signers had all of that done (and undone
  // with its fee) before ValidateSigCount refused it.
  Signers s(9);
  ante::AuthParams params;
  params.tx_sig_limit = 8;
  s.auth.set_params(params);
  const ante::Tx tx = s.Tx();
  for (const ante::ExecMode mode : {ante::ExecMode::kCheck, ante::ExecMode::kFinalize,
                                    ante::ExecMode::kSimulate}) {
    INFO("mode " << static_cast<int>(mode));
    ante::Context ctx = s.NewContext(mode);
    CountingKv counted(s.state);
    ante::GasKv kv(counted, ctx.gas, ctx.kv_gas);
    ctx.store = &kv;
    const ante::TxStatus st = ante::AntePipeline(s.auth, s.bank, nullptr).Run(ctx, tx);
    CHECK(st.code() == 14);
    CHECK(st.codespace() == "sdk");
    CHECK(st.log() == "signatures: 9, limit: 8: maximum number of signatures exceeded");
    CHECK(counted.accesses == 0);
    CHECK(ctx.accounts.size() == 0);
  }
  // At the limit the same tx shape passes.
  params.tx_sig_limit = 9;
  s.auth.set_params(params);
  ante::Context ctx = s.NewContext();
  ctx.store = &s.state;
  CHECK(ante::AntePipeline(s.auth, s.bank, nullptr).Run(ctx, tx).ok());
}

TEST_CASE("a CheckTx over the signature limit is refused with the SDK's code and log", "[ante]") {
  std::vector<std::pair<TestKey, std::string>> funded;
  for (int i = 0; i < 8; ++i) funded.emplace_back(MakeKey("limit-" + std::to_string(i)), "1000stake");
  TestChain chain(funded);
  chain.Block({}, kT0);
  app::TxSpec spec;
  std::vector<app::SignerKey> signers;
  for (std::size_t i = 0; i < funded.size(); ++i) {
    spec.msgs.push_back(MakeSend(funded[i].first, funded[(i + 1) % 8].first, "1stake"));
    signers.push_back(SignerOf(funded[i].first, i, 0));
  }
  spec.fee = *ante::Coins::Parse("10stake");
  const auto res = chain.Check(app::BuildSignedTx(spec, signers, TestChain::kChainId));
  CHECK(res.code() == 14);
  CHECK(res.codespace() == "sdk");
  CHECK(res.log() == "signatures: 8, limit: 7: maximum number of signatures exceeded");
  CHECK(chain.Balance(funded[0].first) == "1000");  // no fee taken
}

TEST_CASE("the account memo finds every entry, by scan and past it by index", "[ante]") {
  ante::AccountMemo memo;
  for (int i = 0; i < 40; ++i) {
    ante::AccountMemoEntry e;
    e.address = "address-" + std::to_string(i);
    e.stored_bytes = static_cast<std::size_t>(i);
    CHECK(memo.Add(std::move(e)).stored_bytes == static_cast<std::size_t>(i));
    for (int j = 0; j <= i; ++j) {
      const ante::AccountMemoEntry* found = memo.Find("address-" + std::to_string(j));
      REQUIRE(found != nullptr);
      CHECK(found->stored_bytes == static_cast<std::size_t>(j));
    }
    CHECK(memo.Find("address-" + std::to_string(i + 1)) == nullptr);
    CHECK(memo.size() == static_cast<std::size_t>(i + 1));
  }
  memo.clear();
  CHECK(memo.size() == 0);
  CHECK(memo.Find("address-0") == nullptr);
  ante::AccountMemoEntry again;
  again.address = "address-20";
  memo.Add(std::move(again));
  CHECK(memo.Find("address-20") != nullptr);
  CHECK(memo.Find("address-0") == nullptr);
}

TEST_CASE("with many signers the memo charges exactly the store reads it saves", "[ante]") {
  // As in ante_test.cc's memo test, past the memo's scan: the pipeline whole and decorator by
  // decorator (the memo emptied in between, every read a store read) charge the same gas.
  Signers s(20);
  ante::AuthParams params;
  params.tx_sig_limit = 20;
  s.auth.set_params(params);
  const ante::Tx tx = s.Tx();
  auto decorators = [&] {
    std::vector<std::unique_ptr<ante::Decorator>> list;
    list.push_back(std::make_unique<ante::ValidateBasicDecorator>(s.auth));
    list.push_back(std::make_unique<ante::ConsumeTxSizeGasDecorator>(s.auth));
    list.push_back(std::make_unique<ante::DeductFeeDecorator>(s.auth, s.bank));
    list.push_back(std::make_unique<ante::SetPubKeyDecorator>(s.auth));
    list.push_back(std::make_unique<ante::ValidateSigCountDecorator>(s.auth));
    list.push_back(std::make_unique<ante::SigGasConsumeDecorator>(s.auth));
    list.push_back(std::make_unique<ante::SigVerificationDecorator>(s.auth, nullptr));
    list.push_back(std::make_unique<ante::IncrementSequenceDecorator>(s.auth));
    return list;
  };
  auto gas_of = [&](bool one_by_one) {
    store::Branch branch(s.state, store::KvLimits{});
    ante::Context ctx = s.NewContext(ante::ExecMode::kFinalize);
    ante::GasKv kv(branch, ctx.gas, ctx.kv_gas);
    ctx.store = &kv;
    if (one_by_one) {
      for (auto& d : decorators()) {
        ctx.accounts.clear();
        std::vector<std::unique_ptr<ante::Decorator>> one;
        one.push_back(std::move(d));
        REQUIRE(ante::AntePipeline(std::move(one)).Run(ctx, tx).ok());
      }
    } else {
      REQUIRE(ante::AntePipeline(decorators()).Run(ctx, tx).ok());
      CHECK(ctx.accounts.size() == 20);  // each signer's account, read once
    }
    return ctx.gas.consumed();
  };
  CHECK(gas_of(false) == gas_of(true));
}

TEST_CASE("DeductFee refuses a fee granter (18) before reading state", "[ante]") {
  Signers s(2);
  const ante::Tx tx = s.Tx("10stake", s.keys[1].address);
  REQUIRE(tx.fee_granter == s.keys[1].address);
  for (const ante::ExecMode mode : {ante::ExecMode::kCheck, ante::ExecMode::kFinalize,
                                    ante::ExecMode::kSimulate}) {
    ante::Context ctx = s.NewContext(mode);
    CountingKv counted(s.state);
    ctx.store = &counted;
    std::vector<std::unique_ptr<ante::Decorator>> one;
    one.push_back(std::make_unique<ante::DeductFeeDecorator>(s.auth, s.bank));
    const ante::TxStatus st = ante::AntePipeline(std::move(one)).Run(ctx, tx);
    CHECK(st.code() == 18);
    CHECK(st.codespace() == "sdk");
    CHECK(st.log() == "fee grants are not enabled: invalid request");
    CHECK(counted.accesses == 0);
  }
  // Without a fee too: the granter is refused, not ignored.
  ante::Context ctx = s.NewContext();
  ctx.store = &s.state;
  std::vector<std::unique_ptr<ante::Decorator>> one;
  one.push_back(std::make_unique<ante::DeductFeeDecorator>(s.auth, s.bank));
  CHECK(ante::AntePipeline(std::move(one)).Run(ctx, s.Tx("", s.keys[1].address)).code() == 18);
}

TEST_CASE("a fee granter is refused through CheckTx and FinalizeBlock, and nobody pays",
          "[ante]") {
  const TestKey alice = MakeKey("granter-alice"), bob = MakeKey("granter-bob");
  TestChain chain({{alice, "1000stake"}, {bob, "1000stake"}});
  chain.Block({}, kT0);
  SendOptions o;
  o.fee = "100stake";
  app::TxSpec spec = SpecOf({MakeSend(alice, bob, "1stake")}, o);
  spec.fee_granter = bob.address;
  const std::string tx = app::BuildSignedTx(spec, {SignerOf(alice, 0, 0)}, TestChain::kChainId);
  const auto check = chain.Check(tx);
  CHECK(check.code() == 18);
  CHECK(check.log() == "fee grants are not enabled: invalid request");
  const auto block = chain.Block({tx}, kT0 + kSecond);
  REQUIRE(block.tx_results_size() == 1);
  CHECK(block.tx_results(0).code() == 18);
  CHECK(chain.Balance(alice) == "1000");
  CHECK(chain.Balance(bob) == "1000");
}

TEST_CASE("tx decoding lists each signer once, in first-message order, however many",
          "[ante]") {
  // 30 messages from 12 signers, interleaved, and a fee payer among them and one not: the
  // decoder's set of seen signers takes over from its scan past 8 and keeps the order.
  std::vector<TestKey> keys;
  for (int i = 0; i < 13; ++i) keys.push_back(MakeKey("order-" + std::to_string(i)));
  app::TxSpec spec;
  std::vector<std::string> want;
  for (int m = 0; m < 30; ++m) {
    const TestKey& from = keys[static_cast<std::size_t>((m * 5) % 12)];
    spec.msgs.push_back(MakeSend(from, keys[0], "1stake"));
    if (std::find(want.begin(), want.end(), from.address) == want.end()) {
      want.push_back(from.address);
    }
  }
  REQUIRE(want.size() == 12);
  for (const TestKey* payer : {&keys[5], &keys[12]}) {
    spec.fee_payer = payer->address;
    std::vector<std::string> expected = want;
    if (payer == &keys[12]) expected.push_back(keys[12].address);
    // Unsigned is fine: decoding does not verify.
    auto decoded = app::DecodeTx(app::BuildSignedTx(spec, {}, TestChain::kChainId));
    REQUIRE(std::holds_alternative<ante::Tx>(decoded));
    CHECK(std::get<ante::Tx>(decoded).signers == expected);
  }
}

}  // namespace kairos::test
