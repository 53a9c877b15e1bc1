#include "app/bank/genesis.h"

#include <cstdint>
#include <set>
#include <string_view>
#include <utility>

#include "ante/context.h"
#include "ante/errors.h"
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

// An optional string field of `obj` ("" when absent).
Result<std::string> ReadText(const json& obj, const std::string& key, const std::string& path) {
  if (!obj.contains(key)) return std::string();
  if (!obj[key].is_string()) return Bad(path + "." + key, "must be a string");
  return obj[key].get<std::string>();
}

bool Blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\v\f\r") == std::string_view::npos;
}

// One denom unit, {denom, exponent, aliases}: the SDK's DenomUnit.Validate.
Status ReadDenomUnit(const json& u, const std::string& path,
                     cosmos::bank::v1beta1::DenomUnit* out) {
  if (Status s = CheckKeys(u, path, {"denom", "exponent", "aliases"}); !s.ok()) return s;
  auto denom = ReadText(u, "denom", path);
  if (!denom.ok()) return denom.status();
  if (!ante::ValidDenom(*denom)) {
    return Bad(path + ".denom",
               "missing or not a valid denom ([a-zA-Z][a-zA-Z0-9/:._-]{2,127}): \"" +
                   ante::Printable(*denom, 128) + "\"");
  }
  out->set_denom(*denom);
  if (u.contains("exponent")) {
    auto e = ReadUint(u["exponent"], path + ".exponent");
    if (!e.ok()) return e.status();
    if (*e > UINT32_MAX) return Bad(path + ".exponent", "must fit in 32 bits");
    out->set_exponent(static_cast<std::uint32_t>(*e));
  }
  if (!u.contains("aliases")) return Status::OK();
  const json& aliases = u["aliases"];
  if (!aliases.is_array()) return Bad(path + ".aliases", "must be an array of strings");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    const std::string at = path + ".aliases[" + std::to_string(i) + "]";
    if (!aliases[i].is_string()) return Bad(at, "must be a string");
    const std::string alias = aliases[i].get<std::string>();
    if (Blank(alias)) return Bad(at, "alias for denom unit " + *denom + " cannot be blank");
    if (!seen.insert(alias).second) return Bad(at, "duplicate denomination unit alias " + alias);
    out->add_aliases(alias);
  }
  return Status::OK();
}

// One Metadata object: the SDK's Metadata.Validate (x/bank/types/metadata.go), in its order,
// each violation naming its field.
Status ReadMetadata(const json& m, const std::string& path, cosmos::bank::v1beta1::Metadata* out) {
  if (Status s = CheckKeys(m, path, {"description", "denom_units", "base", "display", "name",
                                     "symbol", "uri", "uri_hash"});
      !s.ok()) {
    return s;
  }
  std::string text[7];
  const char* const fields[7] = {"description", "base", "display", "name",
                                 "symbol",      "uri",  "uri_hash"};
  for (int i = 0; i < 7; ++i) {
    auto t = ReadText(m, fields[i], path);
    if (!t.ok()) return t.status();
    text[i] = std::move(*t);
  }
  out->set_description(text[0]);
  out->set_base(text[1]);
  out->set_display(text[2]);
  out->set_name(text[3]);
  out->set_symbol(text[4]);
  out->set_uri(text[5]);
  out->set_uri_hash(text[6]);
  if (Blank(out->name())) return Bad(path + ".name", "name field cannot be blank");
  if (Blank(out->symbol())) return Bad(path + ".symbol", "symbol field cannot be blank");
  const auto bad_denom = [](const std::string& denom) {
    return "invalid metadata denom \"" + ante::Printable(denom, 128) +
           "\" (a valid denom: [a-zA-Z][a-zA-Z0-9/:._-]{2,127})";
  };
  if (!ante::ValidDenom(out->base())) return Bad(path + ".base", bad_denom(out->base()));
  if (!ante::ValidDenom(out->display())) return Bad(path + ".display", bad_denom(out->display()));
  const json empty = json::array();
  const json& units = m.contains("denom_units") ? m["denom_units"] : empty;
  if (!units.is_array()) return Bad(path + ".denom_units", "must be an array of denom units");
  std::set<std::string> seen;
  bool has_display = false;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::string at = path + ".denom_units[" + std::to_string(i) + "]";
    cosmos::bank::v1beta1::DenomUnit* u = out->add_denom_units();
    if (Status s = ReadDenomUnit(units[i], at, u); !s.ok()) return s;
    if (i == 0) {
      if (u->denom() != out->base()) {
        return Bad(at + ".denom", "metadata's first denomination unit must be the one with base "
                                  "denom '" + out->base() + "', got '" + u->denom() + "'");
      }
      if (u->exponent() != 0) {
        return Bad(at + ".exponent", "the exponent for base denomination unit " + out->base() +
                                         " must be 0, got " + std::to_string(u->exponent()));
      }
    } else if (u->exponent() <= out->denom_units(static_cast<int>(i) - 1).exponent()) {
      return Bad(at + ".exponent",
                 "denom units should be sorted asc by exponent: " + std::to_string(u->exponent()) +
                     " is not above the previous unit's " +
                     std::to_string(out->denom_units(static_cast<int>(i) - 1).exponent()));
    }
    if (!seen.insert(u->denom()).second) {
      return Bad(at + ".denom", "duplicate denomination unit " + u->denom());
    }
    has_display = has_display || u->denom() == out->display();
  }
  if (!has_display) {
    return Bad(path + ".display", "metadata must contain a denomination unit with display denom '" +
                                      out->display() + "'");
  }
  return Status::OK();
}

