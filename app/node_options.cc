#include "app/node_options.h"

#include <filesystem>

#include "app/genesis.h"

namespace kairos::app {

store::StoreOptions StoreOptionsFor(const Config& config, const std::string& dir) {
  store::StoreOptions o;
  o.dir = dir;
  // The store accepts anything up to the largest limits a chain can set; the chain's own limits
  // (from its state) are applied by the app.
  o.limits.max_key_bytes = kMaxKeyBytesLimit;
  o.limits.max_value_bytes = kMaxValueBytesLimit;
  o.keep_recent = config.keep_recent;
  o.prune_interval = config.prune_interval;
  o.checkpoint_interval = config.checkpoint_interval;
  o.page_cache_pages = config.page_cache_pages;
  o.block_cache_bytes = config.block_cache_bytes;
  o.value_cache_bytes = config.value_cache_bytes;
  o.verify_on_open = config.verify_on_open;
  o.recent_versions = config.recent_versions;
  o.rebuild_cache = config.rebuild_cache;
  return o;
}

std::string HomePath(const std::string& home, const std::string& path) {
  const std::filesystem::path p(path);
  return p.is_absolute() ? p.string() : (std::filesystem::path(home) / p).string();
}

AppOptions AppOptionsFor(const Config& config) {
  AppOptions o;
  o.min_gas_prices = *ante::ParseGasPrices(config.min_gas_prices);  // validated
  o.signature_threads = config.signature_threads;
  o.index_events = config.index_events;
  o.query.simulate_max_tx_bytes = config.simulate_max_tx_bytes;
  o.query.simulate_max_msgs = config.simulate_max_msgs;
  o.query.simulate_max_gas = config.simulate_max_gas;
  o.mempool.max_txs = config.mempool_max_txs;
  o.mempool.max_bytes = config.mempool_max_bytes;
  o.mempool.max_tx_bytes = config.mempool_max_tx_bytes;
  o.mempool.max_txs_per_sender = config.mempool_max_txs_per_sender;
  o.mempool.max_parked_per_sender = config.mempool_max_parked_per_sender;
  o.mempool.max_parked = config.mempool_max_parked;
  o.mempool.replace_bump_percent = static_cast<std::uint32_t>(config.mempool_replace_bump_percent);
  o.mempool.ttl_blocks = config.mempool_ttl_blocks;
  o.mempool_parked_ttl_blocks = config.mempool_parked_ttl_blocks;
  // All three validated by ValidateConfig.
  o.mempool.ttl_nanos = *ParseConfigDuration(config.mempool_ttl_duration, "mempool.ttl_duration");
  o.mempool_recheck_budget_nanos =
      *ParseConfigDuration(config.mempool_recheck_budget, "mempool.recheck_budget");
  o.mempool_regossip_interval_nanos =
      *ParseConfigDuration(config.mempool_regossip_interval, "mempool.regossip_interval");
  o.state_sync.snapshot_interval = config.snapshot_interval;
  o.state_sync.keep_recent = config.snapshot_keep_recent;
  o.state_sync.chunk_bytes = config.snapshot_chunk_bytes;
  o.state_sync.corrupt_chunks = config.snapshot_corrupt_chunks_unsafe;
  return o;
}

}  // namespace kairos::app
