#include "app/bank/genesis.h"

#include <set>
#include <utility>

#include "ante/context.h"
#include "app/genesis_json.h"
#include "crypto/bech32.h"

namespace kairos::app::bank {

namespace {

using namespace genesis_json;  // NOLINT(google-build-using-namespace): the readers

Status ReadBank(const json& bank, GenesisState* g) {
  if (Status s = CheckKeys(bank, "app_state.bank", {"denom", "balances"}); !s.ok()) return s;
  if (bank.contains("denom")) {
    if (!bank["denom"].is_string() || !ante::ValidDenom(bank["denom"].get<std::string>())) {
      return Bad("app_state.bank.denom",
                 "must be a valid denom ([a-zA-Z][a-zA-Z0-9/:._-]{2,127})");
    }
    g->denom = bank["denom"].get<std::string>();
  }
  if (!bank.contains("balances")) return Status::OK();
  const json& balances = bank["balances"];
  if (!balances.is_array()) return Bad("app_state.bank.balances", "must be an array");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < balances.size(); ++i) {
    const std::string path = "app_state.bank.balances[" + std::to_string(i) + "]";
    const json& b = balances[i];
    if (Status s = CheckKeys(b, path, {"address", "coins"}); !s.ok()) return s;
    if (!b.contains("address")) return Bad(path + ".address", "missing");
    auto a = ReadAddress(b["address"], path + ".address");
    if (!a.ok()) return a.status();
    if (!seen.insert(*a).second) return Bad(path + ".address", "duplicate balance entry");
    if (!b.contains("coins") || !b["coins"].is_array()) {
      return Bad(path + ".coins", "must be an array of {denom, amount}");
    }
    std::vector<ante::Coin> coins;
    for (std::size_t j = 0; j < b["coins"].size(); ++j) {
      const std::string cpath = path + ".coins[" + std::to_string(j) + "]";
      const json& c = b["coins"][j];
      if (Status s = CheckKeys(c, cpath, {"denom", "amount"}); !s.ok()) return s;
      if (!c.contains("denom") || !c["denom"].is_string() ||
          !ante::ValidDenom(c["denom"].get<std::string>())) {
        return Bad(cpath + ".denom", "missing or not a valid denom");
      }
      std::string amount_text;
      if (c.contains("amount") && c["amount"].is_string()) {
        amount_text = c["amount"].get<std::string>();
      } else if (c.contains("amount") && c["amount"].is_number_unsigned()) {
        amount_text = std::to_string(c["amount"].get<std::uint64_t>());
      } else {
        return Bad(cpath + ".amount", "missing or not a decimal string");
      }
      auto amount = ante::ParseAmount(amount_text);
      if (!amount.ok()) {
        return Bad(cpath + ".amount", "not a decimal integer: \"" + amount_text + "\"");
      }
      coins.push_back({c["denom"].get<std::string>(), *amount});
    }
    auto valid = ante::Coins::FromSorted(std::move(coins));
    if (!valid.ok()) return Bad(path + ".coins", valid.status().message());
    g->balances.push_back({*a, *valid});
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section) {
  auto g = std::make_unique<GenesisState>();
  if (section != nullptr) {
    if (Status s = ReadBank(*section, g.get()); !s.ok()) return s;
  }
  return std::unique_ptr<ModuleGenesis>(std::move(g));
}

Status InitGenesis(store::KvStore& state, const BankKeeper& keeper,
                   const AccountKeeper& accounts, const GenesisState& g) {
  if (Status s = state.Set(BankKeeper::kDenomKey, g.denom); !s.ok()) return s;
  // A balance for an address that app_state.auth did not list creates its account, after those
  // listed (auth's genesis runs first).
  for (const GenesisBalance& b : g.balances) {
    auto existing = accounts.ReadAccount(state, b.address);
    if (!existing.ok()) return Status::InvalidArgument("genesis: " + existing.status().ToString());
    if (!*existing) {
      if (auto a = accounts.NewAccount(state, b.address); !a.ok()) {
        return Status::InvalidArgument("genesis account: " + a.status().ToString());
      }
    }
    if (ante::TxStatus s = keeper.Mint(state, b.address, b.coins); !s.ok()) {
      return Status::InvalidArgument("genesis balance of " +
                                     crypto::EncodeAccountAddress(b.address) + ": " + s.log());
    }
  }
  return Status::OK();
}

}  // namespace kairos::app::bank
