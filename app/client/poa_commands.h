// The proof-of-authority commands of kairosd (app/poa):
//   kairosd tx poa set-validator AUTHORITY PUBKEY POWER [--moniker M] [--operator ADDRESS]
//   kairosd tx poa update-authority AUTHORITY NEW_AUTHORITY
//   kairosd tx poa update-params AUTHORITY --max-validators N
//   kairosd query poa validators [--limit N] | validator ADDRESS|PUBKEY | authority | params
// PUBKEY is a consensus key as `cometbft show-validator` prints it
// ({"type":"tendermint/PubKeyEd25519","value":"<base64>"}), as the SDK's JSON writes it
// ({"@type":"/cosmos.crypto.ed25519.PubKey","key":"<base64>"}), or bare base64 (ed25519, or
// secp256k1 with --key-type secp256k1). POWER 0 removes the validator. The tx commands take the
// flags of `tx send` and simulate first, so a refusal (not the authority, a third of the power
// in one block) comes before anything is broadcast.
//
// Main thread only.
#pragma once

#include <string>
#include <string_view>

#include "app/poa/consensus_key.h"
#include "store/status.h"

namespace CLI {
class App;
}

namespace kairos::client {

void AddPoaTxCommands(CLI::App& tx, const std::string& home);
void AddPoaQueryCommands(CLI::App& query, const std::string& home);

// A consensus public key in one of the forms above; `key_type` ("ed25519" or "secp256k1")
// applies to bare base64 only. InvalidArgument naming what is wrong.
Result<app::poa::ConsensusKey> ParseConsensusKey(std::string_view text,
                                                 std::string_view key_type = "ed25519");

}  // namespace kairos::client
