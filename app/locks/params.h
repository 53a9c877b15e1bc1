// The locks module's genesis parameters (specs/locks.md "Parameters"), their validation, and
// their stored form (kairos.locks.v1.Params, deterministic protobuf, under "locks/params").
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ante/coins.h"
#include "kairos/locks/v1/locks.pb.h"
#include "store/status.h"

namespace kairos::app::locks {

// The defaults are the report's configuration, with the coin's 10^6 base units: D0 = 0.001 and
// Y = 0.1 of the coin.
struct Params {
  std::int64_t session_period = 5;           // a
  std::int64_t cooloff_period = 10;          // b
  std::int64_t whitelist_period = 45;        // c
  std::int64_t refund_holding_period = 90;   // d
  ante::Uint256 base_deposit = 1000;         // D0
  ante::Uint256 whitelist_fee = 100000;      // Y
  std::uint64_t max_locks_per_session = 3;   // L
  bool scale_refund = true;
  std::uint32_t release_bounty_bps = 0;      // beta
  std::string forfeit_sink = "burn";         // "burn" or a module account name
  std::uint64_t end_block_cleanup_limit = 100;  // N

  bool operator==(const Params&) const = default;
};

inline constexpr std::string_view kBurn = "burn";
// The module account that holds deposits and bonds in escrow: ModuleAddress("locks").
inline constexpr std::string_view kModuleName = "locks";

// OK, or InvalidArgument "<field>: <why>" for the first field that breaks the spec's
// constraints (a >= 1, 0 <= b <= 64 and D0 * 2^b < 2^256, c >= 1, L >= 1, beta <= 10000, the
// sink "burn" or a module name [a-z][a-z0-9_]{0,31} other than "locks").
Status Validate(const Params& p);

kairos::locks::v1::Params ToProto(const Params& p);
// InvalidArgument naming the field that does not fit (a period over 2^63-1, a bad amount).
Result<Params> FromProto(const kairos::locks::v1::Params& pb);

// An amount as the protos carry it: decimal, "" for 0 (the proto3 default).
std::string AmountText(const ante::Uint256& v);

// The raw address forfeits go to, or "" when they are burned. REQUIRES: Validate(p) is OK.
std::string ForfeitSinkAddress(const Params& p);
// The escrow module account's raw address.
const std::string& EscrowAddress();

}  // namespace kairos::app::locks
