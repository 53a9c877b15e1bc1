#include "app/poa/genesis.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "app/genesis_json.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"

namespace kairos::app::poa {

namespace {

using json = nlohmann::json;
using genesis_json::Bad;
using genesis_json::CheckKeys;

const std::string kRoot = "app_state.poa";

// An integer in [min, max]: a JSON integer or a decimal string.
Result<std::int64_t> ReadInRange(const json& v, const std::string& path, std::int64_t min,
                                 std::int64_t max) {
  auto n = genesis_json::ReadInt(v, path);
  if (!n.ok()) return n.status();
  if (*n < min || *n > max) {
    return Bad(path, "must be from " + std::to_string(min) + " to " + std::to_string(max) +
                         ", got " + std::to_string(*n));
  }
  return *n;
}

Result<std::string> ReadString(const json& v, const std::string& path) {
  if (!v.is_string()) return Bad(path, "must be a string");
  return v.get<std::string>();
}

// An account address: bech32 "kairos1..." of 20 bytes (not a 32-byte module account: the
// authority signs txs).
Result<std::string> ReadAccount(const json& v, const std::string& path) {
  auto raw = genesis_json::ReadAddress(v, path);
  if (!raw.ok()) return raw.status();
  if (raw->size() != crypto::kAddressBytes) {
    return Bad(path, "must be a 20-byte account address, got " + std::to_string(raw->size()) +
                         " bytes");
  }
  return *raw;
}

Result<ConsensusKey> ReadPubKey(const json& v, const std::string& path) {
  if (Status s = CheckKeys(v, path, {"@type", "key"}); !s.ok()) return s;
  if (!v.contains("@type")) return Bad(path + ".@type", "is required");
  if (!v.contains("key")) return Bad(path + ".key", "is required");
  auto type_url = ReadString(v["@type"], path + ".@type");
  if (!type_url.ok()) return type_url.status();
  ConsensusKey key;
  if (*type_url == kEd25519PubKeyTypeUrl) {
    key.type = crypto::KeyType::kEd25519;
  } else if (*type_url == kSecp256k1PubKeyTypeUrl) {
    key.type = crypto::KeyType::kSecp256k1;
  } else {
    return Bad(path + ".@type", "\"" + *type_url + "\" is not a consensus key type (" +
                                    std::string(kEd25519PubKeyTypeUrl) + " or " +
                                    std::string(kSecp256k1PubKeyTypeUrl) + ")");
  }
  auto text = ReadString(v["key"], path + ".key");
  if (!text.ok()) return text.status();
  auto bytes = crypto::Base64Decode(*text);
  if (!bytes) return Bad(path + ".key", "not standard base64 with padding");
  key.bytes = std::move(*bytes);
  if (std::string problem = KeyProblem(key); !problem.empty()) return Bad(path + ".key", problem);
  return key;
}

Result<Validator> ReadValidator(const json& v, const std::string& path) {
  if (Status s = CheckKeys(v, path, {"pub_key", "power", "moniker", "operator_address"});
      !s.ok()) {
    return s;
  }
  if (!v.contains("pub_key")) return Bad(path + ".pub_key", "is required");
  if (!v.contains("power")) return Bad(path + ".power", "is required");
  Validator out;
  auto key = ReadPubKey(v["pub_key"], path + ".pub_key");
  if (!key.ok()) return key.status();
  out.pub_key = std::move(*key);
  auto power = ReadInRange(v["power"], path + ".power", 1, kMaxTotalVotingPower);
  if (!power.ok()) return power.status();
  out.power = *power;
  if (v.contains("moniker")) {
    auto moniker = ReadString(v["moniker"], path + ".moniker");
    if (!moniker.ok()) return moniker.status();
    if (moniker->size() > kMaxMonikerBytes) {
      return Bad(path + ".moniker", std::to_string(moniker->size()) + " bytes, at most " +
                                        std::to_string(kMaxMonikerBytes));
    }
    out.moniker = std::move(*moniker);
  }
  if (v.contains("operator_address")) {
    auto op = ReadAccount(v["operator_address"], path + ".operator_address");
    if (!op.ok()) return op.status();
    out.operator_address = std::move(*op);
  }
  return out;
}

// The pub_key_types the consensus params allow (CometBFT's default when it sends none).
std::vector<std::string> AllowedKeyTypes(const GenesisContext& ctx) {
  std::vector<std::string> types;
  if (ctx.consensus_params != nullptr && ctx.consensus_params->has_validator()) {
    for (const std::string& t : ctx.consensus_params->validator().pub_key_types()) {
      types.push_back(t);
    }
  }
  if (types.empty()) types.emplace_back(kEd25519KeyType);
  return types;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// CometBFT's genesis validators must be the module's (any order). The first difference, named.
using ValidatorUpdates = google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate>;

Status MatchCometValidators(const GenesisState& g, const ValidatorUpdates& comet) {
  // Keyed by the key's bytes with its type, ordered: what is compared does not depend on a
  // hash's order.
  std::map<std::pair<int, std::string>, std::pair<std::int64_t, int>> theirs;
  for (int i = 0; i < comet.size(); ++i) {
    auto key = FromCometKey(comet[i].pub_key());
    if (!key.ok()) {
      return Bad("validators", "CometBFT's genesis validators[" + std::to_string(i) +
                                   "] has " + key.status().message());
    }
    theirs[{static_cast<int>(key->type), key->bytes}] = {comet[i].power(), i};
  }
  std::set<std::pair<int, std::string>> ours;
  for (std::size_t i = 0; i < g.validators.size(); ++i) {
    const Validator& v = g.validators[i];
    const std::pair<int, std::string> k{static_cast<int>(v.pub_key.type), v.pub_key.bytes};
    ours.insert(k);
    const std::string path = kRoot + ".validators[" + std::to_string(i) + "]";
    auto it = theirs.find(k);
    if (it == theirs.end()) {
      return Bad(path, Describe(v.pub_key) + " is not among CometBFT's genesis validators "
                                             "(genesis.json \"validators\"): both must list the "
                                             "same set, or CometBFT's none");
    }
    if (it->second.first != v.power) {
      return Bad(path + ".power", std::to_string(v.power) + ", but CometBFT's genesis validators[" +
                                      std::to_string(it->second.second) + "] gives " +
                                      Describe(v.pub_key) + " power " +
                                      std::to_string(it->second.first));
    }
  }
  for (int i = 0; i < comet.size(); ++i) {
    auto key = FromCometKey(comet[i].pub_key());
    if (!ours.contains({static_cast<int>(key->type), key->bytes})) {
      return Bad(kRoot + ".validators",
                 "CometBFT's genesis validators[" + std::to_string(i) + "] (" + Describe(*key) +
                     ", power " + std::to_string(comet[i].power()) + ") is not listed here");
    }
  }
  return Status::OK();
}

}  // namespace

Result<GenesisState> ParseGenesis(const json* section) {
  GenesisState g;
  if (section == nullptr) return g;
  g.present = true;
  const json& poa = *section;
  if (Status s = CheckKeys(poa, kRoot, {"authority", "params", "validators"}); !s.ok()) return s;
  if (poa.contains("authority")) {
    auto a = ReadAccount(poa["authority"], kRoot + ".authority");
    if (!a.ok()) return a.status();
    g.authority = std::move(*a);
  }
  if (poa.contains("params")) {
    const std::string path = kRoot + ".params";
    const json& p = poa["params"];
    if (Status s = CheckKeys(p, path, {"max_validators"}); !s.ok()) return s;
    if (p.contains("max_validators")) {
      auto m = ReadInRange(p["max_validators"], path + ".max_validators", 1, kMaxValidatorsLimit);
      if (!m.ok()) return m.status();
      g.params.max_validators = static_cast<std::uint32_t>(*m);
    }
  }
  if (!poa.contains("validators") || !poa["validators"].is_array() ||
      poa["validators"].empty()) {
    return Bad(kRoot + ".validators",
               "must list at least one validator (the set must never be empty)");
  }
  const json& list = poa["validators"];
  std::map<std::string, std::size_t> seen;  // consensus address -> index
  std::int64_t total = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = kRoot + ".validators[" + std::to_string(i) + "]";
    auto v = ReadValidator(list[i], path);
    if (!v.ok()) return v.status();
    auto [it, fresh] = seen.emplace(ConsensusAddress(v->pub_key), i);
    if (!fresh) {
      return Bad(path + ".pub_key", Describe(v->pub_key) + " is already validators[" +
                                        std::to_string(it->second) +
                                        "]'s: a key appears once");
    }
    if (__builtin_add_overflow(total, v->power, &total) || total > kMaxTotalVotingPower) {
      return Bad(path + ".power", "the total power passes CometBFT's maximum " +
                                      std::to_string(kMaxTotalVotingPower));
    }
    g.validators.push_back(std::move(*v));
  }
  if (g.validators.size() > g.params.max_validators) {
    return Bad(kRoot + ".validators", std::to_string(g.validators.size()) +
                                          " validators, over params.max_validators " +
                                          std::to_string(g.params.max_validators));
  }
  return g;
}

Status InitGenesis(store::KvStore& kv, const PoaKeeper& keeper, const GenesisState& g,
                   const GenesisContext& ctx) {
  if (!g.present) return Status::OK();
  const std::vector<std::string> allowed = AllowedKeyTypes(ctx);
  for (std::size_t i = 0; i < g.validators.size(); ++i) {
    const std::string_view type = KeyTypeName(g.validators[i].pub_key.type);
    if (std::find(allowed.begin(), allowed.end(), type) == allowed.end()) {
      return Bad(kRoot + ".validators[" + std::to_string(i) + "].pub_key",
                 "a " + std::string(type) + " key, but the consensus params allow " +
                     Join(allowed) + " (consensus_params.validator.pub_key_types)");
    }
  }
  const bool comet_lists = ctx.validators != nullptr && !ctx.validators->empty();
  if (comet_lists) {
    if (Status s = MatchCometValidators(g, *ctx.validators); !s.ok()) return s;
  }

  auto write = [](const Status& s) {
    return s.ok() ? s : Status::InvalidArgument("writing the poa genesis: " + s.message());
  };
  if (!g.authority.empty()) {
    if (Status s = write(keeper.SetAuthority(kv, g.authority)); !s.ok()) return s;
  }
  if (Status s = write(keeper.SetParams(kv, g.params)); !s.ok()) return s;
  if (Status s = write(keeper.SetKeyTypes(kv, allowed)); !s.ok()) return s;
  Totals totals;
  for (const Validator& v : g.validators) {
    if (Status s = write(keeper.WriteValidator(kv, v)); !s.ok()) return s;
    totals.power += v.power;  // ParseGenesis bounded the sum
    ++totals.validators;
  }
  if (Status s = write(keeper.SetTotals(kv, totals)); !s.ok()) return s;

  if (!comet_lists && ctx.validators_out != nullptr) {
    // In consensus-address order: the order of the state, not of the JSON.
    auto set = keeper.ListValidators(kv);
    if (!set.ok()) return set.status();
    for (const Validator& v : *set) {
      *ctx.validators_out->Add() = ToValidatorUpdate(v.pub_key, v.power);
    }
  }
  return Status::OK();
}

Result<std::optional<json>> ExportGenesis(const store::KvReader& kv, const PoaKeeper& keeper) {
  auto present = keeper.Present(kv);
  if (!present.ok()) return present.status();
  if (!*present) return std::optional<json>();
  auto authority = keeper.GetAuthority(kv);
  if (!authority.ok()) return authority.status();
  auto params = keeper.GetParams(kv);
  if (!params.ok()) return params.status();
  auto set = keeper.ListValidators(kv);
  if (!set.ok()) return set.status();

  json out = json::object();
  if (!authority->empty()) out["authority"] = crypto::EncodeAccountAddress(*authority);
  out["params"] = {{"max_validators", params->max_validators}};
  json validators = json::array();
  for (const Validator& v : *set) {
    json entry = {{"pub_key",
                   {{"@type", std::string(KeyTypeUrl(v.pub_key.type))},
                    {"key", crypto::Base64Encode(v.pub_key.bytes)}}},
                  {"power", std::to_string(v.power)}};
    if (!v.moniker.empty()) entry["moniker"] = v.moniker;
    if (!v.operator_address.empty()) {
      entry["operator_address"] = crypto::EncodeAccountAddress(v.operator_address);
    }
    validators.push_back(std::move(entry));
  }
  out["validators"] = std::move(validators);
  return std::optional<json>(std::move(out));
}

}  // namespace kairos::app::poa
