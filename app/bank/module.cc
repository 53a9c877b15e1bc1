#include "app/bank/module.h"

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "app/bank/genesis.h"
#include "app/bank/msg_server.h"
#include "app/module_list.h"
#include "app/pagination.h"
#include "app/proto_util.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "crypto/bech32.h"

namespace kairos::app::bank {

void BankModule::Provide(ModuleServices& services) {
  services.Provide<ante::BankKeeper>(&keeper_);
}

void BankModule::Bind(const ModuleList& list) {
  keeper_.set_blocked_recipients(list.module_accounts());
  authority_ = list.services().Find<AuthorityKeeper>();
}

std::vector<std::string> BankModule::module_accounts() const { return {FeeCollectorAddress()}; }

std::vector<std::string_view> BankModule::msg_type_urls() const {
  return {MsgSend::kTypeUrl, MsgUpdateParams::kTypeUrl};
}

bool BankModule::DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                           const ProtoPath& at, ante::Msg* out) const {
  if (type_url == MsgUpdateParams::kTypeUrl) {
    MsgUpdateParams msg;
    if (!DecodeMsgUpdateParams(reader, value, at, msg)) return false;
    *out = std::move(msg);
    return true;
  }
  MsgSend msg;
  if (!DecodeMsgSend(reader, value, at, msg)) return false;
  *out = std::move(msg);
  return true;
}

ante::TxStatus BankModule::ValidateBasic(const ante::Msg& msg) const {
  if (const auto* m = msg.As<MsgUpdateParams>()) return bank::ValidateBasic(*m);
  return ValidateMsgSend(msg.Get<MsgSend>());
}

ante::TxStatus BankModule::Handle(ante::Context& ctx, const ante::Msg& msg,
                                  std::size_t msg_index) const {
  if (const auto* m = msg.As<MsgUpdateParams>()) {
    return HandleUpdateParams(ctx, keeper_, authority_, *m, msg_index);
  }
  return keeper_.HandleMsgSend(ctx, msg.Get<MsgSend>(), msg_index);
}

Status BankModule::LoadState(const store::KvReader& state) { return keeper_.LoadParams(state); }

Result<std::unique_ptr<ModuleGenesis>> BankModule::ParseGenesis(
    const nlohmann::json* section) const {
  return bank::ParseGenesis(section);
}

Result<std::optional<nlohmann::json>> BankModule::ExportGenesis(
    const store::KvReader& state) const {
  return bank::ExportGenesis(state, keeper_);
}

Status BankModule::InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                               const GenesisContext&) const {
  return bank::InitGenesis(state, keeper_, *accounts_,
                           dynamic_cast<const GenesisState&>(genesis));
}

std::vector<std::string_view> BankModule::query_prefixes() const {
  return {"/cosmos.bank.v1beta1.Query/"};
}

namespace {

namespace bpb = cosmos::bank::v1beta1;

// The method's name, after the service prefix.
std::string_view MethodOf(std::string_view path) { return path.substr(path.rfind('/') + 1); }

QueryAnswer DataIsNot(const QueryRequest& req, std::string_view message) {
  return QueryAnswer::BadRequest(req.path, "data is not a " + std::string(message));
}

QueryAnswer InvalidAddress(const QueryRequest& req, std::string_view text) {
  return QueryAnswer::BadRequest(req.path,
                                 "invalid address \"" + ante::Printable(text, 128) + "\"");
}

QueryAnswer InvalidDenom(const QueryRequest& req, std::string_view denom) {
  return QueryAnswer::BadRequest(req.path,
                                 "invalid denom \"" + ante::Printable(denom, 128) + "\"");
}

QueryAnswer Answer(std::string key, const google::protobuf::MessageLite& response) {
  QueryAnswer a;
  a.key = std::move(key);
  a.value = SerializeDeterministic(response);
  return a;
}

void SetCoin(std::string_view denom, const ante::Uint256& amount,
             cosmos::base::v1beta1::Coin* out) {
  out->set_denom(std::string(denom));
  out->set_amount(ante::ToString(amount));
}

}  // namespace

