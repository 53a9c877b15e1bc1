// The ante pipeline: each decorator alone (over real keepers on a branch), then each sdk error
// code with its log text through CheckTx / FinalizeBlock of a real chain.
#include <catch2/catch.hpp>

#include <tuple>
#include <vector>

#include "ante/decorators.h"
#include "ante/gas.h"
#include "ante/sign_doc.h"
#include "app/auth/keeper.h"
#include "app/bank/keeper.h"
#include "cosmos/tx/v1beta1/tx.pb.h"
#include "crypto/keys.h"
#include "empty_reader.h"
#include "store/branch.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

const TestKey kAlice = MakeKey("alice");
const TestKey kBob = MakeKey("bob");
const TestKey kEd = MakeKey("ed", crypto::KeyType::kEd25519);
const TestKey kNobody = MakeKey("nobody");

// One decorator (or a few) over real keepers, with alice funded and her key known.
struct Harness {
  EmptyReader empty;
  store::Branch state{empty, store::KvLimits{}};
  app::auth::AuthKeeper auth;
  app::bank::BankKeeper bank{auth};
  ante::Context ctx;

  Harness() {
    auto a = auth.NewAccount(state, kAlice.address);
    REQUIRE(a.ok());
    REQUIRE(bank.Mint(state, kAlice.address, *ante::Coins::Parse("1000stake")).ok());
    ctx.mode = ante::ExecMode::kFinalize;
    ctx.block = {"kairos-test", 10, kT0, -1};
    ctx.store = &state;
  }

  ante::TxStatus Run(std::unique_ptr<ante::Decorator> d, const ante::Tx& tx) {
    std::vector<std::unique_ptr<ante::Decorator>> list;
    list.push_back(std::move(d));
    return ante::AntePipeline(std::move(list)).Run(ctx, tx);
  }
};

ante::Tx DecodedSend(const SendOptions& o = {}, const TestKey& from = kAlice) {
  const std::string raw = app::BuildSignedTx(SpecOf({MakeSend(from, kBob, "1stake")}, o),
                                             {SignerOf(from, o.account_number, o.sequence)},
                                             TestChain::kChainId);
  auto decoded = app::DecodeTx(raw);
  REQUIRE(std::holds_alternative<ante::Tx>(decoded));
  return std::get<ante::Tx>(decoded);
}

// Consumes a fixed amount of gas, then continues.
class Burn final : public ante::Decorator {
 public:
  explicit Burn(std::uint64_t gas) : gas_(gas) {}
  ante::TxStatus Handle(ante::Context& ctx, const ante::Tx& tx,
                        const ante::Next& next) const override {
    ctx.gas.Consume(gas_, "burn");
    return next(ctx, tx);
  }

 private:
  std::uint64_t gas_;
};

}  // namespace

// --- each decorator alone ------------------------------------------------------------------

TEST_CASE("SetUpContext: limit from the tx, max block gas (41), out of gas becomes 11", "[ante]") {
  Harness h;
  SendOptions o;
  o.gas = 5000;
  ante::Tx tx = DecodedSend(o);
  std::vector<std::unique_ptr<ante::Decorator>> list;
  list.push_back(std::make_unique<ante::SetUpContextDecorator>());
  list.push_back(std::make_unique<Burn>(5001));
  ante::AntePipeline p(std::move(list));
  ante::TxStatus s = p.Run(h.ctx, tx);
  CHECK(s.code() == 11);
  CHECK(s.log() == "out of gas in location: burn; gasWanted: 5000, gasUsed: 5001: out of gas");
  Harness h2;
  h2.ctx.block.max_gas = 4000;
  s = h2.Run(std::make_unique<ante::SetUpContextDecorator>(), tx);
  CHECK(s.code() == 41);
  CHECK(s.log() == "tx gas limit 5000 exceeds block max gas 4000: invalid gas limit");
}

TEST_CASE("ExtensionOptions: any extension option is refused (31)", "[ante]") {
  Harness h;
  ante::Tx tx = DecodedSend();
  CHECK(h.Run(std::make_unique<ante::ExtensionOptionsDecorator>(), tx).ok());
  tx.extension_options = 1;
  CHECK(h.Run(std::make_unique<ante::ExtensionOptionsDecorator>(), tx).code() == 31);
  tx.extension_options = 0;
  tx.non_critical_extension_options = 2;  // ignored
  CHECK(h.Run(std::make_unique<ante::ExtensionOptionsDecorator>(), tx).ok());
}

