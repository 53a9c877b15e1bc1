#include "ante/context.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <limits>

namespace kairos::ante {

void Context::Emit(std::string type,
                   std::vector<std::pair<std::string, std::string>> attributes) {
  tendermint::abci::Event& e = events.emplace_back();
  e.set_type(std::move(type));
  for (auto& [k, v] : attributes) {
    auto* a = e.add_attributes();
    a->set_key(std::move(k));
    a->set_value(std::move(v));
    a->set_index(true);
  }
}

AccountMemoEntry* AccountMemo::Find(std::string_view address) {
  if (entries_.size() <= kScanned) {
    for (AccountMemoEntry& e : entries_) {
      if (e.address == address) return &e;
    }
    return nullptr;
  }
  const auto it = index_.find(address);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

AccountMemoEntry& AccountMemo::Add(AccountMemoEntry entry) {
  entries_.push_back(std::move(entry));
  if (entries_.size() > kScanned) {
    if (index_.empty()) {
      for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].address, i);
    } else {
      index_.emplace(entries_.back().address, entries_.size() - 1);
    }
  }
  return entries_.back();
}

void AccountMemo::clear() {
  entries_.clear();
  index_.clear();
}

std::string FormatUnixNanos(std::int64_t unix_nanos) {
  using namespace std::chrono;
  std::int64_t secs = unix_nanos / 1'000'000'000;
  std::int64_t nanos = unix_nanos % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --secs;
  }
  const sys_days day = floor<days>(sys_seconds(seconds(secs)));
  const year_month_day ymd(day);
  const std::int64_t in_day = secs - duration_cast<seconds>(day.time_since_epoch()).count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%09dZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), int(in_day / 3600),
                int(in_day / 60 % 60), int(in_day % 60), int(nanos));
  return buf;
}

std::string FormatDuration(std::int64_t nanos) {
  if (nanos == 0) return "0s";
  std::string out;
  if (nanos < 0) {
    out = "-";
    nanos = -nanos;
  }
  const std::int64_t h = nanos / 3'600'000'000'000;
  const std::int64_t m = nanos / 60'000'000'000 % 60;
  const std::int64_t s = nanos / 1'000'000'000 % 60;
  const std::int64_t frac = nanos % 1'000'000'000;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  out += std::to_string(s);
  if (frac > 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  out += "s";
  return out;
}

Result<std::int64_t> ParseDuration(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("bad duration \"" + std::string(text) + "\": " +
                                   std::string(why) + " (e.g. 60s, 10m, 1m30s, 1.5s)");
  };
  if (text.empty()) return bad("empty");
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // digits [ "." digits ] unit, in integer nanoseconds (no floating point).
    std::uint64_t whole = 0, frac = 0, frac_scale = 1;
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (whole > 1'000'000'000) return bad("out of range");
      whole = whole * 10 + static_cast<std::uint64_t>(text[i++] - '0');
    }
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (frac_scale < 1'000'000'000) {
          frac = frac * 10 + static_cast<std::uint64_t>(text[i] - '0');
          frac_scale *= 10;
        }
        ++i;
      }
    }
    if (i == start) return bad("a number must come before each unit");
    const std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    std::uint64_t scale = 0;
    if (unit == "h") scale = 3'600'000'000'000;
    else if (unit == "m") scale = 60'000'000'000;
    else if (unit == "s") scale = 1'000'000'000;
    else if (unit == "ms") scale = 1'000'000;
    else return bad("unit \"" + std::string(unit) + "\" (use h, m, s, ms)");
    const unsigned __int128 part = static_cast<unsigned __int128>(whole) * scale +
                                   static_cast<unsigned __int128>(frac) * scale / frac_scale;
    if (part > static_cast<unsigned __int128>(kMax - total)) return bad("out of range");
    total += static_cast<std::int64_t>(part);
  }
  if (total <= 0) return bad("must be positive");
  return total;
}

Result<std::vector<GasPrice>> ParseGasPrices(std::string_view text) {
  std::vector<GasPrice> out;
  if (text.empty()) return out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    std::size_t i = 0;
    while (i < item.size() && (std::isdigit(static_cast<unsigned char>(item[i])) || item[i] == '.')) {
      ++i;
    }
    const std::string_view number = item.substr(0, i);
    const std::string_view denom = item.substr(i);
    const std::size_t dot = number.find('.');
    const std::string_view whole = number.substr(0, dot);
    const std::string_view frac =
        dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
    const auto bad = [&](std::string_view why) {
      return Status::InvalidArgument("invalid gas price \"" + std::string(item) + "\": " +
                                     std::string(why) +
                                     " (expected an amount and a denom, e.g. 0.025stake)");
    };
    if (whole.empty() || frac.find('.') != std::string_view::npos || frac.size() > 18 ||
        (dot != std::string_view::npos && frac.empty())) {
      return bad("bad amount");
    }
    if (!ValidDenom(denom)) return bad("bad denom");
    std::string digits(whole);
    digits += std::string(frac) + std::string(18 - frac.size(), '0');
    while (digits.size() > 1 && digits.front() == '0') digits.erase(digits.begin());
    auto amount = ParseAmount(digits);
    if (!amount.ok()) return bad(amount.status().message());
    out.push_back({std::string(denom), *amount});
  }
  return out;
}

FeePerGas FeePerGasQ64(const Coins& fee, std::uint64_t gas_limit) {
  if (gas_limit == 0 || fee.empty()) return 0;
  static const Uint256 kQ64Max = (Uint256(1) << 128) - 1;
  static const Uint256 kShiftLimit = Uint256(1) << 192;  // amount << 64 fits in 256 bits below
  Uint256 least = kQ64Max;
  for (const Coin& c : fee.coins()) {
    if (c.amount >= kShiftLimit) continue;  // over 2^128 per gas: saturated
    const Uint256 q64 = (c.amount << 64) / gas_limit;
    least = std::min(least, q64);  // the SDK takes the least coin
  }
  static const Uint256 kLow64 = std::numeric_limits<std::uint64_t>::max();
  const auto half = [&](unsigned shift) {
    return static_cast<FeePerGas>(((least >> shift) & kLow64).convert_to<std::uint64_t>());
  };
  return (half(64) << 64) | half(0);
}

}  // namespace kairos::ante
