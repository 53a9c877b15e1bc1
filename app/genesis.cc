#include "app/genesis.h"

#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "ante/context.h"
#include "app/locks/msg_server.h"
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

// A 64-bit integer of type T (uint64_t or int64_t): a JSON integer or a decimal string.
template <class T>
Result<T> ReadInteger(const json& v, const std::string& path, std::string_view what) {
  std::string text;
  if (v.is_number_integer()) {
    text = v.is_number_unsigned() ? std::to_string(v.get<std::uint64_t>())
                                  : std::to_string(v.get<std::int64_t>());
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    return Bad(path, "must be " + std::string(what) + " or a decimal string");
  }
  T out = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return Bad(path, "not " + std::string(what) + ": \"" + text + "\"");
  }
  return out;
}

Result<std::uint64_t> ReadUint(const json& v, const std::string& path) {
  return ReadInteger<std::uint64_t>(v, path, "a non-negative 64-bit integer");
}

// A signed 64-bit integer ("-7").
Result<std::int64_t> ReadInt(const json& v, const std::string& path) {
  return ReadInteger<std::int64_t>(v, path, "a signed 64-bit integer");
}

// A height: a ReadInt that is not negative.
Result<std::int64_t> ReadHeight(const json& v, const std::string& path) {
  auto h = ReadInt(v, path);
  if (h.ok() && *h < 0) return Bad(path, "must not be negative");
  return h;
}

// An amount: a decimal string (or a JSON integer) below 2^256.
Result<ante::Uint256> ReadAmount(const json& v, const std::string& path) {
  std::string text;
  if (v.is_number_unsigned()) {
    text = std::to_string(v.get<std::uint64_t>());
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    return Bad(path, "must be a decimal string");
  }
  if (text.empty()) return ante::Uint256(0);
  auto amount = ante::ParseAmount(text);
  if (!amount.ok()) return Bad(path, "not a decimal integer below 2^256: \"" + text + "\"");
  return *amount;
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

Status ReadLocksParams(const json& p, locks::Params* out) {
  const std::string path = "app_state.locks.params";
  if (Status s = CheckKeys(p, path,
                           {"session_period", "cooloff_period", "whitelist_period",
                            "refund_holding_period", "base_deposit", "whitelist_fee",
                            "max_locks_per_session", "scale_refund", "release_bounty_bps",
                            "forfeit_sink", "end_block_cleanup_limit"});
      !s.ok()) {
    return s;
  }
  for (auto [name, field] :
       {std::pair{"session_period", &locks::Params::session_period},
        std::pair{"cooloff_period", &locks::Params::cooloff_period},
        std::pair{"whitelist_period", &locks::Params::whitelist_period},
        std::pair{"refund_holding_period", &locks::Params::refund_holding_period}}) {
    if (!p.contains(name)) continue;
    auto v = ReadHeight(p[name], path + "." + name);
    if (!v.ok()) return v.status();
    out->*field = *v;
  }
  for (auto [name, field] :
       {std::pair{"max_locks_per_session", &locks::Params::max_locks_per_session},
        std::pair{"end_block_cleanup_limit", &locks::Params::end_block_cleanup_limit}}) {
    if (!p.contains(name)) continue;
    auto v = ReadUint(p[name], path + "." + name);
    if (!v.ok()) return v.status();
    out->*field = *v;
  }
  for (auto [name, field] : {std::pair{"base_deposit", &locks::Params::base_deposit},
                             std::pair{"whitelist_fee", &locks::Params::whitelist_fee}}) {
    if (!p.contains(name)) continue;
    auto v = ReadAmount(p[name], path + "." + name);
    if (!v.ok()) return v.status();
    out->*field = *v;
  }
  if (p.contains("release_bounty_bps")) {
    auto v = ReadUint(p["release_bounty_bps"], path + ".release_bounty_bps");
    if (!v.ok()) return v.status();
    out->release_bounty_bps = static_cast<std::uint32_t>(std::min<std::uint64_t>(*v, UINT32_MAX));
  }
  if (p.contains("scale_refund")) {
    if (!p["scale_refund"].is_boolean()) {
      return Bad(path + ".scale_refund", "must be true or false");
    }
    out->scale_refund = p["scale_refund"].get<bool>();
  }
  if (p.contains("forfeit_sink")) {
    if (!p["forfeit_sink"].is_string()) return Bad(path + ".forfeit_sink", "must be a string");
    out->forfeit_sink = p["forfeit_sink"].get<std::string>();
  }
  if (Status s = locks::Validate(*out); !s.ok()) {
    return Status::InvalidArgument("genesis " + path + "." + s.message());
  }
  return Status::OK();
}

// A slot object {"resource", "key"} at `path`.
Result<ante::LockSlot> ReadSlot(const json& j, const std::string& path,
                                std::set<std::string> allowed = {"resource", "key"}) {
  if (Status s = CheckKeys(j, path, std::move(allowed)); !s.ok()) return s;
  ante::LockSlot slot;
  if (!j.contains("resource") || !j["resource"].is_string()) {
    return Bad(path + ".resource", "missing or not a string");
  }
  slot.resource = j["resource"].get<std::string>();
  if (j.contains("key")) {
    if (!j["key"].is_string()) return Bad(path + ".key", "must be a string");
    slot.key = j["key"].get<std::string>();
  }
  if (auto problem = locks::SlotProblem(slot)) return Bad(path, *problem);
  return slot;
}

// The array at obj[name] (absent: empty), each element an object with an "address" that no
// other element has. Calls read(element, path, raw address).
template <class ReadOne>
Status ReadAddressed(const json& obj, const std::string& name, ReadOne&& read) {
  if (!obj.contains(name)) return Status::OK();
  const std::string path = "app_state.locks." + name;
  const json& list = obj[name];
  if (!list.is_array()) return Bad(path, "must be an array");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!list[i].is_object() || !list[i].contains("address")) {
      return Bad(at + ".address", "missing");
    }
    auto address = ReadAddress(list[i]["address"], at + ".address");
    if (!address.ok()) return address.status();
    if (!seen.insert(*address).second) return Bad(at + ".address", "listed twice");
    if (Status s = read(list[i], at, *address); !s.ok()) return s;
  }
  return Status::OK();
}

