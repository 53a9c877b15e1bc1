// Command-line errors of kairosd, said in the words a user needs:
//
//   kairosd foo          -> error: unknown command 'foo' for 'kairosd'   + the commands
//   kairosd query        -> error: 'kairosd query' needs a command       + its commands
//   kairosd tx send ... --bogus -> error: unknown flag '--bogus' for 'kairosd tx send'
//
// CLI11 alone says "A subcommand is required" or "The following argument was not expected"
// without naming the command. Other parse errors keep CLI11's message, prefixed with the
// command they belong to. Exit codes are CLI11's (app/client/README.md): 109 for an unknown
// command, flag or argument, 106 for a missing one; --help and our own failures
// (CLI::RuntimeError from Fail) exit as CLI11 would.
//
// Main thread only.
#pragma once

#include <optional>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace kairos::client {

// Parses argv with `cli` (the client commands run as callbacks during it). Returns the exit code
// when the process should end now (a parse error, --help, a client command that failed), and
// nullopt when the caller goes on with the command parsed (init, start, ...).
std::optional<int> ParseCommandLine(CLI::App& cli, int argc, const char* const* argv);

// The exit code for `e`, thrown by cli.parse(); prints the message (stderr, or stdout for
// --help as CLI11 does).
int ReportParseError(CLI::App& cli, const CLI::ParseError& e);

}  // namespace kairos::client
