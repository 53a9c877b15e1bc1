#include "app/bank/module.h"

#include "app/bank/genesis.h"
#include "app/bank/msg_server.h"
#include "app/module_list.h"
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

Result<QueryAnswer> BankModule::Query(const QueryRequest& req) const {
  const auto invalid_address = [&](std::string_view text) {
    return QueryAnswer::BadRequest(req.path,
                                   "invalid address \"" + ante::Printable(text, 128) + "\"");
  };
  if (req.path == "/cosmos.bank.v1beta1.Query/Balance") {
    cosmos::bank::v1beta1::QueryBalanceRequest q;
    if (!ParseProto(req.data, &q)) {
      return QueryAnswer::BadRequest(req.path, "data is not a QueryBalanceRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.address());
    if (!address.ok()) return invalid_address(q.address());
    if (!ante::ValidDenom(q.denom())) {
      return QueryAnswer::BadRequest(req.path,
                                     "invalid denom \"" + ante::Printable(q.denom(), 128) + "\"");
    }
    auto amount = keeper_.GetBalance(*req.state, *address, q.denom());
    if (!amount.ok()) return amount.status();
    cosmos::bank::v1beta1::QueryBalanceResponse r;
    r.mutable_balance()->set_denom(q.denom());
    r.mutable_balance()->set_amount(ante::ToString(*amount));
    QueryAnswer a;
    a.key = BankKeeper::BalanceKey(*address, q.denom());
    a.value = SerializeDeterministic(r);
    return a;
  }
  if (req.path == "/cosmos.bank.v1beta1.Query/AllBalances") {
    cosmos::bank::v1beta1::QueryAllBalancesRequest q;
    if (!ParseProto(req.data, &q)) {
      return QueryAnswer::BadRequest(req.path, "data is not a QueryAllBalancesRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.address());
    if (!address.ok()) return invalid_address(q.address());
    auto coins = keeper_.GetAllBalances(*req.state, *address);
    if (!coins.ok() && coins.status().code() == Status::Code::kInvalidArgument) {
      // The view is not of the latest version: the key index it scans is not versioned.
      return QueryAnswer::Error(
          ante::kInvalidHeight, "invalid height: AllBalances is answered at the latest height (" +
                                    std::to_string(req.latest_height) +
                                    ") only; use Balance per denom at past heights");
    }
    if (!coins.ok()) return coins.status();
    cosmos::bank::v1beta1::QueryAllBalancesResponse r;
    QueryAnswer a;
    a.proven_keys.emplace();
    for (const ante::Coin& c : coins->coins()) {
      auto* coin = r.add_balances();
      coin->set_denom(c.denom);
      coin->set_amount(ante::ToString(c.amount));
      a.proven_keys->push_back(BankKeeper::BalanceKey(*address, c.denom));
    }
    r.mutable_pagination()->set_total(static_cast<std::uint64_t>(coins->coins().size()));
    a.key = BankKeeper::BalancePrefix(*address);
    a.value = SerializeDeterministic(r);
    return a;
  }
  if (req.path == "/cosmos.bank.v1beta1.Query/Params") {
    // The stored params of the queried height, proven by the params key (its absence proven
    // when the chain has none stored: the defaults).
    auto p = keeper_.ReadParams(*req.state);
    if (!p.ok()) return p.status();
    cosmos::bank::v1beta1::QueryParamsResponse r;
    r.mutable_params()->set_default_send_enabled(p->default_send_enabled);
    QueryAnswer a;
    a.key = std::string(BankKeeper::kParamsKey);
    a.value = SerializeDeterministic(r);
    return a;
  }
  return Module::Query(req);
}

}  // namespace kairos::app::bank
