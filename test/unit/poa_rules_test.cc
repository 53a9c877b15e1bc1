// The poa module's messages and safety rules (app/poa/msg_server.h, keeper.h): who may send
// them (code 4 with both addresses), each rule with its code and message, the events, and
// EndBlock's validator updates: one per changed validator, sorted, nothing for a change undone
// in the same block, the pending state gone after it, and nothing left by a failed tx.
#include <catch2/catch.hpp>

#include "app/hex.h"
#include "app/poa/errors.h"
#include "app/proto_util.h"
#include "poa_fixture.h"

namespace kairos::test::poa {
namespace {

using Catch::Matchers::Contains;

// The attributes of the first event of `type`.
std::map<std::string, std::string> EventOf(const std::vector<tendermint::abci::Event>& events,
                                           const std::string& type) {
  for (const auto& e : events) {
    if (e.type() != type) continue;
    std::map<std::string, std::string> out;
    for (const auto& a : e.attributes()) out[a.key()] = a.value();
    return out;
  }
  FAIL("no " << type << " event");
  return {};
}

bool HasPending(const PoaFixture& f) {
  for (const auto& [key, value] : f.PoaKeys()) {
    if (key.starts_with("poa/pending")) return true;
  }
  return false;
}

TEST_CASE("poa: only the authority may send the module's messages", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  const std::string expected =
      "expected authority " + kAuthority.bech32 + ", got " + kStranger.bech32;

  ante::TxStatus s = f.Run(SetValidator(EdKey("new"), 1, kStranger));
  CHECK(s.code() == ante::kUnauthorized);
  CHECK(s.codespace() == "sdk");
  CHECK_THAT(s.log(), Contains(expected));

  s = f.Run(poa::MsgUpdateAuthority{{}, kStranger.raw, {}, kStranger.raw});
  CHECK(s.code() == ante::kUnauthorized);
  CHECK_THAT(s.log(), Contains(expected));

  s = f.Run(poa::MsgUpdateParams{{}, kStranger.raw, poa::Params{50}});
  CHECK(s.code() == ante::kUnauthorized);
  CHECK_THAT(s.log(), Contains(expected));
  CHECK(f.PowerOf(EdKey("new")) == 0);
  CHECK(f.module.keeper().GetParams(f.state)->max_validators == 100);
}

TEST_CASE("poa: a chain without app_state.poa has no authority and writes nothing", "[poa]") {
  PoaFixture f;
  REQUIRE(f.Init(nullptr).ok());
  CHECK(f.PoaKeys().empty());
  ante::TxStatus s = f.Run(SetValidator(EdKey("new"), 1));
  CHECK(s.code() == ante::kUnauthorized);
  CHECK_THAT(s.log(), Contains("expected authority (none: this chain's genesis sets no "
                               "app_state.poa.authority), got " + kAuthority.bech32));
  CHECK(f.EndBlock().validator_updates.empty());
  CHECK(f.PoaKeys().empty());
}

TEST_CASE("poa: add, re-weight and remove; EndBlock's updates, sorted, and the pending state "
          "cleared", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  const auto a = EdKey("a"), b = EdKey("b");

  f.RunOk(SetValidator(a, 5, kAuthority, "alpha"));
  CHECK(f.gas_used > 0);  // the keeper works on the tx's metered store
  auto ev = EventOf(f.events, "poa_set_validator");
  CHECK(ev["action"] == "add");
  CHECK(ev["power"] == "5");
  CHECK(ev["previous_power"] == "0");
  CHECK(ev["moniker"] == "alpha");
  CHECK(ev["pub_key_type"] == "ed25519");
  CHECK(ev["pub_key"] == crypto::Base64Encode(a.bytes));
  CHECK(ev["consensus_address"] == app::HexEncode(poa::ConsensusAddress(a), true));
  CHECK(ev["total_power"] == "45");
  CHECK(ev["validators"] == "5");
  auto msg = EventOf(f.events, "message");
  CHECK(msg["sender"] == kAuthority.bech32);
  CHECK(msg["module"] == "poa");
  CHECK(msg["action"] == "/kairos.poa.v1.MsgSetValidator");

  f.RunOk(SetValidator(b, 3));
  CHECK(HasPending(f));
  auto end = f.EndBlock();
  REQUIRE(end.validator_updates.size() == 2);
  // Sorted by consensus address.
  const bool a_first = poa::ConsensusAddress(a) < poa::ConsensusAddress(b);
  const auto& first = end.validator_updates[a_first ? 0 : 1];
  const auto& second = end.validator_updates[a_first ? 1 : 0];
  CHECK(first.pub_key().ed25519() == a.bytes);
  CHECK(first.power() == 5);
  CHECK(second.pub_key().ed25519() == b.bytes);
  CHECK(second.power() == 3);
  CHECK(end.events.size() == 2);
  CHECK(end.summary == std::vector<std::string>{"2 validator update(s)"});
  CHECK_FALSE(HasPending(f));
  CHECK(f.EndBlock().validator_updates.empty());  // nothing pending: nothing again

  // Re-weight: the same key with another moniker is the same validator.
  f.RunOk(SetValidator(a, 8, kAuthority, "alpha2"));
  CHECK(EventOf(f.events, "poa_set_validator")["action"] == "update");
  CHECK(EventOf(f.events, "poa_set_validator")["previous_power"] == "5");
  auto stored = f.module.keeper().GetValidator(f.state, poa::ConsensusAddress(a));
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());
  CHECK((*stored)->moniker == "alpha2");
  CHECK(f.module.keeper().GetTotals(f.state)->validators == 6);
  end = f.EndBlock();
  REQUIRE(end.validator_updates.size() == 1);
  CHECK(end.validator_updates[0].power() == 8);

