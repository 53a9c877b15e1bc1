// The client commands of kairosd: `keys` (add, list, show, delete, export), `tx send`,
// `query` (account, balance) and `genesis add-account`. See app/client/README.md for the flags.
//
// Each command runs as a CLI11 callback, after the whole command line is parsed (so --home may
// come anywhere). Results go to stdout (text, or JSON with --output json); prompts and notes go
// to the terminal or stderr. A failure prints one line "error: ..." to stderr and throws
// CLI::RuntimeError with the exit code (kExitFailure or kExitUsage), which CLI11_PARSE in main
// returns without printing anything more.
//
// Main thread only.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace kairos::client {

inline constexpr int kExitFailure = 1;  // the command could not do its work
inline constexpr int kExitUsage = 2;    // a bad argument (address, amount, duration, ...)

// Registers the commands on `app`. `home` (the --home value, default ~/.kairos) is read when a
// command runs: the keyring is <home>/keyring.json and the default genesis file
// <home>/cometbft/config/genesis.json. REQUIRES: `home` outlives app.parse().
void AddClientCommands(CLI::App& app, const std::string& home);

}  // namespace kairos::client
