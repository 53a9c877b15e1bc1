#include "app/module_list.h"

#include <algorithm>
#include <stdexcept>

#include "crypto/bech32.h"
#include "crypto/hash.h"

namespace kairos::app {

std::string ModuleAddress(std::string_view name) { return crypto::Sha256(name).substr(0, 20); }

ante::TxStatus CheckAddressSize(std::string_view raw, std::string_view what) {
  if (raw.size() != crypto::kAddressBytes) {
    return ante::TxStatus::Error(ante::kInvalidAddress,
                                 "invalid " + std::string(what) + " address: " +
                                     std::to_string(raw.size()) + " bytes, want " +
                                     std::to_string(crypto::kAddressBytes));
  }
  return ante::TxStatus::OK();
}

ante::TxStatus CheckAuthority(const AuthorityKeeper* keeper, const store::KvReader& state,
                              std::string_view signer) {
  const std::string got = signer.empty() ? "\"\"" : crypto::EncodeAccountAddress(signer);
  if (keeper == nullptr) {
    return ante::TxStatus::Error(ante::kUnauthorized,
                                 "expected authority (none: this chain has no module that keeps "
                                 "one, such as poa), got " + got);
  }
  auto authority = keeper->GetAuthority(state);
  if (!authority.ok()) return ante::TxStatus::FromStore(authority.status());
  if (authority->empty()) {
    return ante::TxStatus::Error(ante::kUnauthorized,
                                 "expected authority (none: this chain's genesis sets no "
                                 "app_state.poa.authority), got " + got);
  }
  if (*authority != signer) {
    return ante::TxStatus::Error(ante::kUnauthorized, "expected authority " +
                                                          crypto::EncodeAccountAddress(*authority) +
                                                          ", got " + got);
  }
  return ante::TxStatus::OK();
}

// ---- Module's defaults: a module that has no messages, queries, genesis or hooks -----------

bool Module::DecodeMsg(std::string_view type_url, std::string_view, ProtoReader& reader,
                       const ProtoPath& at, ante::Msg*) const {
  return reader.Fail(ante::kTxDecode, "unable to resolve type URL " +
                                          ProtoReader::Quote(type_url) + " in " + at.Render());
}

ante::TxStatus Module::ValidateBasic(const ante::Msg&) const { return ante::TxStatus::OK(); }

ante::TxStatus Module::Handle(ante::Context&, const ante::Msg& msg, std::size_t) const {
  return ante::TxStatus::Error(ante::kUnknownRequest,
                               "unrecognized " + std::string(name()) +
                                   " message type: " + std::string(msg.type_url()));
}

Result<QueryAnswer> Module::Query(const QueryRequest& req) const {
  QueryAnswer a;
  a.code = ante::kUnknownRequest;
  a.log = "unknown query path '" + ante::Printable(req.path) + "'";
  return a;
}

Result<std::unique_ptr<ModuleGenesis>> Module::ParseGenesis(const nlohmann::json* section) const {
  if (section != nullptr && !(section->is_object() && section->empty())) {
    return Status::InvalidArgument("genesis app_state." + std::string(name()) +
                                   ": the module has no genesis state");
  }
  return std::unique_ptr<ModuleGenesis>(std::make_unique<ModuleGenesis>());
}

Status Module::InitGenesis(store::KvStore&, const ModuleGenesis&, const GenesisContext&) const {
  return Status::OK();
}

Result<std::optional<nlohmann::json>> Module::ExportGenesis(const store::KvReader&) const {
  return std::optional<nlohmann::json>();
}

Status Module::PreBlock(store::KvStore&, const ante::BlockInfo&, BlockHookResult*) const {
  return Status::OK();
}

Status Module::EndBlock(store::KvStore&, const ante::BlockInfo&, BlockHookResult*) const {
  return Status::OK();
}

// ---- the list ------------------------------------------------------------------------------

std::unique_ptr<ModuleList> ModuleList::Chain() {
  auto list = std::make_unique<ModuleList>();
  AddChainModules(*list);
  list->Bind();
  return list;
}

const ModuleList& ModuleList::ForDecoding() {
  static const ModuleList* const list = Chain().release();  // never destroyed: used at exit
  return *list;
}

void ModuleList::Register(std::unique_ptr<Module> module) {
  if (bound_) throw std::logic_error("ModuleList::Add after Bind");
  const std::string name(module->name());
  if (Find(name) != nullptr) throw std::logic_error("two modules named " + name);
  for (std::string_view url : module->msg_type_urls()) {
    if (!by_type_url_.emplace(std::string(url), module.get()).second) {
      throw std::logic_error("module " + name + ": type URL " + std::string(url) +
                             " is another module's");
    }
  }
  for (std::string_view prefix : module->query_prefixes()) {
    for (const auto& [other, owner] : by_query_prefix_) {
      if (other.starts_with(prefix) || prefix.starts_with(other)) {
        throw std::logic_error("module " + name + ": query prefix " + std::string(prefix) +
                               " overlaps module " + std::string(owner->name()) + "'s " + other);
      }
    }
    by_query_prefix_.emplace_back(std::string(prefix), module.get());
  }
  for (std::string& account : module->module_accounts()) {
    module_accounts_.push_back(std::move(account));
  }
  std::sort(module_accounts_.begin(), module_accounts_.end());
  module->Provide(services_);
  modules_.push_back(std::move(module));
}

void ModuleList::Bind() {
  if (bound_) return;
  bound_ = true;
  for (const auto& m : modules_) m->Bind(*this);
}

const Module* ModuleList::ForMsg(std::string_view type_url) const {
  auto it = by_type_url_.find(type_url);
  return it == by_type_url_.end() ? nullptr : it->second;
}

const Module* ModuleList::ForQuery(std::string_view path) const {
  for (const auto& [prefix, module] : by_query_prefix_) {
    if (path.starts_with(prefix)) return module;
  }
  return nullptr;
}

const Module* ModuleList::Find(std::string_view name) const {
  for (const auto& m : modules_) {
    if (m->name() == name) return m.get();
  }
  return nullptr;
}

}  // namespace kairos::app
