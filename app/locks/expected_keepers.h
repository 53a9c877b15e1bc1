// What the locks module needs from other modules (as the SDK's expected_keepers.go): bank, to
// move deposits, bonds and refunds through the escrow account, burn forfeits, and read the
// chain's denom. The chain's module list (app/app_modules.cc) hands locks a keeper with these
// methods; BankKeeperOf adapts any such keeper, so locks never names bank's types.
#pragma once

#include <string>
#include <string_view>

#include "ante/coins.h"
#include "ante/context.h"
#include "ante/errors.h"
#include "store/kv.h"
#include "store/status.h"

namespace kairos::app::locks {

class BankKeeper {
 public:
  virtual ~BankKeeper() = default;
  virtual Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                           std::string_view denom) const = 0;
  // The chain's denom ("stake" when genesis set none).
  virtual Result<std::string> GetDenom(const store::KvReader& kv) const = 0;
  // Moves coins; creates the recipient's account if it has none. Code 5 when short.
  virtual ante::TxStatus Send(ante::Context& ctx, std::string_view from, std::string_view to,
                              const ante::Coins& amount) const = 0;
  // Takes coins out of `from` and out of the supply. Code 5 when short.
  virtual ante::TxStatus Burn(ante::Context& ctx, std::string_view from,
                              const ante::Coins& amount) const = 0;
};

// BankKeeper over any keeper K with the same methods. REQUIRES: `keeper` outlives it.
template <class K>
class BankKeeperOf final : public BankKeeper {
 public:
  explicit BankKeeperOf(const K& keeper) : k_(keeper) {}
  Result<ante::Uint256> GetBalance(const store::KvReader& kv, std::string_view address,
                                   std::string_view denom) const override {
    return k_.GetBalance(kv, address, denom);
  }
  Result<std::string> GetDenom(const store::KvReader& kv) const override {
    return k_.GetDenom(kv);
  }
  ante::TxStatus Send(ante::Context& ctx, std::string_view from, std::string_view to,
                      const ante::Coins& amount) const override {
    return k_.Send(ctx, from, to, amount);
  }
  ante::TxStatus Burn(ante::Context& ctx, std::string_view from,
                      const ante::Coins& amount) const override {
    return k_.Burn(ctx, from, amount);
  }

 private:
  const K& k_;
};

}  // namespace kairos::app::locks
