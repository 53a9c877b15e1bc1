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

std::string Printable(std::string_view text, std::size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "...";
  return out;
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

TxStatus TxStatus::ModuleError(std::string_view codespace, std::uint32_t code,
                               std::string_view description, std::string_view msg) {
  TxStatus s;
  s.code_ = code;
  s.codespace_ = codespace;
  s.message_ = std::string(msg);
  s.log_ = s.message_;
  s.log_ += ": ";
  s.log_ += description;
  return s;
}

TxStatus TxStatus::Wrapped(std::string_view prefix) const {
  TxStatus s = *this;
  s.message_.insert(0, prefix);
  s.log_.insert(0, prefix);
  return s;
}

TxStatus TxStatus::FromStore(const Status& s) {
  if (s.code() == Status::Code::kInvalidArgument) return Error(kInvalidRequest, s.message());
  TxStatus t = Error(kLogic, "store failure: " + s.ToString());
  t.store_failure_ = true;
  return t;
}

}  // namespace kairos::ante
