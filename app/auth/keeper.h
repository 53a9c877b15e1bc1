// x/auth for Kairos: accounts (address, pubkey, account number, sequence), the auth params and
// the ADR-070 unordered-nonce set, all in the store under "auth/". Implements the keeper
// interface the ante pipeline declares (ante/keepers.h).
//
// Store layout (keys are bytes):
//   auth/acc/<20-byte address>          cosmos.auth.v1beta1.BaseAccount (canonical protobuf)
//   auth/next_account_number            8-byte big-endian
//   auth/params                         JSON object, keys sorted (written at genesis and by
//                                       MsgUpdateParams)
//   auth/unordered/<8 bytes><address>   "\x01"; the 8 bytes are the timeout's UnixNano,
//                                       big-endian with the sign bit flipped, so expiry is one
//                                       ordered range scan from the start of the prefix.
// (The SDK stores an empty value; Kairos values are never empty, so the marker is one byte.)
//
// Thread-safety: the cached params (params(), what the ante uses) are those of the last
// committed block: the executor replaces them (set_params, LoadParams at open, InitChain and
// after each Commit) under a mutex while query threads read them (Simulate). A change written by
// MsgUpdateParams thus applies from the next block, on every node. The other const methods only
// read the keeper's own members; state is in the store argument.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ante/keepers.h"

namespace kairos::app::auth {

class AuthKeeper final : public ante::AccountKeeper {
 public:
  explicit AuthKeeper(ante::AuthParams params = {}) : params_(params) {}
  AuthKeeper(const AuthKeeper&) = delete;
  AuthKeeper& operator=(const AuthKeeper&) = delete;

  static std::string AccountKey(std::string_view address);
  static std::string UnorderedNonceKey(std::int64_t timeout_unix_nanos, std::string_view signer);
  static constexpr std::string_view kUnorderedPrefix = "auth/unordered/";
  static constexpr std::string_view kParamsKey = "auth/params";
  static constexpr std::string_view kAccountPrefix = "auth/acc/";
  static constexpr std::string_view kNextAccountNumberKey = "auth/next_account_number";

  ante::AuthParams params() const override {
    std::lock_guard<std::mutex> lock(params_mu_);
    return params_;
  }
  void set_params(const ante::AuthParams& p) {
    std::lock_guard<std::mutex> lock(params_mu_);
    params_ = p;
  }
  // Reads the params from the state into the cache (OK and unchanged if the state has none yet).
  Status LoadParams(const store::KvReader& kv);
  // The params stored in `kv` (the cached ones when it has none yet): what MsgUpdateParams
  // changes within a block.
  Result<ante::AuthParams> ReadParams(const store::KvReader& kv) const;
  Status WriteParams(store::KvStore& kv, const ante::AuthParams& p) const;
  static std::string EncodeParams(const ante::AuthParams& p);
  static Result<ante::AuthParams> DecodeParams(std::string_view json);

  Result<std::optional<ante::Account>> GetAccount(
      store::KvStore& kv, std::string_view address,
      std::size_t* stored_bytes = nullptr) const override;
  Result<std::optional<ante::Account>> ReadAccount(const store::KvReader& kv,
                                                   std::string_view address,
                                                   std::size_t* stored_bytes = nullptr) const;
  // Only the account's sequence (0 when the account does not exist), without decoding the rest:
  // the mempool asks it for every CheckTx.
  Result<std::uint64_t> ReadSequence(const store::KvReader& kv, std::string_view address) const;
  Status SetAccount(store::KvStore& kv, const ante::Account& account,
                    std::size_t* stored_bytes = nullptr) const override;
  // Sets the account's sequence and returns the one it had; nullopt (nothing written) when the
  // account does not exist. The mempool runs a parked tx or a replacement at its own sequence
  // with this, and puts the previous one back after.
  Result<std::optional<std::uint64_t>> SetSequence(store::KvStore& kv, std::string_view address,
                                                   std::uint64_t sequence) const;
  // The inverse of the ante's increment (the mempool takes an ordered tx back out of its check
  // state): the sequence goes one down. Nothing to undo, so no write, when the account does not
  // exist or its sequence is 0.
  Status DecrementSequence(store::KvStore& kv, std::string_view address) const;
  // How many accounts were ever created (the next account number).
  Result<std::uint64_t> AccountCount(const store::KvReader& kv) const;
  // Sets the next account number (genesis).
  Status SetAccountCount(store::KvStore& kv, std::uint64_t next) const;
  // Every account, in address order (export).
  Result<std::vector<ante::Account>> ListAccounts(const store::KvReader& kv) const;
  // Every pending unordered nonce as (signer, timeout), in timeout order (export).
  Result<std::vector<std::pair<std::string, std::int64_t>>> ListUnorderedNonces(
      const store::KvReader& kv) const;
  // Creates an account with the next account number. REQUIRES: it does not exist.
  Result<ante::Account> NewAccount(store::KvStore& kv, std::string_view address) const;

  Result<bool> TryAddUnorderedNonce(store::KvStore& kv, std::string_view signer,
                                    std::int64_t timeout_unix_nanos) const override;
  Result<bool> HasUnorderedNonce(const store::KvReader& kv, std::string_view signer,
                                 std::int64_t timeout_unix_nanos) const;
  // The inverse of TryAddUnorderedNonce's write (the mempool takes an unordered tx back out of
  // its check state): deletes the signer's nonce; OK when there is none.
  Status RemoveUnorderedNonce(store::KvStore& kv, std::string_view signer,
                              std::int64_t timeout_unix_nanos) const;
  // PreBlock: deletes every nonce whose timeout is <= block_time. Returns how many.
  Result<std::size_t> RemoveExpiredUnorderedNonces(store::KvStore& kv,
                                                   std::int64_t block_time_unix_nanos) const;

  // The canonical BaseAccount encoding (also the Query/Account answer inside an Any).
  static std::string EncodeAccount(const ante::Account& account);
  static void AppendAccount(const ante::Account& account, std::string* out);
  // `address` is the raw address the account is stored under (the key says it; the bech32
  // copy inside is not decoded again, which keeps account reads cheap).
  static Result<ante::Account> DecodeAccount(std::string_view bytes, std::string_view address);

 private:
  mutable std::mutex params_mu_;
  ante::AuthParams params_;  // guarded by params_mu_
};

}  // namespace kairos::app::auth
