// x/bank's genesis, app_state.bank:
//
//   {"denom": "stake",
//    "balances": [{"address": "kairos1...", "coins": [{"denom": "stake", "amount": "1000"}]}]}
//
// A balance for an address app_state.auth does not list creates its account after those
// listed. Thread-safe (pure, or on the caller's store).
#pragma once

#include <memory>
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
};

// `section`: app_state.bank, null when absent (denom "stake", no balances).
Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section);
Status InitGenesis(store::KvStore& state, const BankKeeper& keeper,
                   const AccountKeeper& accounts, const GenesisState& g);

}  // namespace kairos::app::bank
