// /kairos.locks.v1.Query/* through KairosApp::Query: every answer, the store key it rests on,
// its ICS-23 proof with prove=true (an existence proof of exactly the stored bytes, or a
// non-existence proof when the key is absent), answers at an earlier height, and bad requests.
// (The proofs are checked against the app hash by the independent verifier in the e2e test.)
#include <catch2/catch.hpp>

#include <string>

#include "app/locks/keeper.h"
#include "app/locks/params.h"
#include "cosmos/ics23/v1/proofs.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "kairos/locks/v1/query.pb.h"
#include "locks_chain.h"
#include "app/locks/msgs.h"

namespace kairos::test {
namespace {

namespace lpb = kairos::locks::v1;
using app::locks::LocksKeeper;

const TestKey kU = MakeKey("locks-query-u");
const TestKey kV = MakeKey("locks-query-v");

// The answer of `name` with a proof; checks the key and that the proof is for it: of `stored`
// when set, of absence otherwise. Returns the parsed response.
template <class Response>
Response Proven(LocksChain& chain, const std::string& name,
                const google::protobuf::MessageLite& request, const std::string& key,
                const std::optional<std::string>& stored) {
  const auto res = chain.RawQuery(name, request.SerializeAsString(), /*prove=*/true);
  INFO(name << ": " << res.log());
  REQUIRE(res.code() == 0);
  CHECK(res.key() == key);
  CHECK(res.height() == chain.last_height());
  REQUIRE(res.proof_ops().ops_size() == 1);
  const auto& op = res.proof_ops().ops(0);
  CHECK(op.type() == "ics23:smt");
  CHECK(op.key() == key);
  cosmos::ics23::v1::CommitmentProof proof;
  REQUIRE(proof.ParseFromString(op.data()));
  if (stored) {
    REQUIRE(proof.has_exist());
    CHECK(proof.exist().key() == key);
    CHECK(proof.exist().value() == *stored);
  } else {
    REQUIRE(proof.has_nonexist());
    CHECK(proof.nonexist().key() == key);
  }
  Response r;
  REQUIRE(r.ParseFromString(res.value()));
  return r;
}

std::string Stored(LocksChain& chain, const std::string& key) {
  std::string value;
  REQUIRE(chain.state().Get(key, &value).ok());
  return value;
}

TEST_CASE("locks queries: every answer with its proof, at the latest and an earlier height",
          "[locks]") {
  LocksChain chain({{kU, "10000000stake"}, {kV, "10000000stake"}},
                   std::string(R"({"params":)") + kVectorParams + "}", 100);
  chain.Block({chain.Tx(kU, MsgRegister(kU))});  // 100
  chain.Block({chain.Tx(kU, MsgWrite(kU, Slot("book", "alice"), app::locks::LockWriteOp::kSet, -9))});
  REQUIRE(chain.last_height() == 101);

  lpb::QueryHolderRequest hq;
  hq.set_resource("book");
  hq.set_key("alice");
  const std::string lock_key = LocksKeeper::LockKey(Slot("book", "alice"));
  auto holder = Proven<lpb::QueryHolderResponse>(chain, "Holder", hq, lock_key, kU.address);
  CHECK(holder.holder() == kU.bech32);
  CHECK(holder.active());
  CHECK(holder.expiry() == 106);
  hq.set_key("bob");  // free: a proof of absence
  holder = Proven<lpb::QueryHolderResponse>(chain, "Holder", hq,
                                            LocksKeeper::LockKey(Slot("book", "bob")), {});
  CHECK(holder.holder().empty());
  CHECK_FALSE(holder.active());

  lpb::QueryVarRequest vq;
  vq.set_resource("book");
  vq.set_key("alice");
  const std::string var_key = LocksKeeper::VarKey(Slot("book", "alice"));
  CHECK(Proven<lpb::QueryVarResponse>(chain, "Var", vq, var_key, "-9").value() == -9);
  vq.set_key("");  // the single variable "book" is another slot than any of its elements
  CHECK(Proven<lpb::QueryVarResponse>(chain, "Var", vq, LocksKeeper::VarKey(Slot("book")), {})
            .value() == 0);

  lpb::QuerySessionRequest sq;
  sq.set_address(kU.bech32);
  const std::string session_key = LocksKeeper::SessionKey(kU.address);
  auto session = Proven<lpb::QuerySessionResponse>(chain, "Session", sq, session_key,
                                                   Stored(chain, session_key));
  CHECK(session.found());
  CHECK(session.active());
  CHECK(session.session().SerializeAsString() == Stored(chain, session_key));
  CHECK(session.session().deposit() == "1000");

  lpb::QueryRegistrationRequest rq;
  rq.set_address(kU.bech32);
  const std::string reg_key = LocksKeeper::RegistrationKey(kU.address);
  auto reg =
      Proven<lpb::QueryRegistrationResponse>(chain, "Registration", rq, reg_key,
                                             Stored(chain, reg_key));
  CHECK(reg.registration().SerializeAsString() == Stored(chain, reg_key));
  CHECK(reg.whitelisted());
  CHECK(reg.refundable_from() == 235);
  rq.set_address(kV.bech32);
  reg = Proven<lpb::QueryRegistrationResponse>(chain, "Registration", rq,
                                               LocksKeeper::RegistrationKey(kV.address), {});
  CHECK_FALSE(reg.found());
  CHECK_FALSE(reg.whitelisted());

  lpb::QueryDepositQuoteRequest dq;
  dq.set_address(kU.bech32);
  auto quote = Proven<lpb::QueryDepositQuoteResponse>(chain, "DepositQuote", dq,
                                                      LocksKeeper::LastEndKey(kU.address), {});
  CHECK(quote.active());
  CHECK(quote.deposit() == "0");
  CHECK(quote.denom() == "stake");
  dq.set_address(kV.bech32);
  quote = Proven<lpb::QueryDepositQuoteResponse>(chain, "DepositQuote", dq,
                                                 LocksKeeper::LastEndKey(kV.address), {});
  CHECK(quote.deposit() == "1000");
  CHECK_FALSE(quote.whitelisted());

  lpb::QueryParamsRequest pq;
  auto params = Proven<lpb::QueryParamsResponse>(chain, "Params", pq,
                                                 std::string(LocksKeeper::kParamsKey),
                                                 Stored(chain, "locks/params"));
  CHECK(params.params().SerializeAsString() == Stored(chain, "locks/params"));
  CHECK(params.params().session_period() == 5);
  CHECK(params.params().base_deposit() == "1000");
  CHECK(params.denom() == "stake");
  CHECK(params.escrow_address() == crypto::EncodeAccountAddress(app::locks::EscrowAddress()));
  CHECK(params.forfeit_sink_address().empty());

  // At height 100 (before the write): no lock, no variable; u registered.
  tendermint::abci::RequestQuery past;
  past.set_path("/kairos.locks.v1.Query/Var");
  vq.set_key("alice");
  past.set_data(vq.SerializeAsString());
  past.set_height(100);
  const auto old = chain.app().Query(past);
  REQUIRE(old.code() == 0);
  CHECK(old.height() == 100);
  lpb::QueryVarResponse old_var;
  REQUIRE(old_var.ParseFromString(old.value()));
  CHECK(old_var.value() == 0);

  // At 106 the session has expired (not yet cleaned up: it ends at the next acquisition or in
  // EndBlock): inactive, and the quote counts the cool-off from its expiry.
  chain.AdvanceTo(106);
  dq.set_address(kU.bech32);
  quote = chain.Query<lpb::QueryDepositQuoteResponse>("DepositQuote", dq);
  CHECK_FALSE(quote.active());
  CHECK(quote.last_session_end() == 106);
  CHECK(quote.cooloff_until() == 116);
  CHECK(quote.deposit() == "1024000");
}

TEST_CASE("bank's spendable balances leave out locks deposits: they sit in the escrow account",
          "[locks][module_queries]") {
  LocksChain chain({{kU, "10000000stake"}, {kV, "10000000stake"}},
                   std::string(R"({"params":)") + kVectorParams + "}", 100);
  chain.Block({chain.Tx(kU, MsgRegister(kU))});
  const ante::Uint256 escrow_before = chain.Balance(app::locks::EscrowAddress());
  chain.Block(
      {chain.Tx(kU, MsgWrite(kU, Slot("book", "alice"), app::locks::LockWriteOp::kSet, 1))});
  lpb::QuerySessionRequest sq;
  sq.set_address(kU.bech32);
  const auto session = chain.Query<lpb::QuerySessionResponse>("Session", sq);
  REQUIRE(session.active());
  REQUIRE(session.session().deposit() == "1000");
  // The deposit moved into the escrow account...
  CHECK(chain.Balance(app::locks::EscrowAddress()) == escrow_before + 1000);
  // ...so what the depositor may spend, as bank answers it, is its balance without it.
  const auto spendable = [&](const TestKey& k) {
    cosmos::bank::v1beta1::QuerySpendableBalanceByDenomRequest q;
    q.set_address(k.bech32);
    q.set_denom("stake");
    tendermint::abci::RequestQuery req;
    req.set_path("/cosmos.bank.v1beta1.Query/SpendableBalanceByDenom");
    req.set_data(q.SerializeAsString());
    const auto res = chain.app().Query(req);
    REQUIRE(res.code() == 0);
    cosmos::bank::v1beta1::QuerySpendableBalanceByDenomResponse r;
    REQUIRE(r.ParseFromString(res.value()));
    return r.balance().amount();
  };
  CHECK(spendable(kU) == ante::ToString(chain.Balance(kU)));
  CHECK(spendable(kV) == "10000000");
}

TEST_CASE("locks queries: bad requests get code 18 (6 for an unknown query) and a reason",
          "[locks]") {
  LocksChain chain({{kU, "10000000stake"}}, "{}");
  auto expect = [&](const std::string& name, const std::string& data, std::uint32_t code,
                    const std::string& log) {
    const auto res = chain.RawQuery(name, data);
    INFO(res.log());
    CHECK(res.code() == code);
    CHECK(res.codespace() == "sdk");
    CHECK(res.log() == log);
  };
  lpb::QuerySessionRequest sq;
  sq.set_address("kairos1nope");
  expect("Session", sq.SerializeAsString(), 18,
         "invalid request: /kairos.locks.v1.Query/Session: invalid address \"kairos1nope\"");
  lpb::QueryHolderRequest hq;
  hq.set_resource("has space");
  expect("Holder", hq.SerializeAsString(), 18,
         "invalid request: /kairos.locks.v1.Query/Holder: resource \"has space\" may only hold "
         "[A-Za-z0-9_.:/-]");
  expect("Var", std::string("\xff\xff", 2), 18,
         "invalid request: /kairos.locks.v1.Query/Var: data is not a "
         "kairos.locks.v1.QueryVarRequest");
  expect("DepositQuote", std::string("\xff", 1), 18,
         "invalid request: /kairos.locks.v1.Query/DepositQuote: data is not a "
         "kairos.locks.v1.QueryDepositQuoteRequest");
  expect("Everything", "", 6, "unknown query path '/kairos.locks.v1.Query/Everything'");
}

}  // namespace
}  // namespace kairos::test
