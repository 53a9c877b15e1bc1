// The poa module's error codes, in its own codespace "poa" (as a Cosmos SDK module registers
// its errors), plus the sdk codes it also answers with: sdk 4 unauthorized (a message not sent
// by the authority), sdk 7 invalid address, sdk 8 invalid pubkey (ValidateBasic: no key, a key
// of the wrong size or of a type that is not a consensus key type), sdk 18 invalid request
// (ValidateBasic: a negative or too large power, a long moniker, bad params).
// Thread-safe (constants and pure functions).
#pragma once

#include <cstdint>
#include <string_view>

#include "ante/errors.h"

namespace kairos::app::poa {

inline constexpr char kCodespace[] = "poa";

enum Code : std::uint32_t {
  kErrEmptySet = 2,            // the change would leave no validator
  kErrPowerChange = 3,         // this block's changes would move a third or more of the power
  kErrTotalPower = 4,          // the total power would exceed CometBFT's maximum
  kErrKeyTypeNotAllowed = 5,   // the consensus params do not allow the key's type
  kErrNotValidator = 6,        // power 0 for a key that is not in the set
  kErrTooManyValidators = 7,   // the set would hold more than max_validators
  kErrAddressCollision = 8,    // another key already has this consensus address
  kErrOverflow = 9,            // checked integer arithmetic overflowed
};

inline std::string_view Description(Code code) {
  switch (code) {
    case kErrEmptySet: return "validator set would be empty";
    case kErrPowerChange: return "validator power change too large";
    case kErrTotalPower: return "total voting power too large";
    case kErrKeyTypeNotAllowed: return "public key type not allowed";
    case kErrNotValidator: return "not a validator";
    case kErrTooManyValidators: return "too many validators";
    case kErrAddressCollision: return "consensus address collision";
    case kErrOverflow: return "integer overflow";
  }
  return "poa error";
}

inline ante::TxStatus Error(Code code, std::string_view msg) {
  return ante::TxStatus::ModuleError(kCodespace, code, Description(code), msg);
}

}  // namespace kairos::app::poa
