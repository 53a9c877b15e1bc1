// Unit tests for the CLI's authority helpers: ApplyParamAssignments (`tx <module> update-params
// AUTHORITY KEY=VALUE...`) on the auth and locks Params messages, SetGenesisPoa (`kairosd
// genesis set-poa`) from CometBFT's genesis validators, and ParseConsensusKey (`tx poa
// set-validator`'s PUBKEY in its three forms, and its refusals).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/client/genesis_edit.h"
#include "app/client/params_commands.h"
#include "app/client/poa_commands.h"
#include "app/genesis.h"
#include "app/poa/genesis.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/bank/v1beta1/bank.pb.h"
#include "crypto/bech32.h"
#include "kairos/locks/v1/locks.pb.h"

using kairos::client::ApplyParamAssignments;
using kairos::client::ParseConsensusKey;
using kairos::client::SetGenesisPoa;
using Catch::Matchers::Contains;
using json = nlohmann::ordered_json;

TEST_CASE("params assignments set the named fields by their types", "[params_cli]") {
  cosmos::auth::v1beta1::Params auth;
  auth.set_max_memo_characters(256);
  auth.set_tx_sig_limit(7);
  REQUIRE(ApplyParamAssignments(&auth, {"max_memo_characters=20", "tx_size_cost_per_byte=11"})
              .ok());
  CHECK(auth.max_memo_characters() == 20);
  CHECK(auth.tx_size_cost_per_byte() == 11);
  CHECK(auth.tx_sig_limit() == 7);  // not named: kept

  kairos::locks::v1::Params locks;
  REQUIRE(ApplyParamAssignments(&locks, {"scale_refund=true", "base_deposit=5000",
                                         "release_bounty_bps=250", "forfeit_sink=fee_collector"})
              .ok());
  CHECK(locks.scale_refund());
  CHECK(locks.base_deposit() == "5000");
  CHECK(locks.release_bounty_bps() == 250);
  CHECK(locks.forfeit_sink() == "fee_collector");

  cosmos::bank::v1beta1::Params bank;
  bank.set_default_send_enabled(true);
  REQUIRE(ApplyParamAssignments(&bank, {"default_send_enabled=false"}).ok());
  CHECK_FALSE(bank.default_send_enabled());
  // The deprecated per-denom list cannot be set from the command line.
  const auto list = ApplyParamAssignments(&bank, {"send_enabled=stake"});
  CHECK_THAT(list.message(),
             Contains("'send_enabled' is not a param of cosmos.bank.v1beta1.Params"));
  CHECK_FALSE(bank.default_send_enabled());
}

TEST_CASE("bad params assignments name the assignment and leave no half change",
          "[params_cli]") {
  cosmos::auth::v1beta1::Params auth;
  const struct {
    std::vector<std::string> assignments;
    const char* message;
  } cases[] = {
      {{"max_memo=5"}, "'max_memo' is not a param of cosmos.auth.v1beta1.Params (its params: "
                       "max_memo_characters, tx_sig_limit"},
      {{"max_memo_characters"}, "'max_memo_characters': expected KEY=VALUE"},
      {{"=5"}, "expected KEY=VALUE"},
      {{"max_memo_characters=-1"}, "max_memo_characters: expected an integer from 0 to "
                                   "18446744073709551615, not '-1'"},
      {{"max_memo_characters=12abc"}, "not '12abc'"},
      {{"max_memo_characters="}, "not ''"},
  };
  for (const auto& c : cases) {
    INFO(c.assignments[0]);
    const auto s = ApplyParamAssignments(&auth, c.assignments);
    CHECK(s.code() == kairos::Status::Code::kInvalidArgument);
    CHECK_THAT(s.message(), Contains(c.message));
    CHECK(auth.max_memo_characters() == 0);
  }
  // A good assignment before a bad one is not applied either.
  const auto s2 = ApplyParamAssignments(&auth, {"tx_sig_limit=9", "nope=1"});
  CHECK_THAT(s2.message(), Contains("'nope' is not a param"));
  CHECK(auth.tx_sig_limit() == 0);
  kairos::locks::v1::Params locks;
  auto s = ApplyParamAssignments(&locks, {"scale_refund=yes"});
  CHECK_THAT(s.message(), Contains("scale_refund: expected true or false, not 'yes'"));
  s = ApplyParamAssignments(&locks, {"release_bounty_bps=4294967296"});
  CHECK_THAT(s.message(), Contains("release_bounty_bps: expected an integer from 0 to 4294967295"));
}

namespace {

// CometBFT's genesis (`cometbft testnet` shape) with two validators.
json CometGenesis() {
  return json::parse(R"({
    "genesis_time": "2026-01-01T00:00:00Z",
    "chain_id": "poa-chain",
    "initial_height": "1",
    "validators": [
      {"address": "A", "pub_key": {"type": "tendermint/PubKeyEd25519",
                                   "value": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="},
       "power": "10", "name": "node0"},
      {"address": "B", "pub_key": {"type": "tendermint/PubKeyEd25519",
                                   "value": "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI="},
       "power": "7", "name": ""}],
    "app_hash": "",
    "app_state": ""
  })");
}

}  // namespace

