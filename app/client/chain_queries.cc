#include "app/client/chain_queries.h"

#include "ante/errors.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"

namespace kairos::client {

namespace {

// AllBalances pages are followed up to this many (a denom per entry; far beyond any real use).
constexpr int kMaxPages = 1000;

}  // namespace

Result<std::int64_t> QueryProto(RpcClient& rpc, std::string_view path,
                                const google::protobuf::MessageLite& request, std::int64_t height,
                                google::protobuf::MessageLite* out) {
  Result<AbciQueryResponse> r = rpc.AbciQuery(path, request.SerializeAsString(), height);
  if (!r.ok()) return r.status();
  if (r->code != 0) {
    std::string message = "code " + std::to_string(r->code);
    if (!r->codespace.empty()) message += " (" + r->codespace + ")";
    message += ": " + (r->log.empty() ? std::string("no log") : r->log);
    if (r->code == ante::kKeyNotFound) return Status::NotFound(message);
    return Status::InvalidArgument(message);
  }
  if (!out->ParseFromString(r->value)) {
    return Status::Corruption(std::string(path) + ": the node's answer is not a valid " +
                              out->GetTypeName());
  }
  return r->height;
}

Result<Account> QueryAccount(RpcClient& rpc, std::string_view address, std::int64_t height) {
  cosmos::auth::v1beta1::QueryAccountRequest request;
  request.set_address(std::string(address));
  cosmos::auth::v1beta1::QueryAccountResponse response;
  Result<std::int64_t> at = QueryProto(rpc, kAccountQueryPath, request, height, &response);
  if (!at.ok()) return at.status();
  if (response.account().type_url() != kBaseAccountTypeUrl) {
    return Status::Corruption("the account of " + std::string(address) + " has type '" +
                              response.account().type_url() + "', not a BaseAccount");
  }
  cosmos::auth::v1beta1::BaseAccount base;
  if (!base.ParseFromString(response.account().value())) {
    return Status::Corruption("the account of " + std::string(address) +
                              " is not a valid BaseAccount");
  }
  Account out;
  out.address = base.address();
  out.account_number = base.account_number();
  out.sequence = base.sequence();
  out.height = *at;
  if (base.has_pub_key()) {
    out.pub_key_type_url = base.pub_key().type_url();
    cosmos::crypto::secp256k1::PubKey key;  // ed25519's PubKey has the same layout (bytes key = 1)
    if (!key.ParseFromString(base.pub_key().value())) {
      return Status::Corruption("the public key of " + std::string(address) + " is not valid");
    }
    out.pub_key = key.key();
  }
  return out;
}

Result<CoinAmount> QueryBalance(RpcClient& rpc, std::string_view address, std::string_view denom,
                                std::int64_t height) {
  cosmos::bank::v1beta1::QueryBalanceRequest request;
  request.set_address(std::string(address));
  request.set_denom(std::string(denom));
  cosmos::bank::v1beta1::QueryBalanceResponse response;
  Result<std::int64_t> at = QueryProto(rpc, kBalanceQueryPath, request, height, &response);
  if (!at.ok()) return at.status();
  CoinAmount out{std::string(denom), "0"};
  if (response.has_balance() && !response.balance().amount().empty()) {
    out.amount = response.balance().amount();
  }
  return out;
}

Result<std::vector<CoinAmount>> QueryAllBalances(RpcClient& rpc, std::string_view address,
                                                 std::int64_t height) {
  std::vector<CoinAmount> out;
  std::string next_key;
  for (int page = 0; page < kMaxPages; ++page) {
    cosmos::bank::v1beta1::QueryAllBalancesRequest request;
    request.set_address(std::string(address));
    if (!next_key.empty()) request.mutable_pagination()->set_key(next_key);
    cosmos::bank::v1beta1::QueryAllBalancesResponse response;
    Result<std::int64_t> at = QueryProto(rpc, kAllBalancesQueryPath, request, height, &response);
    if (!at.ok()) return at.status();
    if (height == 0) height = *at;  // later pages read the same height as the first
    for (const auto& coin : response.balances()) out.push_back({coin.denom(), coin.amount()});
    next_key = response.pagination().next_key();
    if (next_key.empty()) return out;
  }
  return Status::Corruption("AllBalances of " + std::string(address) + ": more than " +
                            std::to_string(kMaxPages) + " pages");
}

Result<GasEstimate> Simulate(RpcClient& rpc, std::string_view tx_bytes) {
  cosmos::tx::v1beta1::SimulateRequest request;
  request.set_tx_bytes(std::string(tx_bytes));
  cosmos::tx::v1beta1::SimulateResponse response;
  Result<std::int64_t> at = QueryProto(rpc, kSimulatePath, request, 0, &response);
  if (!at.ok()) return at.status();
  return GasEstimate{response.gas_info().gas_wanted(), response.gas_info().gas_used()};
}

}  // namespace kairos::client
