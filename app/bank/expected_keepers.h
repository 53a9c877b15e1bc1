// What x/bank needs from other modules (the SDK's x/bank/types/expected_keepers.go): accounts,
// to create a recipient's account on its first transfer. The chain's module list
// (app/app_modules.cc) hands bank a keeper that has these methods; AccountKeeperOf adapts any
// such keeper, so bank never names another module's types.
#pragma once

#include <optional>
#include <string_view>

#include "ante/keepers.h"
#include "store/kv.h"
#include "store/status.h"

namespace kairos::app::bank {

class AccountKeeper {
 public:
  virtual ~AccountKeeper() = default;
  // nullopt when the account does not exist. Not OK only when the store fails.
  virtual Result<std::optional<ante::Account>> GetAccount(store::KvStore& kv,
                                                          std::string_view address) const = 0;
  virtual Result<std::optional<ante::Account>> ReadAccount(const store::KvReader& kv,
                                                           std::string_view address) const = 0;
  // Creates an account with the next account number. REQUIRES: it does not exist.
  virtual Result<ante::Account> NewAccount(store::KvStore& kv, std::string_view address) const = 0;
};

// AccountKeeper over any keeper K with the same methods. REQUIRES: `keeper` outlives it.
template <class K>
class AccountKeeperOf final : public AccountKeeper {
 public:
  explicit AccountKeeperOf(const K& keeper) : k_(keeper) {}
  Result<std::optional<ante::Account>> GetAccount(store::KvStore& kv,
                                                  std::string_view address) const override {
    return k_.GetAccount(kv, address);
  }
  Result<std::optional<ante::Account>> ReadAccount(const store::KvReader& kv,
                                                   std::string_view address) const override {
    return k_.ReadAccount(kv, address);
  }
  Result<ante::Account> NewAccount(store::KvStore& kv, std::string_view address) const override {
    return k_.NewAccount(kv, address);
  }

 private:
  const K& k_;
};

}  // namespace kairos::app::bank
