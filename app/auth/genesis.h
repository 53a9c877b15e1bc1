// x/auth's genesis, app_state.auth:
//
//   {"params": {"max_memo_characters": "256", "tx_sig_limit": "7",
//               "tx_size_cost_per_byte": "10", "sig_verify_cost_secp256k1": "1000",
//               "sig_verify_cost_ed25519": "590", "unordered_enabled": true,
//               "unordered_max_timeout": "600s", "unordered_gas_cost": "2240"},
//    "accounts": [{"address": "kairos1..."}]}
//
// Accounts get account numbers in the order listed. Thread-safe (pure, or on the caller's
// store).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ante/keepers.h"
#include "app/auth/keeper.h"
#include "app/module.h"

namespace kairos::app::auth {

struct GenesisState final : ModuleGenesis {
  ante::AuthParams params;
  std::vector<std::string> accounts;  // raw addresses
};

// `section`: app_state.auth, null when absent (the default params, no accounts).
Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section);
Status InitGenesis(store::KvStore& state, const AuthKeeper& keeper, const GenesisState& g);

}  // namespace kairos::app::auth
