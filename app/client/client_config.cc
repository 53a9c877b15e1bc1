#include "app/client/client_config.h"

#include <filesystem>
#include <sstream>

#include <toml++/toml.h>

#include "app/client/file_util.h"

namespace kairos::client {

namespace {

struct KeySpec {
  const char* name;
  const char* form;      // for messages: what a valid value looks like
  const char* comment;   // written above the key
  std::string ClientConfig::*field;
  Status (*check)(std::string_view value);
};

Status CheckChainId(std::string_view v) {
  // CometBFT's limit (types/genesis.go MaxChainIDLen) and no spaces or control characters.
  if (v.size() > 50) return Status::InvalidArgument("longer than 50 characters");
  for (char c : v) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return Status::InvalidArgument("has a space or a control character");
    }
  }
  return Status::OK();
}

Status CheckBackend(std::string_view v) {
  if (v == kKeyringBackendFile || v == kKeyringBackendTest) return Status::OK();
  return Status::InvalidArgument("unknown backend");
}

Status CheckOutput(std::string_view v) {
  if (v == "text" || v == "json") return Status::OK();
  return Status::InvalidArgument("unknown output format");
}

Status CheckNode(std::string_view v) {
  Result<NodeUrl> url = ParseNodeUrl(v);
  return url.ok() ? Status::OK() : url.status();
}

const std::vector<KeySpec>& Specs() {
  static const auto* specs = new std::vector<KeySpec>{
      {"chain-id", "a chain id (at most 50 characters, no spaces), or \"\" for the node's",
       "The chain id txs are signed for; \"\" asks the node (/status).",
       &ClientConfig::chain_id, CheckChainId},
      {"keyring-backend", "\"file\" or \"test\"",
       "\"file\": keys in keyring.json, each sealed with its own passphrase.\n"
       "\"test\": keys in keyring-test.json, sealed with a fixed, public passphrase (no prompt):\n"
       "for a local dev chain only, never for keys that hold anything of value.",
       &ClientConfig::keyring_backend, CheckBackend},
      {"output", "\"text\" or \"json\"", "Output of the commands: \"text\" or \"json\".",
       &ClientConfig::output, CheckOutput},
      {"node", "http://HOST:PORT (or tcp://HOST:PORT)", "CometBFT's RPC address.",
       &ClientConfig::node, CheckNode},
  };
  return *specs;
}

const KeySpec* FindSpec(std::string_view key) {
  for (const KeySpec& s : Specs()) {
    if (key == s.name) return &s;
  }
  return nullptr;
}

std::string KnownKeys() {
  std::string out;
  for (const KeySpec& s : Specs()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

// A TOML basic string.
std::string Quote(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const std::vector<std::string>& ClientConfigKeys() {
  static const auto* keys = [] {
    auto* out = new std::vector<std::string>;
    for (const KeySpec& s : Specs()) out->push_back(s.name);
    return out;
  }();
  return *keys;
}

std::string ClientConfigPath(const std::string& home) {
  return (std::filesystem::path(home) / kClientConfigFileName).string();
}

Status SetClientConfigValue(ClientConfig* config, std::string_view key, std::string_view value) {
  const KeySpec* spec = FindSpec(key);
  if (spec == nullptr) {
    return Status::NotFound("unknown client config key '" + std::string(key) +
                            "' (known keys: " + KnownKeys() + ")");
  }
  if (Status s = spec->check(value); !s.ok()) {
    return Status::InvalidArgument("client config " + std::string(key) + " = \"" +
                                   std::string(value) + "\": " + s.message() + "; expected " +
                                   spec->form);
  }
  std::string stored(value);
  if (spec->field == &ClientConfig::node) stored = ParseNodeUrl(value)->text;
  config->*(spec->field) = std::move(stored);
  return Status::OK();
}

Result<std::string> GetClientConfigValue(const ClientConfig& config, std::string_view key) {
  const KeySpec* spec = FindSpec(key);
  if (spec == nullptr) {
    return Status::NotFound("unknown client config key '" + std::string(key) +
                            "' (known keys: " + KnownKeys() + ")");
  }
  return config.*(spec->field);
}

Result<ClientConfig> ParseClientConfig(std::string_view text, const std::string& path) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return Status::InvalidArgument(path + ": not valid TOML at " + where.str() + ": " +
                                   std::string(e.description()));
  }
  ClientConfig config;
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const KeySpec* spec = FindSpec(name);
    if (spec == nullptr) {
      return Status::InvalidArgument(path + ": unknown key '" + name + "' (known keys: " +
                                     KnownKeys() + ")");
    }
    if (!node.is_string()) {
      return Status::InvalidArgument(path + ": " + name + " must be a string: " + spec->form);
    }
    if (Status s = SetClientConfigValue(&config, name, *node.value<std::string>()); !s.ok()) {
      return Status::InvalidArgument(path + ": " + s.message());
    }
  }
  return config;
}

Result<ClientConfig> LoadClientConfig(const std::string& home) {
  const std::string path = ClientConfigPath(home);
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return ClientConfig{};
    return text.status();
  }
  return ParseClientConfig(*text, path);
}

std::string RenderClientConfig(const ClientConfig& config) {
  std::string out =
      "# kairosd client configuration (app/client/README.md). `kairosd config set KEY VALUE`\n"
      "# rewrites this file; a flag on the command line (--node, --output, ...) overrides it.\n";
  for (const KeySpec& s : Specs()) {
    out += "\n";
    std::istringstream comment(s.comment);
    for (std::string line; std::getline(comment, line);) out += "# " + line + "\n";
    out += std::string(s.name) + " = " + Quote(config.*(s.field)) + "\n";
  }
  return out;
}

Status SaveClientConfig(const std::string& home, const ClientConfig& config) {
  std::error_code ec;
  std::filesystem::create_directories(home, ec);
  if (ec) return Status::IOError("cannot create " + home + ": " + ec.message());
  return WriteFileAtomically(ClientConfigPath(home), RenderClientConfig(config), 0644);
}

}  // namespace kairos::client
