// /kairos.poa.v1.Query/* (app/poa/queries.h): every answer, the store keys it names for its
// proofs, Validators' pages (by key and by offset, the page size cut to 100), and bad requests
// with code 18 and what is wrong.
#include <catch2/catch.hpp>

#include "app/hex.h"
#include "kairos/poa/v1/query.pb.h"
#include "poa_fixture.h"

namespace kairos::test::poa {
namespace {

using Catch::Matchers::Contains;
namespace ppb = kairos::poa::v1;

app::QueryAnswer Ask(const PoaFixture& f, const std::string& name,
                     const google::protobuf::MessageLite& req) {
  const std::string path = "/kairos.poa.v1.Query/" + name;
  const std::string data = req.SerializeAsString();
  app::QueryRequest r;
  r.path = path;
  r.data = data;
  r.state = &f.state;
  r.height = r.latest_height = 3;
  auto a = f.module.Query(r);
  REQUIRE(a.ok());
  return *a;
}

template <class Response>
Response Parsed(const app::QueryAnswer& a) {
  INFO(a.log);
  REQUIRE(a.code == 0);
  Response r;
  REQUIRE(r.ParseFromString(a.value));
  return r;
}

TEST_CASE("poa queries: authority, params, one validator", "[poa]") {
  PoaFixture f;
  f.InitOk(GenesisJson({10, 20}));

  auto a = Ask(f, "Authority", ppb::QueryAuthorityRequest{});
  CHECK(a.key == "poa/authority");
  CHECK(Parsed<ppb::QueryAuthorityResponse>(a).authority() == kAuthority.bech32);

  a = Ask(f, "Params", ppb::QueryParamsRequest{});
  CHECK(a.key == "poa/params");
  CHECK(Parsed<ppb::QueryParamsResponse>(a).params().max_validators() == 100);

  ppb::QueryValidatorRequest vr;
  const std::string address = poa::ConsensusAddress(EdKey("v1"));
  vr.set_address(app::HexEncode(address));  // lower case is accepted too
  a = Ask(f, "Validator", vr);
  CHECK(a.key == "poa/val/" + address);
  auto res = Parsed<ppb::QueryValidatorResponse>(a);
  CHECK(res.found());
  CHECK(res.validator().power() == 20);
  CHECK(res.validator().moniker() == "v1");
  std::string stored;
  REQUIRE(f.state.Get(a.key, &stored).ok());
  CHECK(res.validator().SerializeAsString() == stored);  // the proven bytes

  vr.set_address(app::HexEncode(poa::ConsensusAddress(EdKey("nobody")), true));
  a = Ask(f, "Validator", vr);
  CHECK_FALSE(Parsed<ppb::QueryValidatorResponse>(a).found());
  CHECK(a.key == "poa/val/" + poa::ConsensusAddress(EdKey("nobody")));  // proof of absence

  vr.set_address("xyz");
  a = Ask(f, "Validator", vr);
  CHECK(a.code == ante::kInvalidRequest);
  CHECK_THAT(a.log, Contains("address \"xyz\" is not a consensus address (40 hex digits)"));

  a = Ask(f, "Nope", ppb::QueryParamsRequest{});
  CHECK(a.code == ante::kUnknownRequest);
  CHECK_THAT(a.log, Contains("unknown query path '/kairos.poa.v1.Query/Nope'"));

  app::QueryRequest garbage;
  garbage.path = "/kairos.poa.v1.Query/Validator";
  garbage.data = "\xff\xff";
  garbage.state = &f.state;
  auto g = f.module.Query(garbage);
  REQUIRE(g.ok());
  CHECK(g->code == ante::kInvalidRequest);
  CHECK_THAT(g->log, Contains("data is not a kairos.poa.v1.QueryValidatorRequest"));
}

TEST_CASE("poa queries: validators, page by page", "[poa]") {
  PoaFixture f;
  json g = GenesisJson(std::vector<std::int64_t>(105, 1));
  g["params"] = {{"max_validators", 200}};
  f.InitOk(g);
  std::vector<std::string> sorted;
  for (int i = 0; i < 105; ++i) {
    sorted.push_back(poa::ConsensusAddress(EdKey("v" + std::to_string(i))));
  }
  std::sort(sorted.begin(), sorted.end());

  // Default limit (0) and a too large one: 100.
  ppb::QueryValidatorsRequest req;
  auto a = Ask(f, "Validators", req);
  auto res = Parsed<ppb::QueryValidatorsResponse>(a);
  CHECK(res.validators_size() == 100);
  CHECK(res.total_power() == 105);
  CHECK(res.pagination().next_key() == sorted[100]);
  CHECK(res.pagination().total() == 105);  // limit 0 counts the total, as in the SDK
  REQUIRE(a.proven_keys.has_value());
  CHECK(a.proven_keys->size() == 101);
  CHECK(a.proven_keys->front() == "poa/totals");
  CHECK((*a.proven_keys)[1] == "poa/val/" + sorted[0]);
  req.mutable_pagination()->set_limit(1000);
  CHECK(Parsed<ppb::QueryValidatorsResponse>(Ask(f, "Validators", req)).validators_size() == 100);

  // Pages of 40 by key: every validator once, in order.
  std::vector<std::string> seen;
  req.mutable_pagination()->set_limit(40);
  req.mutable_pagination()->set_count_total(true);
  for (int page = 0; page < 5; ++page) {
    res = Parsed<ppb::QueryValidatorsResponse>(Ask(f, "Validators", req));
    // count_total is honoured without a key and ignored with one (the SDK's Paginate).
    CHECK(res.pagination().total() == (page == 0 ? 105 : 0));
    for (const std::string& hex : res.addresses()) {
      std::string raw;
      REQUIRE(app::HexDecode(hex, &raw));
      seen.push_back(raw);
    }
    if (res.pagination().next_key().empty()) break;
    req.mutable_pagination()->set_key(res.pagination().next_key());
  }
  CHECK(seen == sorted);

  // By offset.
  ppb::QueryValidatorsRequest by_offset;
  by_offset.mutable_pagination()->set_offset(103);
  res = Parsed<ppb::QueryValidatorsResponse>(Ask(f, "Validators", by_offset));
  REQUIRE(res.addresses_size() == 2);
  CHECK(res.addresses(0) == app::HexEncode(sorted[103], true));
  CHECK(res.pagination().next_key().empty());
  CHECK(res.pagination().total() == 105);  // limit 0

  // Bad pages.
  ppb::QueryValidatorsRequest bad;
  bad.mutable_pagination()->set_reverse(true);
  a = Ask(f, "Validators", bad);
  CHECK(a.code == ante::kInvalidRequest);
  CHECK_THAT(a.log, Contains("pagination.reverse is not supported"));
  bad.Clear();
  bad.mutable_pagination()->set_key(sorted[3]);
  bad.mutable_pagination()->set_offset(2);
  a = Ask(f, "Validators", bad);
  CHECK(a.code == ante::kInvalidRequest);
  CHECK_THAT(a.log, Contains("pagination: either offset or key is expected, got both"));
  bad.Clear();
  bad.mutable_pagination()->set_key("short");
  a = Ask(f, "Validators", bad);
  CHECK(a.code == ante::kInvalidRequest);
  CHECK_THAT(a.log, Contains("pagination.key must be a 20-byte consensus address"));
}

}  // namespace
}  // namespace kairos::test::poa
