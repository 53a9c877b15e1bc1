// x/bank's genesis, app_state.bank:
//
//   {"denom": "stake",
//    "balances": [{"address": "kairos1...", "coins": [{"denom": "stake", "amount": "1000"}]}],
//    "supply": [{"denom": "stake", "amount": "1000"}],
//    "create_accounts": true,
//    "params": {"default_send_enabled": true},
//    "denom_metadata": [{"description": "", "denom_units": [{"denom": "ustake", "exponent": 0,
//                        "aliases": []}, {"denom": "stake", "exponent": 6, "aliases": []}],
//                        "base": "ustake", "display": "stake", "name": "Stake",
//                        "symbol": "STAKE", "uri": "", "uri_hash": ""}]}
//
// A balance for an address app_state.auth does not list creates its account after those
// listed, unless "create_accounts" is false (an exported genesis: auth lists every account
// there, and a module account such as the fee collector holds coins without one). "supply"
// (optional) is checked: each denom's amount must equal the sum of the balances, and every
// denom the balances hold must be listed; a zero amount records a denom whose coins were all
// burned (the state keeps its supply at 0). ExportGenesis writes all four, balances in the
// state's order (by address length, then address), such that InitGenesis of it rebuilds the
// same keys and values.
//
// "params" (optional) is cosmos.bank.v1beta1.Params in the SDK's JSON: default_send_enabled
// (a bool, true when absent) and send_enabled, which may only be an empty array (Kairos keeps no
// per-denom flags). Only a genesis that gives "params" writes bank/params: a chain without them
// keeps the state (and app hash) it had before bank had params, and reads the default (true).
// ExportGenesis writes "params" when the state holds bank/params.
//
// "denom_metadata" (optional) is the SDK's list of cosmos.bank.v1beta1.Metadata in its JSON
// (every field optional but those Validate needs; "exponent" a number or a decimal string),
// checked as the SDK's Metadata.Validate checks it, each violation naming its field: name and
// symbol not blank, base and display valid denoms (any denom, not only those the chain holds,
// as in the SDK), the first unit the base with exponent 0, exponents strictly ascending, no
// unit twice, no alias twice or blank, display one of the units; and no base twice. Each is
// stored under bank/metadata/<base>; a genesis without any writes nothing (a chain keeps its
// state and app hash). ExportGenesis writes the list, in base denom order, only when there is
// one.
//
// Thread-safe (pure, or on the caller's store).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ante/coins.h"
#include "app/bank/expected_keepers.h"
#include "app/bank/keeper.h"
#include "app/module.h"

namespace kairos::app::bank {

struct GenesisBalance {
  std::string address;  // raw bytes
  ante::Coins coins;
};

struct GenesisState final : ModuleGenesis {
  std::string denom = "stake";
  std::vector<GenesisBalance> balances;
  std::optional<std::vector<ante::Coin>> supply;  // may hold zero amounts
  bool create_accounts = true;
  std::optional<Params> params;  // written to bank/params only when given
  std::vector<cosmos::bank::v1beta1::Metadata> denom_metadata;  // checked, as listed
};

// `section`: app_state.bank, null when absent (denom "stake", no balances).
Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section);
Status InitGenesis(store::KvStore& state, const BankKeeper& keeper,
                   const AccountKeeper& accounts, const GenesisState& g);
Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state,
                                                    const BankKeeper& keeper);

}  // namespace kairos::app::bank
