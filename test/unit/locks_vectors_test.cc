// The test vectors of specs/locks.md (a=5, b=10, c=45, d=90, D0=1000, Y=100000, L=3, beta=0),
// each step a signed tx through the real message path (decode -> ante -> router -> locks msg
// server) in the block at the vector's height, with its code, log, events, balances and the
// state the queries show.
#include <catch2/catch.hpp>

#include "app/locks/errors.h"
#include "app/locks/params.h"
#include "kairos/locks/v1/query.pb.h"
#include "locks_chain.h"
#include "app/locks/msgs.h"

namespace kairos::test {
namespace {

namespace lpb = kairos::locks::v1;
using app::locks::LockWriteOp;
using app::locks::kCodespace;

const TestKey kU = MakeKey("locks-u");
const TestKey kV = MakeKey("locks-v");
const TestKey kW = MakeKey("locks-w");

constexpr char kCoins[] = "10000000stake";

std::string VectorLocks() { return std::string(R"({"params":)") + kVectorParams + "}"; }

// A chain whose first block is 100 (the vectors' first height).
LocksChain VectorChain() {
  return LocksChain({{kU, kCoins}, {kV, kCoins}, {kW, kCoins}}, VectorLocks(), 100);
}

void CheckLocksError(const LockTxResult& r, std::uint32_t code, const std::string& text) {
  INFO(r.log);
  CHECK(r.code == code);
  CHECK(r.codespace == kCodespace);
  CHECK_THAT(r.log, Catch::Contains(text));
}

void CheckOk(const LockTxResult& r) {
  INFO(r.log);
  CHECK(r.code == 0);
}

lpb::QueryHolderResponse Holder(LocksChain& chain, const std::string& resource) {
  lpb::QueryHolderRequest q;
  q.set_resource(resource);
  return chain.Query<lpb::QueryHolderResponse>("Holder", q);
}

lpb::QuerySessionResponse SessionOf(LocksChain& chain, const TestKey& k) {
  lpb::QuerySessionRequest q;
  q.set_address(k.bech32);
  return chain.Query<lpb::QuerySessionResponse>("Session", q);
}

lpb::QueryDepositQuoteResponse Quote(LocksChain& chain, const TestKey& k) {
  lpb::QueryDepositQuoteRequest q;
  q.set_address(k.bech32);
  return chain.Query<lpb::QueryDepositQuoteResponse>("DepositQuote", q);
}

lpb::QueryRegistrationResponse RegistrationOf(LocksChain& chain, const TestKey& k) {
  lpb::QueryRegistrationRequest q;
  q.set_address(k.bech32);
  return chain.Query<lpb::QueryRegistrationResponse>("Registration", q);
}

// Steps 1-3 for u (and v registers at 100 too): the common start of the vectors.
void RegisterAndLockThree(LocksChain& chain) {
  auto r = chain.Block({chain.Tx(kU, MsgRegister(kU)), chain.Tx(kV, MsgRegister(kV))});  // 100
  CheckOk(r[0]);
  CheckOk(r[1]);
  CheckOk(chain.At(101, chain.Tx(kU, MsgAcquire(kU, {Slot("foo")}))));
  CheckOk(chain.At(102, chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}))));
  CheckOk(chain.At(103, chain.Tx(kU, MsgAcquire(kU, {Slot("baz")}))));
}