TEST_CASE("ValidateBasic: signatures present and matching the signers; skipped on recheck",
          "[ante]") {
  Harness h;
  ante::Tx tx = DecodedSend();
  CHECK(h.Run(std::make_unique<ante::ValidateBasicDecorator>(h.auth), tx).ok());
  ante::Tx none = tx;
  none.signatures.clear();
  ante::TxStatus s = h.Run(std::make_unique<ante::ValidateBasicDecorator>(h.auth), none);
  CHECK(s.code() == 15);
  CHECK(s.log() == "no signatures supplied: no signatures supplied");
  ante::Tx two = tx;
  two.signatures.push_back(tx.signatures[0]);
  s = h.Run(std::make_unique<ante::ValidateBasicDecorator>(h.auth), two);
  CHECK(s.code() == 4);
  CHECK(s.log() == "wrong number of signers; expected 1, got 2: unauthorized");
  h.ctx.mode = ante::ExecMode::kReCheck;
  CHECK(h.Run(std::make_unique<ante::ValidateBasicDecorator>(h.auth), none).ok());
}

TEST_CASE("TxTimeoutHeight: height (30) and timestamp (42); equal values pass", "[ante]") {
  Harness h;  // block height 10 at kT0
  SendOptions o;
  o.timeout_height = 10;
  o.timeout_unix_nanos = kT0;
  CHECK(h.Run(std::make_unique<ante::TxTimeoutHeightDecorator>(), DecodedSend(o)).ok());
  o.timeout_height = 9;
  ante::TxStatus s = h.Run(std::make_unique<ante::TxTimeoutHeightDecorator>(), DecodedSend(o));
  CHECK(s.code() == 30);
  CHECK(s.log() == "block height: 10, timeout height: 9: tx timeout height");
  o.timeout_height = 0;
  o.timeout_unix_nanos = kT0 - 1;
  s = h.Run(std::make_unique<ante::TxTimeoutHeightDecorator>(), DecodedSend(o));
  CHECK(s.code() == 42);
  CHECK(s.log() == "block time: 2026-01-01T00:00:00.000000000Z, timeout timestamp: "
                   "2025-12-31T23:59:59.999999999Z: tx timeout");
}

TEST_CASE("ValidateMemo: up to the max characters (12 beyond)", "[ante]") {
  Harness h;
  SendOptions o;
  o.memo = std::string(256, 'm');
  CHECK(h.Run(std::make_unique<ante::ValidateMemoDecorator>(h.auth), DecodedSend(o)).ok());
  o.memo += "m";
  ante::TxStatus s = h.Run(std::make_unique<ante::ValidateMemoDecorator>(h.auth), DecodedSend(o));
  CHECK(s.code() == 12);
  CHECK(s.log() == "maximum number of characters is 256 but received 257 characters: memo too "
                   "large");
}

TEST_CASE("ConsumeTxSizeGas: 10 gas per byte of the tx", "[ante]") {
  Harness h;
  ante::Tx tx = DecodedSend();
  REQUIRE(h.Run(std::make_unique<ante::ConsumeTxSizeGasDecorator>(h.auth), tx).ok());
  CHECK(h.ctx.gas.consumed() == 10 * tx.raw_size);
}

std::unique_ptr<ante::Decorator> DeductFee(const Harness& h) {
  return std::make_unique<ante::DeductFeeDecorator>(h.auth, h.bank);
}