  // Remove.
  f.RunOk(SetValidator(a, 0));
  CHECK(EventOf(f.events, "poa_set_validator")["action"] == "remove");
  CHECK(f.PowerOf(a) == 0);
  end = f.EndBlock();
  REQUIRE(end.validator_updates.size() == 1);
  CHECK(end.validator_updates[0].pub_key().ed25519() == a.bytes);
  CHECK(end.validator_updates[0].power() == 0);
  CHECK(*f.module.keeper().GetTotals(f.state) == poa::Totals{43, 5});
}

TEST_CASE("poa: a change undone in the same block reaches CometBFT as nothing", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  const auto a = EdKey("a");
  f.RunOk(SetValidator(a, 5));
  f.RunOk(SetValidator(a, 0));  // added and removed: CometBFT must not be told to remove it
  f.RunOk(SetValidator(EdKey("v0"), 12, kAuthority, "v0"));
  f.RunOk(SetValidator(EdKey("v0"), 10, kAuthority, "v0"));  // back to its start
  CHECK(f.EndBlock().validator_updates.empty());
  CHECK_FALSE(HasPending(f));
}

TEST_CASE("poa: the block's changes must move less than a third of the power at its start",
          "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));  // 40
  f.RunOk(SetValidator(EdKey("a"), 10));     // moves 10: 30 < 40
  f.RunOk(SetValidator(EdKey("v0"), 7, kAuthority, "v0"));  // 13: 39 < 40
  ante::TxStatus s = f.Run(SetValidator(EdKey("b"), 1));    // 14: 42 >= 40
  CHECK(s.code() == poa::kErrPowerChange);
  CHECK(s.codespace() == "poa");
  CHECK_THAT(s.log(), Contains("would make this block's validator changes move 14 of the 40 "
                               "total power at the block's start; they must move less than a "
                               "third (14 * 3 >= 40)"));
  CHECK(f.PowerOf(EdKey("b")) == 0);
  // Undoing a change frees its share: v0 back to 10 moves 10 in all, and b fits.
  f.RunOk(SetValidator(EdKey("v0"), 10, kAuthority, "v0"));
  f.RunOk(SetValidator(EdKey("b"), 3));  // 13: 39 < 40
  auto end = f.EndBlock();
  CHECK(end.validator_updates.size() == 2);  // a and b; v0 is unchanged
  // The next block starts from 53 and its own zero.
  f.RunOk(SetValidator(EdKey("c"), 17));  // 51 < 53
  CHECK(f.Run(SetValidator(EdKey("d"), 1)).code() == poa::kErrPowerChange);  // 54 >= 53

  // Exactly a third is refused too.
  PoaFixture g;
  g.InitOk(GenesisJson({10, 10, 10}));
  s = g.Run(SetValidator(EdKey("a"), 10));
  CHECK(s.code() == poa::kErrPowerChange);
  CHECK_THAT(s.log(), Contains("(10 * 3 >= 30)"));
  g.RunOk(SetValidator(EdKey("a"), 9));
}

TEST_CASE("poa: the set never becomes empty", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10}));
  ante::TxStatus s = f.Run(SetValidator(EdKey("v0"), 0));
  CHECK(s.code() == poa::kErrEmptySet);
  CHECK_THAT(s.log(), Contains("would leave the validator set empty"));
  CHECK(f.PowerOf(EdKey("v0")) == 10);
}

