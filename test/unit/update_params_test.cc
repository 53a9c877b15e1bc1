// MsgUpdateParams of the auth module (/cosmos.auth.v1beta1.MsgUpdateParams), the bank module
// (/cosmos.bank.v1beta1.MsgUpdateParams) and the locks module (/kairos.locks.v1.MsgUpdateParams)
// on a real chain (test_chain.h): only the authority (app_state.poa.authority) may send them
// (code 4 and the message), bad params are refused with their field (code 18), a good change is
// written and applies: auth's and bank's from the next block (the params of the last commit),
// locks' from the next message (read from the store per message), and a chain that never sends
// them keeps its app hash (and holds no bank/params). Also bank's genesis params and their
// export.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/auth/keeper.h"
#include "app/auth/msgs.h"
#include "app/bank/errors.h"
#include "app/bank/genesis.h"
#include "app/bank/module.h"
#include "app/bank/msg_server.h"
#include "app/bank/msgs.h"
#include "app/hex.h"
#include "app/locks/msgs.h"
#include "app/module_list.h"
#include "app/proto_util.h"
#include "cosmos/auth/v1beta1/tx.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/tx.pb.h"
#include "crypto/base64.h"
#include "kairos/locks/v1/query.pb.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

using Catch::Matchers::Contains;

const TestKey kAuthority = MakeKey("params authority");
const TestKey kStranger = MakeKey("params stranger");
const TestKey kOther = MakeKey("params other");

// app_state.poa: the authority and one ed25519 validator.
std::string PoaSection(bool with_authority = true) {
  const std::string key = crypto::Base64Encode(crypto::Ed25519PublicKey(crypto::Sha256("val")));
  std::string poa = R"(,"poa":{)";
  if (with_authority) poa += R"("authority":")" + kAuthority.bech32 + R"(",)";
  return poa + R"("validators":[{"pub_key":{"@type":"/cosmos.crypto.ed25519.PubKey","key":")" +
         key + R"("},"power":"10"}]})";
}

struct Chain {
  explicit Chain(bool with_authority = true)
      : chain({{kAuthority, "1000000stake"}, {kStranger, "1000000stake"}},
              R"("max_memo_characters":"256")", {}, PoaSection(with_authority)) {}

  // A tx of one message from `from` (account number `acc`) at sequence `seq`.
  std::string Tx(const ante::Msg& msg, const TestKey& from, std::uint64_t acc, std::uint64_t seq,
                 const std::string& memo = "") const {
    SendOptions o;
    o.memo = memo;
    return app::BuildSignedTx(SpecOf({msg}, o), {SignerOf(from, acc, seq)}, TestChain::kChainId);
  }
  std::string Send(std::uint64_t seq, const std::string& memo) const {
    SendOptions o;
    o.sequence = seq;
    o.memo = memo;
    return chain.Send(kAuthority, kOther, "1stake", o);
  }

  TestChain chain;
  std::int64_t time = kT0;
  abci_pb::ResponseFinalizeBlock Block(const std::vector<std::string>& txs) {
    time += kSecond;
    return chain.Block(txs, time);
  }
};

app::auth::MsgUpdateParams AuthUpdate(const TestKey& from, std::uint64_t memo_chars) {
  app::auth::MsgUpdateParams m;
  m.authority = from.address;
  m.params = app::auth::SdkParams::Of(ante::AuthParams{});
  m.params.max_memo_characters = memo_chars;
  return m;
}

app::locks::MsgUpdateParams LocksUpdate(const TestKey& from, std::int64_t session_period) {
  app::locks::MsgUpdateParams m;
  m.authority = from.address;
  m.params.session_period = session_period;
  return m;
}

kairos::locks::v1::QueryParamsResponse LocksParams(TestChain& chain) {
  abci_pb::RequestQuery req;
  req.set_path("/kairos.locks.v1.Query/Params");
  const abci_pb::ResponseQuery res = chain.app().Query(req);
  REQUIRE(res.code() == 0);
  kairos::locks::v1::QueryParamsResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  return r;
}

