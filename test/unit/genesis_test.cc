// app/genesis: the app_state JSON, its defaults and the errors that name the JSON path.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "app/genesis.h"
#include "app/auth/genesis.h"
#include "app/bank/genesis.h"

using kairos::app::ParseGenesis;

TEST_CASE("an empty app_state is the default chain", "[genesis]") {
  for (const char* text : {"", "  ", "null", "{}"}) {
    auto g = ParseGenesis(text);
    REQUIRE(g.ok());
    CHECK(g->Of<kairos::app::bank::GenesisState>().denom == "stake");
    CHECK(g->Of<kairos::app::auth::GenesisState>().accounts.empty());
    CHECK(g->Of<kairos::app::auth::GenesisState>().params == kairos::ante::AuthParams{});
  }
}

TEST_CASE("the unordered max timeout is a duration; a bad one names the path", "[genesis]") {
  auto g = ParseGenesis(R"({"auth":{"params":{"unordered_max_timeout":"1m30s"}}})");
  REQUIRE(g.ok());
  CHECK(g->Of<kairos::app::auth::GenesisState>().params.unordered_max_timeout_nanos == 90'000'000'000);
  for (const char* bad : {R"("10x")", R"("0s")", R"("")", "600"}) {
    auto r = ParseGenesis(std::string(R"({"auth":{"params":{"unordered_max_timeout":)") + bad +
                          "}}}");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(),
               Catch::StartsWith("genesis app_state.auth.params.unordered_max_timeout: "));
  }
}

TEST_CASE("unknown keys and bad JSON are errors", "[genesis]") {
  auto r = ParseGenesis(R"({"bank":{"denmo":"stake"}})");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("app_state.bank.denmo: unknown field"));
  r = ParseGenesis("{");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith("genesis app_state is not valid JSON"));
}

TEST_CASE("app_state.store sets the chain's size limits; bad values name the path", "[genesis]") {
  auto g = ParseGenesis("{}");
  REQUIRE(g.ok());
  CHECK(g->kv_limits.max_key_bytes == 4096);
  CHECK(g->kv_limits.max_value_bytes == 4194304);
  g = ParseGenesis(R"({"store":{"max_key_bytes":"65536","max_value_bytes":1}})");
  REQUIRE(g.ok());
  CHECK(g->kv_limits.max_key_bytes == 65536);
  CHECK(g->kv_limits.max_value_bytes == 1);
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"store":{"max_key_bytes":"65537"}})",
            "genesis app_state.store.max_key_bytes: must be from 1 to 65536, got 65537"},
           {R"({"store":{"max_value_bytes":0}})",
            "genesis app_state.store.max_value_bytes: must be from 1 to 67108864, got 0"},
           {R"({"store":{"max_value_bytes":-1}})",
            "genesis app_state.store.max_value_bytes: not a non-negative 64-bit integer: \"-1\""},
           {R"({"store":{"max_value_bytes":true}})",
            "genesis app_state.store.max_value_bytes: must be a non-negative 64-bit integer or a "
            "decimal string"},
           {R"({"store":[]})", "genesis app_state.store: must be a JSON object"},
           {R"({"store":{"max_key":1}})",
            "genesis app_state.store.max_key: unknown field (known: max_key_bytes, "
            "max_value_bytes)"}}) {
    INFO(text);
    auto r = ParseGenesis(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == message);
  }
}
