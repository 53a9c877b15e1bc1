// Coins: parsing, validation and checked arithmetic over sorted denom/amount lists.
// Pure functions and value types; thread-compatible.
#include "ante/coins.h"

#include "ante/errors.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace kairos::ante {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}


}  // namespace

bool ValidDenom(std::string_view denom) {
  if (denom.size() < 3 || denom.size() > 128 || !IsAlpha(denom[0])) return false;
  for (char c : denom.substr(1)) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '/' && c != ':' && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

Result<Uint256> ParseAmount(std::string_view decimal) {
  if (decimal.empty()) return Status::InvalidArgument("empty amount");
  if (decimal.size() > 1 && decimal[0] == '0') {
    return Status::InvalidArgument("amount has leading zeros: " + Printable(decimal));
  }
  // 2^256 has 78 decimal digits; anything longer overflows for sure.
  if (decimal.size() > 78) return Status::InvalidArgument("amount is larger than 2^256-1");
  if (decimal.size() <= 19) {  // below 10^19 < 2^64: plain 64-bit arithmetic (every balance read)
    std::uint64_t small = 0;
    for (char c : decimal) {
      if (!IsDigit(c)) return Status::InvalidArgument("invalid amount: " + Printable(decimal));
      small = small * 10 + static_cast<unsigned>(c - '0');
    }
    return Uint256(small);
  }
  Uint256 v = 0;
  try {
    for (char c : decimal) {
      if (!IsDigit(c)) return Status::InvalidArgument("invalid amount: " + Printable(decimal));
      v = v * 10 + static_cast<unsigned>(c - '0');
    }
  } catch (const std::overflow_error&) {
    return Status::InvalidArgument("amount is larger than 2^256-1");
  }
  return v;
}

std::string ToString(const Uint256& v) {
  if (v <= std::numeric_limits<std::uint64_t>::max()) {  // every balance write: no big division
    char buf[20];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.convert_to<std::uint64_t>());
    return std::string(buf, end);
  }
  return v.str();
}

Result<Coins> Coins::FromSorted(std::vector<Coin> coins) {
  for (std::size_t i = 0; i < coins.size(); ++i) {
    const Coin& c = coins[i];
    if (!ValidDenom(c.denom)) {
      return Status::InvalidArgument("invalid denom: " + Printable(c.denom));
    }
    if (c.amount == 0) {
      return Status::InvalidArgument("coin " + ante::ToString(c.amount) + c.denom +
                                     " amount is not positive");
    }
    if (i > 0) {
      if (coins[i - 1].denom == c.denom) {
        return Status::InvalidArgument("duplicate denomination " + c.denom);
      }
      if (coins[i - 1].denom > c.denom) {
        return Status::InvalidArgument("denomination " + c.denom + " is not sorted");
      }
    }
  }
  Coins out;
  out.coins_ = std::move(coins);
  return out;
}

Result<Coins> Coins::Parse(std::string_view text) {
  std::vector<Coin> coins;
  if (Trim(text).empty()) return Coins();
  while (true) {
    std::size_t comma = text.find(',');
    std::string_view part = Trim(text.substr(0, comma));
    std::size_t digits = 0;
    while (digits < part.size() && IsDigit(part[digits])) ++digits;
    if (part.empty()) {
      return Status::InvalidArgument("invalid coin expression: an empty coin between commas");
    }
    if (digits == 0) {
      return Status::InvalidArgument("invalid coin expression: " + Printable(part) +
                                     " has no amount; expected an amount then a denom, e.g. "
                                     "1000stake");
    }
    std::string_view amount = part.substr(0, digits);
    std::string_view denom = Trim(part.substr(digits));
    if (denom.empty()) {
      return Status::InvalidArgument("invalid coin expression: " + Printable(part) +
                                     " has no denom; expected an amount then a denom, e.g. " +
                                     std::string(amount) + "stake");
    }
    if (!ValidDenom(denom)) return Status::InvalidArgument("invalid denom: " + Printable(denom));
    // The CLI form tolerates leading zeros, as the SDK's ParseCoinsNormalized does.
    while (amount.size() > 1 && amount[0] == '0') amount.remove_prefix(1);
    Result<Uint256> value = ParseAmount(amount);
    if (!value.ok()) return value.status();
    // Zero coins are dropped (the SDK normalizes them away).
    if (*value != 0) coins.push_back(Coin{std::string(denom), *value});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(coins.begin(), coins.end(),
            [](const Coin& a, const Coin& b) { return a.denom < b.denom; });
  return FromSorted(std::move(coins));
}

Uint256 Coins::AmountOf(std::string_view denom) const {
  auto it = std::lower_bound(coins_.begin(), coins_.end(), denom,
                             [](const Coin& c, std::string_view d) { return c.denom < d; });
  return it != coins_.end() && it->denom == denom ? it->amount : Uint256(0);
}

Coins Coins::Add(const Coins& other) const {
  Coins out;
  out.coins_.reserve(coins_.size() + other.coins_.size());
  auto a = coins_.begin();
  auto b = other.coins_.begin();
  while (a != coins_.end() || b != other.coins_.end()) {
    if (b == other.coins_.end() || (a != coins_.end() && a->denom < b->denom)) {
      out.coins_.push_back(*a++);
    } else if (a == coins_.end() || b->denom < a->denom) {
      out.coins_.push_back(*b++);
    } else {
      out.coins_.push_back(Coin{a->denom, a->amount + b->amount});  // throws on overflow
      ++a;
      ++b;
    }
  }
  return out;
}

std::optional<Coins> Coins::SafeSub(const Coins& other) const {
  Coins out;
  auto a = coins_.begin();
  for (const Coin& b : other.coins_) {
    while (a != coins_.end() && a->denom < b.denom) out.coins_.push_back(*a++);
    if (a == coins_.end() || a->denom != b.denom || a->amount < b.amount) return std::nullopt;
    Uint256 rest = a->amount - b.amount;
    if (rest != 0) out.coins_.push_back(Coin{a->denom, rest});
    ++a;
  }
  out.coins_.insert(out.coins_.end(), a, coins_.end());
  return out;
}

bool Coins::IsAllGte(const Coins& other) const {
  return std::all_of(other.coins_.begin(), other.coins_.end(),
                     [this](const Coin& c) { return AmountOf(c.denom) >= c.amount; });
}

std::string Coins::ToString() const {
  std::string out;
  for (const Coin& c : coins_) {
    if (!out.empty()) out += ',';
    out += ante::ToString(c.amount);
    out += c.denom;
  }
  return out;
}

}  // namespace kairos::ante
