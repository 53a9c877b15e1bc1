// Interactive input for the CLI: the keyring passphrase (a file, the environment, or the terminal
// with echo off), a line from stdin (a mnemonic for `keys add --recover`), and yes/no questions.
// Prompts go to the terminal (/dev/tty) or stderr, never stdout, so stdout stays machine-readable.
// Main thread only (it changes the terminal's echo mode while reading).
#pragma once

#include <string>
#include <string_view>

#include "store/status.h"

namespace kairos::client {

inline constexpr char kPassphraseEnv[] = "KAIROS_KEYRING_PASSPHRASE";

// The passphrase from, in this order: `passphrase_file` when not empty (its first line),
// the environment variable KAIROS_KEYRING_PASSPHRASE when set and not empty, or the terminal
// without echo (asked twice when `confirm`, for a new key). InvalidArgument when none is
// available ("no passphrase: set KAIROS_KEYRING_PASSPHRASE, pass --passphrase-file, or run on
// a terminal"), when the file cannot be read or is empty, or when the two entries differ.
Result<std::string> GetPassphrase(const std::string& passphrase_file, std::string_view prompt,
                                  bool confirm);

// One line from stdin without its line end. When stdin is a terminal, `prompt` is printed to
// stderr first and, if `secret`, echo is off while typing. InvalidArgument at end of input.
Result<std::string> ReadStdinLine(std::string_view prompt, bool secret);

// Asks `question` [y/N] on the terminal. InvalidArgument when there is no terminal (the caller
// says which flag skips the question).
Result<bool> AskYesNo(std::string_view question);

}  // namespace kairos::client
