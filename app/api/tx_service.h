// TxService: the parts of cosmos.tx.v1beta1.Service that are not a query of state: BroadcastTx,
// GetTx and GetTxsEvent (Simulate is a query, answered by the QueryRouter). They answer as the
// Cosmos SDK's tx service does (x/auth/tx/service.go), with the SDK's TxResponse.
//
// BroadcastTx, in one of two ways:
//   - **Directly into kairosd's mempool**, when CometBFT runs the app mempool (v0.40,
//     mempool.type = "app"; kairosd knows it once CometBFT has called InsertTx or ReapTxs). The
//     tx is checked on the application executor exactly as InsertTx checks it, and CometBFT
//     learns of it from ReapTxs and gossips it. No hop through CometBFT's RPC: CometBFT itself
//     says clients "should rely on app-specific broadcasting endpoints" in that mode.
//   - **Through CometBFT's RPC** (broadcast_tx_sync or broadcast_tx_async) otherwise: CometBFT's
//     own mempool must hear of the tx, or it would not gossip it.
// SYNC answers with the check's code and log (a refused tx is a TxResponse with its code, not a
// gRPC error, as in the SDK); ASYNC answers at once with the hash. BLOCK (removed from the SDK
// in 0.47) and UNSPECIFIED are refused with INVALID_ARGUMENT.
//
// At most `max_ingesting` directly ingested txs wait for or run their check on the executor at
// once (ASYNC answers before its check runs, so the backend's own bound does not cover it);
// past that a broadcast is refused with RESOURCE_EXHAUSTED, so a flood cannot queue work ahead
// of the next block.
//
// GetTx and GetTxsEvent read CometBFT's tx index (/tx, /tx_search) and the blocks' times
// (/header, cached: a block's time never changes), and decode each tx; a tx that cannot be
// printed as JSON (an Any of a type this node does not know) is answered without its decoded
// form rather than failing the whole answer. A page holds at most 100 txs (CometBFT's own cap).
// One tx_search runs at a time (a broad query makes CometBFT load and sort every match); a
// second is refused with RESOURCE_EXHAUSTED.
//
// Thread-safety: Call may run on any number of threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "app/api/api_backend.h"

namespace kairos::client {
class RpcClient;
}

namespace kairos::app::api {

inline constexpr std::string_view kTxService = "/cosmos.tx.v1beta1.Service/";

// The methods TxService answers ("/cosmos.tx.v1beta1.Service/BroadcastTx", ...).
bool IsTxServiceMethod(std::string_view method);

class TxService {
 public:
  // `rpc`: CometBFT's RPC address ("" answers UNAVAILABLE). `ingest`: direct ingestion (null:
  // none, every broadcast goes through CometBFT's RPC).
  TxService(std::string rpc, TxIngest ingest, std::size_t max_ingesting = 256)
      : rpc_(std::move(rpc)), ingest_(std::move(ingest)), max_ingesting_(max_ingesting) {}

  // REQUIRES: IsTxServiceMethod(method). Calls `done` exactly once: on the caller's thread, or
  // (a direct SYNC broadcast) on the thread that ran the check.
  void Call(std::string_view method, const std::string& request,
            std::function<void(CallResult)> done) const;

 private:
  void Broadcast(const std::string& request, std::function<void(CallResult)> done) const;
  CallResult GetTx(const std::string& request) const;
  CallResult GetTxsEvent(const std::string& request) const;

  // Hands `tx` to ingest_ within max_ingesting_; false when ingest_ does not take it.
  // `over_limit` is set when it was refused for the limit.
  bool Ingest(const std::string& tx, std::function<void(IngestResult)> done,
              bool* over_limit) const;
  // The SDK's RFC 3339 block time of `height`, from the cache or /header.
  std::string BlockTime(client::RpcClient& rpc, std::int64_t height) const;

  const std::string rpc_;
  const TxIngest ingest_;
  const std::size_t max_ingesting_;
  const std::shared_ptr<std::atomic<std::size_t>> ingesting_ =
      std::make_shared<std::atomic<std::size_t>>(0);
  mutable std::atomic<bool> searching_{false};
  mutable std::mutex times_mu_;
  mutable std::map<std::int64_t, std::string> times_;  // at most kMaxCachedTimes
};

}  // namespace kairos::app::api
