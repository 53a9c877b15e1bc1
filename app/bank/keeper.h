// x/bank for Kairos: balances per (address, denom), the total supply per denom, MsgSend, and the
// fee deduction the ante pipeline asks for (ante/keepers.h). Amounts are 256-bit with checked
// arithmetic; an overflow is an error, never a wrap.
//
// Store layout:
//   bank/bal/<1-byte address length><address><denom>   decimal amount (absent when zero)
//   bank/supply/<denom>                                decimal amount
//   bank/denom                                         the chain's fee/staking denom
//   bank/params                                        JSON {"default_send_enabled": bool},
//                                                      written only by genesis (when
//                                                      app_state.bank.params is given) and by
//                                                      MsgUpdateParams; absent: true
//   bank/metadata/<base denom>                         cosmos.bank.v1beta1.Metadata
//                                                      (deterministic protobuf), written only
//                                                      by genesis (app_state.bank.denom_metadata)
// Balances of one address are one prefix, in denom order (AllBalances is one range scan); the
// supply and the metadata are one prefix each, in denom order.
//
// Thread-safety: state is in the store argument. The cached default_send_enabled (what MsgSend
// obeys) is that of the last committed block: the executor replaces it (LoadParams at open,
// InitChain and after each Commit, through BankModule::LoadState) while query threads may read
// it (Simulate), so it is atomic. A change written by MsgUpdateParams thus applies from the next
// block, on every node, as auth's params do. The rest is immutable after the module list is
// bound.
#pragma once

#include <atomic>
#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ante/context.h"
#include "ante/keepers.h"
#include "app/bank/expected_keepers.h"
#include "app/bank/msgs.h"
#include "cosmos/bank/v1beta1/bank.pb.h"

namespace kairos::app::bank {

// The fee collector module account ("fee_collector"). It cannot receive MsgSend transfers.
const std::string& FeeCollectorAddress();

class BankKeeper final : public ante::BankKeeper {
 public:
  // REQUIRES: `accounts` outlives the keeper.
  explicit BankKeeper(const AccountKeeper& accounts) : auth_(accounts) {}
  // Over any keeper with AccountKeeper's methods (expected_keepers.h), through an adapter it
  // owns. REQUIRES: `accounts` outlives the keeper.
  template <class K>
    requires(!std::derived_from<K, AccountKeeper>)
  explicit BankKeeper(const K& accounts)
      : owned_(std::make_unique<AccountKeeperOf<K>>(accounts)), auth_(*owned_) {}

  // The module accounts MsgSend cannot pay into (the SDK's blocked addresses): the fee
  // collector and every module's accounts (Module::module_accounts; e.g. the locks escrow,
  // whose balance must equal the deposits and bonds it holds). Set once, when the module list
  // is bound. Sorted.
  void set_blocked_recipients(std::vector<std::string> sorted) { blocked_ = std::move(sorted); }
  bool IsBlockedRecipient(std::string_view address) const;

  static std::string BalanceKey(std::string_view address, std::string_view denom);
  static void AppendBalanceKey(std::string_view address, std::string_view denom, std::string* out);
  static std::string BalancePrefix(std::string_view address);
  static std::string SupplyKey(std::string_view denom);
  static std::string MetadataKey(std::string_view base_denom);
  static constexpr std::string_view kSupplyPrefix = "bank/supply/";
  static constexpr std::string_view kMetadataPrefix = "bank/metadata/";
  static constexpr std::string_view kDenomKey = "bank/denom";
  static constexpr std::string_view kParamsKey = "bank/params";

  // The params of the last committed block (see the file comment): MsgSend is refused (bank
  // code 5) while default_send_enabled is false.
  Params params() const { return {default_send_enabled_.load(std::memory_order_acquire)}; }
  // Reads the params from the state into the cache (the defaults when the state has none).
  Status LoadParams(const store::KvReader& kv);
  // The params stored in `kv`; the defaults (default_send_enabled true) when none are stored.
  Result<Params> ReadParams(const store::KvReader& kv) const;
  // Whether `kv` holds bank/params (export writes them only then).
  Result<bool> HasParams(const store::KvReader& kv) const;
  Status WriteParams(store::KvStore& kv, const Params& p) const;
  static std::string EncodeParams(const Params& p);
  static Result<Params> DecodeParams(std::string_view json);

  Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                   std::string_view denom) const;
  Result<ante::Coins> GetAllBalances(const store::KvReader& kv, std::string_view address) const;
  Status SetBalance(store::KvStore& kv, std::string_view address, const ante::Coin& coin) const;
  // The chain's denom (bank/denom; "stake" when genesis set none).
  Result<std::string> GetDenom(const store::KvReader& kv) const;
  // Every address's balances, in the state's order (address length, then address) (export).
  Result<std::vector<std::pair<std::string, std::vector<ante::Coin>>>> ListBalances(
      const store::KvReader& kv) const;
  // Every denom's stored supply, in denom order, zero amounts included (export).
  Result<std::vector<ante::Coin>> ListSupply(const store::KvReader& kv) const;
  Result<ante::Uint256> GetSupply(const store::KvReader& kv, std::string_view denom) const;
  // A stored balance or supply value (decimal); Corruption naming `what` when malformed.
  static Result<ante::Uint256> DecodeAmount(std::string_view value, std::string_view what);

  // Denom metadata (genesis only). SetMetadata stores `m` under its base denom (REQUIRES: m
  // valid, genesis.h). ListMetadata: every stored one, in base denom order (export).
  Status SetMetadata(store::KvStore& kv, const cosmos::bank::v1beta1::Metadata& m) const;
  Result<std::vector<cosmos::bank::v1beta1::Metadata>> ListMetadata(
      const store::KvReader& kv) const;

  // Genesis: credits `coins` and adds them to the supply.
  ante::TxStatus Mint(store::KvStore& kv, std::string_view address, const ante::Coins& coins) const;

  // Moves coins; creates the recipient's account if it has none. Code 5 naming both amounts.
  ante::TxStatus Send(ante::Context& ctx, std::string_view from, std::string_view to,
                      const ante::Coins& amount) const;

  // Takes coins out of `from` and out of the supply (the SDK's BurnCoins), with its events.
  // Code 5 when the balance is short.
  ante::TxStatus Burn(ante::Context& ctx, std::string_view from, const ante::Coins& amount) const;

  ante::TxStatus DeductFee(store::KvStore& kv, std::string_view payer,
                           const ante::Coins& fee) const override;
  // The inverse of DeductFee (the mempool takes a tx back out of its check state, or refunds
  // the tx a replacement displaces): moves `fee` from the fee collector back to `payer`. A coin
  // the collector holds less of is skipped (it cannot happen where the fee went in on the same
  // branch). Not OK only when the store fails.
  Status ReturnFee(store::KvStore& kv, std::string_view payer, const ante::Coins& fee) const;

  // The MsgSend handler: ValidateBasic, then Send, with the SDK's events.
  ante::TxStatus HandleMsgSend(ante::Context& ctx, const MsgSend& msg,
                               std::size_t msg_index) const;

 private:
  // Moves `amount` from `from` to `to`; `fee` says the amount is a fee (for the error message).
  ante::TxStatus Move(store::KvStore& kv, std::string_view from, std::string_view to,
                      const ante::Coins& amount, bool fee) const;
  std::unique_ptr<AccountKeeper> owned_;  // the adapter, when built over another keeper type
  const AccountKeeper& auth_;
  std::vector<std::string> blocked_;
  std::atomic<bool> default_send_enabled_{true};
};

}  // namespace kairos::app::bank
