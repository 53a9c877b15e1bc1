// PoaModule: proof of authority as an app::Module. An authority (an account, set at genesis and
// handed on by MsgUpdateAuthority) adds, re-weights and removes validators (MsgSetValidator)
// and changes the module's params (MsgUpdateParams); EndBlock hands the block's changes to
// CometBFT as validator updates, which take effect at height H+2. The module provides
// app::AuthorityKeeper, so that every module with params asks it who the authority is.
//
// The state, its keys and the safety rules: keeper.h. Genesis: genesis.h. Messages and events:
// msgs.h, msg_server.h. Queries: queries.h.
//
// Thread-safety: immutable after construction (see app/module.h).
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "app/module.h"
#include "app/poa/keeper.h"
#include "app/poa/msg_server.h"

namespace kairos::app::poa {

class PoaModule final : public Module {
 public:
  PoaModule() : server_(keeper_) {}

  // Provides app::AuthorityKeeper (its keeper).
  void Provide(ModuleServices& services) override { services.Provide<AuthorityKeeper>(&keeper_); }

  std::string_view name() const override { return kModuleName; }

  std::vector<std::string_view> msg_type_urls() const override;
  bool DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                 const ProtoPath& at, ante::Msg* out) const override;
  ante::TxStatus ValidateBasic(const ante::Msg& msg) const override;
  ante::TxStatus Handle(ante::Context& ctx, const ante::Msg& msg,
                        std::size_t msg_index) const override;

  std::vector<std::string_view> query_prefixes() const override;
  Result<QueryAnswer> Query(const QueryRequest& req) const override;

  Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section) const override;
  Status InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                     const GenesisContext& ctx) const override;
  Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state) const override;

  // The block's validator updates (keeper.h TakeValidatorUpdates), with a
  // "poa_validator_update" event each (consensus_address, pub_key_type, pub_key, power).
  Status EndBlock(store::KvStore& state, const ante::BlockInfo& block,
                  BlockHookResult* out) const override;

  const PoaKeeper& keeper() const { return keeper_; }

 private:
  PoaKeeper keeper_;
  MsgServer server_;
};

}  // namespace kairos::app::poa
