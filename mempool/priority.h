// Priority: a tx's fee per unit of gas, as an unsigned Q64.64 fixed-point number (64 integer
// bits, 64 fraction bits): floor(fee * 2^64 / gas), saturated at 2^128 - 1. The app computes it
// in the ante handler (DeductFee, with 256-bit amounts: the least over the fee's coins, as the
// SDK's GetTxPriority takes the least); the pool orders, evicts and replaces by it.
//
// Why fixed point: fee / gas as an integer rounds every gas price below 1 per gas (the usual
// Cosmos fee levels, e.g. 5000stake for 200000 gas = 0.025) down to 0, and the pool degenerates
// to arrival order. With 64 fraction bits two fee rates a/b and c/d compare exactly (equal when
// a*d == c*b, else in the right order) whenever b * d <= 2^64, e.g. whenever both gas limits are
// below 2^32; and comparing is plain integer comparison (no multiplication per comparison in
// the pool's heaps and trees). Above 2^64 per gas it saturates.
//
// Stored as two 64-bit halves (8-byte alignment, so the pool's entries and heap keys keep their
// packed layouts; a native unsigned __int128 would be 16-byte aligned).
//
// Value type; thread-compatible.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace kairos::mempool {

using Uint128 = unsigned __int128;

class Priority {
 public:
  constexpr Priority() = default;
  // From the raw Q64.64 value.
  static constexpr Priority FromQ64(Uint128 q) {
    return Priority(static_cast<std::uint64_t>(q >> 64), static_cast<std::uint64_t>(q));
  }
  // Exactly `units` per gas.
  static constexpr Priority Whole(std::uint64_t units) { return Priority(units, 0); }
  static constexpr Priority Max() { return Priority(~std::uint64_t{0}, ~std::uint64_t{0}); }
  // floor(fee * 2^64 / gas); Max when gas is 0 and fee is not (0 for no fee).
  static Priority PerGas(std::uint64_t fee, std::uint64_t gas);

  constexpr Uint128 q64() const { return (static_cast<Uint128>(hi_) << 64) | lo_; }
  constexpr bool is_max() const { return *this == Max(); }
  // The next representable value (Max stays Max).
  constexpr Priority Next() const { return is_max() ? *this : FromQ64(q64() + 1); }
  // The least fee (in the fee's smallest unit) that pays at least this much for `gas`:
  // ceil(this * gas / 2^64), saturated at 2^128 - 1.
  Uint128 MinFeeFor(std::uint64_t gas) const;

  enum class Rounding { kNearest, kUp };
  // The value in decimal with at most 18 fraction digits (the SDK's Dec precision, in which gas
  // prices are written), trailing zeros dropped: "0.025", "12", "0.000000000000000001".
  // kUp rounds up at the 18th digit (for a threshold: paying the printed rate is enough).
  std::string ToDecimal(Rounding rounding = Rounding::kNearest) const;

  friend constexpr bool operator==(const Priority&, const Priority&) = default;
  friend constexpr std::strong_ordering operator<=>(const Priority&, const Priority&) = default;

 private:
  constexpr Priority(std::uint64_t hi, std::uint64_t lo) : hi_(hi), lo_(lo) {}
  std::uint64_t hi_ = 0;  // the integer part (first: the defaulted comparison is numeric)
  std::uint64_t lo_ = 0;  // the fraction, in units of 2^-64
};
static_assert(sizeof(Priority) == 16 && alignof(Priority) == 8);

// `v` in decimal.
std::string DecimalString(Uint128 v);

}  // namespace kairos::mempool
