// Node configuration: config.toml under the node's home, read with toml++.
// Every key, its default and its meaning are in config.toml.example at the repository root;
// DefaultConfigToml() renders the same text for `kairosd init`.
// Value types; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "store/status.h"

namespace kairos::app {

struct Config {
  // [abci]
  std::string abci_address = "tcp://127.0.0.1:26658";
  std::size_t max_frame_bytes = 256u << 20;
  std::size_t max_pending_requests = 4096;
  std::size_t io_threads = 1;
  std::size_t query_threads = 1;  // 0: queries run on the application executor
  // [log]
  std::string log_level = "info";
  std::string log_format = "plain";
  // [db]
  std::string db_dir = "data";  // relative paths are taken from the home directory
  // [store]
  std::int64_t keep_recent = 100;
  std::int64_t prune_interval = 10;
  std::int64_t checkpoint_interval = 50;
  std::size_t page_cache_pages = 4000000;
  std::size_t block_cache_bytes = 128u << 20;
  std::size_t value_cache_bytes = 256u << 20;
  bool verify_on_open = true;
  std::int64_t recent_versions = 4;
  std::size_t rebuild_cache = 4;
  // [query]
  std::size_t simulate_max_tx_bytes = 1 << 20;
  std::size_t simulate_max_msgs = 1000;
  std::uint64_t simulate_max_gas = 100'000'000;
  std::size_t api_threads = 2;       // the gRPC and REST calls' worker threads
  std::size_t api_max_pending = 256;  // calls waiting or running at once; more: refused
  std::string cometbft_rpc = "http://127.0.0.1:26657";  // cosmos.base.tendermint's source
  // [tx]
  std::string min_gas_prices;  // "" accepts any fee; e.g. "0.025stake"
  std::size_t signature_threads = 2;
  std::vector<std::string> index_events;  // "type.key"; empty: every attribute is indexed
  // [mempool] (the app-side priority mempool; mempool/priority_mempool.h)
  std::size_t mempool_max_txs = 5000;
  std::size_t mempool_max_bytes = 1ull << 30;
  std::size_t mempool_max_tx_bytes = 1 << 20;
  std::size_t mempool_max_txs_per_sender = 64;
  std::size_t mempool_replace_bump_percent = 10;
  std::int64_t mempool_ttl_blocks = 0;       // 0 = off
  std::string mempool_ttl_duration = "0s";   // "0s" = off
  std::string mempool_recheck_budget = "200ms";
  std::int64_t mempool_parked_ttl_blocks = 20;  // 0 = never
  std::size_t mempool_max_parked_per_sender = 16;
  std::size_t mempool_max_parked = 1000;
  std::string mempool_regossip_interval = "10s";  // "0s": every ReapTxs returns the whole pool
  // [grpc] (app/api/grpc_server.h)
  std::string grpc_address = "127.0.0.1:9090";  // "" = no gRPC server
  std::size_t grpc_max_recv_msg_bytes = 10u << 20;
  // [api] (the REST gateway, the LCD; app/api/rest_server.h)
  std::string api_address = "127.0.0.1:1317";  // "" = no REST server
  bool api_enabled_unsafe_cors = false;
  std::size_t api_max_open_connections = 1000;
  std::size_t api_max_body_bytes = 10u << 20;
  // [metrics]
  std::string snapshot_dir = "snapshots";  // [state_sync]; relative to the home directory
  std::int64_t snapshot_interval = 0;      // 0 = no snapshots taken
  std::size_t snapshot_keep_recent = 2;
  std::size_t snapshot_chunk_bytes = 10u << 20;
  bool snapshot_corrupt_chunks_unsafe = false;  // test only

  std::string metrics_address;  // "" = no metrics endpoint; e.g. "127.0.0.1:26661"

  // What the file set that kairosd ignores, one message each (kairosd logs them at start):
  // keys that older versions read and that moved elsewhere (see ParseConfig).
  std::vector<std::string> warnings;
};

// A [mempool] duration ("0s" or "0" for none): nanoseconds, or InvalidArgument naming `key`.
Result<std::int64_t> ParseConfigDuration(const std::string& text, const std::string& key);

// Parses TOML text. Unknown keys and bad values are errors that name the key and the expected
// form. `origin` (a file name) prefixes the messages. store.max_key_bytes and
// store.max_value_bytes, which every config.toml that an older `kairosd init` wrote holds, are
// accepted with a warning that names where the setting moved (genesis app_state.store): they
// were only ever read at InitChain, so a chain that has started never depended on them, and
// refusing to start would break every upgraded node over a setting that changes nothing.
Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin);

// Reads and parses the file at `path`.
Result<Config> LoadConfig(const std::string& path);

// Checks values that flags may also set (address forms, log level and format).
Status ValidateConfig(const Config& config);

// The default config.toml, commented.
std::string DefaultConfigToml();

}  // namespace kairos::app
