// QueryRouter: the app's ABCI queries, answered from committed state on any thread.
//
// Every query reads one store::StoreView: the version it asks for (height 0: the latest), seen
// through a LevelDB snapshot and the store's reader lock, never the executor's caches or the
// check state. So kairosd serves queries on the ABCI query threads (abci/README.md), beside
// the application executor: a slow or heavy query (a proof at a past height, a large
// simulation) cannot delay a block, and a query can neither fill nor evict a cache that blocks
// read. Paths and codes: app/README.md ("Query").
//
// Simulate runs the tx in simulate mode on a throwaway branch of the latest committed version
// (not of the check state: it does not see this node's pending txs, as a client that read its
// account's sequence from the same version expects), within QueryLimits: tx bytes and message
// count are checked before the tx is decoded, and the gas meter stops the run at the limit.
//
// Thread-safety: Handle may be called from any number of threads at once, also while the
// executor runs blocks. The chain facts are replaced whole (Publish, on the executor) under a
// mutex; everything else the router reads is immutable or internally synchronised (the store's
// views, the keepers, the runner, the signature cache, and of the mempool only its stats and a
// sender's pooled txs, read under the PriorityMempool's mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "app/module_list.h"
#include "app/tx_pool.h"
#include "app/tx_runner.h"
#include "store/merkle_store.h"
#include "tendermint/abci/types.pb.h"

namespace kairos::app {

// The limits of a Simulate query (config [query]).
struct QueryLimits {
  std::size_t simulate_max_tx_bytes = 1u << 20;  // checked before decoding
  std::size_t simulate_max_msgs = 1000;          // checked before any message runs
  // The gas meter's limit in simulate mode (the block's max gas, when lower, applies too): what
  // a simulation may cost this node.
  std::uint64_t simulate_max_gas = 100'000'000;
};

// What queries need of the chain besides its state: fixed at InitChain (or read back at open).
struct ChainFacts {
  std::string chain_id;
  store::KvLimits limits;
  std::int64_t max_block_gas = -1;
};

class QueryRouter {
 public:
  // REQUIRES: everything passed in outlives the router.
  QueryRouter(const store::MerkleStore& store, const ModuleList& modules,
              const TxRunner& runner, const TxPool& pool,
              QueryLimits limits);

  // The facts queries answer with from now on. Called by the executor (InitChain, open).
  void Publish(ChainFacts facts);

  tendermint::abci::ResponseQuery Handle(const tendermint::abci::RequestQuery& req) const;

 private:
  using Response = tendermint::abci::ResponseQuery;
  using Request = tendermint::abci::RequestQuery;

  std::shared_ptr<const ChainFacts> facts() const;
  // The view of a query's height (0: the latest), or the answer saying why there is none.
  Result<std::shared_ptr<const store::StoreView>> ViewAt(std::int64_t height,
                                                         Response* error) const;
  Response Store(const std::string& key, std::int64_t height, bool prove) const;
  Response ModuleQuery(const std::string& path, const Request& req) const;
  Response Simulate(const Request& req) const;
  Response MempoolStats() const;
  // /kairos.mempool.v1.Query/SenderTxs: one sender's pooled txs, ready or parked.
  Response MempoolSenderTxs(const std::string& data) const;
  // Adds the proof of `key` in `view` to `res` (or a note in its log why there is none).
  void AttachProof(const store::StoreView& view, const std::string& key, Response* res) const;

  const store::MerkleStore& store_;
  const ModuleList& modules_;
  const TxRunner& runner_;
  const TxPool& pool_;
  const QueryLimits limits_;
  mutable std::mutex facts_mu_;
  std::shared_ptr<const ChainFacts> facts_;  // guarded by facts_mu_
};

}  // namespace kairos::app
