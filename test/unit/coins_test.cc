// Unit tests for ante/coins: denom and amount rules, validation, the CLI form, arithmetic.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "ante/coins.h"

using kairos::ante::Coin;
using kairos::ante::Coins;
using kairos::ante::ParseAmount;
using kairos::ante::Uint256;
using kairos::ante::ValidDenom;

namespace {

Coins Must(std::string_view text) {
  auto c = Coins::Parse(text);
  INFO(text << ": " << c.status().ToString());
  REQUIRE(c.ok());
  return *c;
}

const Uint256 kMax = ~Uint256(0);  // 2^256 - 1

}  // namespace

TEST_CASE("denoms follow the SDK regex [a-zA-Z][a-zA-Z0-9/:._-]{2,127}", "[coins]") {
  CHECK(ValidDenom("atom"));
  CHECK(ValidDenom("uAtom"));
  CHECK(ValidDenom("abc"));
  CHECK(ValidDenom("ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"));
  CHECK(ValidDenom("factory/kairos1abc/sub.denom_x-y:z"));
  CHECK(ValidDenom("a" + std::string(127, 'b')));       // 128 characters
  CHECK_FALSE(ValidDenom("a" + std::string(128, 'b')));  // 129
  CHECK_FALSE(ValidDenom("ab"));                          // too short
  CHECK_FALSE(ValidDenom(""));
  CHECK_FALSE(ValidDenom("1atom"));  // must start with a letter
  CHECK_FALSE(ValidDenom("/atom"));
  CHECK_FALSE(ValidDenom("at om"));
  CHECK_FALSE(ValidDenom("atom!"));
  CHECK_FALSE(ValidDenom("at\xc3\xa9m"));
}

TEST_CASE("amounts are plain decimals below 2^256", "[coins]") {
  CHECK(*ParseAmount("0") == 0);
  CHECK(*ParseAmount("1234567") == 1234567);
  const std::string max =
      "115792089237316195423570985008687907853269984665640564039457584007913129639935";
  REQUIRE(ParseAmount(max).ok());
  CHECK(*ParseAmount(max) == kMax);
  CHECK(kairos::ante::ToString(*ParseAmount(max)) == max);
  // 2^256 itself overflows, as does anything longer.
  CHECK_FALSE(
      ParseAmount("115792089237316195423570985008687907853269984665640564039457584007913129639936")
          .ok());
  CHECK_FALSE(ParseAmount(std::string(79, '9')).ok());
  CHECK_FALSE(ParseAmount("").ok());
  CHECK_FALSE(ParseAmount("-1").ok());
  CHECK_FALSE(ParseAmount("+1").ok());
  CHECK_FALSE(ParseAmount("01").ok());  // leading zero: a second encoding of 1
  CHECK_FALSE(ParseAmount("1.5").ok());
  CHECK_FALSE(ParseAmount("1e3").ok());
  CHECK_FALSE(ParseAmount(" 1").ok());
}

TEST_CASE("amounts round-trip across the 64-bit fast path's edges", "[coins]") {
  // Up to 19 digits parse in 64 bits, longer ones in 256; writes below 2^64 skip the big
  // division. Both sides of each boundary must agree with the 256-bit arithmetic.
  using kairos::ante::Uint256;
  const Uint256 two64 = Uint256(1) << 64;
  for (const std::string text : {"9999999999999999999",     // 19 digits, the largest fast parse
                                 "10000000000000000000",    // 20 digits
                                 "18446744073709551615",    // 2^64 - 1
                                 "18446744073709551616",    // 2^64
                                 "18446744073709551617"}) {  // 2^64 + 1
    INFO(text);
    auto v = ParseAmount(text);
    REQUIRE(v.ok());
    CHECK(kairos::ante::ToString(*v) == text);
    CHECK(v->str() == text);
  }
  CHECK(*ParseAmount("18446744073709551615") == two64 - 1);
  CHECK(*ParseAmount("18446744073709551616") == two64);
  CHECK(kairos::ante::ToString(two64 - 1) == "18446744073709551615");
  CHECK(kairos::ante::ToString(Uint256(0)) == "0");
  CHECK_FALSE(ParseAmount("999999999999999999a").ok());  // 19 characters, not all digits
}

