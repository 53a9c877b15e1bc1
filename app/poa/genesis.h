// The poa module's genesis: app_state.poa of genesis.json (ParseGenesis), InitGenesis, which
// checks it against what CometBFT starts the chain with and writes it, and ExportGenesis.
//
//   "poa": {"authority": "kairos1...",
//           "params": {"max_validators": 100},
//           "validators": [{"pub_key": {"@type": "/cosmos.crypto.ed25519.PubKey",
//                                       "key": "<base64 of the 32 bytes>"},
//                           "power": "10", "moniker": "node0",
//                           "operator_address": "kairos1..."}]}
//
// pub_key is the Cosmos SDK's JSON of an Any (as `simd` shows consensus keys; a secp256k1 key
// is /cosmos.crypto.secp256k1.PubKey with the 33-byte compressed key). Numbers may be JSON
// numbers or decimal strings (power is written back as a string, as the SDK's JSON does for
// int64; max_validators as a number, as for uint32). Unknown keys are errors. authority is
// optional (none: nobody may send the module's messages, and no module's params can change);
// params default field by field; moniker and operator_address are optional; validators must
// list at least one validator, each key once, each power from 1 up, at most max_validators of
// them, with a total power <= CometBFT's MaxTotalVotingPower.
//
// Without app_state.poa the module writes nothing: no authority, and the validator set is
// CometBFT's genesis set, fixed (a chain made before the module has the same app hash).
//
// InitGenesis (GenesisContext):
// - every validator's key type must be in the consensus params' validator.pub_key_types
//   (["ed25519"] when CometBFT sends none); that list is stored (poa/key_types) and decides the
//   key types MsgSetValidator accepts;
// - when CometBFT's genesis lists validators, they must be the module's: the same keys with the
//   same powers, in any order (CometBFT orders its set itself); the first difference is named;
// - when it lists none, InitChain answers the module's set (validators_out, in consensus-address
//   order), which CometBFT then adopts.
//
// ExportGenesis writes the same shape (validators in consensus-address order, the authority and
// operator addresses in bech32, keys in base64), such that InitGenesis of it, with the same
// consensus params, rebuilds the same keys and values.
//
// Thread-safe (pure functions over the store argument).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/module.h"
#include "app/poa/keeper.h"
#include "app/poa/params.h"

namespace kairos::app::poa {

struct GenesisState : ModuleGenesis {
  bool present = false;   // app_state.poa was there
  std::string authority;  // raw; empty: none
  Params params;
  std::vector<Validator> validators;
};

// InvalidArgument "genesis app_state.poa.validators[1].power: must be positive, got 0".
Result<GenesisState> ParseGenesis(const nlohmann::json* section);

Status InitGenesis(store::KvStore& kv, const PoaKeeper& keeper, const GenesisState& g,
                   const GenesisContext& ctx);

// nullopt when the chain has no poa genesis (poa/params absent).
Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& kv,
                                                    const PoaKeeper& keeper);

}  // namespace kairos::app::poa
