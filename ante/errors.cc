#include "ante/errors.h"

namespace kairos::ante {

std::string_view SdkDescription(std::uint32_t code) {
  switch (code) {
    case kTxDecode: return "tx parse error";
    case kUnauthorized: return "unauthorized";
    case kInsufficientFunds: return "insufficient funds";
    case kUnknownRequest: return "unknown request";
    case kInvalidAddress: return "invalid address";
    case kInvalidPubKey: return "invalid pubkey";
    case kUnknownAddress: return "unknown address";
    case kInvalidCoins: return "invalid coins";
    case kOutOfGas: return "out of gas";
    case kMemoTooLarge: return "memo too large";
    case kInsufficientFee: return "insufficient fee";
    case kTooManySignatures: return "maximum number of signatures exceeded";
    case kNoSignatures: return "no signatures supplied";
    case kInvalidRequest: return "invalid request";
    case kTxTooLarge: return "tx too large";
    case kInvalidHeight: return "invalid height";
    case kTxTimeoutHeight: return "tx timeout height";
    case kUnknownExtensionOptions: return "unknown extension options";
    case kWrongSequence: return "incorrect account sequence";
    case kLogic: return "internal logic error";
    case kNotSupported: return "feature not supported";
    case kInvalidGasLimit: return "invalid gas limit";
    case kTxTimeout: return "tx timeout";
    default: return "internal";
  }
}

TxStatus TxStatus::Error(std::uint32_t code, std::string_view msg) {
  TxStatus s;
  s.code_ = code;
  s.message_ = std::string(msg);
  s.log_ = s.message_;
  s.log_ += ": ";
  s.log_ += SdkDescription(code);
  return s;
}

TxStatus TxStatus::FromStore(const Status& s) {
  if (s.code() == Status::Code::kInvalidArgument) return Error(kInvalidRequest, s.message());
  TxStatus t = Error(kLogic, "store failure: " + s.ToString());
  t.store_failure_ = true;
  return t;
}

}  // namespace kairos::ante
