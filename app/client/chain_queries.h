// The node's Cosmos SDK queries, as the CLI needs them: each encodes its request proto, sends it
// as a CometBFT abci_query on its gRPC-style path, and decodes the response proto.
//   /cosmos.auth.v1beta1.Query/Account      -> BaseAccount (number, sequence, public key)
//   /cosmos.bank.v1beta1.Query/Balance      -> one coin
//   /cosmos.bank.v1beta1.Query/AllBalances  -> every coin (follows pagination)
//   /cosmos.tx.v1beta1.Service/Simulate     -> gas used
// and QueryProto for any other path (the locks queries: app/client/locks_commands.cc).
// A non-zero answer code becomes a Status whose message is "code N (codespace): log" (code 22,
// "key not found", is NotFound), so the node's own text reaches the user.
// Thread-compatible, like RpcClient.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message_lite.h>

#include "app/client/rpc_client.h"
#include "store/status.h"

namespace kairos::client {

inline constexpr std::string_view kAccountQueryPath = "/cosmos.auth.v1beta1.Query/Account";
inline constexpr std::string_view kBalanceQueryPath = "/cosmos.bank.v1beta1.Query/Balance";
inline constexpr std::string_view kAllBalancesQueryPath = "/cosmos.bank.v1beta1.Query/AllBalances";
inline constexpr std::string_view kSimulatePath = "/cosmos.tx.v1beta1.Service/Simulate";
inline constexpr std::string_view kBaseAccountTypeUrl = "/cosmos.auth.v1beta1.BaseAccount";

struct Account {
  std::string address;  // bech32
  std::uint64_t account_number = 0;
  std::uint64_t sequence = 0;
  std::string pub_key_type_url;  // empty until the account has signed a tx
  std::string pub_key;           // raw key bytes
  std::int64_t height = 0;       // the height the answer is for
};

struct CoinAmount {
  std::string denom;
  std::string amount;  // decimal
};

struct GasEstimate {
  std::uint64_t gas_wanted = 0;
  std::uint64_t gas_used = 0;
};

// Sends `request` as an abci_query on `path` at `height` (0: the latest) and parses the answer
// into `out`. Returns the height the answer is for.
Result<std::int64_t> QueryProto(RpcClient& rpc, std::string_view path,
                                const google::protobuf::MessageLite& request, std::int64_t height,
                                google::protobuf::MessageLite* out);

// `height` 0 is the latest committed height.
Result<Account> QueryAccount(RpcClient& rpc, std::string_view address, std::int64_t height);
Result<CoinAmount> QueryBalance(RpcClient& rpc, std::string_view address, std::string_view denom,
                                std::int64_t height);
Result<std::vector<CoinAmount>> QueryAllBalances(RpcClient& rpc, std::string_view address,
                                                 std::int64_t height);
// Runs a signed TxRaw in simulate mode on the node's latest state.
Result<GasEstimate> Simulate(RpcClient& rpc, std::string_view tx_bytes);

}  // namespace kairos::client