TEST_CASE("locks vector 1: Register at 100 bonds Y until 145; locks up to 144, refund from 235",
          "[locks]") {
  LocksChain chain = VectorChain();
  const ante::Uint256 before = chain.Balance(kU);
  const LockTxResult r = chain.At(100, chain.Tx(kU, MsgRegister(kU)));
  CheckOk(r);
  CHECK(EventAttr(r.events, "lock_registered", "expiry") == "145");
  CHECK(EventAttr(r.events, "lock_registered", "bond") == "100000");
  CHECK(chain.Balance(kU) == before - 100000);
  CHECK(chain.Balance(app::locks::EscrowAddress()) == 100000);
  const auto reg = RegistrationOf(chain, kU);
  CHECK(reg.found());
  CHECK(reg.registration().expiry() == 145);
  CHECK(reg.registration().bond() == "100000");
  CHECK(reg.refundable_from() == 235);

  // A second registration while the bond is outstanding.
  CheckLocksError(chain.At(101, chain.Tx(kU, MsgRegister(kU))), app::locks::kErrAlreadyRegistered,
                  "has an outstanding bond (registration expiry 145); refund it first");

  // New locks at 144 (the last whitelisted height), none at 145.
  CheckOk(chain.At(144, chain.Tx(kU, MsgAcquire(kU, {Slot("foo")}))));
  CheckLocksError(chain.At(145, chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}))),
                  app::locks::kErrNotWhitelisted,
                  kU.bech32 + " is not whitelisted at height 145 (its registration expired at "
                              "height 145)");
  // An unregistered sender is told how to register.
  CheckLocksError(chain.At(146, chain.Tx(kW, MsgAcquire(kW, {Slot("qux")}))),
                  app::locks::kErrNotWhitelisted, "(send MsgRegister, bonding 100000)");

  // Refund: not at 234, at 235 by anyone (w), to u, exactly the bond.
  CheckLocksError(chain.At(234, chain.Tx(kW, MsgRefund(kW, kU))), app::locks::kErrHoldingPeriod,
                  "the bond of " + kU.bech32 + " can be refunded from height 235 (now 234)");
  const ante::Uint256 u_before = chain.Balance(kU);
  const ante::Uint256 w_before = chain.Balance(kW);
  const LockTxResult refund = chain.At(235, chain.Tx(kW, MsgRefund(kW, kU)));
  CheckOk(refund);
  CHECK(EventAttr(refund.events, "lock_registration_refunded", "amount") == "100000");
  CHECK(chain.Balance(kU) == u_before + 100000);
  CHECK(chain.Balance(kW) == w_before);
  CHECK_FALSE(RegistrationOf(chain, kU).found());
  CheckLocksError(chain.At(236, chain.Tx(kW, MsgRefund(kW, kU))), app::locks::kErrNotRegistered,
                  kU.bech32 + " is not registered");
  // Registered again after the refund.
  CheckOk(chain.At(237, chain.Tx(kU, MsgRegister(kU))));
  chain.CheckInvariants();
}

