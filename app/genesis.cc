#include "app/genesis.h"

#include <charconv>
#include <set>

#include <nlohmann/json.hpp>

#include "ante/context.h"
#include "crypto/bech32.h"

namespace kairos::app {

namespace {

using json = nlohmann::json;

Status Bad(const std::string& path, const std::string& why) {
  return Status::InvalidArgument("genesis " + path + ": " + why);
}

Status CheckKeys(const json& obj, const std::string& path, std::set<std::string> allowed) {
  if (!obj.is_object()) return Bad(path, "must be a JSON object");
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.contains(key)) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Bad(path + "." + key, "unknown field (known: " + list + ")");
    }
  }
  return Status::OK();
}

Result<std::uint64_t> ReadUint(const json& v, const std::string& path) {
  std::string text;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (!v.is_string()) return Bad(path, "must be a non-negative integer or a decimal string");
  text = v.get<std::string>();
  std::uint64_t out = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return Bad(path, "not a non-negative 64-bit integer: \"" + text + "\"");
  }
  return out;
}

Result<std::int64_t> ReadDuration(const json& v, const std::string& path) {
  if (!v.is_string()) return Bad(path, "must be a duration string such as \"600s\" or \"10m\"");
  auto d = ante::ParseDuration(v.get<std::string>());
  if (!d.ok()) return Bad(path, d.status().message());
  return *d;
}

Result<std::string> ReadAddress(const json& v, const std::string& path) {
  if (!v.is_string()) return Bad(path, "must be a bech32 address string");
  auto a = crypto::DecodeAccountAddress(v.get<std::string>());
  if (!a.ok()) return Bad(path, a.status().message());
  return *a;
}

Status ReadAuth(const json& auth, Genesis* g) {
  if (Status s = CheckKeys(auth, "app_state.auth", {"params", "accounts"}); !s.ok()) return s;
  if (auth.contains("params")) {
    const json& p = auth["params"];
    const std::string path = "app_state.auth.params";
    if (Status s = CheckKeys(p, path,
                             {"max_memo_characters", "tx_sig_limit", "tx_size_cost_per_byte",
                              "sig_verify_cost_secp256k1", "sig_verify_cost_ed25519",
                              "unordered_enabled", "unordered_max_timeout",
                              "unordered_gas_cost"});
        !s.ok()) {
      return s;
    }
    ante::AuthParams& out = g->auth_params;
    for (auto [name, field] :
         {std::pair{"max_memo_characters", &ante::AuthParams::max_memo_characters},
          std::pair{"tx_sig_limit", &ante::AuthParams::tx_sig_limit},
          std::pair{"tx_size_cost_per_byte", &ante::AuthParams::tx_size_cost_per_byte},
          std::pair{"sig_verify_cost_secp256k1", &ante::AuthParams::sig_verify_cost_secp256k1},
          std::pair{"sig_verify_cost_ed25519", &ante::AuthParams::sig_verify_cost_ed25519},
          std::pair{"unordered_gas_cost", &ante::AuthParams::unordered_gas_cost}}) {
      if (!p.contains(name)) continue;
      auto v = ReadUint(p[name], path + "." + name);
      if (!v.ok()) return v.status();
      out.*field = *v;
    }
    if (out.tx_sig_limit == 0) return Bad(path + ".tx_sig_limit", "must be positive");
    if (p.contains("unordered_enabled")) {
      if (!p["unordered_enabled"].is_boolean()) {
        return Bad(path + ".unordered_enabled", "must be true or false");
      }
      out.unordered_enabled = p["unordered_enabled"].get<bool>();
    }
    if (p.contains("unordered_max_timeout")) {
      auto d = ReadDuration(p["unordered_max_timeout"], path + ".unordered_max_timeout");
      if (!d.ok()) return d.status();
      out.unordered_max_timeout_nanos = *d;
    }
  }
  if (auth.contains("accounts")) {
    const json& accounts = auth["accounts"];
    if (!accounts.is_array()) return Bad("app_state.auth.accounts", "must be an array");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < accounts.size(); ++i) {
      const std::string path = "app_state.auth.accounts[" + std::to_string(i) + "]";
      if (Status s = CheckKeys(accounts[i], path, {"address"}); !s.ok()) return s;
      if (!accounts[i].contains("address")) return Bad(path + ".address", "missing");
      auto a = ReadAddress(accounts[i]["address"], path + ".address");
      if (!a.ok()) return a.status();
      if (!seen.insert(*a).second) return Bad(path + ".address", "duplicate account");
      g->accounts.push_back(*a);
    }
  }
  return Status::OK();
}

Status ReadBank(const json& bank, Genesis* g) {
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

Result<Genesis> ParseGenesis(std::string_view text) {
  Genesis g;
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return g;  // CometBFT's default: no app_state
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument(std::string("genesis app_state is not valid JSON: ") + e.what());
  }
  if (root.is_null() || (root.is_string() && root.get<std::string>().empty())) return g;
  if (Status s = CheckKeys(root, "app_state", {"auth", "bank"}); !s.ok()) return s;
  if (root.contains("auth")) {
    if (Status s = ReadAuth(root["auth"], &g); !s.ok()) return s;
  }
  if (root.contains("bank")) {
    if (Status s = ReadBank(root["bank"], &g); !s.ok()) return s;
  }
  return g;
}

}  // namespace kairos::app
