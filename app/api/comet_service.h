// CometService: cosmos.base.tendermint.v1beta1.Service, the node and its chain as CometBFT
// reports them. kairosd reads them from its CometBFT's RPC ([query] cometbft_rpc) on a backend
// worker thread: GetNodeInfo and GetSyncing from /status, the blocks from /block, the
// validator sets from /validators. ABCIQuery is answered by the QueryRouter, as CometBFT's own
// abci_query would be.
//
// Every answer is built from CometBFT's JSON, field by field, into the SDK's messages (hex
// hashes to bytes, RFC 3339 times to Timestamps, consensus addresses to bech32 with the valcons
// prefix). A CometBFT that cannot be reached is UNAVAILABLE, naming the address; an answer
// CometBFT refuses (a height it does not have) is INVALID_ARGUMENT with its message.
//
// Thread-safety: Call may run on any number of threads at once (one RpcClient per call).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "app/api/api_backend.h"

namespace kairos::app::api {

inline constexpr std::string_view kTendermintService = "/cosmos.base.tendermint.v1beta1.Service/";

class CometService {
 public:
  // `rpc`: CometBFT's RPC address ("http://127.0.0.1:26657"; "" answers UNAVAILABLE).
  CometService(const QueryRouter& router, std::string rpc) : router_(router), rpc_(std::move(rpc)) {}

  // REQUIRES: `method` starts with kTendermintService.
  CallResult Call(std::string_view method, const std::string& request) const;

 private:
  const QueryRouter& router_;
  const std::string rpc_;
};

}  // namespace kairos::app::api
