// The commands that read CometBFT itself (its RPC, through RpcClient), as the Cosmos SDK's
// `simd status` and `simd query tx|block|txs` do:
//
//   kairosd status                       chain id, height, block and app hash, catching up, the
//                                        node's CometBFT version and the app's name and version
//   kairosd query tx HASH                a tx in a block: height, code, log, gas, events
//   kairosd query block [HEIGHT]         a block (the latest by default): hash, time, proposer,
//                                        app hash, its txs' hashes
//   kairosd query txs --query "transfer.recipient='kairos1...'" [--page N] [--limit N]
//                     [--order-by asc|desc]    txs whose events match (CometBFT's tx_search)
//
// Each takes --node (default: client.toml's), --output text|json. Text goes to stdout one field
// a line; JSON is the SDK's shape where one exists (TxResponse, the search result) and
// CometBFT's own otherwise (status, block). Errors: exit 2 for a bad argument (hash, height,
// page), exit 1 when the node cannot answer or has no such tx or block (app/client/README.md).
//
// Main thread only.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace kairos::client {

// `kairosd status` on `app`; `tx`, `block`, `txs` on `query`.
void AddStatusCommand(CLI::App& app);
void AddNodeQueryCommands(CLI::App& query);

}  // namespace kairos::client
