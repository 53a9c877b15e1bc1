// `kairosd snapshots list|export|restore|dump|load|delete`: the state sync snapshots of a node's
// home (config state_sync.snapshot_dir), by hand, as the Cosmos SDK's `snapshots` command. The
// node must be stopped for export and restore (they open its store).
// Commands run as CLI11 callbacks (see commands.h).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace kairos::client {

void AddSnapshotCommands(CLI::App& app, const std::string& home);

}  // namespace kairos::client