TEST_CASE("FromSorted accepts only valid coins", "[coins]") {
  auto ok = Coins::FromSorted({{"atom", 5}, {"stake", 10}});
  REQUIRE(ok.ok());
  CHECK(ok->coins().size() == 2);
  CHECK(Coins::FromSorted({}).ok());

  auto unsorted = Coins::FromSorted({{"stake", 10}, {"atom", 5}});
  REQUIRE_FALSE(unsorted.ok());
  CHECK(unsorted.status().message() == "denomination atom is not sorted");

  auto dup = Coins::FromSorted({{"atom", 5}, {"atom", 6}});
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().message() == "duplicate denomination atom");

  auto zero = Coins::FromSorted({{"atom", 0}});
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "coin 0atom amount is not positive");

  auto bad = Coins::FromSorted({{"1x", 1}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "invalid denom: 1x");
}

TEST_CASE("Parse reads the CLI form and sorts", "[coins]") {
  Coins c = Must("10stake,5atom");
  REQUIRE(c.coins().size() == 2);
  CHECK(c.coins()[0] == Coin{"atom", 5});
  CHECK(c.coins()[1] == Coin{"stake", 10});
  CHECK(c.ToString() == "5atom,10stake");

  CHECK(Must(" 7 ucosm , 3abc ").ToString() == "3abc,7ucosm");
  CHECK(Must("").empty());
  CHECK(Must("0stake").empty());  // zero coins are dropped
  CHECK(Must("007stake").ToString() == "7stake");
  CHECK(Must("1ibc/ABC:x").ToString() == "1ibc/ABC:x");

  CHECK_FALSE(Coins::Parse("stake").ok());
  CHECK_FALSE(Coins::Parse("10").ok());
  CHECK_FALSE(Coins::Parse("10st").ok());
  CHECK_FALSE(Coins::Parse("1.5stake").ok());
  CHECK_FALSE(Coins::Parse("-1stake").ok());
  CHECK_FALSE(Coins::Parse("10stake,").ok());
  CHECK_FALSE(Coins::Parse("10stake,,5atom").ok());
  // A coin without a denom or an amount says which is missing.
  CHECK(Coins::Parse("1000").status().message() ==
        "invalid coin expression: 1000 has no denom; expected an amount then a denom, e.g. "
        "1000stake");
  CHECK(Coins::Parse("stake").status().message() ==
        "invalid coin expression: stake has no amount; expected an amount then a denom, e.g. "
        "1000stake");
  CHECK(Coins::Parse("10stake,,5atom").status().message() ==
        "invalid coin expression: an empty coin between commas");
  auto dup = Coins::Parse("1atom,2atom");
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().message() == "duplicate denomination atom");
}

TEST_CASE("AmountOf, Add, SafeSub and IsAllGte", "[coins]") {
  const Coins a = Must("10atom,5stake");
  const Coins b = Must("3atom,7zeta");
  CHECK(a.AmountOf("atom") == 10);
  CHECK(a.AmountOf("stake") == 5);
  CHECK(a.AmountOf("zeta") == 0);
  CHECK(a.AmountOf("aaa") == 0);

  CHECK(a.Add(b).ToString() == "13atom,5stake,7zeta");
  CHECK(b.Add(a).ToString() == "13atom,5stake,7zeta");
  CHECK(a.Add(Coins()).ToString() == a.ToString());
  CHECK(Coins().Add(a).ToString() == a.ToString());

  auto rest = a.SafeSub(Must("10atom,1stake"));
  REQUIRE(rest.has_value());
  CHECK(rest->ToString() == "4stake");  // the emptied denom is removed
  CHECK(a.SafeSub(Coins())->ToString() == a.ToString());
  CHECK_FALSE(a.SafeSub(Must("11atom")).has_value());
  CHECK_FALSE(a.SafeSub(Must("1zeta")).has_value());  // denom not held
  CHECK_FALSE(a.SafeSub(Must("1aaa")).has_value());
  CHECK(a.SafeSub(a)->empty());

  CHECK(a.IsAllGte(Must("10atom")));
  CHECK(a.IsAllGte(Must("10atom,5stake")));
  CHECK(a.IsAllGte(Coins()));
  CHECK_FALSE(a.IsAllGte(Must("11atom")));
  CHECK_FALSE(a.IsAllGte(Must("1atom,1zeta")));
  CHECK_FALSE(Coins().IsAllGte(Must("1atom")));
}

TEST_CASE("Add throws on 256-bit overflow", "[coins]") {
  auto max = Coins::FromSorted({{"atom", kMax}});
  REQUIRE(max.ok());
  CHECK_THROWS_AS(max->Add(Must("1atom")), std::overflow_error);
  CHECK(max->Add(Must("1stake")).AmountOf("atom") == kMax);
}