TEST_CASE("poa: power 0 for a key not in the set is refused", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  ante::TxStatus s = f.Run(SetValidator(EdKey("ghost"), 0));
  CHECK(s.code() == poa::kErrNotValidator);
  CHECK_THAT(s.log(), Contains("it is not in the validator set"));
  CHECK_FALSE(HasPending(f));
}

TEST_CASE("poa: total power stays within CometBFT's maximum", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({poa::kMaxTotalVotingPower - 5}));
  ante::TxStatus s = f.Run(SetValidator(EdKey("a"), 10));
  CHECK(s.code() == poa::kErrTotalPower);
  CHECK_THAT(s.log(), Contains("the total power would be 1152921504606846980, over CometBFT's "
                               "maximum 1152921504606846975"));
  f.RunOk(SetValidator(EdKey("a"), 5));  // exactly the maximum
  CHECK(f.module.keeper().GetTotals(f.state)->power == poa::kMaxTotalVotingPower);
}

TEST_CASE("poa: the key type must be one the consensus params allow", "[poa]") {
  PoaFixture f;  // ed25519 only
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  ante::TxStatus s = f.Run(SetValidator(SecpKey("a"), 1));
  CHECK(s.code() == poa::kErrKeyTypeNotAllowed);
  CHECK_THAT(s.log(), Contains("the consensus params allow validator keys of type ed25519, not "
                               "secp256k1"));

  PoaFixture g;
  g.consensus_params = AllowKeyTypes({"ed25519", "secp256k1"});
  g.InitOk(GenesisJson({10, 10, 10, 10}));
  g.RunOk(SetValidator(SecpKey("a"), 1));
  auto end = g.EndBlock();
  REQUIRE(end.validator_updates.size() == 1);
  CHECK(end.validator_updates[0].pub_key().secp256k1() == SecpKey("a").bytes);
  CHECK(end.validator_updates[0].power() == 1);
}

TEST_CASE("poa: at most max_validators", "[poa]") {
  PoaFixture f;
  json g = GenesisJson({10, 10, 10, 10});
  g["params"] = {{"max_validators", 4}};
  f.InitOk(g);
  ante::TxStatus s = f.Run(SetValidator(EdKey("a"), 1));
  CHECK(s.code() == poa::kErrTooManyValidators);
  CHECK_THAT(s.log(), Contains("would make 5 validators, over max_validators 4"));
  f.RunOk(SetValidator(EdKey("v0"), 11, kAuthority));  // a re-weight adds none
}

TEST_CASE("poa: a key whose consensus address another key has is refused", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  // Forge the collision: a record under a's address that holds another key.
  const auto a = EdKey("a");
  poa::Validator other{EdKey("other"), 10, "", ""};
  REQUIRE(f.state.Set(poa::PoaKeeper::ValidatorKey(poa::ConsensusAddress(a)),
                      app::SerializeDeterministic(poa::ToProto(other)))
              .ok());
  ante::TxStatus s = f.Run(SetValidator(a, 1));
  CHECK(s.code() == poa::kErrAddressCollision);
  CHECK_THAT(s.log(), Contains("has the consensus address of the validator's " +
                               poa::Describe(other.pub_key)));
}

