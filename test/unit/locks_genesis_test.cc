// app_state.locks: the params checked against the spec's constraints and the state sections
// checked for consistency, each error naming its JSON path; a full genesis state (sessions with
// their locks, last session ends, registrations, variables, the escrow funded to match) imported
// through InitChain, and the EndBlock cleanup of the imported sessions within its per-block limit.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>

#include "app/genesis.h"
#include "app/locks/errors.h"
#include "app/locks/params.h"
#include "kairos/locks/v1/query.pb.h"
#include "locks_chain.h"
#include "app/locks/msgs.h"
#include "app/locks/genesis.h"

namespace kairos::test {
namespace {

namespace lpb = kairos::locks::v1;

const TestKey kU = MakeKey("locks-genesis-u");
const TestKey kV = MakeKey("locks-genesis-v");

TestKey Escrow() {
  TestKey k;
  k.address = app::locks::EscrowAddress();
  k.bech32 = crypto::EncodeAccountAddress(k.address);
  return k;
}

std::string WithLocks(const std::string& locks_json,
                      std::vector<std::pair<TestKey, std::string>> funded = {{kU, "5000stake"}}) {
  std::string app_state = AppStateJson(funded);
  app_state.pop_back();
  return app_state + R"(,"locks":)" + locks_json + "}";
}

void CheckParseError(const std::string& locks_json, const std::string& message) {
  auto g = app::ParseGenesis(WithLocks(locks_json));
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().message() == message);
}

TEST_CASE("locks genesis: params within the spec's constraints, errors naming the field",
          "[locks]") {
  auto g = app::ParseGenesis(WithLocks("{}"));
  REQUIRE(g.ok());
  CHECK(g->Of<kairos::app::locks::GenesisState>().present);
  CHECK(g->Of<kairos::app::locks::GenesisState>().params == app::locks::Params{});
  CHECK_FALSE(app::ParseGenesis(AppStateJson({{kU, "5stake"}}))->Of<app::locks::GenesisState>().present);

  auto full = app::ParseGenesis(WithLocks(R"({"params":{"session_period":7,"cooloff_period":"64",
      "whitelist_period":"1","refund_holding_period":0,"base_deposit":"1","whitelist_fee":"0",
      "max_locks_per_session":"1","scale_refund":false,"release_bounty_bps":10000,
      "forfeit_sink":"community_pool","end_block_cleanup_limit":0}})"));
  REQUIRE(full.ok());
  const app::locks::Params& p = full->Of<app::locks::GenesisState>().params;
  CHECK(p.session_period == 7);
  CHECK(p.cooloff_period == 64);
  CHECK(p.base_deposit == 1);
  CHECK(p.whitelist_fee == 0);
  CHECK_FALSE(p.scale_refund);
  CHECK(p.release_bounty_bps == 10000);
  CHECK(app::locks::ForfeitSinkAddress(p) == app::ModuleAddress("community_pool"));

  const std::string at = "genesis app_state.locks.params.";
  CheckParseError(R"({"params":{"session_period":0}})", at + "session_period: must be at least 1");
  CheckParseError(R"({"params":{"cooloff_period":65}})",
                  at + "cooloff_period: must be between 0 and 64");
  CheckParseError(R"({"params":{"cooloff_period":64,"base_deposit":"2000000000000000000000000)"
                  R"(000000000000000000000000000000000000000000000000000"}})",
                  at + "base_deposit: base_deposit * 2^cooloff_period does not fit in 256 bits");
  CheckParseError(R"({"params":{"whitelist_period":"0"}})",
                  at + "whitelist_period: must be at least 1");
  CheckParseError(R"({"params":{"refund_holding_period":-1}})",
                  at + "refund_holding_period: must not be negative");
  CheckParseError(R"({"params":{"max_locks_per_session":0}})",
                  at + "max_locks_per_session: must be at least 1");
  CheckParseError(R"({"params":{"release_bounty_bps":10001}})",
                  at + "release_bounty_bps: must be between 0 and 10000");
  CheckParseError(R"({"params":{"forfeit_sink":"Treasury"}})",
                  at + "forfeit_sink: must be \"burn\" or a module account name "
                       "[a-z][a-z0-9_]{0,31}");
  CheckParseError(R"({"params":{"forfeit_sink":"locks"}})",
                  at + "forfeit_sink: \"locks\" is the escrow itself: forfeits must leave it");
  CheckParseError(R"({"params":{"base_deposit":"-3"}})",
                  at + "base_deposit: not a decimal integer below 2^256: \"-3\"");
  CheckParseError(R"({"params":{"session_period":"9223372036854775808"}})",
                  at + "session_period: not a signed 64-bit integer: \"9223372036854775808\"");
  CheckParseError(R"({"params":{"scale_refund":"yes"}})",
                  at + "scale_refund: must be true or false");
  CheckParseError(R"({"params":{"session_lenght":5}})",
                  at.substr(0, at.size() - 1) + ".session_lenght: unknown field (known: "
                  "base_deposit, cooloff_period, end_block_cleanup_limit, forfeit_sink, "
                  "max_locks_per_session, refund_holding_period, release_bounty_bps, "
                  "scale_refund, session_period, whitelist_fee, whitelist_period)");
  CheckParseError(R"({"param":{}})",
                  "genesis app_state.locks.param: unknown field (known: last_session_ends, "
                  "params, registrations, sessions, vars)");
}

