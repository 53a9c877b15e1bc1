// The lease-locks commands of kairosd (app/locks; docs/locks.md):
//   kairosd tx locks register FROM
//   kairosd tx locks refund-registration FROM [ADDRESS]
//   kairosd tx locks acquire FROM SLOT... [--max-deposit N]
//   kairosd tx locks write FROM SLOT set|add VALUE [--max-deposit N]
//   kairosd tx locks release FROM [HOLDER]
//   kairosd query locks holder|var SLOT, session|deposit-quote|registration ADDRESS, params
// A SLOT is "resource" (the single variable) or "resource[key]" (a map element). The tx commands
// take the flags of `tx send` (app/client/cli_util.h) and run the tx in simulation first, so a
// refusal ("foo is locked by kairos1... until height 1234") comes before anything is broadcast
// (--no-simulate skips that and lets the block refuse it). --max-deposit defaults to the deposit
// the chain quotes now (0 while the sender's session is active), so the tx never escrows more
// than what was shown.
//
// Main thread only.
#pragma once

#include <string>

#include "ante/tx.h"
#include "store/status.h"
#include "app/locks/msgs.h"

namespace CLI {
class App;
}

namespace kairos::client {

void AddLocksTxCommands(CLI::App& tx, const std::string& home);
void AddLocksQueryCommands(CLI::App& query, const std::string& home);

// "foo" -> {foo, ""}; "book[alice]" -> {book, alice}; InvalidArgument with the reason otherwise.
Result<app::locks::LockSlot> ParseSlot(std::string_view text);

}  // namespace kairos::client
