// The app_state of CometBFT's genesis.json, as Kairos reads it in InitChain:
//
//   {"auth": {"params": {"max_memo_characters": "256", "tx_sig_limit": "7",
//                        "tx_size_cost_per_byte": "10", "sig_verify_cost_secp256k1": "1000",
//                        "sig_verify_cost_ed25519": "590", "unordered_enabled": true,
//                        "unordered_max_timeout": "600s", "unordered_gas_cost": "2240"},
//             "accounts": [{"address": "kairos1..."}]},
//    "bank": {"denom": "stake",
//             "balances": [{"address": "kairos1...",
//                           "coins": [{"denom": "stake", "amount": "1000"}]}]},
//    "locks": {"params": {...}, "sessions": [...], "last_session_ends": [...],
//              "registrations": [...], "vars": [...]},   (format: app/locks/genesis.h)
//    "store": {"max_key_bytes": "4096", "max_value_bytes": "4194304"}}
//
// `store` holds the chain-wide size limits of a key and a value that a tx may write (1 to
// 65536, 1 to 67108864). They are consensus params: InitChain writes them into the state, and
// every node reads them from there; no node's config.toml plays a part (two validators whose
// configs differed would compute different app hashes).
//
// Every part is optional: an empty app_state (CometBFT's default) is a chain with the default
// params, the denom "stake" and no accounts. Unknown keys are errors (a typo must not silently
// become a default). Numbers may be JSON numbers or decimal strings. Accounts get account numbers
// in the order listed; a balance for an address not listed creates its account after them.
//
// Thread-safe (pure parsing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ante/coins.h"
#include "ante/keepers.h"
#include "app/locks/genesis.h"
#include "store/kv.h"
#include "store/status.h"

namespace kairos::app {

// The largest key and value size limits a chain may set (app_state.store's ranges).
inline constexpr std::size_t kMaxKeyBytesLimit = 65536;
inline constexpr std::size_t kMaxValueBytesLimit = 64u << 20;

struct GenesisBalance {
  std::string address;  // raw bytes
  ante::Coins coins;
};

struct Genesis {
  ante::AuthParams auth_params;
  std::vector<std::string> accounts;  // raw addresses
  std::string denom = "stake";
  std::vector<GenesisBalance> balances;
  locks::GenesisState locks;
  store::KvLimits kv_limits;  // app_state.store (default: store::KvLimits's)
};

// InvalidArgument naming the JSON path of the first problem, e.g.
// "app_state.bank.balances[1].coins[0].amount: not a decimal integer: \"-5\"".
Result<Genesis> ParseGenesis(std::string_view app_state_json);

}  // namespace kairos::app
