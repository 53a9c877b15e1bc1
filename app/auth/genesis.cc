#include "app/auth/genesis.h"

#include <algorithm>
#include <set>
#include <utility>

#include "ante/context.h"
#include "app/genesis_json.h"
#include "app/tx_codec.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"

namespace kairos::app::auth {

namespace {

using namespace genesis_json;  // NOLINT(google-build-using-namespace): the readers

Result<ante::PubKey> ReadPubKey(const json& v, const std::string& path) {
  if (Status s = CheckKeys(v, path, {"@type", "key"}); !s.ok()) return s;
  if (!v.contains("@type") || !v["@type"].is_string()) return Bad(path + ".@type", "missing");
  if (!v.contains("key") || !v["key"].is_string()) return Bad(path + ".key", "missing");
  const std::string type_url = v["@type"].get<std::string>();
  ante::PubKey key;
  std::size_t size = 0;
  if (type_url == kSecp256k1PubKeyTypeUrl) {
    key.type = crypto::KeyType::kSecp256k1;
    size = 33;
  } else if (type_url == kEd25519PubKeyTypeUrl) {
    key.type = crypto::KeyType::kEd25519;
    size = 32;
  } else {
    return Bad(path + ".@type", "\"" + type_url + "\" is not an account key type (" +
                                    std::string(kSecp256k1PubKeyTypeUrl) + " or " +
                                    std::string(kEd25519PubKeyTypeUrl) + ")");
  }
  auto bytes = crypto::Base64Decode(v["key"].get<std::string>());
  if (!bytes) return Bad(path + ".key", "not standard base64 with padding");
  if (bytes->size() != size) {
    return Bad(path + ".key", "must be " + std::to_string(size) + " bytes, got " +
                                  std::to_string(bytes->size()));
  }
  key.key = std::move(*bytes);
  return key;
}

// One entry of app_state.auth.accounts. `numbered`: whether the first entry had an account
// number (null for the first entry itself): all or none do.
Result<ante::Account> ReadAccount(const json& v, const std::string& path, const bool* numbered,
                                  std::set<std::string>* seen,
                                  std::set<std::uint64_t>* numbers) {
  if (Status s = CheckKeys(v, path, {"address", "account_number", "sequence", "pub_key"});
      !s.ok()) {
    return s;
  }
  if (!v.contains("address")) return Bad(path + ".address", "missing");
  ante::Account a;
  auto address = ReadAddress(v["address"], path + ".address");
  if (!address.ok()) return address.status();
  if (!seen->insert(*address).second) return Bad(path + ".address", "duplicate account");
  a.address = std::move(*address);
  const bool has_number = v.contains("account_number");
  if (numbered != nullptr && has_number != *numbered) {
    return Bad(path + ".account_number",
               *numbered ? "missing: accounts[0] has one, so every account must"
                         : "accounts[0] has none, so no account may (they are numbered in "
                           "the order listed)");
  }
  if (has_number) {
    auto n = ReadUint(v["account_number"], path + ".account_number");
    if (!n.ok()) return n.status();
    if (!numbers->insert(*n).second) {
      return Bad(path + ".account_number", std::to_string(*n) + " is another account's");
    }
    a.account_number = *n;
  }
  if (v.contains("sequence")) {
    auto n = ReadUint(v["sequence"], path + ".sequence");
    if (!n.ok()) return n.status();
    a.sequence = *n;
  }
  if (v.contains("pub_key")) {
    auto key = ReadPubKey(v["pub_key"], path + ".pub_key");
    if (!key.ok()) return key.status();
    a.pub_key = std::move(*key);
  }
  return a;
}

Status ReadAuth(const json& auth, GenesisState* g) {
  if (Status s = CheckKeys(auth, "app_state.auth",
                           {"params", "accounts", "next_account_number", "unordered_nonces"});
      !s.ok()) {
    return s;
  }
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
    std::set<std::uint64_t> numbers;
    for (std::size_t i = 0; i < accounts.size(); ++i) {
      auto a = ReadAccount(accounts[i], "app_state.auth.accounts[" + std::to_string(i) + "]",
                           i == 0 ? nullptr : &g->numbered, &seen, &numbers);
      if (!a.ok()) return a.status();
      if (i == 0) g->numbered = accounts[0].contains("account_number");
      g->accounts.push_back(std::move(*a));
    }
  }
  if (auth.contains("next_account_number")) {
    const std::string path = "app_state.auth.next_account_number";
    auto n = ReadUint(auth["next_account_number"], path);
    if (!n.ok()) return n.status();
    const std::uint64_t least = g->numbered ? 0 : g->accounts.size();
    std::uint64_t past = least;
    for (const ante::Account& a : g->accounts) past = std::max(past, a.account_number + 1);
    if (*n < past) {
      return Bad(path, "must be at least " + std::to_string(past) +
                           " (one past every account's number), got " + std::to_string(*n));
    }
    g->next_account_number = *n;
  }
  if (auth.contains("unordered_nonces")) {
    const json& nonces = auth["unordered_nonces"];
    const std::string root = "app_state.auth.unordered_nonces";
    if (!nonces.is_array()) return Bad(root, "must be an array");
    std::set<std::pair<std::string, std::int64_t>> seen;
    for (std::size_t i = 0; i < nonces.size(); ++i) {
      const std::string path = root + "[" + std::to_string(i) + "]";
      if (Status s = CheckKeys(nonces[i], path, {"signer", "timeout"}); !s.ok()) return s;
      if (!nonces[i].contains("signer")) return Bad(path + ".signer", "missing");
      if (!nonces[i].contains("timeout")) return Bad(path + ".timeout", "missing");
      auto signer = ReadAddress(nonces[i]["signer"], path + ".signer");
      if (!signer.ok()) return signer.status();
      auto timeout = ReadInt(nonces[i]["timeout"], path + ".timeout");
      if (!timeout.ok()) return timeout.status();
      if (!seen.emplace(*signer, *timeout).second) return Bad(path, "duplicate nonce");
      g->unordered_nonces.emplace_back(std::move(*signer), *timeout);
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
  for (const ante::Account& listed : g.accounts) {
    ante::Account a = listed;
    if (!g.numbered) {
      auto made = keeper.NewAccount(state, listed.address);
      if (!made.ok()) return Status::InvalidArgument("genesis account: " + made.status().ToString());
      a.account_number = made->account_number;
      if (!a.pub_key && a.sequence == 0) continue;  // NewAccount wrote it as it is
    }
    if (Status s = keeper.SetAccount(state, a); !s.ok()) return s;
  }
  // The next account number: given, or one past every listed number (NewAccount keeps it when
  // the accounts are numbered in order). Absent when the chain never made an account.
  std::optional<std::uint64_t> next = g.next_account_number;
  if (!next && g.numbered && !g.accounts.empty()) {
    std::uint64_t past = 0;
    for (const ante::Account& a : g.accounts) past = std::max(past, a.account_number + 1);
    next = past;
  }
  if (next) {
    if (Status s = keeper.SetAccountCount(state, *next); !s.ok()) return s;
  }
  for (const auto& [signer, timeout] : g.unordered_nonces) {
    auto added = keeper.TryAddUnorderedNonce(state, signer, timeout);
    if (!added.ok()) return added.status();
  }
  return Status::OK();
}

}  // namespace kairos::app::auth

namespace kairos::app::auth {

Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state,
                                                    const AuthKeeper& keeper) {
  using json = nlohmann::json;
  ante::AuthParams p = keeper.params();
  {
    std::string value;
    Status s = state.Get(AuthKeeper::kParamsKey, &value);
    if (s.ok()) {
      auto decoded = AuthKeeper::DecodeParams(value);
      if (!decoded.ok()) return decoded.status();
      p = *decoded;
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  json out = json::object();
  // The stored form (every field a decimal string), but the timeout as genesis reads it.
  json params = json::parse(AuthKeeper::EncodeParams(p));
  params.erase("unordered_max_timeout_nanos");
  params["unordered_max_timeout"] = ante::FormatDuration(p.unordered_max_timeout_nanos);
  out["params"] = std::move(params);

  auto accounts = keeper.ListAccounts(state);
  if (!accounts.ok()) return accounts.status();
  json list = json::array();
  for (const ante::Account& a : *accounts) {
    json entry = {{"address", crypto::EncodeAccountAddress(a.address)},
                  {"account_number", std::to_string(a.account_number)},
                  {"sequence", std::to_string(a.sequence)}};
    if (a.pub_key) {
      entry["pub_key"] = {{"@type", std::string(a.pub_key->type == crypto::KeyType::kSecp256k1
                                                    ? kSecp256k1PubKeyTypeUrl
                                                    : kEd25519PubKeyTypeUrl)},
                          {"key", crypto::Base64Encode(a.pub_key->key)}};
    }
    list.push_back(std::move(entry));
  }
  out["accounts"] = std::move(list);
  std::string next_value;
  if (Status s = state.Get(AuthKeeper::kNextAccountNumberKey, &next_value); s.ok()) {
    auto next = keeper.AccountCount(state);
    if (!next.ok()) return next.status();
    out["next_account_number"] = std::to_string(*next);
  } else if (!s.IsNotFound()) {
    return s;
  }
  auto nonces = keeper.ListUnorderedNonces(state);
  if (!nonces.ok()) return nonces.status();
  json pending = json::array();
  for (const auto& [signer, timeout] : *nonces) {
    pending.push_back(
        {{"signer", crypto::EncodeAccountAddress(signer)}, {"timeout", std::to_string(timeout)}});
  }
  out["unordered_nonces"] = std::move(pending);
  return std::optional<json>(std::move(out));
}

}  // namespace kairos::app::auth
