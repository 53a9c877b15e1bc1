// x/auth's genesis, app_state.auth:
//
//   {"params": {"max_memo_characters": "256", "tx_sig_limit": "7",
//               "tx_size_cost_per_byte": "10", "sig_verify_cost_secp256k1": "1000",
//               "sig_verify_cost_ed25519": "590", "unordered_enabled": true,
//               "unordered_max_timeout": "600s", "unordered_gas_cost": "2240"},
//    "accounts": [{"address": "kairos1...", "account_number": "0", "sequence": "3",
//                  "pub_key": {"@type": "/cosmos.crypto.secp256k1.PubKey", "key": "<base64>"}}],
//    "next_account_number": "5",
//    "unordered_nonces": [{"signer": "kairos1...", "timeout": "1795770000000000000"}]}
//
// Only "address" is required in an account. Without "account_number", accounts get account
// numbers in the order listed (the original format); either every account has one or none
// does, and they are distinct. "sequence" defaults to 0; "pub_key" (the SDK's JSON of an Any:
// /cosmos.crypto.secp256k1.PubKey with the 33-byte compressed key, or
// /cosmos.crypto.ed25519.PubKey with 32 bytes) to none. "next_account_number" (optional, at
// least one past every account's number; default: that) is the number the next new account
// gets: an exported chain keeps the numbers of accounts it no longer lists. "unordered_nonces"
// are the ADR-070 nonces still pending (timeout: UnixNano of the tx's timeout, a decimal string
// or a JSON integer; each (signer, timeout) once).
//
// ExportGenesis writes this shape with every field, accounts in address order, nonces in
// timeout order, such that InitGenesis of it rebuilds the same keys and values.
//
// Thread-safe (pure, or on the caller's store).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ante/keepers.h"
#include "app/auth/keeper.h"
#include "app/module.h"

namespace kairos::app::auth {

struct GenesisState final : ModuleGenesis {
  ante::AuthParams params;
  std::vector<ante::Account> accounts;  // as listed (address raw)
  bool numbered = false;                 // the accounts carry their account numbers
  std::optional<std::uint64_t> next_account_number;
  std::vector<std::pair<std::string, std::int64_t>> unordered_nonces;  // raw signer, timeout
};

// `section`: app_state.auth, null when absent (the default params, no accounts).
Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section);
Status InitGenesis(store::KvStore& state, const AuthKeeper& keeper, const GenesisState& g);
// The auth section at a committed version (always present: the params are).
Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state,
                                                    const AuthKeeper& keeper);

}  // namespace kairos::app::auth
