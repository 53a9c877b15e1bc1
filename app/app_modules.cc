// The chain's modules, in order: the one place that says which modules a Kairos chain has (as
// the Cosmos SDK's app.go). Genesis, PreBlock and EndBlock run in this order; each module gets
// the keepers it expects (its expected_keepers.h) here, by name of the keeper that provides them.
// To add a module: app/README.md ("Adding a module").
#include "app/auth/module.h"
#include "app/bank/module.h"
#include "app/locks/module.h"
#include "app/module_list.h"
#include "app/poa/module.h"

namespace kairos::app {

void AddChainModules(ModuleList& list) {
  auto& auth = list.Add<auth::AuthModule>();
  auto& bank = list.Add<bank::BankModule>(auth.keeper());
  list.Add<locks::LocksModule>(bank.keeper());
  list.Add<poa::PoaModule>();
}

}  // namespace kairos::app
