// `kairosd genesis add-account`: adds an account and its coins to the app_state of CometBFT's
// genesis.json, in the layout app/genesis.h parses:
//
//   "app_state": {"auth": {"accounts": [{"address": "kairos1..."}]},
//                 "bank": {"denom": "stake",
//                          "balances": [{"address": "kairos1...",
//                                        "coins": [{"denom": "stake", "amount": "1000"}]}]}}
//
// Everything else in the file is kept as it was, key order included (nlohmann::ordered_json);
// the file is written back with a 2-space indent. CometBFT's default "app_state": "" (or none,
// or null) is an empty app_state. Before writing, the new app_state is checked with the node's
// own parser (app::ParseGenesis), so a file this writes is one the node accepts.
//
// Pure functions on a JSON document plus one that edits a file in place; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "store/status.h"

namespace kairos::client {

struct AddAccountOptions {
  // Without it, an address already in auth.accounts or bank.balances is refused; with it, the
  // coins are added to that address's balance.
  bool append = false;
};

// Edits `genesis` (the whole genesis.json document). `address` is a bech32 account address;
// `coins` the CLI form "1000stake,5atom" (any order; stored sorted by denom). bank.denom is set
// to the first coin as written when it is absent. InvalidArgument, naming the problem, for a bad
// address or coins, a duplicate without `append`, or an app_state the node would not accept.
Status AddGenesisAccount(nlohmann::ordered_json* genesis, std::string_view address,
                         std::string_view coins, AddAccountOptions options);

// Refuses a genesis file whose chain has started: InitChain reads app_state once, when the chain
// begins, so an account added afterwards is never funded. `genesis_path` is taken as
// <CometBFT home>/config/genesis.json; the chain has started when <CometBFT home>/data has a
// priv_validator_state.json above height 0 or a state database (state.db). InvalidArgument
// naming the height and what to do instead (a transfer from a funded account, or a new chain).
// `consequence` says what editing now would do (the account's or the poa section's text).
Status CheckChainNotStarted(const std::string& genesis_path, std::string_view consequence);

// Reads `path`, applies AddGenesisAccount, and replaces the file atomically (keeping its mode).
// CheckChainNotStarted first.
Status AddGenesisAccountToFile(const std::string& path, std::string_view address,
                               std::string_view coins, AddAccountOptions options);

// `kairosd genesis set-poa`: app_state.poa from CometBFT's genesis validators (each one's key,
// power and name as moniker), in the layout app/poa/genesis.h parses, with `authority` (bech32;
// empty: leave the section's authority as it is, or none). Params already in the section are
// kept. InvalidArgument for a document with no validators, a key type the module does not take,
// or a result the node would not accept.
Status SetGenesisPoa(nlohmann::ordered_json* genesis, std::string_view authority);
// The same on a file, in place (CheckChainNotStarted first).
Status SetGenesisPoaInFile(const std::string& path, std::string_view authority);

}  // namespace kairos::client