TEST_CASE("update params: only the authority, code 4", "[params]") {
  Chain c;
  auto res = c.Block({c.Tx(AuthUpdate(kStranger, 10), kStranger, 1, 0),
                      c.Tx(LocksUpdate(kStranger, 9), kStranger, 1, 1)});
  REQUIRE(res.tx_results_size() == 2);
  for (const auto& r : res.tx_results()) {
    CHECK(r.code() == ante::kUnauthorized);
    CHECK_THAT(r.log(), Contains("expected authority " + kAuthority.bech32 + ", got " +
                                 kStranger.bech32));
  }
  CHECK(LocksParams(c.chain).params().session_period() == 5);

  // A chain whose genesis names no authority: nobody may.
  Chain none(/*with_authority=*/false);
  res = none.Block({none.Tx(AuthUpdate(kAuthority, 10), kAuthority, 0, 0)});
  REQUIRE(res.tx_results_size() == 1);
  CHECK(res.tx_results(0).code() == ante::kUnauthorized);
  CHECK_THAT(res.tx_results(0).log(),
             Contains("expected authority (none: this chain's genesis sets no "
                      "app_state.poa.authority), got " + kAuthority.bech32));
}

TEST_CASE("update params: bad params are refused with their field", "[params]") {
  Chain c;
  auto auth = AuthUpdate(kAuthority, 10);
  auth.params.tx_sig_limit = 0;
  auto res = c.Block({c.Tx(auth, kAuthority, 0, 0), c.Tx(LocksUpdate(kAuthority, 0), kAuthority, 0, 1)});
  REQUIRE(res.tx_results_size() == 2);
  CHECK(res.tx_results(0).code() == ante::kInvalidRequest);
  CHECK_THAT(res.tx_results(0).log(), Contains("MsgUpdateParams.params.tx_sig_limit: must be positive"));
  CHECK(res.tx_results(1).code() == ante::kInvalidRequest);
  CHECK_THAT(res.tx_results(1).log(),
             Contains("MsgUpdateParams.params.session_period: must be at least 1"));

  // An absent params message is all zero, not the defaults.
  ::cosmos::auth::v1beta1::MsgUpdateParams pb;
  pb.set_authority(kAuthority.bech32);
  app::ProtoReader reader;
  ante::Msg out;
  REQUIRE(app::auth::DecodeMsg(reader, app::auth::MsgUpdateParams::kTypeUrl,
                               app::SerializeDeterministic(pb),
                               app::ProtoPath{nullptr, "tx.body.messages", 0}, &out));
  CHECK(out.Get<app::auth::MsgUpdateParams>().params.max_memo_characters == 0);
}

TEST_CASE("update params: auth applies from the next block", "[params]") {
  Chain c;
  const std::string memo(20, 'm');
  // Block 1: the change, then a 20-character memo in the same block: still the old params.
  auto res = c.Block({c.Tx(AuthUpdate(kAuthority, 10), kAuthority, 0, 0), c.Send(1, memo)});
  REQUIRE(res.tx_results_size() == 2);
  INFO(res.tx_results(0).log());
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == 0);
  bool event = false;
  for (const auto& e : res.tx_results(0).events()) event |= e.type() == "auth_update_params";
  CHECK(event);

  // Block 2: refused, in CheckTx and in the block.
  const std::string tx = c.Send(2, memo);
  auto check = c.chain.Check(tx);
  CHECK(check.code() == ante::kMemoTooLarge);
  CHECK_THAT(check.log(), Contains("maximum number of characters is 10 but received 20"));
  res = c.Block({tx, c.Send(2, std::string(10, 'm'))});
  CHECK(res.tx_results(0).code() == ante::kMemoTooLarge);
  CHECK(res.tx_results(1).code() == 0);

  // A restart reads the change from the committed state.
  c.chain.Reopen();
  check = c.chain.Check(c.Send(3, memo));
  CHECK(check.code() == ante::kMemoTooLarge);
}

TEST_CASE("update params: auth keeps the unordered params, outside the SDK's message",
          "[params]") {
  ante::AuthParams base;
  base.unordered_enabled = false;
  base.unordered_max_timeout_nanos = 7;
  base.unordered_gas_cost = 9;
  app::auth::SdkParams sdk{1, 2, 3, 4, 5};
  const ante::AuthParams p = sdk.ApplyTo(base);
  CHECK(p.max_memo_characters == 1);
  CHECK(p.tx_sig_limit == 2);
  CHECK(p.tx_size_cost_per_byte == 3);
  CHECK(p.sig_verify_cost_ed25519 == 4);
  CHECK(p.sig_verify_cost_secp256k1 == 5);
  CHECK_FALSE(p.unordered_enabled);
  CHECK(p.unordered_max_timeout_nanos == 7);
  CHECK(p.unordered_gas_cost == 9);
}

