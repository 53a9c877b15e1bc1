// RpcClient: a synchronous client for CometBFT's RPC (v0.38) over plain HTTP (Boost.Beast), one
// TCP connection per request, each with a deadline. GET `/<method>?arg=...` for reads (status,
// abci_query, tx) and a JSON-RPC 2.0 POST for broadcast_tx_sync (so a large tx is not limited by
// the URL length). Replies are decoded as CometBFT writes them: int64 as decimal strings, []byte
// as base64, hashes as upper-case hex, zero values omitted.
//
// Errors are one line that says where and what: "no CometBFT node at http://127.0.0.1:26657:
// connection refused", or the JSON-RPC error's message and data.
//
// Thread-compatible: one object per thread (the CLI uses it from the main thread only).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/status.h"

namespace kairos::client {

inline constexpr char kDefaultNodeUrl[] = "http://127.0.0.1:26657";

struct NodeUrl {
  std::string text;  // as it is printed in messages: "http://HOST:PORT[/path]"
  std::string host;
  std::string port;
  std::string base_path;  // "" or "/path" (no trailing slash)
};

// "http://HOST[:PORT][/path]" (port 80 when absent) or "tcp://HOST:PORT" (CometBFT's laddr
// form, treated as http). InvalidArgument for anything else, https included.
Result<NodeUrl> ParseNodeUrl(std::string_view url);

struct AbciQueryResponse {
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
  std::string value;  // raw bytes
  std::int64_t height = 0;
};

struct BroadcastResponse {
  std::string hash;  // upper-case hex, as CometBFT prints it
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
};

struct TxResponse {
  std::int64_t height = 0;
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
  std::int64_t gas_wanted = 0;
  std::int64_t gas_used = 0;
};

// A JSON value that CometBFT writes as an integer or a decimal string; 0 when absent or null.
// Throws std::exception (nlohmann's or std::runtime_error) for anything else.
std::int64_t JsonInt(const nlohmann::json& object, std::string_view key);

class RpcClient {
 public:
  explicit RpcClient(NodeUrl node, std::chrono::milliseconds timeout = std::chrono::seconds(10));

  const NodeUrl& node() const { return node_; }

  // GET /<method>?name=value&...: values are written as CometBFT's URI form wants them
  // ("\"text\"", 0xHEX, 123) and percent-encoded here. Returns the JSON-RPC "result".
  Result<nlohmann::json> Get(std::string_view method,
                             const std::vector<std::pair<std::string, std::string>>& args);
  // POST / with {"jsonrpc":"2.0","id":1,"method":...,"params":...}. Returns the "result".
  Result<nlohmann::json> Call(std::string_view method, const nlohmann::json& params);

  // /status node_info.network.
  Result<std::string> ChainId();
  // abci_query with prove=false; `height` 0 is the latest.
  Result<AbciQueryResponse> AbciQuery(std::string_view path, std::string_view data,
                                      std::int64_t height);
  Result<BroadcastResponse> BroadcastTxSync(std::string_view tx);
  // /tx?hash=0x...: nullopt while the tx is not (yet) in a block. `hash` is raw bytes.
  Result<std::optional<TxResponse>> FindTx(std::string_view hash);

 private:
  struct HttpReply {
    unsigned status = 0;
    std::string body;
  };
  Result<HttpReply> Exchange(bool post, const std::string& target, const std::string& body);
  Result<nlohmann::json> Decode(std::string_view method, const HttpReply& reply);

  NodeUrl node_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kairos::client
