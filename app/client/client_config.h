// The client configuration: <home>/client.toml, beside the keyring, as the Cosmos SDK's
// client.toml (`simd config set client KEY VALUE`). It holds the defaults of the client
// commands' flags, so that `--node` (and the rest) need not be given on every call; a flag on
// the command line always wins.
//
//   # kairosd client configuration: `kairosd config set KEY VALUE` edits it; flags override it.
//   chain-id = ""                            (sign for this chain; "" asks the node's /status)
//   keyring-backend = "file"                 ("file": keyring.json, sealed with your passphrase;
//                                             "test": keyring-test.json, a fixed passphrase)
//   output = "text"                          ("text" or "json")
//   node = "http://127.0.0.1:26657"          (CometBFT RPC address)
//
// A missing file is the defaults above. Every key is optional; an unknown key or a bad value is
// an error that names the file, the key and the expected form (a typo must not silently become
// a default). `kairosd config set` rewrites the whole file (comments included) from the values.
//
// Thread-compatible (pure functions and file I/O).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/client/rpc_client.h"
#include "store/status.h"

namespace kairos::client {

inline constexpr char kClientConfigFileName[] = "client.toml";
inline constexpr char kKeyringBackendFile[] = "file";
inline constexpr char kKeyringBackendTest[] = "test";

struct ClientConfig {
  std::string chain_id;                         // "" = the node's
  std::string keyring_backend = kKeyringBackendFile;
  std::string output = "text";
  std::string node = kDefaultNodeUrl;
};

// The keys, in file order: chain-id, keyring-backend, output, node.
const std::vector<std::string>& ClientConfigKeys();

std::string ClientConfigPath(const std::string& home);

// `text` is the file's content; `path` is only for messages.
Result<ClientConfig> ParseClientConfig(std::string_view text, const std::string& path);
// The file in `home`, or the defaults when it does not exist.
Result<ClientConfig> LoadClientConfig(const std::string& home);
// The file's content for `config` (what SaveClientConfig writes).
std::string RenderClientConfig(const ClientConfig& config);
Status SaveClientConfig(const std::string& home, const ClientConfig& config);

// Sets `key` to `value` in `config`, checking the value (InvalidArgument naming the key and the
// expected form; NotFound for an unknown key, listing the known ones).
Status SetClientConfigValue(ClientConfig* config, std::string_view key, std::string_view value);
// The value of `key`; NotFound for an unknown key.
Result<std::string> GetClientConfigValue(const ClientConfig& config, std::string_view key);

}  // namespace kairos::client
