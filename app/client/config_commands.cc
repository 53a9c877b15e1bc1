#include "app/client/config_commands.h"

#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/client/cli_util.h"
#include "app/client/client_config.h"

namespace kairos::client {

namespace {

struct ConfigFlags {
  std::vector<std::string> args;
  std::string output;  // "" = client.toml's
};

// The file as it is, not merged with --keyring-backend: `config` shows what is stored.
ClientConfig Stored(const std::string& home) { return Take(LoadClientConfig(home), kExitUsage); }

void RunShow(const std::string& home, const ConfigFlags& f) {
  const ClientConfig config = Stored(home);
  if (IsJson(f.output)) {
    OrderedJson out = OrderedJson::object();
    for (const std::string& key : ClientConfigKeys()) {
      out[key] = *GetClientConfigValue(config, key);
    }
    PrintJson(out);
    return;
  }
  for (const std::string& key : ClientConfigKeys()) {
    std::cout << key << " = \"" << *GetClientConfigValue(config, key) << "\"\n";
  }
}

void RunGet(const std::string& home, const ConfigFlags& f) {
  std::cout << Take(GetClientConfigValue(Stored(home), f.args.at(0)), kExitUsage) << "\n";
}

void RunSet(const std::string& home, const ConfigFlags& f) {
  // `config set client KEY VALUE` (the SDK's form) or `config set KEY VALUE`.
  std::vector<std::string> args = f.args;
  if (args.size() == 3 && args[0] == "client") args.erase(args.begin());
  if (args.size() != 2) {
    Fail(kExitUsage, "config set takes KEY VALUE, e.g. `kairosd config set node "
                     "http://127.0.0.1:26657` (keys: chain-id, keyring-backend, output, node)");
  }
  ClientConfig config = Stored(home);
  Check(SetClientConfigValue(&config, args[0], args[1]), kExitUsage);
  Check(SaveClientConfig(home, config));
  std::cout << args[0] << " = \"" << *GetClientConfigValue(config, args[0]) << "\" in "
            << ClientConfigPath(home) << "\n";
}

}  // namespace

void AddConfigCommands(CLI::App& app, const std::string& home) {
  auto f = std::make_shared<ConfigFlags>();
  CLI::App* config = app.add_subcommand(
      "config", "Show or set the client config (<home>/client.toml): node, chain-id, output, "
                "keyring-backend");
  AddOutputFlag(config, &f->output);
  config->callback([&home, config, f] {
    if (config->get_subcommands().empty()) RunShow(home, *f);
  });

  CLI::App* get = config->add_subcommand("get", "Print one value: kairosd config get node");
  get->add_option("key", f->args, "chain-id, keyring-backend, output or node")
      ->required()
      ->expected(1);
  get->callback([&home, f] { RunGet(home, *f); });

  CLI::App* set = config->add_subcommand(
      "set", "Set one value: kairosd config set node http://127.0.0.1:26657");
  set->add_option("args", f->args, "KEY VALUE (or client KEY VALUE, as the SDK)")
      ->required()
      ->expected(2, 3);
  set->callback([&home, f] { RunSet(home, *f); });
}

}  // namespace kairos::client
