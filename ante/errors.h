// TxStatus: the outcome of checking or running a tx, with the Cosmos SDK's codespace "sdk" codes
// and log texts ("<what happened>: <registered description>"), so clients recognise them.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/status.h"

namespace kairos::ante {

// The codespace of the codes below, as responses and TxStatus name it.
inline constexpr char kCodespaceSdk[] = "sdk";

// cosmos-sdk types/errors/errors.go (each kX is the SDK's ErrX): the one list of the "sdk" codes
// this project answers with; app/ and its modules refer to these.
enum SdkCode : std::uint32_t {
  kOk = 0,
  kTxDecode = 2,
  kUnauthorized = 4,
  kInsufficientFunds = 5,
  kUnknownRequest = 6,
  kInvalidAddress = 7,
  kInvalidPubKey = 8,
  kUnknownAddress = 9,
  kInvalidCoins = 10,
  kOutOfGas = 11,
  kMemoTooLarge = 12,
  kInsufficientFee = 13,
  kTooManySignatures = 14,
  kNoSignatures = 15,
  kInvalidRequest = 18,
  kTxInMempoolCache = 19,  // "tx already in mempool"
  kMempoolIsFull = 20,     // "mempool is full"
  kTxTooLarge = 21,
  kKeyNotFound = 22,
  kInvalidHeight = 26,
  kTxTimeoutHeight = 30,
  kUnknownExtensionOptions = 31,
  kWrongSequence = 32,
  kLogic = 35,
  kNotSupported = 37,
  kInvalidGasLimit = 41,
  kTxTimeout = 42,
};

// The registered description of a code ("insufficient funds", ...).
std::string_view SdkDescription(std::uint32_t code);

// Text from a tx or a request, safe for a log line: printable ASCII kept, every other byte
// shown as \xhh, cut after `max` bytes with "...".
std::string Printable(std::string_view text, std::size_t max = std::string_view::npos);

class [[nodiscard]] TxStatus {
 public:
  TxStatus() = default;  // OK
  static TxStatus OK() { return {}; }
  // log = "<msg>: <description of code>", as the SDK's wrapped errors print.
  static TxStatus Error(std::uint32_t code, std::string_view msg);
  // An error of a module's own codespace (e.g. "locks"), whose codes mean something only there:
  // log = "<msg>: <description>". REQUIRES: `codespace` is a string literal (it is kept as a
  // view).
  static TxStatus ModuleError(std::string_view codespace, std::uint32_t code,
                              std::string_view description, std::string_view msg);
  // The same error with `prefix` put before its message and its log.
  TxStatus Wrapped(std::string_view prefix) const;
  // A store error during a tx. InvalidArgument (a key or value over the chain's size limits)
  // is the tx's fault: code 18. Anything else (I/O error, corruption) is not: the status is a
  // store failure, and the node must stop.
  static TxStatus FromStore(const Status& s);
  bool store_failure() const { return store_failure_; }

  bool ok() const { return code_ == kOk; }
  std::uint32_t code() const { return code_; }
  const std::string& log() const { return log_; }
  // The log without the trailing ": <description>", for wrapping in another message.
  const std::string& message() const { return message_; }
  std::string_view codespace() const { return ok() ? std::string_view() : codespace_; }

 private:
  std::uint32_t code_ = kOk;
  std::string log_;
  std::string message_;
  std::string_view codespace_ = kCodespaceSdk;  // a string literal's, for every codespace
  bool store_failure_ = false;
};

}  // namespace kairos::ante
