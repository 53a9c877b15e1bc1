#include "app/bank/genesis.h"

#include <set>
#include <utility>

#include "ante/context.h"
#include "app/genesis_json.h"
#include "crypto/bech32.h"

namespace kairos::app::bank {

namespace {

using namespace genesis_json;  // NOLINT(google-build-using-namespace): the readers

Status ReadParams(const json& p, GenesisState* g) {
  const std::string path = "app_state.bank.params";
  if (Status s = CheckKeys(p, path, {"send_enabled", "default_send_enabled"}); !s.ok()) return s;
  if (p.contains("send_enabled") && (!p["send_enabled"].is_array() || !p["send_enabled"].empty())) {
    return Bad(path + ".send_enabled",
               "must be empty: Kairos keeps no per-denom send flags (the SDK deprecated them in "
               "v0.47 for MsgSetSendEnabled); set default_send_enabled");
  }
  Params params;
  if (p.contains("default_send_enabled")) {
    auto b = ReadBool(p["default_send_enabled"], path + ".default_send_enabled");
    if (!b.ok()) return b.status();
    params.default_send_enabled = *b;
  }
  g->params = params;
  return Status::OK();
}

Status ReadBank(const json& bank, GenesisState* g) {
  if (Status s = CheckKeys(bank, "app_state.bank",
                           {"denom", "balances", "supply", "create_accounts", "params"});
      !s.ok()) {
    return s;
  }
  if (bank.contains("params")) {
    if (Status s = ReadParams(bank["params"], g); !s.ok()) return s;
  }
  if (bank.contains("create_accounts")) {
    auto b = ReadBool(bank["create_accounts"], "app_state.bank.create_accounts");
    if (!b.ok()) return b.status();
    g->create_accounts = *b;
  }
  if (bank.contains("supply")) {
    const std::string root = "app_state.bank.supply";
    const json& supply = bank["supply"];
    if (!supply.is_array()) return Bad(root, "must be an array of {denom, amount}");
    g->supply.emplace();
    for (std::size_t i = 0; i < supply.size(); ++i) {
      const std::string path = root + "[" + std::to_string(i) + "]";
      const json& c = supply[i];
      if (Status s = CheckKeys(c, path, {"denom", "amount"}); !s.ok()) return s;
      if (!c.contains("denom") || !c["denom"].is_string() ||
          !ante::ValidDenom(c["denom"].get<std::string>())) {
        return Bad(path + ".denom", "missing or not a valid denom");
      }
      if (!c.contains("amount")) return Bad(path + ".amount", "missing");
      auto amount = ReadAmount(c["amount"], path + ".amount");
      if (!amount.ok()) return amount.status();
      const std::string denom = c["denom"].get<std::string>();
      if (!g->supply->empty() && g->supply->back().denom >= denom) {
        return Bad(path + ".denom", "\"" + denom + "\" is not after \"" +
                                        g->supply->back().denom +
                                        "\": denoms are sorted, each once");
      }
      g->supply->push_back({denom, *amount});
    }
  }
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

// After the balances are minted: each listed denom's supply is what they sum to, and every
// minted denom is listed. A zero entry (a denom burned out) writes its supply key as the
// state keeps it.
Status CheckSupply(store::KvStore& state, const BankKeeper& keeper,
                   const std::vector<ante::Coin>& listed) {
  auto minted = keeper.ListSupply(state);
  if (!minted.ok()) return minted.status();
  std::set<std::string> listed_denoms;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const ante::Coin& c = listed[i];
    listed_denoms.insert(c.denom);
    auto sum = keeper.GetSupply(state, c.denom);
    if (!sum.ok()) return sum.status();
    if (*sum != c.amount) {
      return Bad("app_state.bank.supply[" + std::to_string(i) + "].amount",
                 ante::ToString(c.amount) + c.denom + ", but the balances sum to " +
                     ante::ToString(*sum) + c.denom);
    }
    if (c.amount == 0) {
      if (Status s = state.Set(BankKeeper::SupplyKey(c.denom), "0"); !s.ok()) return s;
    }
  }
  for (const ante::Coin& c : *minted) {
    if (!listed_denoms.contains(c.denom)) {
      return Bad("app_state.bank.supply", "does not list " + c.denom + ", which the balances "
                                          "hold (" + ante::ToString(c.amount) + c.denom + ")");
    }
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
  if (g.params) {
    if (Status s = keeper.WriteParams(state, *g.params); !s.ok()) return s;
  }
  // A balance for an address that app_state.auth did not list creates its account, after those
  // listed (auth's genesis runs first).
  for (const GenesisBalance& b : g.balances) {
    auto existing = accounts.ReadAccount(state, b.address);
    if (!existing.ok()) return Status::InvalidArgument("genesis: " + existing.status().ToString());
    if (!*existing && g.create_accounts) {
      if (auto a = accounts.NewAccount(state, b.address); !a.ok()) {
        return Status::InvalidArgument("genesis account: " + a.status().ToString());
      }
    }
    if (ante::TxStatus s = keeper.Mint(state, b.address, b.coins); !s.ok()) {
      return Status::InvalidArgument("genesis balance of " +
                                     crypto::EncodeAccountAddress(b.address) + ": " + s.log());
    }
  }
  if (g.supply) return CheckSupply(state, keeper, *g.supply);
  return Status::OK();
}

Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state,
                                                    const BankKeeper& keeper) {
  auto denom = keeper.GetDenom(state);
  if (!denom.ok()) return denom.status();
  json balances = json::array();
  auto all = keeper.ListBalances(state);
  if (!all.ok()) return all.status();
  for (const auto& [address, coins] : *all) {
    json list = json::array();
    for (const ante::Coin& c : coins) {
      list.push_back({{"denom", c.denom}, {"amount", ante::ToString(c.amount)}});
    }
    balances.push_back(
        {{"address", crypto::EncodeAccountAddress(address)}, {"coins", std::move(list)}});
  }
  auto supply = keeper.ListSupply(state);
  if (!supply.ok()) return supply.status();
  json supply_list = json::array();
  for (const ante::Coin& c : *supply) {
    supply_list.push_back({{"denom", c.denom}, {"amount", ante::ToString(c.amount)}});
  }
  json out = {{"denom", *denom},
              {"balances", std::move(balances)},
              {"supply", std::move(supply_list)},
              {"create_accounts", false}};
  auto has_params = keeper.HasParams(state);
  if (!has_params.ok()) return has_params.status();
  if (*has_params) {
    auto p = keeper.ReadParams(state);
    if (!p.ok()) return p.status();
    out["params"] = {{"default_send_enabled", p->default_send_enabled}};
  }
  return std::optional<json>(std::move(out));
}

}  // namespace kairos::app::bank