TEST_CASE("locks vectors 2-7: a session, the lock limit, Locked, takeover, cool-off deposits",
          "[locks]") {
  LocksChain chain = VectorChain();
  const ante::Uint256 supply = chain.Supply();
  const ante::Uint256 u_start = chain.Balance(kU);
  const ante::Uint256 v_start = chain.Balance(kV);

  // 1-2: u's first session at 101: deposit D0 = 1000, [101, 106).
  chain.Block({chain.Tx(kU, MsgRegister(kU)), chain.Tx(kV, MsgRegister(kV))});  // 100
  const LockTxResult first = chain.At(101, chain.Tx(kU, MsgAcquire(kU, {Slot("foo")})));
  CheckOk(first);
  CHECK(EventAttr(first.events, "lock_session_started", "start") == "101");
  CHECK(EventAttr(first.events, "lock_session_started", "expiry") == "106");
  CHECK(EventAttr(first.events, "lock_session_started", "deposit") == "1000");
  CHECK(EventAttr(first.events, "lock_acquired", "resource") == "foo");
  CHECK(chain.Balance(kU) == u_start - 100000 - 1000);
  auto session = SessionOf(chain, kU);
  CHECK(session.found());
  CHECK(session.active());
  CHECK(session.session().start() == 101);
  CHECK(session.session().expiry() == 106);
  CHECK(session.session().deposit() == "1000");

  // 3: bar at 102 and baz at 103 cost nothing more; foo again is Current (no change).
  CheckOk(chain.At(102, chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}))));
  const LockTxResult baz = chain.At(103, chain.Tx(kU, MsgAcquire(kU, {Slot("baz"), Slot("foo")})));
  CheckOk(baz);
  CHECK(CountEvents(baz.events, "lock_session_started") == 0);
  CHECK(CountEvents(baz.events, "lock_acquired") == 1);
  CHECK(chain.Balance(kU) == u_start - 100000 - 1000);
  CHECK(SessionOf(chain, kU).session().held_size() == 3);

  // 4: qux at 104: the limit L = 3.
  CheckLocksError(chain.At(104, chain.Tx(kU, MsgAcquire(kU, {Slot("qux")}))),
                  app::locks::kErrLockLimit,
                  "the session of " + kU.bech32 + " already holds 3 slot(s)");
  CHECK(Holder(chain, "qux").holder().empty());

  // 5: v at 105: Locked, with the holder and the height it is free from; a Write of the
  // variable is refused the same way and leaves it unchanged.
  auto locked = chain.Block({chain.Tx(kV, MsgAcquire(kV, {Slot("foo")})),
                             chain.Tx(kV, MsgWrite(kV, Slot("foo"), LockWriteOp::kAdd, 1))});
  REQUIRE(chain.last_height() == 105);
  CheckLocksError(locked[0], app::locks::kErrLocked,
                  "foo is locked by " + kU.bech32 + " until height 106");
  CheckLocksError(locked[1], app::locks::kErrLocked,
                  "foo is locked by " + kU.bech32 + " until height 106");
  CHECK(Holder(chain, "foo").holder() == kU.bech32);
  CHECK(Holder(chain, "foo").expiry() == 106);
  CHECK_FALSE(Holder(chain, "foo").active());  // judged at the next height, 106

  // 6: v at 106: takeover. u's session ends at its expiry 106: R = 0, F = 1000 (burned),
  // LastEnd[u] = 106; u's other slots are freed; v starts its own session.
  const LockTxResult takeover = chain.At(106, chain.Tx(kV, MsgAcquire(kV, {Slot("foo")})));
  CheckOk(takeover);
  CHECK(EventAttr(takeover.events, "lock_session_ended", "holder") == kU.bech32);
  CHECK(EventAttr(takeover.events, "lock_session_ended", "end") == "106");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "reason") == "takeover");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "expired") == "true");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "refund") == "0");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "forfeit") == "1000");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "bounty") == "0");
  CHECK(EventAttr(takeover.events, "lock_session_ended", "cleaner") == kV.bech32);
  CHECK(EventAttr(takeover.events, "lock_takeover", "previous_holder") == kU.bech32);
  CHECK(EventAttr(takeover.events, "burn", "amount") == "1000stake");
  CHECK(EventAttr(takeover.events, "lock_session_started", "deposit") == "1000");
  CHECK(chain.Supply() == supply - 1000);
  CHECK(chain.Balance(kU) == u_start - 100000 - 1000);
  CHECK(chain.Balance(kV) == v_start - 100000 - 1000);
  CHECK(Holder(chain, "foo").holder() == kV.bech32);
  CHECK(Holder(chain, "bar").holder().empty());
  CHECK(Holder(chain, "baz").holder().empty());
  CHECK_FALSE(SessionOf(chain, kU).found());
  chain.CheckInvariants();

  const auto quote = Quote(chain, kU);  // at 107
  CHECK(quote.last_session_end() == 106);
  CHECK(quote.cooloff_until() == 116);
  CHECK(quote.deposit() == "512000");

  SECTION("7: u at 107 pays D0 * 2^(106 + 10 - 107) = 512000, no more than max_deposit") {
    auto r = chain.Block({chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}, 511999)),
                          chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}, 512000))});
    CheckLocksError(r[0], app::locks::kErrDepositTooHigh,
                    "the deposit due at height 107 is 512000 (cool-off until height 116), above "
                    "max_deposit 511999");
    CheckOk(r[1]);
    CHECK(EventAttr(r[1].events, "lock_session_started", "deposit") == "512000");
    CHECK(chain.Balance(kU) == u_start - 100000 - 1000 - 512000);
  }
  SECTION("7: u at 116 pays D0 = 1000 again (at 115: 2000)") {
    chain.AdvanceTo(115);
    CHECK(Quote(chain, kU).deposit() == "2000");  // judged at 115
    chain.AdvanceTo(116);
    CHECK(Quote(chain, kU).deposit() == "1000");  // judged at 116
    const LockTxResult r = chain.At(116, chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}, 1000)));
    CheckOk(r);
    CHECK(EventAttr(r.events, "lock_session_started", "deposit") == "1000");
  }
  chain.CheckInvariants();
}

