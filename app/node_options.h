// The store's and the app's options from a node's config.toml (what `kairosd start` opens them
// with), in one place so that tests open a node exactly as kairosd does. Pure functions;
// thread-safe.
#pragma once

#include <string>

#include "app/config.h"
#include "app/kairos_app.h"
#include "store/merkle_store.h"

namespace kairos::app {

// The store in `dir` as `config` sets it up ([store]).
store::StoreOptions StoreOptionsFor(const Config& config, const std::string& dir);

// A config path (db.dir, state_sync.snapshot_dir): absolute, or relative to `home`.
std::string HomePath(const std::string& home, const std::string& path);

// The app's options from `config` ([tx], [query], [mempool], [state_sync] but for its
// directory, which is relative to the home: HomePath); no metrics.
// REQUIRES: ValidateConfig(config) is OK (the durations and gas prices parse).
AppOptions AppOptionsFor(const Config& config);

}  // namespace kairos::app