TEST_CASE("DeductFee: fee to the collector, priority = fee per gas, min gas prices in CheckTx "
          "only",
          "[ante]") {
  SendOptions o;
  o.fee = "400stake";
  o.gas = 100;
  {
    Harness h;
    REQUIRE(h.Run(DeductFee(h), DecodedSend(o)).ok());
    CHECK(h.ctx.priority == ante::FeePerGas{4} << 64);  // 4 per gas, Q64.64
    CHECK(*h.bank.GetBalance(h.state, kAlice.address, "stake") == 600);
    CHECK(*h.bank.GetBalance(h.state, app::bank::FeeCollectorAddress(), "stake") == 400);
    REQUIRE(h.ctx.events.size() == 1);
    CHECK(h.ctx.events[0].type() == "tx");
  }
  {
    Harness h;
    const std::vector<ante::GasPrice> prices = *ante::ParseGasPrices("4.5stake");
    h.ctx.min_gas_prices = &prices;
    h.ctx.mode = ante::ExecMode::kCheck;
    ante::TxStatus s = h.Run(DeductFee(h), DecodedSend(o));
    CHECK(s.code() == 13);
    CHECK(s.log() == "insufficient fees; got: 400stake required: 450stake: insufficient fee");
    h.ctx.mode = ante::ExecMode::kFinalize;  // never a consensus rule
    CHECK(h.Run(DeductFee(h), DecodedSend(o)).ok());
  }
  {
    Harness h;
    o.fee = "5000stake";
    ante::TxStatus s = h.Run(DeductFee(h), DecodedSend(o));
    CHECK(s.code() == 5);
    CHECK_THAT(s.log(), Catch::Contains("spendable balance 1000stake is smaller than 5000stake"));
    o.gas = 0;
    CHECK(h.Run(DeductFee(h), DecodedSend(o)).code() == 41);
  }
  {
    Harness h;
    o.fee = "1stake";
    o.gas = 100;
    ante::TxStatus s =
        h.Run(DeductFee(h), DecodedSend(o, kNobody));
    CHECK(s.code() == 9);
    CHECK(s.log() == "fee payer address: " + kNobody.bech32 + " does not exist: unknown address");
  }
}

TEST_CASE("FeePerGasQ64: the fee per gas exactly in Q64.64, the least coin, saturated",
          "[ante]") {
  const auto fee = [](const char* text) { return *ante::Coins::Parse(text); };
  constexpr ante::FeePerGas kOne = ante::FeePerGas{1} << 64;
  // A usual Cosmos fee level: 0.025 per gas, which integer division made 0.
  CHECK(ante::FeePerGasQ64(fee("5000stake"), 200000) == kOne / 40);  // floor(2^64 / 40)
  CHECK(ante::FeePerGasQ64(fee("5000stake"), 200000) <
        ante::FeePerGasQ64(fee("5001stake"), 200000));
  CHECK(ante::FeePerGasQ64(fee("5000stake"), 200000) ==
        ante::FeePerGasQ64(fee("2500stake"), 100000));  // the same rate, another gas limit
  CHECK(ante::FeePerGasQ64(fee("1stake"), 3) == kOne / 3);
  CHECK(ante::FeePerGasQ64(fee("7stake"), 2) == 3 * kOne + kOne / 2);
  // The least coin sets it, as the SDK's GetTxPriority.
  CHECK(ante::FeePerGasQ64(fee("100atom,5000stake"), 200000) ==
        ante::FeePerGasQ64(fee("100atom"), 200000));
  // No fee or no gas: 0.
  CHECK(ante::FeePerGasQ64(ante::Coins(), 200000) == 0);
  CHECK(ante::FeePerGasQ64(fee("5stake"), 0) == 0);
  // 2^64 per gas and above saturate at 2^128 - 1, as does an amount of 2^192 or more.
  const ante::FeePerGas kMax = ~ante::FeePerGas{0};
  CHECK(ante::FeePerGasQ64(fee("18446744073709551615stake"), 1) == kMax - kOne + 1);
  CHECK(ante::FeePerGasQ64(fee("36893488147419103232stake"), 1) == kMax);  // 2^65
  const std::string huge = ante::ToString(ante::Uint256(1) << 200);
  CHECK(ante::FeePerGasQ64(fee((huge + "stake").c_str()), 7) == kMax);
}

TEST_CASE("SetPubKey: stores the key on first use; a key of another address is refused (8)",
          "[ante]") {
  Harness h;
  ante::Tx tx = DecodedSend();
  REQUIRE_FALSE((*h.auth.ReadAccount(h.state, kAlice.address))->pub_key.has_value());
  REQUIRE(h.Run(std::make_unique<ante::SetPubKeyDecorator>(h.auth), tx).ok());
  CHECK((*h.auth.ReadAccount(h.state, kAlice.address))->pub_key->key == kAlice.pub);
  ante::Tx wrong = tx;
  wrong.signer_infos[0].public_key = ante::PubKey{crypto::KeyType::kSecp256k1, kBob.pub};
  ante::TxStatus s = h.Run(std::make_unique<ante::SetPubKeyDecorator>(h.auth), wrong);
  CHECK(s.code() == 8);
  CHECK(s.log() == "pubKey does not match signer address " + kAlice.bech32 +
                       " with signer index: 0: invalid pubkey");
}

