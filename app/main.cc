// kairosd: the Kairos node. `kairosd init`, `kairosd start`, `kairosd export`, `kairosd version`, and the client
// commands `keys`, `tx`, `query`, `genesis`, `status`, `config` and `bench` (app/client/).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "abci/server.h"
#include "ante/errors.h"
#include "app/api/api_backend.h"
#include "app/api/grpc_server.h"
#include "app/api/rest_gateway.h"
#include "app/api/rest_server.h"
#include "app/client/cli_errors.h"
#include "app/client/commands.h"
#include "app/config.h"
#include "app/genesis.h"
#include "app/kairos_app.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/module_list.h"
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

  const fs::path db_dir = app::HomePath(home, config.db_dir);
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
  app_options.state_sync.dir = app::HomePath(home, config.snapshot_dir);
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

  // The gRPC server and the REST gateway, over committed state (app/api/README.md). A port
  // that cannot be bound stops the node before CometBFT can connect.
  app::api::BackendOptions backend_options;
  // BroadcastTx straight into the app mempool when CometBFT runs it (app/api/tx_service.h):
  // checked on the application executor, as CometBFT's InsertTx would be.
  backend_options.ingest = [&server, app = application->get()](
                               std::string tx,
                               std::function<void(app::api::IngestResult)> done) {
    if (!app->app_mempool_active()) return false;
    return server.RunOnExecutor([app, tx = std::move(tx), done = std::move(done)] {
      tendermint::abci::ResponseCheckTx r;
      try {
        r = app->IngestTx(tx);
      } catch (const std::exception& e) {  // as the dispatcher answers a failed CheckTx
        app::Log()->error("a directly broadcast tx's check failed: {}", e.what());
        r.set_code(1);  // the SDK's "internal"
        r.set_codespace(ante::kCodespaceSdk);
        r.set_log(std::string("internal error: ") + e.what());
      }
      done(app::api::IngestResult{r.code(), r.codespace(), r.log(), r.info(), r.gas_wanted(),
                                  r.gas_used()});
    });
  };
  backend_options.threads = config.api_threads;
  backend_options.max_pending = config.api_max_pending;
  backend_options.max_request_bytes = std::max(config.grpc_max_recv_msg_bytes,
                                               config.api_max_body_bytes);
  backend_options.minimum_gas_price = config.min_gas_prices;
  backend_options.pruning_keep_recent = config.keep_recent;
  backend_options.cometbft_rpc = config.cometbft_rpc;
  std::optional<app::api::ApiBackend> backend;
  std::unique_ptr<app::api::GrpcServer> grpc_server;
  if (!config.grpc_address.empty() || !config.api_address.empty()) {
    backend.emplace((*application)->query_router(), backend_options);
  }
  if (!config.grpc_address.empty()) {
    app::api::GrpcOptions grpc_options;
    grpc_options.address = config.grpc_address;
    grpc_options.max_recv_msg_bytes = config.grpc_max_recv_msg_bytes;
    Result<std::unique_ptr<app::api::GrpcServer>> started =
        app::api::GrpcServer::Start(*backend, grpc_options);
    if (!started.ok()) {
      app::Log()->critical("{}", started.status().message());
      backend.reset();
      exposer.reset();
      return kExitFailure;
    }
    grpc_server = std::move(*started);
  }
  std::unique_ptr<app::api::RestGateway> rest_gateway;
  std::unique_ptr<app::api::RestServer> rest_server;
  if (!config.api_address.empty()) {
    Result<std::unique_ptr<app::api::RestGateway>> gateway = app::api::RestGateway::Create(*backend);
    if (!gateway.ok()) {  // the routes come from compiled-in descriptors: a build error
      app::Log()->critical("REST gateway: {}", gateway.status().message());
      grpc_server.reset();
      backend.reset();
      exposer.reset();
      return kExitFailure;
    }
    rest_gateway = std::move(*gateway);
    app::api::RestServerOptions rest_options;
    rest_options.address = config.api_address;
    rest_options.max_connections = config.api_max_open_connections;
    rest_options.max_body_bytes = config.api_max_body_bytes;
    rest_options.enabled_unsafe_cors = config.api_enabled_unsafe_cors;
    rest_server = std::make_unique<app::api::RestServer>(*rest_gateway, rest_options);
    if (Status s = rest_server->Start(); !s.ok()) {
      app::Log()->critical("api.address: cannot listen on {}: {}", config.api_address,
                           s.message());
      rest_server.reset();
      grpc_server.reset();
      backend.reset();
      exposer.reset();  // before the app goes
      return kExitFailure;
    }
    app::Log()->info("REST server (LCD) listening on http://{} (port {}){}", config.api_address,
                     rest_server->port(),
                     config.api_enabled_unsafe_cors ? ", CORS open to every origin" : "");
  }

  std::string error;
  if (!server.Listen(&error)) {
    app::Log()->critical("{}", error);
    rest_server.reset();
    grpc_server.reset();
    backend.reset();
    exposer.reset();  // before the app goes
    return kExitFailure;
  }
  server.Run();
  if (rest_server) rest_server->Stop();      // waits for the requests already read
  if (grpc_server) grpc_server->Shutdown();  // waits for its running calls
  backend.reset();       // runs the calls still queued, then stops its workers
  exposer.reset();       // no scrape reads the pool from here on
  application->reset();  // closes the database
  app::Log()->info("stopped cleanly");
  spdlog::shutdown();
  return 0;
}