TEST_CASE("update params: locks applies from the next message", "[params]") {
  Chain c;
  auto res = c.Block({c.Tx(LocksUpdate(kAuthority, 9), kAuthority, 0, 0)});
  REQUIRE(res.tx_results_size() == 1);
  INFO(res.tx_results(0).log());
  CHECK(res.tx_results(0).code() == 0);
  const auto p = LocksParams(c.chain);
  CHECK(p.params().session_period() == 9);
  CHECK(p.params().cooloff_period() == 10);  // the rest as sent (here the defaults)
}

app::bank::MsgUpdateParams BankUpdate(const TestKey& from, bool default_send_enabled) {
  app::bank::MsgUpdateParams m;
  m.authority = from.address;
  m.params.default_send_enabled = default_send_enabled;
  return m;
}

bool BankSendEnabled(TestChain& chain) {
  abci_pb::RequestQuery req;
  req.set_path("/cosmos.bank.v1beta1.Query/Params");
  req.set_prove(true);
  const abci_pb::ResponseQuery res = chain.app().Query(req);
  REQUIRE(res.code() == 0);
  CHECK(res.key() == "bank/params");
  CHECK(res.has_proof_ops());
  cosmos::bank::v1beta1::QueryParamsResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  return r.params().default_send_enabled();
}

// Whether the committed state holds `key` (the /store query).
bool HasKey(TestChain& chain, const std::string& key) {
  abci_pb::RequestQuery req;
  req.set_path("/store/" + app::HexEncode(key));
  const abci_pb::ResponseQuery res = chain.app().Query(req);
  REQUIRE(res.code() == 0);
  return !res.value().empty();
}

TEST_CASE("update params: bank, only the authority, code 4", "[params][bank_params]") {
  Chain c;
  auto res = c.Block({c.Tx(BankUpdate(kStranger, false), kStranger, 1, 0)});
  REQUIRE(res.tx_results_size() == 1);
  CHECK(res.tx_results(0).code() == ante::kUnauthorized);
  CHECK_THAT(res.tx_results(0).log(), Contains("expected authority " + kAuthority.bech32 +
                                               ", got " + kStranger.bech32));
  CHECK(BankSendEnabled(c.chain));
  CHECK_FALSE(HasKey(c.chain, "bank/params"));
}

TEST_CASE("update params: bank refuses a per-denom send_enabled list", "[params][bank_params]") {
  ::cosmos::bank::v1beta1::MsgUpdateParams pb;
  pb.set_authority(kAuthority.bech32);
  // The list is deprecated in the SDK's proto (and here): what the test sends is exactly that.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  auto* entry = pb.mutable_params()->add_send_enabled();
#pragma GCC diagnostic pop
  entry->set_denom("stake");
  entry->set_enabled(true);
  pb.mutable_params()->set_default_send_enabled(true);
  app::ProtoReader reader;
  app::bank::MsgUpdateParams m;
  REQUIRE(app::bank::DecodeMsgUpdateParams(reader, app::SerializeDeterministic(pb),
                                           app::ProtoPath{nullptr, "tx.body.messages", 0}, m));
  CHECK(m.send_enabled_entries == 1);
  CHECK(m.params.default_send_enabled);
  CHECK(m.authority == kAuthority.address);
  const ante::TxStatus s = app::bank::ValidateBasic(m);
  CHECK(s.code() == ante::kInvalidRequest);
  CHECK_THAT(s.log(), Contains("MsgUpdateParams.params.send_enabled: Kairos keeps no per-denom "
                               "send flags"));

  // An absent params message is default_send_enabled false (proto3), not the default true.
  pb.clear_params();
  app::bank::MsgUpdateParams empty;
  REQUIRE(app::bank::DecodeMsgUpdateParams(reader, app::SerializeDeterministic(pb),
                                           app::ProtoPath{nullptr, "tx.body.messages", 0}, empty));
  CHECK_FALSE(empty.params.default_send_enabled);
  CHECK(app::bank::ValidateBasic(empty).ok());
}

