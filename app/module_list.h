// ModuleList: the chain's modules, in order, and the routes through them (message type URL ->
// module, query path prefix -> module). Which modules a chain has, and their order, is written
// once, in app/app_modules.cc (as the SDK's app.go); genesis, PreBlock and EndBlock run in
// that order.
//
// Thread-safety: built once, then immutable; lookups are safe from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/module.h"

namespace kairos::app {

class ModuleList {
 public:
  // The chain's modules (app/app_modules.cc), wired, each with its own keepers.
  static std::unique_ptr<ModuleList> Chain();
  // One instance of the chain's list per process, for what does not depend on a module's
  // state: decoding messages and ValidateBasic (the tx decoder, app/tx_codec.h).
  static const ModuleList& ForDecoding();

  ModuleList() = default;
  ModuleList(const ModuleList&) = delete;
  ModuleList& operator=(const ModuleList&) = delete;

  // Adds a module (constructed from `args`) at the end of the list and lets it Provide its
  // services. Throws std::logic_error when its name, a type URL or a query prefix is taken.
  template <class M, class... Args>
  M& Add(Args&&... args) {
    auto module = std::make_unique<M>(std::forward<Args>(args)...);
    M& ref = *module;
    Register(std::move(module));
    return ref;
  }
  // Binds every module (Module::Bind), once, after the last Add.
  void Bind();

  const std::vector<std::unique_ptr<Module>>& modules() const { return modules_; }
  // The module that decodes and handles messages of `type_url`; null when none does.
  const Module* ForMsg(std::string_view type_url) const;
  // The module whose query prefix `path` starts with; null when none.
  const Module* ForQuery(std::string_view path) const;
  // A module by its name; null when the chain has none.
  const Module* Find(std::string_view name) const;
  // A module by its type; null when the chain has none. (For the app's own plumbing.)
  template <class M>
  M* Get() const {
    for (const auto& m : modules_) {
      if (auto* found = dynamic_cast<M*>(m.get())) return found;
    }
    return nullptr;
  }
  const ModuleServices& services() const { return services_; }
  // The module accounts of every module (Module::module_accounts), sorted.
  const std::vector<std::string>& module_accounts() const { return module_accounts_; }

 private:
  void Register(std::unique_ptr<Module> module);

  std::vector<std::unique_ptr<Module>> modules_;
  ModuleServices services_;
  // Ordered maps, not hashes: lookups take type URLs and paths from outsiders, and the tables
  // are small and fixed.
  std::map<std::string, const Module*, std::less<>> by_type_url_;
  std::vector<std::pair<std::string, const Module*>> by_query_prefix_;
  std::vector<std::string> module_accounts_;
  bool bound_ = false;
};

// The chain's modules, in order: defined in app/app_modules.cc.
void AddChainModules(ModuleList& list);

}  // namespace kairos::app
