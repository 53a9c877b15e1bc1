// x/bank for Kairos: balances per (address, denom), the total supply per denom, MsgSend, and the
// fee deduction the ante pipeline asks for (ante/keepers.h). Amounts are 256-bit with checked
// arithmetic; an overflow is an error, never a wrap.
//
// Store layout:
//   bank/bal/<1-byte address length><address><denom>   decimal amount (absent when zero)
//   bank/supply/<denom>                                decimal amount
//   bank/denom                                         the chain's fee/staking denom
// Balances of one address are one prefix, in denom order (AllBalances is one range scan).
//
// Thread-compatible: state is in the store argument.
#pragma once

#include <string>
#include <string_view>

#include "ante/context.h"
#include "ante/keepers.h"
#include "ante/tx.h"
#include "app/auth.h"

namespace kairos::app {

// A module account's address: SHA-256(name)[:20], as the SDK derives module addresses.
std::string ModuleAddress(std::string_view name);
// The fee collector module account ("fee_collector"). It cannot receive MsgSend transfers.
const std::string& FeeCollectorAddress();
// The module accounts MsgSend cannot pay into (the SDK's blocked addresses): the fee collector
// and the locks escrow ("locks", whose balance must equal the deposits and bonds it holds).
bool IsBlockedRecipient(std::string_view address);

class BankKeeper final : public ante::BankKeeper {
 public:
  explicit BankKeeper(const AuthKeeper& auth) : auth_(auth) {}

  static std::string BalanceKey(std::string_view address, std::string_view denom);
  static void AppendBalanceKey(std::string_view address, std::string_view denom, std::string* out);
  static std::string BalancePrefix(std::string_view address);
  static std::string SupplyKey(std::string_view denom);
  static constexpr std::string_view kDenomKey = "bank/denom";

  Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                   std::string_view denom) const;
  Result<ante::Coins> GetAllBalances(const store::KvReader& kv, std::string_view address) const;
  Status SetBalance(store::KvStore& kv, std::string_view address, const ante::Coin& coin) const;
  Result<ante::Uint256> GetSupply(const store::KvReader& kv, std::string_view denom) const;

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

  // The MsgSend handler: ValidateBasic, then Send, with the SDK's events.
  ante::TxStatus HandleMsgSend(ante::Context& ctx, const ante::MsgSend& msg,
                               std::size_t msg_index) const;

 private:
  // Moves `amount` from `from` to `to`; `fee` says the amount is a fee (for the error message).
  ante::TxStatus Move(store::KvStore& kv, std::string_view from, std::string_view to,
                      const ante::Coins& amount, bool fee) const;
  const AuthKeeper& auth_;
};

// Stateless checks of a MsgSend (the SDK's ValidateBasic): codes 7 and 10.
ante::TxStatus ValidateMsgSend(const ante::MsgSend& msg);

}  // namespace kairos::app
