#include "app/locks/genesis.h"

#include <algorithm>
#include <map>
#include <set>

#include "app/genesis_json.h"
#include "app/locks/msg_server.h"
#include "crypto/bech32.h"

namespace kairos::app::locks {

namespace {

Status BadAt(const std::string& path, const std::string& why) {
  return Status::InvalidArgument("genesis app_state.locks." + path + ": " + why);
}

using genesis_json::Bad;
using genesis_json::CheckKeys;
using genesis_json::json;
using genesis_json::ReadAddress;
using genesis_json::ReadAmount;
using genesis_json::ReadHeight;
using genesis_json::ReadInt;
using genesis_json::ReadUint;

Status ReadLocksParams(const json& p, Params* out) {
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
       {std::pair{"session_period", &Params::session_period},
        std::pair{"cooloff_period", &Params::cooloff_period},
        std::pair{"whitelist_period", &Params::whitelist_period},
        std::pair{"refund_holding_period", &Params::refund_holding_period}}) {
    if (!p.contains(name)) continue;
    auto v = ReadHeight(p[name], path + "." + name);
    if (!v.ok()) return v.status();
    out->*field = *v;
  }
  for (auto [name, field] :
       {std::pair{"max_locks_per_session", &Params::max_locks_per_session},
        std::pair{"end_block_cleanup_limit", &Params::end_block_cleanup_limit}}) {
    if (!p.contains(name)) continue;
    auto v = ReadUint(p[name], path + "." + name);
    if (!v.ok()) return v.status();
    out->*field = *v;
  }
  for (auto [name, field] : {std::pair{"base_deposit", &Params::base_deposit},
                             std::pair{"whitelist_fee", &Params::whitelist_fee}}) {
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
  if (Status s = Validate(*out); !s.ok()) {
    return Status::InvalidArgument("genesis " + path + "." + s.message());
  }
  return Status::OK();
}

// A slot object {"resource", "key"} at `path`.
Result<LockSlot> ReadSlot(const json& j, const std::string& path,
                                std::set<std::string> allowed = {"resource", "key"}) {
  if (Status s = CheckKeys(j, path, std::move(allowed)); !s.ok()) return s;
  LockSlot slot;
  if (!j.contains("resource") || !j["resource"].is_string()) {
    return Bad(path + ".resource", "missing or not a string");
  }
  slot.resource = j["resource"].get<std::string>();
  if (j.contains("key")) {
    if (!j["key"].is_string()) return Bad(path + ".key", "must be a string");
    slot.key = j["key"].get<std::string>();
  }
  if (auto problem = SlotProblem(slot)) return Bad(path, *problem);
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

Status ReadLocks(const json& j, GenesisState* g) {
  g->present = true;
  if (Status s = CheckKeys(j, "app_state.locks",
                           {"params", "sessions", "last_session_ends", "registrations", "vars"});
      !s.ok()) {
    return s;
  }
  if (j.contains("params")) {
    if (Status s = ReadLocksParams(j["params"], &g->params); !s.ok()) return s;
  }
  const Params& p = g->params;
  std::map<std::string, std::string> held_by;  // slot key part -> path of the session
  Status s = ReadAddressed(j, "sessions", [&](const json& e, const std::string& at,
                                              const std::string& address) -> Status {
    if (Status k = CheckKeys(e, at, {"address", "start", "expiry", "deposit", "held"}); !k.ok()) {
      return k;
    }
    Session session;
    for (auto [name, field] : {std::pair{"start", &Session::start},
                               std::pair{"expiry", &Session::expiry}}) {
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
        auto [it, fresh] = held_by.emplace(LocksKeeper::SlotKeyPart(*slot), at);
        if (!fresh) {
          return Bad(slot_path, SlotName(*slot) + " is also held by " + it->second);
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
    g->registrations.emplace_back(address, Registration{*expiry, *bond});
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
      if (!seen.insert(LocksKeeper::SlotKeyPart(*slot)).second) {
        return Bad(at, SlotName(*slot) + " is listed twice");
      }
      if (!vars[i].contains("value")) return Bad(at + ".value", "missing");
      auto value = ReadInt(vars[i]["value"], at + ".value");
      if (!value.ok()) return value.status();
      g->vars.emplace_back(*slot, *value);
    }
  }
  return Status::OK();
}


Status Write(store::KvStore& kv, std::string_view key, std::string_view value) {
  Status s = kv.Set(key, value);
  return s.ok() ? s : Status::InvalidArgument("writing the locks genesis: " + s.message());
}

}  // namespace

Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section) {
  auto g = std::make_unique<GenesisState>();
  if (section != nullptr) {
    if (Status s = ReadLocks(*section, g.get()); !s.ok()) return s;
  }
  return std::unique_ptr<ModuleGenesis>(std::move(g));
}

Status InitGenesis(store::KvStore& kv, const LocksKeeper& keeper, const GenesisState& g,
                   std::int64_t initial_height) {
  if (!g.present) return Status::OK();
  if (Status s = keeper.SetParams(kv, g.params); !s.ok()) return s;
  ante::Uint256 held_in_escrow = 0;
  for (std::size_t i = 0; i < g.sessions.size(); ++i) {
    const auto& [address, session] = g.sessions[i];
    if (session.start > initial_height) {
      return BadAt("sessions[" + std::to_string(i) + "].start",
                 std::to_string(session.start) + " is after the initial height " +
                     std::to_string(initial_height));
    }
    held_in_escrow += session.deposit;
    for (const LockSlot& slot : session.held) {
      if (Status s = Write(kv, LocksKeeper::LockKey(slot), address); !s.ok()) return s;
    }
    if (Status s = Write(kv, LocksKeeper::QueueKey(session.expiry, address), "\x01"); !s.ok()) {
      return s;
    }
    if (Status s = keeper.SetSessionRecord(kv, address, session); !s.ok()) return s;
  }
  for (std::size_t i = 0; i < g.last_session_ends.size(); ++i) {
    const auto& [address, height] = g.last_session_ends[i];
    if (height > initial_height) {
      return BadAt("last_session_ends[" + std::to_string(i) + "].height",
                 std::to_string(height) + " is after the initial height " +
                     std::to_string(initial_height));
    }
    if (Status s = keeper.SetLastEnd(kv, address, height); !s.ok()) return s;
  }
  for (const auto& [address, registration] : g.registrations) {
    held_in_escrow += registration.bond;
    if (Status s = keeper.SetRegistration(kv, address, registration); !s.ok()) return s;
  }
  for (const auto& [slot, value] : g.vars) {
    if (Status s = keeper.SetVar(kv, slot, value); !s.ok()) return s;
  }

  auto denom = keeper.GetDenom(kv);
  if (!denom.ok()) return denom.status();
  auto escrow = keeper.bank().GetBalance(kv, EscrowAddress(), *denom);
  if (!escrow.ok()) return escrow.status();
  if (*escrow != held_in_escrow) {
    return Status::InvalidArgument(
        "genesis app_state.locks: the escrow account " +
        crypto::EncodeAccountAddress(EscrowAddress()) + " holds " + ante::ToString(*escrow) +
        *denom + " in app_state.bank.balances, but the sessions' deposits plus the "
        "registrations' bonds are " + ante::ToString(held_in_escrow) + *denom);
  }
  return Status::OK();
}

namespace {

// The raw addresses of the records under `prefix` (each key is prefix + address), in order.
Result<std::vector<std::string>> AddressesUnder(const store::KvReader& kv,
                                                std::string_view prefix) {
  std::vector<std::string> out;
  auto it = kv.Iterate(prefix, store::PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) out.emplace_back(it->key().substr(prefix.size()));
  if (!it->status().ok()) return it->status();
  return out;
}

// A slot from its key part (LocksKeeper::SlotKeyPart).
Result<LockSlot> DecodeSlot(std::string_view part) {
  const std::size_t length = part.empty() ? 0 : static_cast<unsigned char>(part[0]);
  if (part.size() < 2 + length) return Status::Corruption("a locks slot key is malformed");
  LockSlot slot;
  slot.resource = std::string(part.substr(1, length));
  const char kind = part[1 + length];
  if (kind == '\x01') {
    slot.key = std::string(part.substr(2 + length));
  } else if (kind != '\x00' || part.size() != 2 + length) {
    return Status::Corruption("a locks slot key is malformed");
  }
  return slot;
}

json SlotJson(const LockSlot& slot) { return {{"resource", slot.resource}, {"key", slot.key}}; }

}  // namespace

Result<std::optional<json>> ExportGenesis(const store::KvReader& kv, const LocksKeeper& keeper) {
  {
    auto it = kv.Iterate("locks/", store::PrefixEnd("locks/"));
    const bool any = it->Valid();
    if (!it->status().ok()) return it->status();
    if (!any) return std::optional<json>();
  }
  auto p = keeper.GetParams(kv);
  if (!p.ok()) return p.status();
  json out = json::object();
  out["params"] = {{"session_period", std::to_string(p->session_period)},
                   {"cooloff_period", std::to_string(p->cooloff_period)},
                   {"whitelist_period", std::to_string(p->whitelist_period)},
                   {"refund_holding_period", std::to_string(p->refund_holding_period)},
                   {"base_deposit", ante::ToString(p->base_deposit)},
                   {"whitelist_fee", ante::ToString(p->whitelist_fee)},
                   {"max_locks_per_session", std::to_string(p->max_locks_per_session)},
                   {"scale_refund", p->scale_refund},
                   {"release_bounty_bps", p->release_bounty_bps},
                   {"forfeit_sink", p->forfeit_sink},
                   {"end_block_cleanup_limit", std::to_string(p->end_block_cleanup_limit)}};

  auto holders = AddressesUnder(kv, LocksKeeper::kSessionPrefix);
  if (!holders.ok()) return holders.status();
  json sessions = json::array();
  for (const std::string& address : *holders) {
    auto session = keeper.GetSession(kv, address);
    if (!session.ok()) return session.status();
    if (!*session) continue;
    json held = json::array();
    for (const LockSlot& slot : (*session)->held) held.push_back(SlotJson(slot));
    sessions.push_back({{"address", crypto::EncodeAccountAddress(address)},
                        {"start", std::to_string((*session)->start)},
                        {"expiry", std::to_string((*session)->expiry)},
                        {"deposit", ante::ToString((*session)->deposit)},
                        {"held", std::move(held)}});
  }
  out["sessions"] = std::move(sessions);

  auto ended = AddressesUnder(kv, LocksKeeper::kLastEndPrefix);
  if (!ended.ok()) return ended.status();
  json last_ends = json::array();
  for (const std::string& address : *ended) {
    auto h = keeper.GetLastEnd(kv, address);
    if (!h.ok()) return h.status();
    if (!*h) continue;
    last_ends.push_back(
        {{"address", crypto::EncodeAccountAddress(address)}, {"height", std::to_string(**h)}});
  }
  out["last_session_ends"] = std::move(last_ends);

  auto registered = AddressesUnder(kv, LocksKeeper::kRegistrationPrefix);
  if (!registered.ok()) return registered.status();
  json registrations = json::array();
  for (const std::string& address : *registered) {
    auto r = keeper.GetRegistration(kv, address);
    if (!r.ok()) return r.status();
    if (!*r) continue;
    registrations.push_back({{"address", crypto::EncodeAccountAddress(address)},
                             {"expiry", std::to_string((*r)->expiry)},
                             {"bond", ante::ToString((*r)->bond)}});
  }
  out["registrations"] = std::move(registrations);

  auto slots = AddressesUnder(kv, LocksKeeper::kVarPrefix);  // slot key parts
  if (!slots.ok()) return slots.status();
  json vars = json::array();
  for (const std::string& part : *slots) {
    auto slot = DecodeSlot(part);
    if (!slot.ok()) return slot.status();
    auto value = keeper.GetVar(kv, *slot);
    if (!value.ok()) return value.status();
    json entry = SlotJson(*slot);
    entry["value"] = std::to_string(*value);
    vars.push_back(std::move(entry));
  }
  out["vars"] = std::move(vars);
  return std::optional<json>(std::move(out));
}

}  // namespace kairos::app::locks
