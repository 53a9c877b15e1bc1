// x/bank as a module of the chain (app/module.h): MsgSend and MsgUpdateParams, the balance and
// params queries, and the bank genesis (the chain's denom, the balances and the params).
//
// Thread-safety: immutable after the module list is bound, except the keeper's cached params,
// which only the executor sets (LoadState: at open, InitChain and after each Commit).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/bank/expected_keepers.h"
#include "app/bank/keeper.h"
#include "app/module.h"

namespace kairos::app::bank {

class BankModule final : public Module {
 public:
  static constexpr std::string_view kName = "bank";

  // `accounts`: any keeper with AccountKeeper's methods (expected_keepers.h).
  // REQUIRES: it outlives the module.
  template <class K>
  explicit BankModule(const K& accounts)
      : accounts_(std::make_unique<AccountKeeperOf<K>>(accounts)), keeper_(*accounts_) {}

  const BankKeeper& keeper() const { return keeper_; }

  std::string_view name() const override { return kName; }
  void Provide(ModuleServices& services) override;
  // Sets the blocked recipients and finds the chain's AuthorityKeeper (MsgUpdateParams).
  void Bind(const ModuleList& list) override;
  std::vector<std::string> module_accounts() const override;

  // /cosmos.bank.v1beta1.MsgSend and .MsgUpdateParams (msgs.h, msg_server.h).
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

  // /cosmos.bank.v1beta1.Query/{Balance,AllBalances,Params}.
  std::vector<std::string_view> query_prefixes() const override;
  Result<QueryAnswer> Query(const QueryRequest& req) const override;

 private:
  std::unique_ptr<AccountKeeper> accounts_;
  BankKeeper keeper_;
  const AuthorityKeeper* authority_ = nullptr;  // null: the chain has none
};

}  // namespace kairos::app::bank
