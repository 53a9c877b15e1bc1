// The locks module's error codes, in its own codespace "locks" (registered as a Cosmos SDK
// module registers its errors), plus the sdk codes it also answers with:
//   sdk 4 unauthorized (Release of another's active session), sdk 5 insufficient funds (a
//   deposit or bond the sender cannot pay), sdk 7 invalid address, sdk 18 invalid request
//   (ValidateBasic). Thread-safe (constants and pure functions).
#pragma once

#include <cstdint>
#include <string_view>

#include "ante/errors.h"

namespace kairos::app::locks {

inline constexpr char kCodespace[] = "locks";

enum Code : std::uint32_t {
  kErrLocked = 2,             // the slot is held by another active session
  kErrNotWhitelisted = 3,     // the whitelist is on and the sender is not registered
  kErrDepositTooHigh = 4,     // the deposit due exceeds max_deposit
  kErrLockLimit = 5,          // the session holds max_locks_per_session slots
  kErrNoSession = 6,          // Release of an address without a session
  kErrWhitelistDisabled = 7,  // Register while whitelist_fee is 0
  kErrAlreadyRegistered = 8,  // Register with an outstanding bond
  kErrNotRegistered = 9,      // RefundRegistration without a registration
  kErrHoldingPeriod = 10,     // RefundRegistration before expiry + refund_holding_period
  kErrOverflow = 11,          // checked integer arithmetic overflowed
};

inline std::string_view Description(Code code) {
  switch (code) {
    case kErrLocked: return "slot is locked";
    case kErrNotWhitelisted: return "not whitelisted";
    case kErrDepositTooHigh: return "deposit exceeds max_deposit";
    case kErrLockLimit: return "lock limit reached";
    case kErrNoSession: return "no session";
    case kErrWhitelistDisabled: return "whitelist disabled";
    case kErrAlreadyRegistered: return "already registered";
    case kErrNotRegistered: return "not registered";
    case kErrHoldingPeriod: return "refund holding period";
    case kErrOverflow: return "integer overflow";
  }
  return "locks error";
}

inline ante::TxStatus Error(Code code, std::string_view msg) {
  return ante::TxStatus::ModuleError(kCodespace, code, Description(code), msg);
}

}  // namespace kairos::app::locks