// `kairosd export`: the genesis document of a new chain that starts from the committed state
// at a kept height (app::ExportGenesisAt), on stdout. Opens the store itself, so the node must
// be stopped (LevelDB's lock says so otherwise). A past height's whole state is read into
// memory.
int RunExport(const std::string& home, std::int64_t height, const std::string& genesis_flag) {
  const fs::path config_path = fs::path(home) / "config.toml";
  Result<app::Config> config = app::LoadConfig(config_path.string());
  if (!config.ok()) {
    std::cerr << "error: " << config.status().message() << "\n";
    return kExitUsage;
  }
  const fs::path genesis_path =
      genesis_flag.empty() ? fs::path(home) / "cometbft" / "config" / "genesis.json" : fs::path(genesis_flag);
  nlohmann::json base = nlohmann::json::object();
  std::error_code ec;
  if (fs::exists(genesis_path, ec)) {
    std::ifstream in(genesis_path);
    try {
      base = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      std::cerr << "error: " << genesis_path.string() << " is not JSON: " << e.what() << "\n";
      return kExitUsage;
    }
  } else if (!genesis_flag.empty()) {
    std::cerr << "error: " << genesis_path.string() << " does not exist\n";
    return kExitUsage;
  }
  const fs::path db_dir = app::HomePath(home, config->db_dir);
  if (!fs::exists(db_dir, ec)) {
    std::cerr << "error: no store in " << db_dir.string() << "\n";
    return kExitFailure;
  }
  app::SetupLogging("error", "plain");  // stdout carries the document only
  Result<std::unique_ptr<store::MerkleStore>> db =
      store::MerkleStore::Open(app::StoreOptionsFor(*config, db_dir.string()));
  if (!db.ok()) {
    const std::string why = db.status().ToString();
    if (why.find("lock") != std::string::npos) {
      std::cerr << "error: the store in " << db_dir.string()
                << " is locked: is the node running? Stop it before exporting (" << why
                << ")\n";
    } else {
      std::cerr << "error: cannot open the store in " << db_dir.string() << ": " << why << "\n";
    }
    return kExitFailure;
  }
  if ((*db)->version() == 0) {
    std::cerr << "error: the store in " << db_dir.string() << " has no committed block\n";
    return kExitFailure;
  }
  auto modules = app::ModuleList::Chain();
  auto doc = app::ExportGenesisAt(**db, height, base, *modules);
  if (!doc.ok()) {
    // A height the store does not keep is the operator's mistake: the message says it all.
    const Status& why = doc.status();
    std::cerr << "error: "
              << (why.code() == Status::Code::kInvalidArgument ? why.message() : why.ToString())
              << "\n";
    return kExitFailure;
  }
  std::cout << doc->dump(2) << "\n";
  return std::cout.flush() ? 0 : kExitFailure;
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

  auto* export_cmd = cli.add_subcommand(
      "export",
      "Write the genesis.json of a new chain that starts from the committed state (stdout); "
      "the node must be stopped");
  std::int64_t export_height = 0;
  std::string export_genesis;
  export_cmd->add_option("--height", export_height,
                         "The committed height to export (default: the latest; any height the "
                         "store still keeps, see store.keep_recent; a past height's whole state "
                         "is held in memory)");
  export_cmd->add_option("--genesis", export_genesis,
                         "CometBFT's genesis.json to take genesis_time, consensus_params and "
                         "validators from (default: <home>/cometbft/config/genesis.json, if it "
                         "exists)");

  auto* version = cli.add_subcommand("version", "Print the version and the tested CometBFT");

  // keys, tx, query, genesis, status, config: run as callbacks during parsing (a failure ends
  // the process with its code through ParseCommandLine).
  client::AddClientCommands(cli, home);

  // An unknown command or flag names itself and lists the commands (app/client/cli_errors.h).
  if (std::optional<int> exit_code = client::ParseCommandLine(cli, argc, argv)) return *exit_code;

  if (*init) return RunInit(home, force);
  if (*start) return RunStart(home, flags);
  if (*export_cmd) return RunExport(home, export_height, export_genesis);
  if (*version) {
    std::cout << "kairosd " << kVersion << "\n"
              << "ABCI " << kAbciVersion << " (CometBFT v0.38 wire)\n"
              << "tested with CometBFT " << kCometBftVersion << "\n";
    return 0;
  }
  return 0;
}
