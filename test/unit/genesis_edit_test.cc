// Unit tests for app/client/genesis_edit (`kairosd genesis add-account`): an empty and a filled
// app_state, duplicates with and without --append, bad input leaving the document unchanged,
// and the file kept as it was except for app_state (key order, indent, mode).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/client/file_util.h"
#include "app/client/genesis_edit.h"
#include "app/genesis.h"
#include "crypto/bech32.h"
#include "temp_dir.h"
#include "app/auth/genesis.h"
#include "app/bank/genesis.h"

using kairos::client::AddAccountOptions;
using kairos::client::AddGenesisAccount;
using kairos::client::AddGenesisAccountToFile;
using kairos::test::TempDir;
using Catch::Matchers::Contains;
using json = nlohmann::ordered_json;

namespace {

std::string Address(char fill) {
  return kairos::crypto::EncodeAccountAddress(std::string(20, fill));
}

// CometBFT's `init` output, trimmed.
const char* kCometGenesis = R"({
  "genesis_time": "2026-01-01T00:00:00.000000000Z",
  "chain_id": "test-chain",
  "initial_height": "1",
  "consensus_params": {"block": {"max_bytes": "22020096", "max_gas": "-1"}},
  "validators": [],
  "app_hash": "",
  "app_state": ""
})";

json Coins(std::initializer_list<std::pair<const char*, const char*>> coins) {
  json out = json::array();
  for (auto [d, a] : coins) out.push_back({{"denom", d}, {"amount", a}});
  return out;
}

}  // namespace

TEST_CASE("add-account on CometBFT's empty app_state", "[genesis_edit]") {
  const std::string alice = Address('\x01');
  for (const char* variant : {"empty string", "absent", "null"}) {
    INFO(variant);
    json g = json::parse(kCometGenesis);
    if (std::string(variant) == "absent") g.erase("app_state");
    if (std::string(variant) == "null") g["app_state"] = nullptr;
    REQUIRE(AddGenesisAccount(&g, alice, "1000stake,5atom", {}).ok());
    const json& app = g["app_state"];
    CHECK(app["auth"]["accounts"] == json::array({{{"address", alice}}}));
    CHECK(app["bank"]["denom"] == "stake");  // the first coin as written, not as sorted
    REQUIRE(app["bank"]["balances"].size() == 1);
    CHECK(app["bank"]["balances"][0]["address"] == alice);
    CHECK(app["bank"]["balances"][0]["coins"] == Coins({{"atom", "5"}, {"stake", "1000"}}));
    // Everything else is as it was.
    CHECK(g["chain_id"] == "test-chain");
    CHECK(g["consensus_params"]["block"]["max_gas"] == "-1");

    auto parsed = kairos::app::ParseGenesis(app.dump());
    REQUIRE(parsed.ok());
    REQUIRE(parsed->Of<kairos::app::auth::GenesisState>().accounts.size() == 1);
    CHECK(parsed->Of<kairos::app::auth::GenesisState>().accounts[0].address == std::string(20, '\x01'));
    CHECK(parsed->Of<kairos::app::bank::GenesisState>().denom == "stake");
    REQUIRE(parsed->Of<kairos::app::bank::GenesisState>().balances.size() == 1);
    CHECK(parsed->Of<kairos::app::bank::GenesisState>().balances[0].coins.ToString() == "5atom,1000stake");
  }
}

TEST_CASE("add-account on a filled app_state appends and keeps the rest", "[genesis_edit]") {
  const std::string alice = Address('\x01'), bob = Address('\x02');
  json g = json::parse(kCometGenesis);
  g["app_state"] = json::parse(R"({
    "auth": {"params": {"max_memo_characters": "128"}, "accounts": [{"address": ")" + alice +
                               R"("}]},
    "bank": {"denom": "ukai", "balances": [{"address": ")" + alice +
                               R"(", "coins": [{"denom": "ukai", "amount": "7"}]}]}})");
  REQUIRE(AddGenesisAccount(&g, bob, "300ukai", {}).ok());
  const json& app = g["app_state"];
  CHECK(app["auth"]["params"]["max_memo_characters"] == "128");
  CHECK(app["auth"]["accounts"] ==
        json::array({{{"address", alice}}, {{"address", bob}}}));
  CHECK(app["bank"]["denom"] == "ukai");
  REQUIRE(app["bank"]["balances"].size() == 2);
  CHECK(app["bank"]["balances"][0]["coins"] == Coins({{"ukai", "7"}}));
  CHECK(app["bank"]["balances"][1]["address"] == bob);
  CHECK(app["bank"]["balances"][1]["coins"] == Coins({{"ukai", "300"}}));
  CHECK(kairos::app::ParseGenesis(app.dump()).ok());
}