TEST_CASE("locks genesis: the state sections are checked, errors naming the JSON path",
          "[locks]") {
  const std::string u = kU.bech32, v = kV.bech32;
  const std::string at = "genesis app_state.locks.";
  CheckParseError(R"({"sessions":[{"address":")" + u + R"(","start":3,"expiry":9}]})",
                  at + "sessions[0].expiry: must be start + session_period (5)");
  CheckParseError(R"({"sessions":[{"address":")" + u + R"(","start":3,"expiry":8,"held":[)"
                  R"({"resource":"a"},{"resource":"b"},{"resource":"c"},{"resource":"d"}]}]})",
                  at + "sessions[0].held: more than max_locks_per_session (3) slots");
  CheckParseError(R"({"sessions":[{"address":")" + u + R"(","start":3,"expiry":8,"held":[)"
                  R"({"resource":"foo","key":"k"}]},{"address":")" + v +
                      R"(","start":4,"expiry":9,"held":[{"resource":"foo","key":"k"}]}]})",
                  at + "sessions[1].held[0]: foo[k] is also held by app_state.locks.sessions[0]");
  CheckParseError(R"({"sessions":[{"address":")" + u + R"(","start":3,"expiry":8,"held":[)"
                  R"({"resource":"9x"}]}]})",
                  at + "sessions[0].held[0]: resource \"9x\" must be 1..64 characters "
                       "starting with a letter");
  CheckParseError(R"({"registrations":[{"address":")" + u + R"(","expiry":5,"bond":"1"},)"
                  R"({"address":")" + u + R"(","expiry":6,"bond":"1"}]})",
                  at + "registrations[1].address: listed twice");
  CheckParseError(R"({"registrations":[{"address":")" + u + R"(","expiry":5}]})",
                  at + "registrations[0].bond: missing");
  CheckParseError(R"({"last_session_ends":[{"address":")" + u + R"(","height":-2}]})",
                  at + "last_session_ends[0].height: must not be negative");
  CheckParseError(R"({"last_session_ends":[{"address":"kairos1zzz","height":2}]})",
                  at + "last_session_ends[0].address: bech32: data part is shorter than the "
                       "6-character checksum");
  CheckParseError(R"({"vars":[{"resource":"c","value":1},{"resource":"c","value":"2"}]})",
                  at + "vars[1]: c is listed twice");
  CheckParseError(R"({"vars":[{"resource":"c","value":1.5}]})",
                  at + "vars[0].value: must be a signed 64-bit integer or a decimal string");
}

// InitChain with this app_state; the exception's message.
std::string InitChainError(const std::string& app_state, std::int64_t initial_height = 10) {
  TempDir dir;
  store::StoreOptions so;
  so.dir = dir / "data";
  auto db = store::MerkleStore::Open(so);
  REQUIRE(db.ok());
  auto app = app::KairosApp::Open(std::move(*db), app::AppOptions{});
  REQUIRE(app.ok());
  tendermint::abci::RequestInitChain req;
  req.set_chain_id("c");
  req.set_initial_height(initial_height);
  req.set_app_state_bytes(app_state);
  try {
    (*app)->InitChain(req);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("locks genesis: InitChain checks the escrow against deposits and bonds, and heights",
          "[locks]") {
  const std::string session = R"({"sessions":[{"address":")" + kU.bech32 +
                              R"(","start":8,"expiry":13,"deposit":"1000",)"
                              R"("held":[{"resource":"foo"}]}],)"
                              R"("registrations":[{"address":")" + kV.bech32 +
                              R"(","expiry":40,"bond":"100000"}]})";
  CHECK(InitChainError(WithLocks(session, {{kU, "5stake"}})) ==
        "genesis app_state.locks: the escrow account " + Escrow().bech32 +
            " holds 0stake in app_state.bank.balances, but the sessions' deposits plus the "
            "registrations' bonds are 101000stake");
  CHECK(InitChainError(WithLocks(session, {{kU, "5stake"}, {Escrow(), "101000stake"}})).empty());
  CHECK(InitChainError(WithLocks(session, {{kU, "5stake"}, {Escrow(), "101000stake"}}), 7) ==
        "genesis app_state.locks.sessions[0].start: 8 is after the initial height 7");
  CHECK(InitChainError(WithLocks(R"({"last_session_ends":[{"address":")" + kU.bech32 +
                                     R"(","height":11}]})"),
                       10) ==
        "genesis app_state.locks.last_session_ends[0].height: 11 is after the initial height 10");
}