TEST_CASE("locks vector 8: u releases at 103: R = 600, F = 400, LastEnd 103; at 105 256000",
          "[locks]") {
  LocksChain chain = VectorChain();
  const ante::Uint256 supply = chain.Supply();
  const ante::Uint256 u_start = chain.Balance(kU);
  chain.Block({chain.Tx(kU, MsgRegister(kU))});  // 100
  CheckOk(chain.At(101, chain.Tx(kU, MsgAcquire(kU, {Slot("foo")}))));
  CheckOk(chain.At(102, chain.Tx(kU, MsgAcquire(kU, {Slot("bar")}))));
  // 103: baz, then the release in the same block.
  auto r = chain.Block(
      {chain.Tx(kU, MsgAcquire(kU, {Slot("baz")})), chain.Tx(kU, MsgRelease(kU, kU))});
  REQUIRE(chain.last_height() == 103);
  CheckOk(r[0]);
  CheckOk(r[1]);
  CHECK(EventAttr(r[1].events, "lock_session_ended", "reason") == "release");
  CHECK(EventAttr(r[1].events, "lock_session_ended", "expired") == "false");
  CHECK(EventAttr(r[1].events, "lock_session_ended", "end") == "103");
  CHECK(EventAttr(r[1].events, "lock_session_ended", "refund") == "600");
  CHECK(EventAttr(r[1].events, "lock_session_ended", "forfeit") == "400");
  CHECK(chain.Balance(kU) == u_start - 100000 - 1000 + 600);
  CHECK(chain.Supply() == supply - 400);
  for (const char* slot : {"foo", "bar", "baz"}) CHECK(Holder(chain, slot).holder().empty());
  CHECK(Quote(chain, kU).last_session_end() == 103);
  CHECK(Quote(chain, kU).deposit() == "512000");  // at 104: 2^9
  chain.CheckInvariants();

  SECTION("re-acquire at 105: 2^(103 + 10 - 105) = 256") {
    const LockTxResult again = chain.At(105, chain.Tx(kU, MsgAcquire(kU, {Slot("foo")})));
    CheckOk(again);
    CHECK(EventAttr(again.events, "lock_session_started", "deposit") == "256000");
  }
  SECTION("re-acquire in the block of the release: 2^10") {
    // A fresh chain where the release and the new acquisition share block 103.
    LocksChain same = VectorChain();
    same.Block({same.Tx(kU, MsgRegister(kU))});
    CheckOk(same.At(101, same.Tx(kU, MsgAcquire(kU, {Slot("foo")}))));
    auto b = same.At(103, same.Tx(kU, {MsgRelease(kU, kU), MsgAcquire(kU, {Slot("foo")})}));
    CheckOk(b);
    CHECK(EventAttr(b.events, "lock_session_ended", "refund") == "600");
    CHECK(EventAttr(b.events, "lock_session_started", "deposit") == "1024000");
  }
  SECTION("without scale_refund the whole deposit comes back") {
    LocksChain flat({{kU, kCoins}},
                    R"({"params":{"scale_refund":false}})", 100);
    flat.Block({flat.Tx(kU, MsgRegister(kU))});
    CheckOk(flat.At(101, flat.Tx(kU, MsgAcquire(kU, {Slot("foo")}))));
    const LockTxResult rel = flat.At(105, flat.Tx(kU, MsgRelease(kU, kU)));
    CheckOk(rel);
    CHECK(EventAttr(rel.events, "lock_session_ended", "refund") == "1000");
    CHECK(EventAttr(rel.events, "lock_session_ended", "forfeit") == "0");
  }
}

TEST_CASE("locks vector 9: w cannot release u's active session", "[locks]") {
  LocksChain chain = VectorChain();
  RegisterAndLockThree(chain);
  const LockTxResult r = chain.At(104, chain.Tx(kW, MsgRelease(kW, kU)));
  INFO(r.log);
  CHECK(r.code == ante::kUnauthorized);
  CHECK(r.codespace == "sdk");
  CHECK_THAT(r.log, Catch::Contains("the session of " + kU.bech32 +
                                    " is active until height 106; only its holder can release "
                                    "it before then"));
  CHECK(SessionOf(chain, kU).found());
  CHECK(Holder(chain, "foo").holder() == kU.bech32);
  // After the expiry anyone may: w ends it at 106 (expired: R = 0, cool-off from 106).
  const LockTxResult late = chain.At(106, chain.Tx(kW, MsgRelease(kW, kU)));
  CheckOk(late);
  CHECK(EventAttr(late.events, "lock_session_ended", "end") == "106");
  CHECK(EventAttr(late.events, "lock_session_ended", "refund") == "0");
  CHECK(EventAttr(late.events, "lock_session_ended", "cleaner") == kW.bech32);
  CheckLocksError(chain.At(107, chain.Tx(kW, MsgRelease(kW, kU))), app::locks::kErrNoSession,
                  kU.bech32 + " has no session");
  chain.CheckInvariants();
}

}  // namespace
}  // namespace kairos::test
