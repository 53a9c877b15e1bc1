// The app_state of CometBFT's genesis.json, as Kairos reads it in InitChain: one section per
// module of the chain's list (app/app_modules.cc), named by the module, in the format its
// genesis.h gives (app/auth/genesis.h, app/bank/genesis.h, app/locks/genesis.h, ...), plus
//
//    "store": {"max_key_bytes": "4096", "max_value_bytes": "4194304"}
//
// `store` holds the chain-wide size limits of a key and a value that a tx may write (1 to
// 65536, 1 to 67108864). They are consensus params: InitChain writes them into the state, and
// every node reads them from there; no node's config.toml plays a part (two validators whose
// configs differed would compute different app hashes).
//
// Every part is optional: an empty app_state (CometBFT's default) is a chain with the default
// params, the denom "stake" and no accounts. Unknown keys are errors (a typo must not silently
// become a default). Numbers may be JSON numbers or decimal strings.
//
// Thread-safe (pure parsing).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "app/module.h"
#include "store/kv.h"
#include "store/status.h"

namespace kairos::store {
class MerkleStore;
}  // namespace kairos::store

namespace kairos::app {

class ModuleList;

// The largest key and value size limits a chain may set (app_state.store's ranges).
inline constexpr std::size_t kMaxKeyBytesLimit = 65536;
inline constexpr std::size_t kMaxValueBytesLimit = 64u << 20;

struct Genesis {
  store::KvLimits kv_limits;  // app_state.store (default: store::KvLimits's)
  // Each module's part, parallel to the chain's module list (app/app_modules.cc).
  std::vector<std::shared_ptr<const ModuleGenesis>> modules;

  // The part of type T (e.g. bank::GenesisState); throws std::logic_error when none is.
  template <class T>
  const T& Of() const {
    for (const auto& m : modules) {
      if (const auto* t = dynamic_cast<const T*>(m.get())) return *t;
    }
    throw std::logic_error("no module genesis of the requested type");
  }
};

// InvalidArgument naming the JSON path of the first problem, e.g.
// "app_state.bank.balances[1].coins[0].amount: not a decimal integer: \"-5\"".
// Parsed by the chain's modules (ModuleList::ForDecoding()), or by `modules`.
Result<Genesis> ParseGenesis(std::string_view app_state_json);
Result<Genesis> ParseGenesis(std::string_view app_state_json, const ModuleList& modules);

// The app_state of a committed state (the inverse of ParseGenesis + InitChain): "store" from
// the state's limits, then each module's section (Module::ExportGenesis, in list order; a
// module answering nullopt is left out). InitChain of it, with the same chain id and consensus
// params, rebuilds every key and value except meta/initial_height.
Result<nlohmann::json> ExportAppState(const store::KvReader& state, const ModuleList& modules);

// A CometBFT genesis document for a new chain that starts from `state`, committed at
// `height`: `base` (the node's config/genesis.json; it gives genesis_time and the consensus
// params, and the validators when the chain has no poa section) with chain_id from the state,
// initial_height = height + 1, app_hash "", app_state = ExportAppState, and
// consensus_params.block.max_gas from the state. With a poa section the validators are left
// empty: InitChain then answers the poa module's set (app/poa/genesis.h).
Result<nlohmann::json> ExportGenesisDocument(const store::KvReader& state, std::int64_t height,
                                             const nlohmann::json& base,
                                             const ModuleList& modules);

// `kairosd export`: ExportGenesisDocument of the store's committed `height` (0: the latest),
// any height the store still keeps. The latest version is read in place; an older one is
// walked (StoreView::ForEachLeaf, its tree rebuilt when it is no longer in memory) into a
// store::MapReader, which holds the whole state in memory: an offline command's affair (the
// node is stopped). InvalidArgument for a height that is not committed yet, or below the
// oldest kept one (naming it, and store.keep_recent, which decides how many are kept).
// REQUIRES: nothing else uses `store` meanwhile (the executor's thread, or a stopped node).
Result<nlohmann::json> ExportGenesisAt(const store::MerkleStore& store, std::int64_t height,
                                       const nlohmann::json& base, const ModuleList& modules);

}  // namespace kairos::app