TEST_CASE("locks genesis: an imported state works, and EndBlock cleans up within its limit",
          "[locks]") {
  // Genesis at height 9 (first test block 10): u's and v's sessions expire at 11, w is
  // registered, the counter is 41, u's last session ended at 5.
  const TestKey w = MakeKey("locks-genesis-w");
  const std::string locks = R"({"params":{"end_block_cleanup_limit":1},)"
                            R"("sessions":[{"address":")" + kU.bech32 +
                            R"(","start":6,"expiry":11,"deposit":"1000","held":[)"
                            R"({"resource":"counter"},{"resource":"book","key":"alice"}]},)"
                            R"({"address":")" + kV.bech32 +
                            R"(","start":6,"expiry":11,"deposit":"2000","held":[]}],)"
                            R"("last_session_ends":[{"address":")" + kU.bech32 +
                            R"(","height":5}],)"
                            R"("registrations":[{"address":")" + w.bech32 +
                            R"(","expiry":50,"bond":"100000"}],)"
                            R"("vars":[{"resource":"counter","value":"41"}]})";
  LocksChain chain({{kU, "1000000stake"}, {kV, "1000000stake"}, {w, "1000000stake"},
                    {Escrow(), "103000stake"}},
                   locks, 10);
  chain.CheckInvariants();
  lpb::QueryHolderRequest hq;
  hq.set_resource("book");
  hq.set_key("alice");
  auto holder = chain.Query<lpb::QueryHolderResponse>("Holder", hq);
  CHECK(holder.holder() == kU.bech32);
  CHECK(holder.active());
  CHECK(holder.expiry() == 11);
  lpb::QueryVarRequest vq;
  vq.set_resource("counter");
  CHECK(chain.Query<lpb::QueryVarResponse>("Var", vq).value() == 41);

  // w (registered at genesis) is locked out until 11, then writes the counter.
  auto locked =
      chain.Block({chain.Tx(w, MsgWrite(w, Slot("counter"), app::locks::LockWriteOp::kAdd, 1))});
  CHECK(locked[0].code == app::locks::kErrLocked);
  // Blocks 11 and 12: both sessions expired at 11; EndBlock ends one per block (the limit),
  // with the module as cleaner (no bounty) and the expiry as the end, whenever it runs.
  std::map<std::string, std::string> forfeits;  // holder -> forfeit
  for (std::int64_t h : {11, 12}) {
    chain.Block();
    REQUIRE(chain.last_height() == h);
    const auto& events = chain.end_block_events();
    CHECK(CountEvents(events, "lock_session_ended") == 1);
    CHECK(EventAttr(events, "lock_session_ended", "reason") == "end_block");
    CHECK(EventAttr(events, "lock_session_ended", "cleaner") == "locks");
    CHECK(EventAttr(events, "lock_session_ended", "end") == "11");
    CHECK(EventAttr(events, "lock_session_ended", "bounty") == "0");
    forfeits[EventAttr(events, "lock_session_ended", "holder").value_or("")] =
        EventAttr(events, "lock_session_ended", "forfeit").value_or("");
  }
  CHECK(forfeits == std::map<std::string, std::string>{{kU.bech32, "1000"}, {kV.bech32, "2000"}});
  chain.Block();  // 13: nothing left
  CHECK(chain.end_block_events().empty());
  chain.CheckInvariants();
  CHECK(chain.Balance(Escrow()) == 100000);  // w's bond only
  const LockTxResult write =
      chain.Block({chain.Tx(w, MsgWrite(w, Slot("counter"), app::locks::LockWriteOp::kAdd, 1))})[0];
  INFO(write.log);
  CHECK(write.ok());
  CHECK(chain.Query<lpb::QueryVarResponse>("Var", vq).value() == 42);
  // u's cool-off counts from its expiry 11 (the cleanup did not move it to 12).
  lpb::QueryDepositQuoteRequest dq;
  dq.set_address(kU.bech32);
  const auto quote = chain.Query<lpb::QueryDepositQuoteResponse>("DepositQuote", dq);
  CHECK(quote.last_session_end() == 11);
  CHECK(quote.deposit() == std::to_string(1000 << (11 + 10 - 15)));
}

}  // namespace
}  // namespace kairos::test
