// kairosd: the Kairos node. `kairosd init`, `kairosd start`, `kairosd version`, and the client
// commands `keys`, `tx`, `query`, `genesis`, `status`, `config` and `bench` (app/client/).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "abci/server.h"
#include "app/client/cli_errors.h"
#include "app/client/commands.h"
#include "app/config.h"
#include "app/kairos_app.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/node_options.h"
#include "app/version.h"
#include "store/merkle_store.h"

namespace fs = std::filesystem;
using namespace kairos;

namespace {

constexpr int kExitUsage = 2;    // bad flags or config
constexpr int kExitFailure = 1;  // the node could not start

std::string DefaultHome() {
  const char* home = std::getenv("HOME");
  return (home != nullptr && *home != '\0') ? std::string(home) + "/.kairos" : ".kairos";
}

int RunInit(const std::string& home, bool force) {
  const fs::path config = fs::path(home) / "config.toml";
  std::error_code ec;
  if (fs::exists(config, ec) && !force) {
    std::cout << config.string() << " exists; leaving it as it is (--force overwrites)\n";
    return 0;
  }
  fs::create_directories(home, ec);
  if (ec) {
    std::cerr << "error: cannot create " << home << ": " << ec.message() << "\n";
    return kExitFailure;
  }
  std::ofstream out(config, std::ios::trunc);
  out << app::DefaultConfigToml();
  if (!out.flush()) {
    std::cerr << "error: cannot write " << config.string() << "\n";
    return kExitFailure;
  }
  std::cout << "wrote " << config.string() << "\n";
  return 0;
}

struct StartFlags {
  std::string abci_address;
  std::string log_level;
  std::string log_format;
};

int RunStart(const std::string& home, const StartFlags& flags) {
  const fs::path config_path = fs::path(home) / "config.toml";
  Result<app::Config> loaded = app::LoadConfig(config_path.string());
  if (!loaded.ok()) {
    std::cerr << "error: " << loaded.status().message() << "\n";
    return kExitUsage;
  }
  app::Config config = *loaded;
  if (!flags.abci_address.empty()) config.abci_address = flags.abci_address;
  if (!flags.log_level.empty()) config.log_level = flags.log_level;
  if (!flags.log_format.empty()) config.log_format = flags.log_format;
  if (Status s = app::ValidateConfig(config); !s.ok()) {
    std::cerr << "error: " << s.message() << "\n";
    return kExitUsage;
  }
  app::SetupLogging(config.log_level, config.log_format);
  for (const std::string& warning : config.warnings) app::Log()->warn("{}", warning);

  // Metrics first: a port that cannot be bound stops the node before it opens anything.
  std::shared_ptr<prometheus::Registry> registry;
  std::unique_ptr<app::Metrics> metrics;
  std::unique_ptr<app::MetricsExposer> exposer;
  if (!config.metrics_address.empty()) {
    Result<std::unique_ptr<app::MetricsExposer>> started =
        app::MetricsExposer::Start(config.metrics_address);
    if (!started.ok()) {
      app::Log()->critical("{}", started.status().message());
      return kExitFailure;
    }
    exposer = std::move(*started);
    registry = std::make_shared<prometheus::Registry>();
    metrics = std::make_unique<app::Metrics>(*registry);
    exposer->Register(registry);
  }

  const fs::path db_dir = fs::path(config.db_dir).is_absolute()
                              ? fs::path(config.db_dir)
                              : fs::path(home) / config.db_dir;
  const store::StoreOptions store_options = app::StoreOptionsFor(config, db_dir.string());
  const auto open_start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<store::MerkleStore>> db = store::MerkleStore::Open(store_options);
  if (!db.ok()) {
    app::Log()->critical("cannot open the store in {}: {}", db_dir.string(),
                         db.status().ToString());
    return kExitFailure;
  }
  app::Log()->info(
      "store at version {} in {}: opened in {:.1f} s, {} versions replayed from the last "
      "checkpoint",
      (*db)->version(), db_dir.string(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - open_start).count(),
      (*db)->replayed_at_open());
  app::AppOptions app_options = app::AppOptionsFor(config);
  app_options.metrics = metrics.get();
  Result<std::unique_ptr<app::KairosApp>> application =
      app::KairosApp::Open(std::move(*db), std::move(app_options));
  if (!application.ok()) {
    app::Log()->critical("cannot load committed state: {}", application.status().ToString());
    return kExitFailure;
  }
  app::Log()->info("kairosd {} (ABCI {}), home {}", kVersion, kAbciVersion, home);
  // Read at scrape time; unregistered (the exposer stopped) before the app is destroyed.
  std::shared_ptr<app::MempoolCollector> mempool_collector;
  std::shared_ptr<app::DiskUsageCollector> disk_collector;
  if (exposer) {
    mempool_collector = std::make_shared<app::MempoolCollector>((*application)->tx_pool());
    disk_collector = std::make_shared<app::DiskUsageCollector>(db_dir);
    exposer->Register(mempool_collector);
    exposer->Register(disk_collector);
    app::Log()->info("metrics at http://{}/metrics (port {})", config.metrics_address,
                     exposer->port());
  }

  abci::ServerOptions options;
  options.address = config.abci_address;
  options.max_frame_bytes = config.max_frame_bytes;
  options.max_pending_requests = config.max_pending_requests;
  options.io_threads = config.io_threads;
  options.query_threads = config.query_threads;
  options.observer = metrics.get();
  abci::Server server(**application, options);
  std::string error;
  if (!server.Listen(&error)) {
    app::Log()->critical("{}", error);
    exposer.reset();  // before the app goes
    return kExitFailure;
  }
  server.Run();
  exposer.reset();       // no scrape reads the pool from here on
  application->reset();  // closes the database
  app::Log()->info("stopped cleanly");
  spdlog::shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"kairosd: an ABCI++ application server for CometBFT", "kairosd"};
  cli.require_subcommand(1);
  cli.fallthrough();  // --home may also follow the subcommand: `kairosd init --home DIR`
  std::string home = DefaultHome();
  cli.add_option("--home", home, "Node home directory (config.toml, data/)")
      ->capture_default_str();

  auto* init = cli.add_subcommand("init", "Write a default config.toml into the home directory");
  bool force = false;
  init->add_flag("--force", force, "Overwrite an existing config.toml");

  auto* start = cli.add_subcommand("start", "Run the node (serves ABCI to CometBFT)");
  StartFlags flags;
  start->add_option("--abci-address", flags.abci_address,
                    "Override abci.address: tcp://HOST:PORT or unix:///PATH");
  start->add_option("--log-level", flags.log_level,
                    "Override log.level: trace|debug|info|warn|error|critical|off");
  start->add_option("--log-format", flags.log_format, "Override log.format: plain|json");

  auto* version = cli.add_subcommand("version", "Print the version and the tested CometBFT");

  // keys, tx, query, genesis, status, config: run as callbacks during parsing (a failure ends
  // the process with its code through ParseCommandLine).
  client::AddClientCommands(cli, home);

  // An unknown command or flag names itself and lists the commands (app/client/cli_errors.h).
  if (std::optional<int> exit_code = client::ParseCommandLine(cli, argc, argv)) return *exit_code;

  if (*init) return RunInit(home, force);
  if (*start) return RunStart(home, flags);
  if (*version) {
    std::cout << "kairosd " << kVersion << "\n"
              << "ABCI " << kAbciVersion << " (CometBFT v0.38 wire)\n"
              << "tested with CometBFT " << kCometBftVersion << "\n";
    return 0;
  }
  return 0;
}