TEST_CASE("set-poa copies CometBFT's validators into app_state.poa", "[params_cli]") {
  json g = CometGenesis();
  const std::string authority = kairos::crypto::EncodeAccountAddress(std::string(20, '\x05'));
  REQUIRE(SetGenesisPoa(&g, authority).ok());
  const json& poa = g["app_state"]["poa"];
  CHECK(poa["authority"] == authority);
  REQUIRE(poa["validators"].size() == 2);
  CHECK(poa["validators"][0]["pub_key"]["@type"] == "/cosmos.crypto.ed25519.PubKey");
  CHECK(poa["validators"][0]["pub_key"]["key"] ==
        "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=");
  CHECK(poa["validators"][0]["power"] == "10");
  CHECK(poa["validators"][0]["moniker"] == "node0");
  CHECK_FALSE(poa["validators"][1].contains("moniker"));  // CometBFT's name was empty
  // The node parses the result, and its poa section has the two validators.
  auto parsed = kairos::app::ParseGenesis(g["app_state"].dump());
  REQUIRE(parsed.ok());
  const auto& section = parsed->Of<kairos::app::poa::GenesisState>();
  CHECK(section.present);
  CHECK(section.validators.size() == 2);
  // Again without an authority: the section's is kept, the validators replaced.
  g["validators"].erase(1);
  REQUIRE(SetGenesisPoa(&g, "").ok());
  CHECK(g["app_state"]["poa"]["authority"] == authority);
  CHECK(g["app_state"]["poa"]["validators"].size() == 1);
}

TEST_CASE("set-poa refusals name the field and leave the document", "[params_cli]") {
  json none = CometGenesis();
  none["validators"] = json::array();
  const json before = none;
  auto s = SetGenesisPoa(&none, "");
  CHECK_THAT(s.message(), Contains("genesis validators: none listed"));
  CHECK(none == before);

  json secp = CometGenesis();
  secp["validators"][1]["pub_key"]["type"] = "tendermint/PubKeySr25519";
  s = SetGenesisPoa(&secp, "");
  CHECK_THAT(s.message(), Contains("genesis validators[1].pub_key.type: \"tendermint/PubKeySr25519\" "
                                   "is not a key type the poa module takes"));

  json bad_authority = CometGenesis();
  s = SetGenesisPoa(&bad_authority, "cosmos1notanaddress");
  CHECK_THAT(s.message(), Contains("authority: "));
  CHECK(bad_authority == CometGenesis());

  json zero = CometGenesis();
  zero["validators"][0]["power"] = "0";
  s = SetGenesisPoa(&zero, "");
  CHECK_THAT(s.message(), Contains("the node would not accept the result: "));
  CHECK_THAT(s.message(), Contains("power"));
}

TEST_CASE("a consensus key in its three forms, and the refusals", "[params_cli]") {
  const std::string ed_b64 = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
  for (const std::string& text :
       {R"({"type":"tendermint/PubKeyEd25519","value":")" + ed_b64 + "\"}",
        R"({"@type":"/cosmos.crypto.ed25519.PubKey","key":")" + ed_b64 + "\"}",
        "  " + ed_b64 + "\n"}) {
    INFO(text);
    auto key = ParseConsensusKey(text);
    REQUIRE(key.ok());
    CHECK(key->type == kairos::crypto::KeyType::kEd25519);
    CHECK(key->bytes == std::string(32, '\x01'));
  }
  const struct {
    std::string text;
    std::string key_type;
    const char* message;
  } bad[] = {
      {"{not json", "ed25519", "the key is not valid JSON"},
      {R"({"type":"tendermint/PubKeySr25519","value":"AA=="})", "ed25519",
       "unsupported consensus key type \"tendermint/PubKeySr25519\""},
      {R"({"@type":"/cosmos.crypto.sr25519.PubKey","key":"AA=="})", "ed25519",
       "unsupported key @type \"/cosmos.crypto.sr25519.PubKey\""},
      {R"({"pub":"x"})", "ed25519", "a key in JSON needs"},
      {"!!!", "ed25519", "the key is not base64: '!!!'"},
      {"AQEB", "ed25519", "ed25519 key is 3 bytes, want 32"},
      {ed_b64, "sr25519", "--key-type must be ed25519 or secp256k1, not 'sr25519'"},
      // 33 bytes starting 0x01: not a compressed secp256k1 key.
      {"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB", "secp256k1",
       "secp256k1 key is not compressed"},
  };
  for (const auto& b : bad) {
    INFO(b.text);
    auto key = ParseConsensusKey(b.text, b.key_type);
    REQUIRE_FALSE(key.ok());
    CHECK_THAT(key.status().message(), Contains(b.message));
  }
}