TEST_CASE("ValidateSigCount: at most tx_sig_limit signatures (14)", "[ante]") {
  Harness h;
  ante::AuthParams p;
  p.tx_sig_limit = 1;
  h.auth.set_params(p);
  ante::Tx tx = DecodedSend();
  CHECK(h.Run(std::make_unique<ante::ValidateSigCountDecorator>(h.auth), tx).ok());
  tx.signer_infos.push_back(tx.signer_infos[0]);
  ante::TxStatus s = h.Run(std::make_unique<ante::ValidateSigCountDecorator>(h.auth), tx);
  CHECK(s.code() == 14);
  CHECK(s.log() == "signatures: 2, limit: 1: maximum number of signatures exceeded");
}

TEST_CASE("SigGasConsume: 1000 gas for secp256k1, 590 for ed25519", "[ante]") {
  Harness h;
  REQUIRE(h.Run(std::make_unique<ante::SigGasConsumeDecorator>(h.auth), DecodedSend()).ok());
  CHECK(h.ctx.gas.consumed() == 1000);
  Harness h2;
  REQUIRE(h2.auth.NewAccount(h2.state, kEd.address).ok());
  SendOptions o;
  o.account_number = 1;
  REQUIRE(h2.Run(std::make_unique<ante::SigGasConsumeDecorator>(h2.auth), DecodedSend(o, kEd))
              .ok());
  CHECK(h2.ctx.gas.consumed() == 590);
}

TEST_CASE("SigVerification: sequence (32), signature (4), recheck skips the signature",
          "[ante]") {
  Harness h;
  REQUIRE(h.Run(std::make_unique<ante::SetPubKeyDecorator>(h.auth), DecodedSend()).ok());
  CHECK(h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), DecodedSend())
            .ok());
  SendOptions o;
  o.sequence = 5;
  ante::TxStatus s =
      h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), DecodedSend(o));
  CHECK(s.code() == 32);
  CHECK(s.log() == "account sequence mismatch, expected 0, got 5: incorrect account sequence");
  ante::Tx bad = DecodedSend();
  bad.signatures[0][5] ^= 1;
  s = h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), bad);
  CHECK(s.code() == 4);
  CHECK_THAT(s.log(), Catch::StartsWith("signature verification failed; please verify account "
                                        "number (0) and chain-id (kairos-test)"));
  h.ctx.mode = ante::ExecMode::kReCheck;
  CHECK(h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), bad).ok());
  // SIGN_MODE_UNSPECIFIED: fine for a simulation (CosmJS simulates with it), refused otherwise.
  ante::Tx unspecified = DecodedSend();
  unspecified.signer_infos[0].sign_mode_direct = false;
  h.ctx.mode = ante::ExecMode::kSimulate;
  CHECK(h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), unspecified)
            .ok());
  h.ctx.mode = ante::ExecMode::kCheck;
  s = h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), unspecified);
  CHECK(s.code() == 37);
  CHECK_THAT(s.log(), Catch::Contains("SIGN_MODE_UNSPECIFIED is not supported"));
}

// The cache records only signatures that verified, and a recorded one is accepted without a
// verification (so the cache is consulted). For both key types.
TEST_CASE("the signature cache records verified signatures only and answers lookups",
          "[ante]") {
  for (const TestKey& k : {kAlice, kEd}) {
    INFO("key type " << static_cast<int>(k.type));
    const ante::PubKey key{k.type, k.pub};
    const std::string msg = "sign bytes";
    const std::string good = k.type == crypto::KeyType::kSecp256k1
                                 ? crypto::Secp256k1Sign(k.priv, msg)
                                 : crypto::Ed25519Sign(k.priv, msg);
    std::string bad = good;
    bad[5] = static_cast<char>(bad[5] ^ 1);

    ante::SignatureCache cache;
    CHECK_FALSE(cache.Contains(ante::SignatureCache::KeyOf(key, msg, good)));
    CHECK(ante::VerifyTxSignature(key, msg, good, &cache));
    CHECK(cache.Contains(ante::SignatureCache::KeyOf(key, msg, good)));
    CHECK_FALSE(ante::VerifyTxSignature(key, msg, bad, &cache));
    CHECK_FALSE(cache.Contains(ante::SignatureCache::KeyOf(key, msg, bad)));
    // The key covers the message and the public key too.
    CHECK_FALSE(cache.Contains(ante::SignatureCache::KeyOf(key, msg + "!", good)));
    CHECK_FALSE(cache.Contains(ante::SignatureCache::KeyOf({k.type, kBob.pub}, msg, good)));

    // A recorded entry is believed.
    cache.Add(ante::SignatureCache::KeyOf(key, msg, bad));
    CHECK(ante::VerifyTxSignature(key, msg, bad, &cache));
    CHECK_FALSE(ante::VerifyTxSignature(key, msg, bad, nullptr));
  }
}

