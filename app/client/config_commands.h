// `kairosd config`: the client configuration in <home>/client.toml (client_config.h), as the
// Cosmos SDK's `simd config`:
//
//   kairosd config                        every key and its value (-o json: an object)
//   kairosd config get KEY                one value
//   kairosd config set [client] KEY VALUE  checks VALUE and rewrites client.toml
//
// Keys: chain-id, keyring-backend, output, node. An unknown key or a bad value is exit 2 with
// the known keys or the expected form.
//
// Main thread only.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace kairos::client {

void AddConfigCommands(CLI::App& app, const std::string& home);

}  // namespace kairos::client