TEST_CASE("poa: ValidateBasic", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  auto check = [&](const ante::Msg& m, std::uint32_t code, const std::string& text) {
    ante::TxStatus s = f.Run(m);
    INFO(s.log());
    CHECK(s.code() == code);
    CHECK_THAT(s.log(), Contains(text));
  };
  check(SetValidator(EdKey("a"), -1), ante::kInvalidRequest,
        "MsgSetValidator.power must not be negative, got -1");
  check(SetValidator(EdKey("a"), poa::kMaxTotalVotingPower + 1), ante::kInvalidRequest,
        "MsgSetValidator.power 1152921504606846976 is over CometBFT's maximum total voting "
        "power 1152921504606846975");
  check(SetValidator(EdKey("a"), 1, kAuthority, std::string(71, 'm')), ante::kInvalidRequest,
        "MsgSetValidator.moniker is 71 bytes, at most 70");
  check(SetValidator(poa::ConsensusKey{crypto::KeyType::kEd25519, ""}, 1), ante::kInvalidPubKey,
        "MsgSetValidator.pub_key is required");
  check(SetValidator(poa::ConsensusKey{crypto::KeyType::kEd25519, std::string(31, 'k')}, 1),
        ante::kInvalidPubKey, "ed25519 key is 31 bytes, want 32");
  auto bad_authority = SetValidator(EdKey("a"), 1);
  bad_authority.authority = std::string(32, 'x');
  check(bad_authority, ante::kInvalidAddress, "invalid authority address: 32 bytes, want 20");
  check(poa::MsgUpdateAuthority{{}, kAuthority.raw, {}, ""}, ante::kInvalidAddress,
        "invalid new authority address: 0 bytes, want 20");
  check(poa::MsgUpdateParams{{}, kAuthority.raw, poa::Params{0}}, ante::kInvalidRequest,
        "MsgUpdateParams.params.max_validators: must be from 1 to 10000, got 0");
  CHECK(f.PoaKeys().size() == 8);  // authority, params, key_types, totals, 4 validators
}

TEST_CASE("poa: MsgUpdateAuthority hands the authority on", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  app::ModuleServices services;
  f.module.Provide(services);
  const app::AuthorityKeeper* authority = services.Find<app::AuthorityKeeper>();
  REQUIRE(authority != nullptr);
  CHECK(*authority->GetAuthority(f.state) == kAuthority.raw);

  f.RunOk(poa::MsgUpdateAuthority{{}, kAuthority.raw, {}, kStranger.raw});
  auto ev = EventOf(f.events, "poa_update_authority");
  CHECK(ev["previous_authority"] == kAuthority.bech32);
  CHECK(ev["new_authority"] == kStranger.bech32);
  CHECK(*authority->GetAuthority(f.state) == kStranger.raw);
  ante::TxStatus s = f.Run(SetValidator(EdKey("a"), 1));
  CHECK(s.code() == ante::kUnauthorized);
  CHECK_THAT(s.log(), Contains("expected authority " + kStranger.bech32 + ", got " +
                               kAuthority.bech32));
  f.RunOk(SetValidator(EdKey("a"), 1, kStranger));
}

TEST_CASE("poa: MsgUpdateParams", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  f.RunOk(poa::MsgUpdateParams{{}, kAuthority.raw, poa::Params{5}});
  CHECK(EventOf(f.events, "poa_update_params")["max_validators"] == "5");
  CHECK(f.module.keeper().GetParams(f.state)->max_validators == 5);
  f.RunOk(SetValidator(EdKey("a"), 1));
  CHECK(f.Run(SetValidator(EdKey("b"), 1)).code() == poa::kErrTooManyValidators);
  ante::TxStatus s = f.Run(poa::MsgUpdateParams{{}, kAuthority.raw, poa::Params{4}});
  CHECK(s.code() == ante::kInvalidRequest);
  CHECK_THAT(s.log(), Contains("MsgUpdateParams.params.max_validators 4 is below the 5 "
                               "validators in the set"));
  CHECK(f.module.keeper().GetParams(f.state)->max_validators == 5);
}

TEST_CASE("poa: a failed tx leaves no pending change behind", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 10, 10, 10}));
  const auto before = f.PoaKeys();
  // The first message succeeds on the tx's branch; the second fails; the branch is dropped.
  ante::TxStatus s = f.Run({SetValidator(EdKey("a"), 5), SetValidator(EdKey("b"), 9)});
  CHECK(s.code() == poa::kErrPowerChange);
  CHECK(f.PoaKeys() == before);
  CHECK(f.EndBlock().validator_updates.empty());
  // And the block's allowance is untouched: 13 still fits.
  f.RunOk(SetValidator(EdKey("b"), 13));
}

}  // namespace
}  // namespace kairos::test::poa