TEST_CASE("a duplicate is refused unless --append, which adds the coins", "[genesis_edit]") {
  const std::string alice = Address('\x01');
  json g = json::parse(kCometGenesis);
  REQUIRE(AddGenesisAccount(&g, alice, "1000stake", {}).ok());
  const json before = g;

  auto dup = AddGenesisAccount(&g, alice, "1stake", {});
  REQUIRE_FALSE(dup.ok());
  CHECK_THAT(dup.message(), Contains("already in the genesis file"));
  CHECK_THAT(dup.message(), Contains("--append"));
  CHECK(g == before);

  REQUIRE(AddGenesisAccount(&g, alice, "500stake,20atom", {.append = true}).ok());
  const json& app = g["app_state"];
  CHECK(app["auth"]["accounts"].size() == 1);
  REQUIRE(app["bank"]["balances"].size() == 1);
  CHECK(app["bank"]["balances"][0]["coins"] == Coins({{"atom", "20"}, {"stake", "1500"}}));

  // An address with a balance but no account entry counts as present too.
  const std::string bob = Address('\x02');
  g["app_state"]["bank"]["balances"].push_back(
      {{"address", bob}, {"coins", Coins({{"stake", "1"}})}});
  CHECK_FALSE(AddGenesisAccount(&g, bob, "1stake", {}).ok());
  REQUIRE(AddGenesisAccount(&g, bob, "1stake", {.append = true}).ok());
  CHECK(g["app_state"]["auth"]["accounts"].size() == 2);
  CHECK(g["app_state"]["bank"]["balances"][1]["coins"] == Coins({{"stake", "2"}}));
}

TEST_CASE("bad input is refused and leaves the document as it was", "[genesis_edit]") {
  json g = json::parse(kCometGenesis);
  const json before = g;
  auto wrong_prefix =
      AddGenesisAccount(&g, "cosmos19rl4cm2hmr8afy4kldpxz3fka4jguq0auqdal4", "1stake", {});
  REQUIRE_FALSE(wrong_prefix.ok());
  CHECK_THAT(wrong_prefix.message(), Contains("invalid address"));
  auto bad_coins = AddGenesisAccount(&g, Address('\x01'), "ten stake", {});
  REQUIRE_FALSE(bad_coins.ok());
  CHECK_THAT(bad_coins.message(), Contains("invalid coins"));
  auto zero = AddGenesisAccount(&g, Address('\x01'), "0stake", {});
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.message(), Contains("no coins"));
  CHECK(g == before);

  // An app_state the node would refuse (an unknown module) is not made worse silently.
  g["app_state"] = {{"staking", json::object()}};
  auto unknown = AddGenesisAccount(&g, Address('\x01'), "1stake", {});
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.message(), Contains("the node would not accept"));
  g["app_state"] = {{"auth", {{"accounts", "x"}}}};
  auto not_array = AddGenesisAccount(&g, Address('\x01'), "1stake", {});
  REQUIRE_FALSE(not_array.ok());
  CHECK_THAT(not_array.message(), Contains("app_state.auth.accounts: must be an array"));
  g["app_state"] = "not an object";
  CHECK_FALSE(AddGenesisAccount(&g, Address('\x01'), "1stake", {}).ok());
}

TEST_CASE("the file keeps its key order and mode, with a 2-space indent", "[genesis_edit]") {
  TempDir dir;
  const std::string path = dir / "genesis.json";
  std::ofstream(path) << kCometGenesis;
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  REQUIRE(AddGenesisAccountToFile(path, Address('\x01'), "1000stake", {}).ok());
  auto text = kairos::client::ReadWholeFile(path);
  REQUIRE(text.ok());
  // Keys in their original order (not sorted: "genesis_time" before "chain_id").
  const auto time_at = text->find("\"genesis_time\"");
  const auto chain_at = text->find("\"chain_id\"");
  const auto app_at = text->find("\"app_state\"");
  REQUIRE(time_at != std::string::npos);
  CHECK(time_at < chain_at);
  CHECK(chain_at < app_at);
  CHECK(text->rfind("{\n  \"genesis_time\"", 0) == 0);
  CHECK(text->back() == '\n');
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);

  REQUIRE(AddGenesisAccountToFile(path, Address('\x02'), "5stake", {}).ok());
  const json g = json::parse(*kairos::client::ReadWholeFile(path));
  CHECK(g["app_state"]["auth"]["accounts"].size() == 2);

  auto missing = AddGenesisAccountToFile(dir / "none.json", Address('\x01'), "1stake", {});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.message(), Contains("no genesis file at"));
}