Result<QueryAnswer> BankModule::Query(const QueryRequest& req) const {
  const std::string_view method = MethodOf(req.path);
  if (method == "Balance" || method == "SpendableBalanceByDenom") {
    // Kairos has no vesting accounts and no locked coins: what an account holds it may spend.
    // The locks module's deposits and bonds are not an exception: they are moved into the
    // escrow module account (locks/params.h EscrowAddress) when taken, so they are no longer
    // the depositor's balance. The two methods' messages have the same fields.
    bpb::QueryBalanceRequest q;
    if (!ParseProto(req.data, &q)) {
      return DataIsNot(req, method == "Balance" ? "QueryBalanceRequest"
                                                : "QuerySpendableBalanceByDenomRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.address());
    if (!address.ok()) return InvalidAddress(req, q.address());
    if (!ante::ValidDenom(q.denom())) return InvalidDenom(req, q.denom());
    auto amount = keeper_.GetBalance(*req.state, *address, q.denom());
    if (!amount.ok()) return amount.status();
    bpb::QueryBalanceResponse r;  // the same fields as QuerySpendableBalanceByDenomResponse
    SetCoin(q.denom(), *amount, r.mutable_balance());
    return Answer(BankKeeper::BalanceKey(*address, q.denom()), r);
  }
  if (method == "AllBalances" || method == "SpendableBalances") {
    // Spendable = all (see Balance). Paginated by denom over the address's balance keys
    // (app/pagination.h: a page costs its own size; an address holds few denoms anyway).
    bpb::QueryAllBalancesRequest q;  // QuerySpendableBalancesRequest: the same fields 1 and 2
    if (!ParseProto(req.data, &q)) {
      return DataIsNot(req, method == "AllBalances" ? "QueryAllBalancesRequest"
                                                    : "QuerySpendableBalancesRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.address());
    if (!address.ok()) return InvalidAddress(req, q.address());
    auto spec = ReadPageRequest(req.path, q.pagination());
    if (auto* bad = std::get_if<QueryAnswer>(&spec)) return std::move(*bad);
    bpb::QueryAllBalancesResponse r;  // QuerySpendableBalancesResponse: the same fields
    return AnswerPage(
        req, BankKeeper::BalancePrefix(*address), std::get<PageSpec>(spec),
        [&](std::string_view denom, std::string_view value) {
          auto amount = BankKeeper::DecodeAmount(value, "a balance");
          if (!amount.ok()) return amount.status();
          SetCoin(denom, *amount, r.add_balances());
          return Status::OK();
        },
        r, r.mutable_pagination());
  }
  if (method == "TotalSupply") {
    bpb::QueryTotalSupplyRequest q;
    if (!ParseProto(req.data, &q)) return DataIsNot(req, "QueryTotalSupplyRequest");
    auto spec = ReadPageRequest(req.path, q.pagination());
    if (auto* bad = std::get_if<QueryAnswer>(&spec)) return std::move(*bad);
    // In denom order. A denom whose coins were all burned keeps a supply record of 0 (genesis.h);
    // it takes its place in the page and the count, as a key the SDK's Paginate visits does,
    // but no coin (the SDK's Coins hold no zero amounts).
    bpb::QueryTotalSupplyResponse r;
    return AnswerPage(
        req, BankKeeper::kSupplyPrefix, std::get<PageSpec>(spec),
        [&](std::string_view denom, std::string_view value) {
          auto amount = BankKeeper::DecodeAmount(value, "the supply");
          if (!amount.ok()) return amount.status();
          if (*amount != 0) SetCoin(denom, *amount, r.add_supply());
          return Status::OK();
        },
        r, r.mutable_pagination());
  }
  if (method == "SupplyOf") {
    bpb::QuerySupplyOfRequest q;
    if (!ParseProto(req.data, &q)) return DataIsNot(req, "QuerySupplyOfRequest");
    if (!ante::ValidDenom(q.denom())) return InvalidDenom(req, q.denom());
    // A denom the chain does not have: 0 of it, as the SDK answers (proven absent).
    auto amount = keeper_.GetSupply(*req.state, q.denom());
    if (!amount.ok()) return amount.status();
    bpb::QuerySupplyOfResponse r;
    SetCoin(q.denom(), *amount, r.mutable_amount());
    return Answer(BankKeeper::SupplyKey(q.denom()), r);
  }
  if (method == "DenomMetadata") {
    bpb::QueryDenomMetadataRequest q;
    if (!ParseProto(req.data, &q)) return DataIsNot(req, "QueryDenomMetadataRequest");
    if (!ante::ValidDenom(q.denom())) return InvalidDenom(req, q.denom());
    QueryAnswer a;
    a.key = BankKeeper::MetadataKey(q.denom());
    std::string value;
    Status s = req.state->Get(a.key, &value);
    if (s.IsNotFound()) {
      // The SDK's gRPC NotFound, as Account answers a missing account (code 22); the proof,
      // when asked, is of the key's absence.
      a.code = ante::kKeyNotFound;
      a.log = "rpc error: code = NotFound desc = client metadata for denom " + q.denom();
      return a;
    }
    if (!s.ok()) return s;
    bpb::QueryDenomMetadataResponse r;
    if (!ParseProto(value, r.mutable_metadata())) {
      return Status::Corruption("denom metadata in the state are malformed");
    }
    a.value = SerializeDeterministic(r);
    return a;
  }
  if (method == "DenomsMetadata") {
    bpb::QueryDenomsMetadataRequest q;
    if (!ParseProto(req.data, &q)) return DataIsNot(req, "QueryDenomsMetadataRequest");
    auto spec = ReadPageRequest(req.path, q.pagination());
    if (auto* bad = std::get_if<QueryAnswer>(&spec)) return std::move(*bad);
    bpb::QueryDenomsMetadataResponse r;  // in base denom order
    return AnswerPage(
        req, BankKeeper::kMetadataPrefix, std::get<PageSpec>(spec),
        [&](std::string_view, std::string_view value) {
          if (!ParseProto(value, r.add_metadatas())) {
            return Status::Corruption("denom metadata in the state are malformed");
          }
          return Status::OK();
        },
        r, r.mutable_pagination());
  }
  if (method == "Params") {
    // The stored params of the queried height, proven by the params key (its absence proven
    // when the chain has none stored: the defaults).
    auto p = keeper_.ReadParams(*req.state);
    if (!p.ok()) return p.status();
    bpb::QueryParamsResponse r;
    r.mutable_params()->set_default_send_enabled(p->default_send_enabled);
    return Answer(std::string(BankKeeper::kParamsKey), r);
  }
  return Module::Query(req);
}

}  // namespace kairos::app::bank
