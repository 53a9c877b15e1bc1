// app/genesis: the app_state JSON, its defaults and the errors that name the JSON path.
#include <catch2/catch.hpp>

#include "app/genesis.h"

using kairos::app::ParseGenesis;

TEST_CASE("an empty app_state is the default chain", "[genesis]") {
  for (const char* text : {"", "  ", "null", "{}"}) {
    auto g = ParseGenesis(text);
    REQUIRE(g.ok());
    CHECK(g->denom == "stake");
    CHECK(g->accounts.empty());
    CHECK(g->auth_params == kairos::ante::AuthParams{});
  }
}

TEST_CASE("the unordered max timeout is a duration; a bad one names the path", "[genesis]") {
  auto g = ParseGenesis(R"({"auth":{"params":{"unordered_max_timeout":"1m30s"}}})");
  REQUIRE(g.ok());
  CHECK(g->auth_params.unordered_max_timeout_nanos == 90'000'000'000);
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