TEST_CASE("a high-S signature is refused even though (r, n - s) is mathematically valid",
          "[ante]") {
  Harness h;
  REQUIRE(h.Run(std::make_unique<ante::SetPubKeyDecorator>(h.auth), DecodedSend()).ok());
  ante::Tx tx = DecodedSend();
  // s' = n - s, big-endian subtraction over the last 32 bytes.
  static const unsigned char kN[32] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                       0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
                                       0xBA, 0xAE, 0xDC, 0xE6, 0xAF, 0x48, 0xA0, 0x3B,
                                       0xBF, 0xD2, 0x5E, 0x8C, 0xD0, 0x36, 0x41, 0x41};
  std::string& sig = tx.signatures[0];
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = kN[i] - static_cast<unsigned char>(sig[32 + i]) - borrow;
    borrow = d < 0;
    sig[32 + i] = static_cast<char>(d + (borrow ? 256 : 0));
  }
  CHECK(h.Run(std::make_unique<ante::SigVerificationDecorator>(h.auth, nullptr), tx).code() == 4);
}

TEST_CASE("IncrementSequence: +1 for ordered txs, unchanged for unordered", "[ante]") {
  Harness h;
  REQUIRE(h.Run(std::make_unique<ante::IncrementSequenceDecorator>(h.auth), DecodedSend()).ok());
  CHECK((*h.auth.ReadAccount(h.state, kAlice.address))->sequence == 1);
  SendOptions o;
  o.unordered = true;
  o.timeout_unix_nanos = kT0 + kSecond;
  REQUIRE(h.Run(std::make_unique<ante::IncrementSequenceDecorator>(h.auth), DecodedSend(o)).ok());
  CHECK((*h.auth.ReadAccount(h.state, kAlice.address))->sequence == 1);
}

TEST_CASE("GasKv charges the SDK's KV gas", "[ante]") {
  EmptyReader empty;
  store::Branch b(empty, store::KvLimits{});
  ante::GasMeter meter;
  ante::GasKv kv(b, meter);
  REQUIRE(kv.Set("key", "value").ok());  // 2000 + 30 * 8
  CHECK(meter.consumed() == 2240);
  std::string v;
  REQUIRE(kv.Get("key", &v).ok());  // 1000 + 3 * 8
  CHECK(meter.consumed() == 2240 + 1024);
  REQUIRE(kv.Delete("key").ok());
  CHECK(meter.consumed() == 2240 + 1024 + 1000);
}

// --- the whole pipeline, through the app -------------------------------------------------

namespace {
SendOptions At(SendOptions o, std::uint64_t sequence) {
  o.sequence = sequence;
  return o;
}
}  // namespace

