// x/auth as a module of the chain (app/module.h): accounts, the auth params, the unordered-tx
// nonces (ADR-070) and their PreBlock purge, the account and nonce queries, and the auth
// genesis (params and accounts).
//
// Thread-safety: immutable after the module list is bound, except the keeper's cached params,
// which only the executor sets (KairosApp: at open, InitChain and after each Commit, through
// LoadState), under the keeper's mutex.
#pragma once

#include <string>
#include <vector>

#include "app/auth/keeper.h"
#include "app/module.h"

namespace kairos::app::auth {

class AuthModule final : public Module {
 public:
  static constexpr std::string_view kName = "auth";

  const AuthKeeper& keeper() const { return keeper_; }
  AuthKeeper& mutable_keeper() { return keeper_; }

  std::string_view name() const override { return kName; }
  void Provide(ModuleServices& services) override;
  // Finds the chain's AuthorityKeeper (MsgUpdateParams).
  void Bind(const ModuleList& list) override;

  // /cosmos.auth.v1beta1.MsgUpdateParams (msgs.h, msg_server.h).
  std::vector<std::string_view> msg_type_urls() const override;
  bool DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                 const ProtoPath& at, ante::Msg* out) const override;
  ante::TxStatus ValidateBasic(const ante::Msg& msg) const override;
  ante::TxStatus Handle(ante::Context& ctx, const ante::Msg& msg,
                        std::size_t msg_index) const override;

  Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(
      const nlohmann::json* section) const override;
  Status InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                     const GenesisContext& ctx) const override;
  Result<std::optional<nlohmann::json>> ExportGenesis(
      const store::KvReader& state) const override;
  Status LoadState(const store::KvReader& state) override;

  // /cosmos.auth.v1beta1.Query/Account, /kairos.auth.v1.Query/UnorderedNonce.
  std::vector<std::string_view> query_prefixes() const override;
  Result<QueryAnswer> Query(const QueryRequest& req) const override;
  Status PreBlock(store::KvStore& state, const ante::BlockInfo& block,
                  BlockHookResult* out) const override;

 private:
  AuthKeeper keeper_;
  const AuthorityKeeper* authority_ = nullptr;  // null: the chain has none
};

}  // namespace kairos::app::auth
