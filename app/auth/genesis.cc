#include "app/auth/genesis.h"

#include <set>
#include <utility>

#include "ante/context.h"
#include "app/genesis_json.h"

namespace kairos::app::auth {

namespace {

using namespace genesis_json;  // NOLINT(google-build-using-namespace): the readers

Status ReadAuth(const json& auth, GenesisState* g) {
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
    ante::AuthParams& out = g->params;
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

}  // namespace

Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section) {
  auto g = std::make_unique<GenesisState>();
  if (section != nullptr) {
    if (Status s = ReadAuth(*section, g.get()); !s.ok()) return s;
  }
  return std::unique_ptr<ModuleGenesis>(std::move(g));
}

Status InitGenesis(store::KvStore& state, const AuthKeeper& keeper, const GenesisState& g) {
  // The params are written whether or not app_state.auth has them: every node then reads the
  // same params back from the state.
  if (Status s = state.Set(AuthKeeper::kParamsKey, AuthKeeper::EncodeParams(g.params));
      !s.ok()) {
    return s;
  }
  for (const std::string& address : g.accounts) {
    if (auto a = keeper.NewAccount(state, address); !a.ok()) {
      return Status::InvalidArgument("genesis account: " + a.status().ToString());
    }
  }
  return Status::OK();
}

}  // namespace kairos::app::auth
