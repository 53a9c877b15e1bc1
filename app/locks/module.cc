#include "app/locks/module.h"

#include <stdexcept>

#include "app/locks/genesis.h"
#include "app/locks/params.h"
#include "app/locks/queries.h"
#include "app/module_list.h"

namespace kairos::app::locks {

template <class F>
auto LocksModule::Visit(const ante::Msg& msg, F&& f) const {
  if (const auto* m = msg.As<MsgRegister>()) return f(*m);
  if (const auto* m = msg.As<MsgRefundRegistration>()) return f(*m);
  if (const auto* m = msg.As<MsgAcquire>()) return f(*m);
  if (const auto* m = msg.As<MsgWrite>()) return f(*m);
  if (const auto* m = msg.As<MsgUpdateParams>()) return f(*m);
  return f(msg.Get<MsgRelease>());
}

std::vector<std::string> LocksModule::module_accounts() const { return {EscrowAddress()}; }

std::vector<std::string_view> LocksModule::msg_type_urls() const {
  return {MsgRegister::kTypeUrl, MsgRefundRegistration::kTypeUrl, MsgAcquire::kTypeUrl,
          MsgWrite::kTypeUrl, MsgRelease::kTypeUrl, MsgUpdateParams::kTypeUrl};
}

void LocksModule::Bind(const ModuleList& list) {
  server_.set_authority(list.services().Find<AuthorityKeeper>());
}

bool LocksModule::DecodeMsg(std::string_view type_url, std::string_view value,
                            ProtoReader& reader, const ProtoPath& at, ante::Msg* out) const {
  return locks::DecodeMsg(reader, type_url, value, at, out);
}

ante::TxStatus LocksModule::ValidateBasic(const ante::Msg& msg) const {
  return Visit(msg, [](const auto& m) { return locks::ValidateBasic(m); });
}

ante::TxStatus LocksModule::Handle(ante::Context& ctx, const ante::Msg& msg,
                                   std::size_t msg_index) const {
  return Visit(msg, [&](const auto& m) { return server_.Handle(ctx, m, msg_index); });
}

Result<std::unique_ptr<ModuleGenesis>> LocksModule::ParseGenesis(
    const nlohmann::json* section) const {
  return locks::ParseGenesis(section);
}

Result<std::optional<nlohmann::json>> LocksModule::ExportGenesis(
    const store::KvReader& state) const {
  return locks::ExportGenesis(state, keeper());
}

Status LocksModule::InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                                const GenesisContext& ctx) const {
  return locks::InitGenesis(state, keeper(), dynamic_cast<const GenesisState&>(genesis),
                            ctx.initial_height);
}

std::vector<std::string_view> LocksModule::query_prefixes() const { return {kQueryPathPrefix}; }

Result<QueryAnswer> LocksModule::Query(const QueryRequest& req) const {
  auto answer = HandleQuery(keeper(), req.path, req.data, *req.state, req.height);
  if (!answer.ok()) return answer.status();
  if (answer->code != 0) return QueryAnswer::Error(answer->code, std::move(answer->log));
  return answer;
}

Status LocksModule::EndBlock(store::KvStore& state, const ante::BlockInfo& block,
                             BlockHookResult* out) const {
  std::size_t ended = 0;
  if (Status s = keeper().RunEndBlock(state, block, &out->events, &ended); !s.ok()) return s;
  out->summary.push_back(std::to_string(ended) + " expired lock session(s) ended");
  return Status::OK();
}

}  // namespace kairos::app::locks