Status ReadLocks(const json& j, locks::GenesisState* g) {
  g->present = true;
  if (Status s = CheckKeys(j, "app_state.locks",
                           {"params", "sessions", "last_session_ends", "registrations", "vars"});
      !s.ok()) {
    return s;
  }
  if (j.contains("params")) {
    if (Status s = ReadLocksParams(j["params"], &g->params); !s.ok()) return s;
  }
  const locks::Params& p = g->params;
  std::map<std::string, std::string> held_by;  // slot key part -> path of the session
  Status s = ReadAddressed(j, "sessions", [&](const json& e, const std::string& at,
                                              const std::string& address) -> Status {
    if (Status k = CheckKeys(e, at, {"address", "start", "expiry", "deposit", "held"}); !k.ok()) {
      return k;
    }
    locks::Session session;
    for (auto [name, field] : {std::pair{"start", &locks::Session::start},
                               std::pair{"expiry", &locks::Session::expiry}}) {
      if (!e.contains(name)) return Bad(at + "." + name, "missing");
      auto v = ReadHeight(e[name], at + "." + name);
      if (!v.ok()) return v.status();
      session.*field = *v;
    }
    if (session.start > INT64_MAX - p.session_period ||
        session.expiry != session.start + p.session_period) {
      return Bad(at + ".expiry", "must be start + session_period (" +
                                     std::to_string(p.session_period) + ")");
    }
    if (e.contains("deposit")) {
      auto d = ReadAmount(e["deposit"], at + ".deposit");
      if (!d.ok()) return d.status();
      session.deposit = *d;
    }
    if (e.contains("held")) {
      if (!e["held"].is_array()) return Bad(at + ".held", "must be an array of slots");
      if (e["held"].size() > p.max_locks_per_session) {
        return Bad(at + ".held", "more than max_locks_per_session (" +
                                     std::to_string(p.max_locks_per_session) + ") slots");
      }
      for (std::size_t k = 0; k < e["held"].size(); ++k) {
        const std::string slot_path = at + ".held[" + std::to_string(k) + "]";
        auto slot = ReadSlot(e["held"][k], slot_path);
        if (!slot.ok()) return slot.status();
        auto [it, fresh] = held_by.emplace(locks::LocksKeeper::SlotKeyPart(*slot), at);
        if (!fresh) {
          return Bad(slot_path, locks::SlotName(*slot) + " is also held by " + it->second);
        }
        session.held.push_back(*slot);
      }
    }
    g->sessions.emplace_back(address, std::move(session));
    return Status::OK();
  });
  if (!s.ok()) return s;
  s = ReadAddressed(j, "last_session_ends", [&](const json& e, const std::string& at,
                                                const std::string& address) -> Status {
    if (Status k = CheckKeys(e, at, {"address", "height"}); !k.ok()) return k;
    if (!e.contains("height")) return Bad(at + ".height", "missing");
    auto h = ReadHeight(e["height"], at + ".height");
    if (!h.ok()) return h.status();
    g->last_session_ends.emplace_back(address, *h);
    return Status::OK();
  });
  if (!s.ok()) return s;
  s = ReadAddressed(j, "registrations", [&](const json& e, const std::string& at,
                                            const std::string& address) -> Status {
    if (Status k = CheckKeys(e, at, {"address", "expiry", "bond"}); !k.ok()) return k;
    if (!e.contains("expiry")) return Bad(at + ".expiry", "missing");
    auto expiry = ReadHeight(e["expiry"], at + ".expiry");
    if (!expiry.ok()) return expiry.status();
    if (!e.contains("bond")) return Bad(at + ".bond", "missing");
    auto bond = ReadAmount(e["bond"], at + ".bond");
    if (!bond.ok()) return bond.status();
    g->registrations.emplace_back(address, locks::Registration{*expiry, *bond});
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (j.contains("vars")) {
    const json& vars = j["vars"];
    if (!vars.is_array()) return Bad("app_state.locks.vars", "must be an array");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      const std::string at = "app_state.locks.vars[" + std::to_string(i) + "]";
      auto slot = ReadSlot(vars[i], at, {"resource", "key", "value"});
      if (!slot.ok()) return slot.status();
      if (!seen.insert(locks::LocksKeeper::SlotKeyPart(*slot)).second) {
        return Bad(at, locks::SlotName(*slot) + " is listed twice");
      }
      if (!vars[i].contains("value")) return Bad(at + ".value", "missing");
      auto value = ReadInt(vars[i]["value"], at + ".value");
      if (!value.ok()) return value.status();
      g->vars.emplace_back(*slot, *value);
    }
  }
  return Status::OK();
}

Status ReadStore(const json& j, store::KvLimits* out) {
  const std::string path = "app_state.store";
  if (Status s = CheckKeys(j, path, {"max_key_bytes", "max_value_bytes"}); !s.ok()) return s;
  for (auto [name, field, max] :
       {std::tuple{"max_key_bytes", &store::KvLimits::max_key_bytes, kMaxKeyBytesLimit},
        std::tuple{"max_value_bytes", &store::KvLimits::max_value_bytes, kMaxValueBytesLimit}}) {
    if (!j.contains(name)) continue;
    const std::string at = path + "." + name;
    auto v = ReadUint(j[name], at);
    if (!v.ok()) return v.status();
    if (*v == 0 || *v > max) {
      return Bad(at, "must be from 1 to " + std::to_string(max) + ", got " + std::to_string(*v));
    }
    out->*field = static_cast<std::size_t>(*v);
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
  if (Status s = CheckKeys(root, "app_state", {"auth", "bank", "locks", "store"}); !s.ok()) {
    return s;
  }
  if (root.contains("auth")) {
    if (Status s = ReadAuth(root["auth"], &g); !s.ok()) return s;
  }
  if (root.contains("bank")) {
    if (Status s = ReadBank(root["bank"], &g); !s.ok()) return s;
  }
  if (root.contains("locks")) {
    if (Status s = ReadLocks(root["locks"], &g.locks); !s.ok()) return s;
  }
  if (root.contains("store")) {
    if (Status s = ReadStore(root["store"], &g.kv_limits); !s.ok()) return s;
  }
  return g;
}

}  // namespace kairos::app