// The ante reads each signer's account in several decorators; the context's memo answers the
// repeats. Run whole (memo) and decorator by decorator with the memo emptied in between (every
// read a store read), the pipeline must charge the same gas, with and without a fee payer read,
// for a first tx (SetPubKey writes the key) and a later one.
TEST_CASE("the ante's account memo charges exactly the store reads it saves", "[ante]") {
  auto decorators = [](const app::auth::AuthKeeper& auth, const app::bank::BankKeeper& bank) {
    std::vector<std::unique_ptr<ante::Decorator>> list;
    list.push_back(std::make_unique<ante::ExtensionOptionsDecorator>());
    list.push_back(std::make_unique<ante::ValidateBasicDecorator>(auth));
    list.push_back(std::make_unique<ante::TxTimeoutHeightDecorator>());
    list.push_back(std::make_unique<ante::ValidateMemoDecorator>(auth));
    list.push_back(std::make_unique<ante::ConsumeTxSizeGasDecorator>(auth));
    list.push_back(std::make_unique<ante::DeductFeeDecorator>(auth, bank));
    list.push_back(std::make_unique<ante::SetPubKeyDecorator>(auth));
    list.push_back(std::make_unique<ante::ValidateSigCountDecorator>(auth));
    list.push_back(std::make_unique<ante::SigGasConsumeDecorator>(auth));
    list.push_back(std::make_unique<ante::SigVerificationDecorator>(auth, nullptr));
    list.push_back(std::make_unique<ante::IncrementSequenceDecorator>(auth));
    return list;
  };
  // Gas of alice's txs at sequences 0 and 1, run whole or one decorator at a time.
  auto gas_of = [&](bool one_by_one, const std::string& fee) {
    Harness h;
    std::vector<std::uint64_t> gas;
    for (std::uint64_t seq = 0; seq < 2; ++seq) {
      SendOptions o;
      o.fee = fee;
      o.sequence = seq;
      const ante::Tx tx = DecodedSend(o);
      ante::Context ctx = h.ctx;
      ante::GasKv kv(h.state, ctx.gas, ctx.kv_gas);
      ctx.store = &kv;
      if (one_by_one) {
        for (auto& d : decorators(h.auth, h.bank)) {
          ctx.accounts.clear();
          std::vector<std::unique_ptr<ante::Decorator>> one;
          one.push_back(std::move(d));
          REQUIRE(ante::AntePipeline(std::move(one)).Run(ctx, tx).ok());
        }
      } else {
        REQUIRE(ante::AntePipeline(decorators(h.auth, h.bank)).Run(ctx, tx).ok());
        CHECK(ctx.accounts.size() == 1);  // alice's account, read once
      }
      gas.push_back(ctx.gas.consumed());
    }
    return gas;
  };
  for (const std::string fee : {"", "10stake"}) {
    INFO("fee " << fee);
    const auto whole = gas_of(false, fee);
    CHECK(whole == gas_of(true, fee));
    CHECK(whole[0] > whole[1]);  // the first tx also writes the key
  }
}

TEST_CASE("the sdk error codes through CheckTx, with their log texts", "[ante]") {
  app::AppOptions options;
  options.min_gas_prices = *ante::ParseGasPrices("0.01stake");
  TestChain chain({{kAlice, "1000000stake"}, {kBob, "10stake"}}, "", options);
  chain.Block({}, kT0);
  SendOptions o;
  o.fee = "2000stake";

  SECTION("2: not a tx") {
    auto res = chain.Check("garbage");
    CHECK(res.code() == 2);
    CHECK(res.codespace() == "sdk");
  }
  SECTION("0: a valid tx, with gas used") {
    auto res = chain.Check(chain.Send(kAlice, kBob, "1stake", o));
    CHECK(res.code() == 0);
    CHECK(res.gas_wanted() == 200000);
    CHECK(res.gas_used() > 1000);
  }
  SECTION("4: a signature for another chain") {
    const std::string tx = app::BuildSignedTx(SpecOf({MakeSend(kAlice, kBob, "1stake")}, o),
                                              {SignerOf(kAlice, 0, 0)}, "another-chain");
    auto res = chain.Check(tx);
    CHECK(res.code() == 4);
    CHECK_THAT(res.log(), Catch::Contains("chain-id (kairos-test)"));
  }
  SECTION("5: a fee larger than the balance") {
    o.fee = "2000stake";
    auto res = chain.Check(chain.Send(kBob, kAlice, "1stake", [&] {
      SendOptions b = o;
      b.account_number = 1;
      return b;
    }()));
    CHECK(res.code() == 5);
    CHECK_THAT(res.log(), Catch::Contains("spendable balance 10stake is smaller than 2000stake"));
  }
  SECTION("11: out of gas") {
    o.gas = 3000;
    o.fee = "30stake";
    auto res = chain.Check(chain.Send(kAlice, kBob, "1stake", o));
    CHECK(res.code() == 11);
    CHECK_THAT(res.log(), Catch::StartsWith("out of gas in location: "));
  }
  SECTION("12: memo too long") {
    o.memo = std::string(300, 'x');
    CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", o)).code() == 12);
  }
  SECTION("13: a fee under the node's min gas price") {
    o.fee = "1stake";
    auto res = chain.Check(chain.Send(kAlice, kBob, "1stake", o));
    CHECK(res.code() == 13);
    CHECK(res.log() == "insufficient fees; got: 1stake required: 2000stake: insufficient fee");
  }
  SECTION("32: a wrong sequence, expected against got") {
    // A sequence below the account's (a higher one waits in the mempool for the gap to fill).
    chain.Block({chain.Send(kAlice, kBob, "1stake", o)}, kT0 + kSecond);
    chain.Block({chain.Send(kAlice, kBob, "2stake", At(o, 1))}, kT0 + 2 * kSecond);
    auto res = chain.Check(chain.Send(kAlice, kBob, "3stake", At(o, 0)));
    CHECK(res.code() == 32);
    CHECK(res.log() == "account sequence mismatch, expected 2, got 0: incorrect account sequence");
  }
  SECTION("41: a gas limit over the block's max gas") {
    o.gas = 20'000'000;
    o.fee = "200000stake";
    CHECK(chain.Check(chain.Send(kAlice, kBob, "1stake", o)).code() == 41);
  }
  SECTION("15: no signatures (decodes, then ValidateBasic)") {
    cosmos::tx::v1beta1::TxRaw raw;
    REQUIRE(raw.ParseFromString(chain.Send(kAlice, kBob, "1stake", o)));
    raw.clear_signatures();
    auto res = chain.Check(raw.SerializeAsString());
    CHECK(res.code() == 15);
  }
}

