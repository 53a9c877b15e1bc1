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
// GetTx and GetTxsEvent read CometBFT's tx index (/tx, /tx_search) and the blocks' times
// (/header), and decode each tx. A page holds at most 100 txs (CometBFT's own cap).
//
// Thread-safety: Call may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "app/api/api_backend.h"

namespace kairos::app::api {

inline constexpr std::string_view kTxService = "/cosmos.tx.v1beta1.Service/";

// The methods TxService answers ("/cosmos.tx.v1beta1.Service/BroadcastTx", ...).
bool IsTxServiceMethod(std::string_view method);

class TxService {
 public:
  // `rpc`: CometBFT's RPC address ("" answers UNAVAILABLE). `ingest`: direct ingestion (null:
  // none, every broadcast goes through CometBFT's RPC).
  TxService(std::string rpc, TxIngest ingest) : rpc_(std::move(rpc)), ingest_(std::move(ingest)) {}

  // REQUIRES: IsTxServiceMethod(method). Calls `done` exactly once: on the caller's thread, or
  // (a direct SYNC broadcast) on the thread that ran the check.
  void Call(std::string_view method, const std::string& request,
            std::function<void(CallResult)> done) const;

 private:
  void Broadcast(const std::string& request, std::function<void(CallResult)> done) const;
  CallResult GetTx(const std::string& request) const;
  CallResult GetTxsEvent(const std::string& request) const;

  const std::string rpc_;
  const TxIngest ingest_;
};

}  // namespace kairos::app::api
