// Coins: amounts are 256-bit unsigned integers with checked arithmetic (an overflow throws
// std::overflow_error, which callers turn into an error code); a Coins value is sorted by denom,
// without duplicates or zero amounts (the SDK's "valid coins"). Value types; thread-compatible.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "store/status.h"

namespace kairos::ante {

using Uint256 = boost::multiprecision::checked_uint256_t;

struct Coin {
  std::string denom;
  Uint256 amount;
  bool operator==(const Coin&) const = default;
};

// SDK denom rule: [a-zA-Z][a-zA-Z0-9/:._-]{2,127}.
bool ValidDenom(std::string_view denom);
// A decimal amount without sign or leading zeros (except "0"), < 2^256.
Result<Uint256> ParseAmount(std::string_view decimal);
std::string ToString(const Uint256& v);

class Coins {
 public:
  Coins() = default;
  // InvalidArgument unless valid: denoms valid, sorted, unique; amounts > 0.
  static Result<Coins> FromSorted(std::vector<Coin> coins);
  // "10stake,5atom" style (the CLI form); the result is sorted.
  static Result<Coins> Parse(std::string_view text);

  const std::vector<Coin>& coins() const { return coins_; }
  bool empty() const { return coins_.empty(); }
  Uint256 AmountOf(std::string_view denom) const;
  // Throws std::overflow_error on overflow.
  Coins Add(const Coins& other) const;
  // nullopt if some amount would go negative.
  std::optional<Coins> SafeSub(const Coins& other) const;
  bool IsAllGte(const Coins& other) const;  // this >= other in every denom of other
  std::string ToString() const;             // "10atom,5stake"; "" when empty

 private:
  std::vector<Coin> coins_;
};

}  // namespace kairos::ante
