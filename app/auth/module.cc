#include "app/auth/module.h"

#include <utility>
#include <variant>

#include "app/auth/genesis.h"
#include "app/auth/msg_server.h"
#include "app/auth/msgs.h"
#include "app/module_list.h"
#include "app/pagination.h"
#include "app/proto_util.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "crypto/bech32.h"
#include "kairos/auth/v1/query.pb.h"

namespace kairos::app::auth {

void AuthModule::Provide(ModuleServices& services) {
  services.Provide<ante::AccountKeeper>(&keeper_);
}

void AuthModule::Bind(const ModuleList& list) {
  authority_ = list.services().Find<AuthorityKeeper>();
}

std::vector<std::string_view> AuthModule::msg_type_urls() const {
  return {MsgUpdateParams::kTypeUrl};
}

bool AuthModule::DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                           const ProtoPath& at, ante::Msg* out) const {
  return auth::DecodeMsg(reader, type_url, value, at, out);
}

ante::TxStatus AuthModule::ValidateBasic(const ante::Msg& msg) const {
  if (const auto* m = msg.As<MsgUpdateParams>()) return auth::ValidateBasic(*m);
  return Module::ValidateBasic(msg);
}

ante::TxStatus AuthModule::Handle(ante::Context& ctx, const ante::Msg& msg,
                                  std::size_t msg_index) const {
  if (const auto* m = msg.As<MsgUpdateParams>()) {
    return HandleUpdateParams(ctx, keeper_, authority_, *m, msg_index);
  }
  return Module::Handle(ctx, msg, msg_index);
}

Result<std::unique_ptr<ModuleGenesis>> AuthModule::ParseGenesis(
    const nlohmann::json* section) const {
  return auth::ParseGenesis(section);
}

Status AuthModule::InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                               const GenesisContext&) const {
  return auth::InitGenesis(state, keeper_, dynamic_cast<const GenesisState&>(genesis));
}

Result<std::optional<nlohmann::json>> AuthModule::ExportGenesis(
    const store::KvReader& state) const {
  return auth::ExportGenesis(state, keeper_);
}

Status AuthModule::LoadState(const store::KvReader& state) { return keeper_.LoadParams(state); }

Status AuthModule::PreBlock(store::KvStore& state, const ante::BlockInfo& block,
                            BlockHookResult* out) const {
  // ADR-070: the nonces whose timeout is <= the block time can never be used again.
  auto purged = keeper_.RemoveExpiredUnorderedNonces(state, block.time_unix_nanos);
  if (!purged.ok()) return purged.status();
  out->summary.push_back(std::to_string(*purged) + " unordered nonce(s) purged");
  return Status::OK();
}

std::vector<std::string_view> AuthModule::query_prefixes() const {
  return {"/cosmos.auth.v1beta1.Query/", "/kairos.auth.v1.Query/"};
}

Result<QueryAnswer> AuthModule::Query(const QueryRequest& req) const {
  const auto printable = [](std::string_view text) { return ante::Printable(text, 128); };
  if (req.path == "/cosmos.auth.v1beta1.Query/Account" ||
      req.path == "/cosmos.auth.v1beta1.Query/AccountInfo") {
    // The same account, the same errors: Account wraps it in an Any, AccountInfo (SDK 0.47)
    // gives the BaseAccount itself.
    const bool info = req.path.ends_with("/AccountInfo");
    cosmos::auth::v1beta1::QueryAccountRequest q;  // the same fields as QueryAccountInfoRequest
    if (!ParseProto(req.data, &q)) {
      return QueryAnswer::BadRequest(req.path, info ? "data is not a QueryAccountInfoRequest"
                                                    : "data is not a QueryAccountRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.address());
    if (!address.ok()) {
      return QueryAnswer::BadRequest(req.path,
                                     "invalid address \"" + printable(q.address()) + "\"");
    }
    QueryAnswer a;
    a.key = AuthKeeper::AccountKey(*address);
    std::string value;
    Status s = req.state->Get(a.key, &value);
    if (s.IsNotFound()) {
      // CosmJS recognises a missing account by the gRPC NotFound text. The proof (when asked)
      // is of the account's absence.
      a.code = ante::kKeyNotFound;
      a.log = "rpc error: code = NotFound desc = account " + q.address() +
              " not found: key not found";
      return a;
    }
    if (!s.ok()) return s;
    if (info) {
      cosmos::auth::v1beta1::QueryAccountInfoResponse r;
      if (!ParseProto(value, r.mutable_info())) {
        return Status::Corruption("a stored account is malformed");
      }
      a.value = SerializeDeterministic(r);
      return a;
    }
    cosmos::auth::v1beta1::QueryAccountResponse r;
    r.mutable_account()->set_type_url("/cosmos.auth.v1beta1.BaseAccount");
    r.mutable_account()->set_value(value);
    a.value = SerializeDeterministic(r);
    return a;
  }
  if (req.path == "/cosmos.auth.v1beta1.Query/Accounts") {
    cosmos::auth::v1beta1::QueryAccountsRequest q;
    if (!ParseProto(req.data, &q)) {
      return QueryAnswer::BadRequest(req.path, "data is not a QueryAccountsRequest");
    }
    auto spec = ReadPageRequest(req.path, q.pagination());
    if (auto* bad = std::get_if<QueryAnswer>(&spec)) return std::move(*bad);
    // In address order (auth/acc/<address>); next_key is the next account's raw address. A
    // page costs what app/pagination.h says: limit value reads, never the whole account set
    // (but for count_total, a key-only count of every account, as the SDK does).
    cosmos::auth::v1beta1::QueryAccountsResponse r;
    return AnswerPage(
        req, AuthKeeper::kAccountPrefix, std::get<PageSpec>(spec),
        [&](std::string_view, std::string_view value) {
          google::protobuf::Any* any = r.add_accounts();
          any->set_type_url("/cosmos.auth.v1beta1.BaseAccount");
          any->set_value(std::string(value));
          return Status::OK();
        },
        r, r.mutable_pagination());
  }
  if (req.path == "/cosmos.auth.v1beta1.Query/Params") {
    // The stored params of the queried height (what its blocks used after it), proven by the
    // params key; the defaults when a chain has none stored yet.
    auto p = keeper_.ReadParams(*req.state);
    if (!p.ok()) return p.status();
    cosmos::auth::v1beta1::QueryParamsResponse r;
    SdkParams::Of(*p).ToProto(r.mutable_params());
    QueryAnswer a;
    a.key = std::string(AuthKeeper::kParamsKey);
    a.value = SerializeDeterministic(r);
    return a;
  }
  if (req.path == "/kairos.auth.v1.Query/UnorderedNonce") {
    kairos::auth::v1::QueryUnorderedNonceRequest q;
    if (!ParseProto(req.data, &q)) {
      return QueryAnswer::BadRequest(req.path, "data is not a QueryUnorderedNonceRequest");
    }
    auto address = crypto::DecodeAccountAddress(q.signer());
    if (!address.ok()) {
      return QueryAnswer::BadRequest(req.path,
                                     "invalid signer address \"" + printable(q.signer()) + "\"");
    }
    auto used = keeper_.HasUnorderedNonce(*req.state, *address, q.timeout_unix_nanos());
    if (!used.ok()) return used.status();
    kairos::auth::v1::QueryUnorderedNonceResponse r;
    r.set_used(*used);
    QueryAnswer a;
    a.key = AuthKeeper::UnorderedNonceKey(q.timeout_unix_nanos(), *address);
    a.value = SerializeDeterministic(r);
    return a;
  }
  return Module::Query(req);
}

}  // namespace kairos::app::auth