Status ReadDenomMetadata(const json& list, GenesisState* g) {
  const std::string root = "app_state.bank.denom_metadata";
  if (!list.is_array()) return Bad(root, "must be an array of Metadata objects");
  std::set<std::string> bases;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = root + "[" + std::to_string(i) + "]";
    cosmos::bank::v1beta1::Metadata m;
    if (Status s = ReadMetadata(list[i], path, &m); !s.ok()) return s;
    if (!bases.insert(m.base()).second) {
      return Bad(path + ".base", "duplicate client metadata for denom " + m.base());
    }
    g->denom_metadata.push_back(std::move(m));
  }
  return Status::OK();
}

json MetadataJson(const cosmos::bank::v1beta1::Metadata& m) {
  json units = json::array();
  for (const auto& u : m.denom_units()) {
    json aliases = json::array();
    for (const std::string& a : u.aliases()) aliases.push_back(a);
    units.push_back({{"denom", u.denom()}, {"exponent", u.exponent()}, {"aliases", aliases}});
  }
  return {{"description", m.description()}, {"denom_units", std::move(units)},
          {"base", m.base()},               {"display", m.display()},
          {"name", m.name()},               {"symbol", m.symbol()},
          {"uri", m.uri()},                 {"uri_hash", m.uri_hash()}};
}

Status ReadBank(const json& bank, GenesisState* g) {
  if (Status s = CheckKeys(bank, "app_state.bank",
                           {"denom", "balances", "supply", "create_accounts", "params",
                            "denom_metadata"});
      !s.ok()) {
    return s;
  }
  if (bank.contains("denom_metadata")) {
    if (Status s = ReadDenomMetadata(bank["denom_metadata"], g); !s.ok()) return s;
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
  for (const cosmos::bank::v1beta1::Metadata& m : g.denom_metadata) {
    if (Status s = keeper.SetMetadata(state, m); !s.ok()) {
      return Status::InvalidArgument("genesis app_state.bank.denom_metadata (" + m.base() +
                                     "): " + s.ToString());
    }
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
  auto metadata = keeper.ListMetadata(state);
  if (!metadata.ok()) return metadata.status();
  if (!metadata->empty()) {  // a chain without any keeps the export it had
    json list = json::array();
    for (const auto& m : *metadata) list.push_back(MetadataJson(m));
    out["denom_metadata"] = std::move(list);
  }
  return std::optional<json>(std::move(out));
}

}  // namespace kairos::app::bank
