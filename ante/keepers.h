// The state the ante pipeline needs, as interfaces it declares itself (the Cosmos SDK's
// "expected keepers"). app/ implements them over the store. Every method takes the context's
// gas-metered branch, so reads and writes cost gas and land in the tx's branch.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ante/coins.h"
#include "ante/errors.h"
#include "ante/tx.h"
#include "store/kv.h"

namespace kairos::ante {

struct Account {
  std::string address;  // raw bytes
  std::optional<PubKey> pub_key;
  std::uint64_t account_number = 0;
  std::uint64_t sequence = 0;
  // The bech32 form of `address` as read from the state, so that writing the account back does
  // not encode it again. Empty = not known (then it is computed). REQUIRES: cleared or kept in
  // step whenever `address` changes.
  std::string address_bech32;
};

// x/auth params, with the SDK's defaults, plus the ADR-070 settings.
struct AuthParams {
  std::uint64_t max_memo_characters = 256;
  std::uint64_t tx_sig_limit = 7;
  std::uint64_t tx_size_cost_per_byte = 10;
  std::uint64_t sig_verify_cost_secp256k1 = 1000;
  std::uint64_t sig_verify_cost_ed25519 = 590;
  bool unordered_enabled = true;
  std::int64_t unordered_max_timeout_nanos = 10LL * 60 * 1000 * 1000 * 1000;  // 10 min
  std::uint64_t unordered_gas_cost = 2240;
  bool operator==(const AuthParams&) const = default;
};

class AccountKeeper {
 public:
  virtual ~AccountKeeper() = default;
  // The params of the last committed block (a copy: the app may replace them at Commit while a
  // query thread simulates a tx).
  virtual AuthParams params() const = 0;
  // nullopt when the account does not exist. Not OK only when the store fails. `stored_bytes`
  // (if given) receives the bytes the read was charged for: key plus value (key alone when the
  // account does not exist).
  virtual Result<std::optional<Account>> GetAccount(store::KvStore& kv, std::string_view address,
                                                    std::size_t* stored_bytes = nullptr) const = 0;
  // `stored_bytes` (if given) receives the bytes written: key plus value.
  virtual Status SetAccount(store::KvStore& kv, const Account& account,
                            std::size_t* stored_bytes = nullptr) const = 0;
  // Records (timeout, signer) for an unordered tx. false if it was already there.
  virtual Result<bool> TryAddUnorderedNonce(store::KvStore& kv, std::string_view signer,
                                            std::int64_t timeout_unix_nanos) const = 0;
};

class BankKeeper {
 public:
  virtual ~BankKeeper() = default;
  // Moves `fee` from `payer` to the fee collector. Code 5 when the balance is short, naming both
  // amounts. REQUIRES: the payer's account exists (DeductFeeDecorator checks it, code 9).
  virtual TxStatus DeductFee(store::KvStore& kv, std::string_view payer,
                             const Coins& fee) const = 0;
};

}  // namespace kairos::ante
