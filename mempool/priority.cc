// Priority: fee per gas as Q64.64 fixed point. See priority.h.
#include "mempool/priority.h"

#include <algorithm>

namespace kairos::mempool {

namespace {
constexpr Uint128 kMax128 = ~Uint128{0};
constexpr std::uint64_t kTenTo18 = 1'000'000'000'000'000'000ull;
}  // namespace

Priority Priority::PerGas(std::uint64_t fee, std::uint64_t gas) {
  if (fee == 0) return Priority();
  if (gas == 0) return Max();
  // fee * 2^64 / gas = (fee / gas) * 2^64 + (fee % gas) * 2^64 / gas, each part exact in 128
  // bits: the remainder is below gas, so (fee % gas) * 2^64 < 2^128.
  const std::uint64_t whole = fee / gas;
  const Uint128 fraction = (static_cast<Uint128>(fee % gas) << 64) / gas;
  return Priority(whole, static_cast<std::uint64_t>(fraction));
}

Uint128 Priority::MinFeeFor(std::uint64_t gas) const {
  // this * gas / 2^64 = hi * gas + lo * gas / 2^64, rounded up.
  const Uint128 low = static_cast<Uint128>(lo_) * gas;
  Uint128 fee = static_cast<Uint128>(hi_) * gas;  // < 2^128: both factors are below 2^64
  const Uint128 add = (low >> 64) + ((low & ~std::uint64_t{0}) != 0 ? 1 : 0);
  return fee > kMax128 - add ? kMax128 : fee + add;
}

std::string Priority::ToDecimal(Rounding rounding) const {
  // The fraction in units of 10^-18: lo * 10^18 / 2^64 (lo * 10^18 < 2^124).
  const Uint128 scaled = static_cast<Uint128>(lo_) * kTenTo18;
  Uint128 fraction = scaled >> 64;
  const std::uint64_t rest = static_cast<std::uint64_t>(scaled);
  if (rounding == Rounding::kUp ? rest != 0 : rest >= (std::uint64_t{1} << 63)) ++fraction;
  Uint128 whole = hi_;
  if (fraction == kTenTo18) {  // rounded up to the next integer
    fraction = 0;
    ++whole;
  }
  std::string out = DecimalString(whole);
  if (fraction != 0) {
    std::string digits = DecimalString(fraction);
    digits.insert(0, 18 - digits.size(), '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    out += "." + digits;
  }
  return out;
}

std::string DecimalString(Uint128 v) {
  std::string out;
  do {
    out.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace kairos::mempool
