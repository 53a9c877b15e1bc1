// The poa module's params (kairos.poa.v1.Params, stored deterministically under poa/params),
// their validation, and the constants of CometBFT that the module's rules rest on.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "kairos/poa/v1/poa.pb.h"
#include "store/status.h"

namespace kairos::app::poa {

inline constexpr std::string_view kModuleName = "poa";

// CometBFT's types.MaxTotalVotingPower (int64 max / 8, the same in v0.38 and v0.40): the total
// power a validator set may have, and so also the most one validator may have.
inline constexpr std::int64_t kMaxTotalVotingPower = std::numeric_limits<std::int64_t>::max() / 8;
// The Cosmos SDK's staking MaxMonikerLength.
inline constexpr std::size_t kMaxMonikerBytes = 70;
// The largest max_validators a chain may set.
inline constexpr std::uint32_t kMaxValidatorsLimit = 10000;

struct Params {
  std::uint32_t max_validators = 100;
  bool operator==(const Params&) const = default;
};

// OK, or InvalidArgument "max_validators: must be from 1 to 10000, got 0".
Status Validate(const Params& p);

kairos::poa::v1::Params ToProto(const Params& p);
Params FromProto(const kairos::poa::v1::Params& pb);

}  // namespace kairos::app::poa
