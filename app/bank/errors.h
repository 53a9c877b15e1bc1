// x/bank's own error codes, in its codespace "bank" (the SDK's x/bank/types/errors.go, same
// numbers and descriptions); the sdk codes it also answers with are in ante/errors.h.
// Thread-safe (constants and pure functions).
#pragma once

#include <cstdint>
#include <string_view>

#include "ante/errors.h"

namespace kairos::app::bank {

inline constexpr char kCodespace[] = "bank";

enum Code : std::uint32_t {
  kErrSendDisabled = 5,  // MsgSend while default_send_enabled is false
};

inline std::string_view Description(Code code) {
  switch (code) {
    case kErrSendDisabled: return "send transactions are disabled";
  }
  return "bank error";
}

inline ante::TxStatus Error(Code code, std::string_view msg) {
  return ante::TxStatus::ModuleError(kCodespace, code, Description(code), msg);
}

}  // namespace kairos::app::bank