TEST_CASE("ordered txs: the sequence moves by one per tx; a failed message keeps the fee",
          "[ante]") {
  TestChain chain({{kAlice, "1000000stake"}, {kBob, "10stake"}});
  chain.Block({}, kT0);
  SendOptions o;
  o.fee = "100stake";
  const std::string t0 = chain.Send(kAlice, kBob, "1stake", o);
  o.sequence = 1;
  const std::string t1 = chain.Send(kAlice, kBob, "2000000stake", o);  // the message fails
  o.sequence = 2;
  const std::string t2 = chain.Send(kAlice, kBob, "1stake", o);
  auto res = chain.Block({t0, t1, t2}, kT0 + kSecond);
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == 5);
  CHECK(res.tx_results(1).log() ==
        "failed to execute message; message index: 0: spendable balance 999799stake is smaller "
        "than 2000000stake: insufficient funds");
  CHECK(res.tx_results(2).code() == 0);
  CHECK(chain.Balance(kBob) == "12");
  CHECK(chain.Balance(kAlice) == std::to_string(1000000 - 2 - 300));
  // Events carry the SDK's names.
  bool transfer = false, fee = false, acc_seq = false;
  for (const auto& e : res.tx_results(0).events()) {
    transfer |= e.type() == "transfer";
    for (const auto& a : e.attributes()) {
      fee |= e.type() == "tx" && a.key() == "fee" && a.value() == "100stake";
      acc_seq |= e.type() == "tx" && a.key() == "acc_seq" && a.value() == kAlice.bech32 + "/0";
    }
  }
  CHECK(transfer);
  CHECK(fee);
  CHECK(acc_seq);
  // gas_used is deterministic: the same block on another chain gives the same numbers.
  TestChain other({{kAlice, "1000000stake"}, {kBob, "10stake"}});
  other.Block({}, kT0);
  auto again = other.Block({t0, t1, t2}, kT0 + kSecond);
  for (int i = 0; i < 3; ++i) CHECK(again.tx_results(i).gas_used() == res.tx_results(i).gas_used());
  CHECK(again.app_hash() == res.app_hash());
}

}  // namespace kairos::test

TEST_CASE("SignDocBytes equals the generated SignDoc's serialization", "[ante]") {
  const std::string long_body(300, 'b');
  for (const auto& [body, auth, chain, number] :
       std::vector<std::tuple<std::string, std::string, std::string, std::uint64_t>>{
           {"", "", "", 0},
           {"\x0a\x01x", "\x12\x02yz", "kairos-test", 0},
           {long_body, "auth", "c", 1},
           {"b", "", "chain", 127},
           {"b", "a", "", 128},
           {"b", "a", "x", ~0ull}}) {
    cosmos::tx::v1beta1::SignDoc doc;
    doc.set_body_bytes(body);
    doc.set_auth_info_bytes(auth);
    doc.set_chain_id(chain);
    doc.set_account_number(number);
    CHECK(kairos::ante::SignDocBytes(body, auth, chain, number) == doc.SerializeAsString());
  }
}