TEST_CASE("update params: bank's default_send_enabled applies from the next block",
          "[params][bank_params]") {
  Chain c;
  // Block 1: sends are disabled, then a send in the same block: still allowed.
  auto res = c.Block({c.Tx(BankUpdate(kAuthority, false), kAuthority, 0, 0), c.Send(1, "")});
  REQUIRE(res.tx_results_size() == 2);
  INFO(res.tx_results(0).log());
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == 0);
  bool event = false;
  for (const auto& e : res.tx_results(0).events()) {
    if (e.type() != "bank_update_params") continue;
    event = true;
    REQUIRE(e.attributes_size() == 1);
    CHECK(e.attributes(0).key() == "default_send_enabled");
    CHECK(e.attributes(0).value() == "false");
  }
  CHECK(event);
  CHECK_FALSE(BankSendEnabled(c.chain));
  CHECK(HasKey(c.chain, "bank/params"));

  // Block 2: MsgSend is refused, with the SDK's bank error.
  const std::string want = "stake transfers are currently disabled: send transactions are disabled";
  res = c.Block({c.Send(2, "")});
  REQUIRE(res.tx_results_size() == 1);
  CHECK(res.tx_results(0).code() == app::bank::kErrSendDisabled);
  CHECK(res.tx_results(0).codespace() == "bank");
  CHECK_THAT(res.tx_results(0).log(), Contains(want));

  // A restart reads the change from the committed state.
  c.chain.Reopen();
  res = c.Block({c.Send(3, "")});
  CHECK(res.tx_results(0).code() == app::bank::kErrSendDisabled);
  CHECK(res.tx_results(0).codespace() == "bank");

  // Enabled again: refused in the block of the change, allowed in the next.
  res = c.Block({c.Tx(BankUpdate(kAuthority, true), kAuthority, 0, 4), c.Send(5, "")});
  REQUIRE(res.tx_results_size() == 2);
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == app::bank::kErrSendDisabled);
  res = c.Block({c.Send(6, "")});
  INFO(res.tx_results(0).log());
  CHECK(res.tx_results(0).code() == 0);
  CHECK(BankSendEnabled(c.chain));
}

TEST_CASE("bank genesis params: parsed with their field, written only when given, exported",
          "[params][bank_params]") {
  using nlohmann::json;
  auto modules = app::ModuleList::Chain();
  const app::Module* bank = modules->Find("bank");
  const auto parse_error = [&](const std::string& params) {
    const json section = json::parse(R"({"denom":"stake","params":)" + params + "}");
    auto g = bank->ParseGenesis(&section);
    REQUIRE_FALSE(g.ok());
    return g.status().message();
  };
  CHECK_THAT(parse_error(R"({"default_send_enabled":"no"})"),
             Contains("app_state.bank.params.default_send_enabled"));
  CHECK_THAT(parse_error(R"({"send_enabled":[{"denom":"stake","enabled":false}]})"),
             Contains("app_state.bank.params.send_enabled: must be empty"));
  CHECK_THAT(parse_error(R"({"send_enabled":{}})"),
             Contains("app_state.bank.params.send_enabled: must be empty"));
  CHECK_THAT(parse_error(R"({"sendenabled":true})"),
             Contains("app_state.bank.params.sendenabled: unknown field"));
  CHECK_THAT(parse_error("[]"), Contains("app_state.bank.params: must be a JSON object"));

  TempDir dir;
  store::StoreOptions so;
  so.dir = dir / "a";
  auto db = store::MerkleStore::Open(so);
  REQUIRE(db.ok());
  const auto init = [&](store::Branch& state, const json& section) {
    auto g = bank->ParseGenesis(&section);
    REQUIRE(g.ok());
    REQUIRE(bank->InitGenesis(state, **g, {}).ok());
    auto exported = bank->ExportGenesis(state);
    REQUIRE(exported.ok());
    REQUIRE(exported->has_value());
    return **exported;
  };
  std::string value;
  {
    // Without params: no key, nothing exported, the default read.
    store::Branch state(**db, {});
    const json out = init(state, json::parse(R"({"denom":"stake"})"));
    CHECK(state.Get(app::bank::BankKeeper::kParamsKey, &value).IsNotFound());
    CHECK_FALSE(out.contains("params"));
    CHECK(modules->Get<app::bank::BankModule>()->keeper().ReadParams(state)->default_send_enabled);
  }
  {
    // The SDK's own export form ({"send_enabled": [], ...}) is accepted; the round trip keeps it.
    store::Branch state(**db, {});
    const json out = init(
        state, json::parse(R"({"denom":"stake","params":{"send_enabled":[],
                                "default_send_enabled":false}})"));
    REQUIRE(state.Get(app::bank::BankKeeper::kParamsKey, &value).ok());
    CHECK(out["params"] == json::parse(R"({"default_send_enabled":false})"));
    store::Branch again(**db, {});
    CHECK(init(again, out) == out);
    REQUIRE(modules->Get<app::bank::BankModule>()->keeper().ReadParams(again).ok());
    CHECK_FALSE(
        modules->Get<app::bank::BankModule>()->keeper().ReadParams(again)->default_send_enabled);
  }
}

}  // namespace
}  // namespace kairos::test
