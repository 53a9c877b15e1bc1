// x/auth as a module of the chain (app/module.h): accounts, the auth params, the unordered-tx
// nonces (ADR-070) and their PreBlock purge, the account and nonce queries, and the auth
// genesis (params and accounts).
//
// Thread-safety: immutable after the module list is bound, except the keeper's cached params,
// which only the executor sets (KairosApp, at InitChain and open).
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
};

}  // namespace kairos::app::auth
