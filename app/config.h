// Node configuration: config.toml under the node's home, read with toml++.
// Every key, its default and its meaning are in config.toml.example at the repository root;
// DefaultConfigToml() renders the same text for `kairosd init`.
// Value types; thread-compatible.
#pragma once

#include <cstddef>
#include <string>

#include "store/status.h"

namespace kairos::app {

struct Config {
  // [abci]
  std::string abci_address = "tcp://127.0.0.1:26658";
  std::size_t max_frame_bytes = 256u << 20;
  std::size_t max_pending_requests = 4096;
  std::size_t io_threads = 1;
  // [log]
  std::string log_level = "info";
  std::string log_format = "plain";
  // [db]
  std::string db_dir = "data";  // relative paths are taken from the home directory
};

// Parses TOML text. Unknown keys and bad values are errors that name the key and the expected
// form. `origin` (a file name) prefixes the messages.
Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin);

// Reads and parses the file at `path`.
Result<Config> LoadConfig(const std::string& path);

// Checks values that flags may also set (address form, log level and format).
Status ValidateConfig(const Config& config);

// The default config.toml, commented.
std::string DefaultConfigToml();

}  // namespace kairos::app
