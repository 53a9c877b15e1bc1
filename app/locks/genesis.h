// The locks module's genesis: app_state.locks of genesis.json (parsed with the rest of the
// app_state by app/genesis.cc) and InitGenesis, which writes it into the state and checks what
// depends on the other modules: the escrow account's balance must equal the sessions' deposits
// plus the registrations' bonds (invariant 8), and no height may lie after the initial height.
//
//   "locks": {"params": {"session_period": "5", "cooloff_period": "10", ...},
//             "sessions": [{"address": "kairos1...", "start": "3", "expiry": "8",
//                           "deposit": "1000", "held": [{"resource": "foo", "key": ""}]}],
//             "last_session_ends": [{"address": "kairos1...", "height": "2"}],
//             "registrations": [{"address": "kairos1...", "expiry": "45", "bond": "100000"}],
//             "vars": [{"resource": "foo", "key": "", "value": "-7"}]}
// Locks are not listed: they are the sessions' held slots, and the EndBlock queue is derived
// from the sessions' expiries. Every part is optional; the params default to Params{} field by
// field.
//
// ExportGenesis writes every part (params with every field; sessions, last_session_ends and
// registrations in address order; vars in slot order) when the state holds locks/params or any
// locks record, such that InitGenesis of it rebuilds the same keys and values. (A chain whose
// genesis had no locks section but whose users used the module has no locks/params; its export
// writes the default params, one key more than the original state.)
//
// Thread-safe (pure functions over the store argument).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/locks/keeper.h"
#include "app/locks/params.h"
#include "app/module.h"
#include "store/kv.h"

namespace kairos::app::locks {

struct GenesisState final : ModuleGenesis {
  // False when app_state has no "locks": nothing is written then (the params are the defaults,
  // which GetParams answers for an absent key), so such a chain's app hash is the same as before
  // the module existed.
  bool present = false;
  Params params;
  std::vector<std::pair<std::string, Session>> sessions;  // raw address, session
  std::vector<std::pair<std::string, std::int64_t>> last_session_ends;
  std::vector<std::pair<std::string, Registration>> registrations;
  std::vector<std::pair<LockSlot, std::int64_t>> vars;
};

// Writes `g` at the chain's start. REQUIRES: the bank balances are in `kv` already, and `g`
// passed app/genesis.cc's checks (valid params and slots, no duplicates, expiry = start + a,
// at most L held slots, each slot in one session). InvalidArgument naming the JSON path when the
// escrow does not match or a height is after `initial_height`.
// `section`: app_state.locks, null when absent (nothing is written).
Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section);

Status InitGenesis(store::KvStore& kv, const LocksKeeper& keeper, const GenesisState& g,
                   std::int64_t initial_height);

// nullopt when the state holds nothing of the module.
Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& kv,
                                                    const LocksKeeper& keeper);

}  // namespace kairos::app::locks
