// The lease-locks module as a module of the chain (app/module.h): its messages, queries,
// genesis and EndBlock (ending expired sessions).
//
// Thread-safety: immutable after the module list is bound.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/locks/expected_keepers.h"
#include "app/locks/keeper.h"
#include "app/locks/msg_server.h"
#include "app/module.h"

namespace kairos::app::locks {

class LocksModule final : public Module {
 public:
  // `bank`: any keeper with BankKeeper's methods (expected_keepers.h).
  // REQUIRES: it outlives the module.
  template <class K>
  explicit LocksModule(const K& bank)
      : bank_(std::make_unique<BankKeeperOf<K>>(bank)), server_(*bank_) {}

  const LocksKeeper& keeper() const { return server_.keeper(); }

  std::string_view name() const override { return kModuleName; }
  std::vector<std::string> module_accounts() const override;
  // Finds the chain's AuthorityKeeper (MsgUpdateParams).
  void Bind(const ModuleList& list) override;

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
  // /kairos.locks.v1.Query/... (app/locks/queries.h).
  std::vector<std::string_view> query_prefixes() const override;
  Result<QueryAnswer> Query(const QueryRequest& req) const override;

  Status EndBlock(store::KvStore& state, const ante::BlockInfo& block,
                  BlockHookResult* out) const override;

 private:
  // Calls f(const M&) with the message as its own type.
  template <class F>
  auto Visit(const ante::Msg& msg, F&& f) const;

  std::unique_ptr<BankKeeper> bank_;
  MsgServer server_;
};

}  // namespace kairos::app::locks
