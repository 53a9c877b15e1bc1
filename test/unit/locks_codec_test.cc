// The kairos.locks.v1 messages on the wire: build -> decode round trips (signers are the senders),
// the canonical-encoding and value checks of the decoder (code 2, the log naming the message and
// field), and ValidateBasic as CheckTx answers it (codes 7 and 18). Also: MsgSend cannot pay the
// escrow module account.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "app/locks/params.h"
#include "app/tx_codec.h"
#include "cosmos/tx/v1beta1/tx.pb.h"
#include "kairos/locks/v1/tx.pb.h"
#include "locks_chain.h"
#include "app/locks/msgs.h"

namespace kairos::test {
namespace {

namespace lpb = kairos::locks::v1;

const TestKey kU = MakeKey("locks-codec-u");
const TestKey kV = MakeKey("locks-codec-v");

// A signed-looking TxRaw whose only message is Any{type_url, value} (the decoder does not verify
// signatures).
std::string TxWithMsg(std::string_view type_url, const std::string& value) {
  cosmos::tx::v1beta1::TxBody body;
  google::protobuf::Any* any = body.add_messages();
  any->set_type_url(std::string(type_url));
  any->set_value(value);
  app::TxSpec spec;
  cosmos::tx::v1beta1::TxRaw raw;
  raw.set_body_bytes(body.SerializeAsString());
  raw.set_auth_info_bytes(app::EncodeAuthInfo(spec, {SignerOf(kU, 0, 0)}));
  raw.add_signatures(std::string(64, '\x55'));
  return raw.SerializeAsString();
}

app::TxError Reject(const std::string& raw) {
  auto decoded = app::DecodeTx(raw);
  REQUIRE(std::holds_alternative<app::TxError>(decoded));
  return std::get<app::TxError>(decoded);
}

void CheckRejected(const std::string& raw, const std::string& log) {
  const app::TxError e = Reject(raw);
  INFO(e.log);
  CHECK(e.code == ante::kTxDecode);
  CHECK_THAT(e.log, Catch::Contains(log));
}

lpb::MsgAcquire AcquirePb() {
  lpb::MsgAcquire m;
  m.set_sender(kU.bech32);
  m.add_slots()->set_resource("foo");
  return m;
}

lpb::MsgWrite WritePb(int op, std::int64_t value) {
  lpb::MsgWrite m;
  m.set_sender(kU.bech32);
  m.set_resource("foo");
  m.set_op(static_cast<lpb::WriteOp>(op));
  m.set_value(value);
  return m;
}

TEST_CASE("locks codec: every message round-trips and its sender is its signer", "[locks]") {
  app::TxSpec spec;
  spec.msgs = {MsgRegister(kU),
               MsgRefund(kU, kV),
               MsgAcquire(kU, {Slot("foo"), Slot("book", "alice")}, 512000),
               MsgWrite(kU, Slot("counter"), app::locks::LockWriteOp::kAdd, -7, 0),
               MsgRelease(kV, kU)};
  const std::string raw =
      app::BuildSignedTx(spec, {SignerOf(kU, 0, 0), SignerOf(kV, 1, 0)}, "chain");
  auto decoded = app::DecodeTx(raw);
  REQUIRE(std::holds_alternative<ante::Tx>(decoded));
  const ante::Tx& tx = std::get<ante::Tx>(decoded);
  CHECK(tx.msg_type_urls ==
        std::vector<std::string>{"/kairos.locks.v1.MsgRegister",
                                 "/kairos.locks.v1.MsgRefundRegistration",
                                 "/kairos.locks.v1.MsgAcquire", "/kairos.locks.v1.MsgWrite",
                                 "/kairos.locks.v1.MsgRelease"});
  CHECK(tx.signers == std::vector<std::string>{kU.address, kV.address});
  const auto& reg = tx.msgs[0].Get<app::locks::MsgRegister>();
  CHECK(reg.sender == kU.address);
  CHECK(reg.sender_address == kU.bech32);
  const auto& refund = tx.msgs[1].Get<app::locks::MsgRefundRegistration>();
  CHECK(refund.address == kV.address);
  CHECK(refund.address_bech32 == kV.bech32);
  const auto& acquire = tx.msgs[2].Get<app::locks::MsgAcquire>();
  CHECK(acquire.slots == std::vector<app::locks::LockSlot>{Slot("foo"), Slot("book", "alice")});
  CHECK(acquire.max_deposit == 512000);
  const auto& write = tx.msgs[3].Get<app::locks::MsgWrite>();
  CHECK(write.slot == Slot("counter"));
  CHECK(write.op == app::locks::LockWriteOp::kAdd);
  CHECK(write.value == -7);
  CHECK(write.max_deposit == 0);
  const auto& release = tx.msgs[4].Get<app::locks::MsgRelease>();
  CHECK(release.sender == kV.address);
  CHECK(release.holder == kU.address);
  // The encoding is canonical: encoding the decoded messages again gives the same body.
  app::TxSpec again;
  again.msgs = tx.msgs;
  CHECK(app::EncodeTxBody(again) == tx.body_bytes);
}

TEST_CASE("locks codec: the decoder refuses a second encoding or a bad value, naming the field",
          "[locks]") {
  SECTION("max_deposit \"0\": zero has one encoding, the empty string") {
    lpb::MsgAcquire m = AcquirePb();
    m.set_max_deposit("0");
    CheckRejected(TxWithMsg(app::locks::MsgAcquire::kTypeUrl, m.SerializeAsString()),
                  "tx.body.messages[0]: MsgAcquire.max_deposit \"0\": zero is written as the "
                  "empty string");
  }
  SECTION("max_deposit not a plain decimal") {
    for (const char* bad : {"012", "-5", "1e3", " 7"}) {
      lpb::MsgWrite m = WritePb(1, 3);
      m.set_max_deposit(bad);
      CheckRejected(TxWithMsg(app::locks::MsgWrite::kTypeUrl, m.SerializeAsString()),
                    std::string("tx.body.messages[0]: MsgWrite.max_deposit \"") + bad + "\"");
    }
  }
  SECTION("an op other than set or add") {
    CheckRejected(TxWithMsg(app::locks::MsgWrite::kTypeUrl, WritePb(3, 1).SerializeAsString()),
                  "tx.body.messages[0]: MsgWrite.op (#4): unknown WriteOp 3 (1 set, 2 add)");
    CheckRejected(TxWithMsg(app::locks::MsgWrite::kTypeUrl, WritePb(0, 1).SerializeAsString()),
                  "unknown WriteOp 0");
    CheckRejected(TxWithMsg(app::locks::MsgWrite::kTypeUrl, WritePb(-1, 1).SerializeAsString()),
                  "unknown WriteOp -1");
  }
  SECTION("a slot's empty key written explicitly") {
    lpb::MsgAcquire m;
    m.set_sender(kU.bech32);
    const std::string slot = std::string("\x0a\x03" "foo" "\x12\x00", 7);
    const std::string value =
        m.SerializeAsString() + "\x12" + static_cast<char>(slot.size()) + slot;
    CheckRejected(TxWithMsg(app::locks::MsgAcquire::kTypeUrl, value),
                  "tx.body.messages[0].slots[0]: Slot.key (#2): default value (empty) written "
                  "explicitly");
  }
  SECTION("unknown and duplicate fields") {
    lpb::MsgRegister m;
    m.set_sender(kU.bech32);
    CheckRejected(TxWithMsg(app::locks::MsgRegister::kTypeUrl, m.SerializeAsString() + "\x28\x01"),
                  "tx.body.messages[0]: MsgRegister field (#5): unknown field");
    CheckRejected(TxWithMsg(app::locks::MsgRegister::kTypeUrl,
                            m.SerializeAsString() + m.SerializeAsString()),
                  "tx.body.messages[0]: MsgRegister.sender (#1): duplicate field");
  }
  SECTION("bad addresses") {
    lpb::MsgRelease m;
    m.set_sender(kU.bech32);
    m.set_holder("kairos1notanaddress");
    CheckRejected(TxWithMsg(app::locks::MsgRelease::kTypeUrl, m.SerializeAsString()),
                  "invalid holder address \"kairos1notanaddress\" in tx.body.messages[0]");
    lpb::MsgRefundRegistration r;
    r.set_sender("cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq");
    r.set_address(kU.bech32);
    CheckRejected(TxWithMsg(app::locks::MsgRefundRegistration::kTypeUrl, r.SerializeAsString()),
                  "invalid sender address \"cosmos1");
    CheckRejected(TxWithMsg(app::locks::MsgRegister::kTypeUrl, ""),
                  "invalid sender address \"\" in tx.body.messages[0]");
  }
  SECTION("an unknown locks message") {
    CheckRejected(TxWithMsg("/kairos.locks.v1.MsgSteal", ""),
                  "unable to resolve type URL /kairos.locks.v1.MsgSteal in tx.body.messages[0]");
  }
  SECTION("a negative value is a sign-extended varint and decodes") {
    auto decoded = app::DecodeTx(
        TxWithMsg(app::locks::MsgWrite::kTypeUrl, WritePb(2, INT64_MIN).SerializeAsString()));
    REQUIRE(std::holds_alternative<ante::Tx>(decoded));
    CHECK(std::get<ante::Tx>(decoded).msgs[0].Get<app::locks::MsgWrite>().value == INT64_MIN);
  }
}

TEST_CASE("locks ValidateBasic: CheckTx refuses bad slots and addresses with codes 18 and 7",
          "[locks]") {
  LocksChain chain({{kU, "1000000stake"}}, "{}");
  auto check = [&](ante::Msg msg) {
    tendermint::abci::RequestCheckTx req;
    req.set_tx(chain.Tx(kU, {std::move(msg)}));
    return chain.app().CheckTx(req);
  };
  auto expect = [&](ante::Msg msg, std::uint32_t code, const std::string& log) {
    const auto res = check(std::move(msg));
    INFO(res.log());
    CHECK(res.code() == code);
    CHECK(res.codespace() == "sdk");
    CHECK_THAT(res.log(), Catch::Contains(log));
  };
  expect(MsgAcquire(kU, {}), ante::kInvalidRequest, "MsgAcquire needs at least one slot");
  expect(MsgAcquire(kU, {Slot("book", "k"), Slot("foo"), Slot("book", "k")}),
         ante::kInvalidRequest, "slots[2]: book[k] is listed twice");
  expect(MsgAcquire(kU, {Slot("9lives")}), ante::kInvalidRequest,
         "slots[0]: resource \"9lives\" must be 1..64 characters starting with a letter");
  expect(MsgAcquire(kU, {Slot(std::string(65, 'r'))}), ante::kInvalidRequest,
         "must be 1..64 characters");
  expect(MsgAcquire(kU, {Slot("foo bar")}), ante::kInvalidRequest,
         "resource \"foo bar\" may only hold [A-Za-z0-9_.:/-]");
  expect(MsgWrite(kU, Slot("book", "a b"), app::locks::LockWriteOp::kSet, 1), ante::kInvalidRequest,
         "MsgWrite: key \"a b\" of book may only hold printable ASCII without spaces");
  expect(MsgAcquire(kU, {Slot("book", std::string(129, 'k'))}), ante::kInvalidRequest,
         "key of book is 129 bytes, at most 128");
  app::locks::MsgRelease long_holder = MsgRelease(kU, kU);
  long_holder.holder = std::string(32, '\x07');
  long_holder.holder_address.clear();
  expect(long_holder, ante::kInvalidAddress, "invalid holder address: 32 bytes, want 20");
  // A good one passes CheckTx (only the ante runs there).
  CHECK(check(MsgAcquire(kU, {Slot("foo"), Slot("book", "k")})).code() == 0);
}

TEST_CASE("locks messages pay fees like any tx, ordered or unordered", "[locks]") {
  LocksChain chain({{kU, "1000000stake"}}, R"({"params":{"whitelist_fee":"0"}})", 5);
  const ante::Uint256 before = chain.Balance(kU);
  const ante::Uint256 fees_before = chain.Balance(app::bank::FeeCollectorAddress());
  app::TxSpec spec;
  spec.msgs = {MsgAcquire(kU, {Slot("foo")})};
  spec.fee = *ante::Coins::Parse("300stake");
  spec.unordered = true;
  spec.timeout_unix_nanos = kT0 + 5 * kSecond + 60 * kSecond;  // block 5's time + 1 min
  spec.gas_limit = LocksChain::kGas;
  const std::string unordered =
      app::BuildSignedTx(spec, {SignerOf(kU, 0, /*sequence=*/0)}, LocksChain::kChainId);
  const LockTxResult r = chain.Block({unordered}).front();
  INFO(r.log);
  REQUIRE(r.ok());
  CHECK(EventAttr(r.events, "lock_acquired", "resource") == "foo");
  CHECK(chain.Balance(kU) == before - 300 - 1000);  // the fee and the deposit
  CHECK(chain.Balance(app::bank::FeeCollectorAddress()) == fees_before + 300);
  CHECK(chain.Balance(app::locks::EscrowAddress()) == 1000);
  // The same bytes again: the unordered nonce refuses them before any message runs.
  const LockTxResult again = chain.Block({unordered}).front();
  CHECK(again.code == ante::kInvalidRequest);
  CHECK_THAT(again.log, Catch::Contains("has already used timeout"));
  chain.CheckInvariants();
}

TEST_CASE("locks: MsgSend cannot pay into the escrow module account", "[locks]") {
  LocksChain chain({{kU, "1000000stake"}}, "{}");
  TestKey escrow;
  escrow.address = app::locks::EscrowAddress();
  escrow.bech32 = crypto::EncodeAccountAddress(escrow.address);
  const LockTxResult r = chain.Block({chain.Tx(kU, MakeSend(kU, escrow, "5stake"))}).front();
  INFO(r.log);
  CHECK(r.code == ante::kUnauthorized);
  CHECK_THAT(r.log, Catch::Contains(escrow.bech32 + " is not allowed to receive funds"));
  CHECK(chain.Balance(escrow) == 0);
}

}  // namespace
}  // namespace kairos::test
