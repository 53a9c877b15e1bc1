// The poa module's genesis (app/poa/genesis.h): every rejected app_state.poa with the JSON path
// in its error; InitGenesis against CometBFT's genesis validators (the same set in any order,
// or the first difference named; none: InitChain answers the module's set) and the consensus
// params' key types; and ExportGenesis, whose output InitGenesis turns into the same keys and
// values.
#include <catch2/catch.hpp>

#include "poa_fixture.h"

namespace kairos::test::poa {
namespace {

using Catch::Matchers::Contains;

// The error of parsing `section`.
std::string ParseError(const json& section) {
  auto g = poa::ParseGenesis(&section);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == Status::Code::kInvalidArgument);
  return g.status().message();
}

TEST_CASE("poa genesis: rejected sections name the JSON path", "[poa]") {
  const json good = GenesisJson({10, 20});
  REQUIRE(poa::ParseGenesis(&good).ok());
  auto with = [&](auto&& edit) {
    json g = good;
    edit(g);
    return ParseError(g);
  };
  CHECK_THAT(with([](json& g) { g["validatorz"] = json::array(); }),
             Contains("genesis app_state.poa.validatorz: unknown field (known: authority, "
                      "params, validators)"));
  CHECK_THAT(with([](json& g) { g["authority"] = "kairos1xyz"; }),
             Contains("genesis app_state.poa.authority: "));
  CHECK_THAT(with([](json& g) {
               g["authority"] = crypto::EncodeAccountAddress(std::string(32, '\x07'));
             }),
             Contains("genesis app_state.poa.authority: must be a 20-byte account address, got "
                      "32 bytes"));
  CHECK_THAT(with([](json& g) { g["authority"] = 5; }),
             Contains("genesis app_state.poa.authority: must be a bech32 address string"));
  CHECK_THAT(with([](json& g) { g.erase("validators"); }),
             Contains("genesis app_state.poa.validators: must list at least one validator"));
  CHECK_THAT(with([](json& g) { g["validators"] = json::array(); }),
             Contains("genesis app_state.poa.validators: must list at least one validator"));
  CHECK_THAT(with([](json& g) { g["params"] = {{"max_validators", 0}}; }),
             Contains("genesis app_state.poa.params.max_validators: must be from 1 to 10000, "
                      "got 0"));
  CHECK_THAT(with([](json& g) { g["params"] = {{"max_validator", 3}}; }),
             Contains("genesis app_state.poa.params.max_validator: unknown field"));
  CHECK_THAT(with([](json& g) { g["params"] = {{"max_validators", 1}}; }),
             Contains("genesis app_state.poa.validators: 2 validators, over "
                      "params.max_validators 1"));
  CHECK_THAT(with([](json& g) { g["validators"][1]["power"] = "0"; }),
             Contains("genesis app_state.poa.validators[1].power: must be from 1 to "
                      "1152921504606846975, got 0"));
  CHECK_THAT(with([](json& g) { g["validators"][1]["power"] = "ten"; }),
             Contains("genesis app_state.poa.validators[1].power: not a signed 64-bit integer: "
                      "\"ten\""));
  CHECK_THAT(with([](json& g) { g["validators"][0].erase("power"); }),
             Contains("genesis app_state.poa.validators[0].power: is required"));
  CHECK_THAT(with([](json& g) { g["validators"][0]["pub_key"]["@type"] = "/x.PubKey"; }),
             Contains("genesis app_state.poa.validators[0].pub_key.@type: \"/x.PubKey\" is not a "
                      "consensus key type"));
  CHECK_THAT(with([](json& g) { g["validators"][0]["pub_key"]["key"] = "%%%"; }),
             Contains("genesis app_state.poa.validators[0].pub_key.key: not standard base64"));
  CHECK_THAT(with([](json& g) { g["validators"][0]["pub_key"]["key"] = "AAAA"; }),
             Contains("genesis app_state.poa.validators[0].pub_key.key: ed25519 key is 3 bytes, "
                      "want 32"));
  CHECK_THAT(with([](json& g) { g["validators"][0]["pub_key"]["type"] = "x"; }),
             Contains("genesis app_state.poa.validators[0].pub_key.type: unknown field"));
  CHECK_THAT(with([](json& g) { g["validators"][1]["moniker"] = std::string(71, 'm'); }),
             Contains("genesis app_state.poa.validators[1].moniker: 71 bytes, at most 70"));
  CHECK_THAT(with([](json& g) { g["validators"][1]["operator_address"] = "cosmos1abc"; }),
             Contains("genesis app_state.poa.validators[1].operator_address: "));
  CHECK_THAT(with([](json& g) { g["validators"][1]["pub_key"] = g["validators"][0]["pub_key"]; }),
             Contains("genesis app_state.poa.validators[1].pub_key: ed25519 key " +
                      crypto::Base64Encode(EdKey("v0").bytes) +
                      " is already validators[0]'s: a key appears once"));
  CHECK_THAT(with([](json& g) {
               g["validators"][0]["power"] = std::to_string(poa::kMaxTotalVotingPower);
             }),
             Contains("genesis app_state.poa.validators[1].power: the total power passes "
                      "CometBFT's maximum 1152921504606846975"));
}

TEST_CASE("poa genesis: CometBFT's genesis validators must be the module's", "[poa]") {
  const json section = GenesisJson({10, 20, 30});
  auto comet = [](std::vector<std::pair<std::string, std::int64_t>> vals) {
    google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate> out;
    for (const auto& [name, power] : vals) *out.Add() = poa::ToValidatorUpdate(EdKey(name), power);
    return out;
  };
  {
    PoaFixture f;  // the same set in another order
    f.comet_validators = comet({{"v2", 30}, {"v0", 10}, {"v1", 20}});
    f.InitOk(section);
    CHECK(f.validators_out.empty());
    CHECK(f.PowerOf(EdKey("v1")) == 20);
  }
  {
    PoaFixture f;
    f.comet_validators = comet({{"v0", 10}, {"v1", 25}, {"v2", 30}});
    Status s = f.Init(&section);
    CHECK_THAT(s.message(), Contains("genesis app_state.poa.validators[1].power: 20, but "
                                     "CometBFT's genesis validators[1] gives ed25519 key " +
                                     crypto::Base64Encode(EdKey("v1").bytes) + " power 25"));
    CHECK(f.PoaKeys().empty());
  }
  {
    PoaFixture f;
    f.comet_validators = comet({{"v0", 10}, {"v1", 20}});
    Status s = f.Init(&section);
    CHECK_THAT(s.message(), Contains("genesis app_state.poa.validators[2]: ed25519 key " +
                                     crypto::Base64Encode(EdKey("v2").bytes) +
                                     " is not among CometBFT's genesis validators"));
  }
  {
    PoaFixture f;
    f.comet_validators = comet({{"v0", 10}, {"v1", 20}, {"v2", 30}, {"v3", 40}});
    Status s = f.Init(&section);
    CHECK_THAT(s.message(), Contains("genesis app_state.poa.validators: CometBFT's genesis "
                                     "validators[3] (ed25519 key " +
                                     crypto::Base64Encode(EdKey("v3").bytes) +
                                     ", power 40) is not listed here"));
  }
  {
    PoaFixture f;  // CometBFT lists none: InitChain answers the module's, by consensus address
    f.InitOk(section);
    REQUIRE(f.validators_out.size() == 3);
    for (int i = 0; i + 1 < f.validators_out.size(); ++i) {
      CHECK(poa::ConsensusAddress(*poa::FromCometKey(f.validators_out[i].pub_key())) <
            poa::ConsensusAddress(*poa::FromCometKey(f.validators_out[i + 1].pub_key())));
    }
    std::int64_t total = 0;
    for (const auto& v : f.validators_out) total += v.power();
    CHECK(total == 60);
  }
}

TEST_CASE("poa genesis: key types the consensus params do not allow", "[poa]") {
  json section = GenesisJson({10});
  section["validators"].push_back(ValidatorJson(SecpKey("s"), 5));
  PoaFixture f;  // ed25519 only
  Status s = f.Init(&section);
  CHECK_THAT(s.message(), Contains("genesis app_state.poa.validators[1].pub_key: a secp256k1 "
                                   "key, but the consensus params allow ed25519 "
                                   "(consensus_params.validator.pub_key_types)"));
  CHECK(f.PoaKeys().empty());

  PoaFixture g;
  g.consensus_params = AllowKeyTypes({"ed25519", "secp256k1"});
  g.InitOk(section);
  CHECK(g.PowerOf(SecpKey("s")) == 5);
  CHECK(*g.module.keeper().GetKeyTypes(g.state) ==
        std::vector<std::string>{"ed25519", "secp256k1"});
}

TEST_CASE("poa genesis: export, then init from the export, gives the same keys and values",
          "[poa]") {
  PoaFixture f;
  f.consensus_params = AllowKeyTypes({"ed25519", "secp256k1"});
  json section = GenesisJson({10, 20, 30, 40});
  section["params"] = {{"max_validators", 7}};
  section["validators"][2]["operator_address"] = kStranger.bech32;
  section["validators"].push_back(ValidatorJson(SecpKey("s"), 5, "secp"));
  f.InitOk(section);
  // Change the state a little first, as a chain would.
  f.RunOk(SetValidator(EdKey("v1"), 22, kAuthority, "renamed"));
  f.RunOk(SetValidator(EdKey("extra"), 3));
  f.EndBlock();

  auto exported = f.module.ExportGenesis(f.state);
  REQUIRE(exported.ok());
  REQUIRE(exported->has_value());
  const json& e = **exported;
  CHECK(e["authority"] == kAuthority.bech32);
  CHECK(e["params"]["max_validators"] == 7);
  CHECK(e["validators"].size() == 6);
  CHECK(e["validators"][0]["power"].is_string());

  PoaFixture g;
  g.consensus_params = f.consensus_params;
  g.InitOk(e);
  CHECK(g.PoaKeys() == f.PoaKeys());
  auto again = g.module.ExportGenesis(g.state);
  REQUIRE(again.ok());
  CHECK(**again == e);
  // And the export holds the change: v1 renamed, at 22.
  bool found = false;
  for (const json& v : e["validators"]) {
    if (v.value("moniker", "") == "renamed") {
      found = true;
      CHECK(v["power"] == "22");
      CHECK(v["pub_key"]["key"] == crypto::Base64Encode(EdKey("v1").bytes));
    }
  }
  CHECK(found);
}

TEST_CASE("poa genesis: absent, nothing is written or exported", "[poa]") {
  PoaFixture f;
  REQUIRE(f.Init(nullptr).ok());
  CHECK(f.PoaKeys().empty());
  CHECK(f.validators_out.empty());
  auto exported = f.module.ExportGenesis(f.state);
  REQUIRE(exported.ok());
  CHECK_FALSE(exported->has_value());
}

}  // namespace
}  // namespace kairos::test::poa
