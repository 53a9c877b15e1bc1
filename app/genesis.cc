#include "app/genesis.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "app/chain_meta.h"
#include "app/genesis_json.h"
#include "app/module_list.h"
#include "store/big_endian.h"
#include "store/map_reader.h"
#include "store/merkle_store.h"

namespace kairos::app {

namespace {

using genesis_json::Bad;
using genesis_json::CheckKeys;
using genesis_json::json;
using genesis_json::ReadUint;

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
  return ParseGenesis(text, ModuleList::ForDecoding());
}

Result<Genesis> ParseGenesis(std::string_view text, const ModuleList& modules) {
  Genesis g;
  json root;
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos) {
    try {
      root = json::parse(text);
    } catch (const json::parse_error& e) {
      return Status::InvalidArgument(std::string("genesis app_state is not valid JSON: ") +
                                     e.what());
    }
  }
  // CometBFT's default app_state is empty (or "" or null): the defaults of every module.
  const bool empty = root.is_null() || (root.is_string() && root.get<std::string>().empty());
  if (!empty) {
    std::set<std::string> known = {"store"};
    for (const auto& m : modules.modules()) known.emplace(m->name());
    if (Status s = CheckKeys(root, "app_state", known); !s.ok()) return s;
  }
  for (const auto& m : modules.modules()) {
    const std::string name(m->name());
    const json* section = !empty && root.contains(name) ? &root[name] : nullptr;
    auto parsed = m->ParseGenesis(section);
    if (!parsed.ok()) return parsed.status();
    g.modules.push_back(std::shared_ptr<const ModuleGenesis>(std::move(*parsed)));
  }
  if (!empty && root.contains("store")) {
    if (Status s = ReadStore(root["store"], &g.kv_limits); !s.ok()) return s;
  }
  return g;
}

Result<json> ExportAppState(const store::KvReader& state, const ModuleList& modules) {
  json out = json::object();
  json limits = json::object();
  for (auto [key, name] : {std::pair{kKeyMaxKeyBytes, "max_key_bytes"},
                           std::pair{kKeyMaxValueBytes, "max_value_bytes"}}) {
    std::string value;
    Status s = state.Get(key, &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    std::uint64_t n = 0;
    if (!DecodeBigEndian64(value, &n)) return Status::Corruption(std::string(key) + " is malformed");
    limits[name] = std::to_string(n);
  }
  if (!limits.empty()) out["store"] = std::move(limits);
  for (const auto& m : modules.modules()) {
    auto section = m->ExportGenesis(state);
    if (!section.ok()) return section.status();
    if (*section) out[std::string(m->name())] = std::move(**section);
  }
  return out;
}

Result<json> ExportGenesisDocument(const store::KvReader& state, std::int64_t height,
                                   const json& base, const ModuleList& modules) {
  auto app_state = ExportAppState(state, modules);
  if (!app_state.ok()) return app_state.status();
  json doc = base.is_object() ? base : json::object();
  std::string value;
  if (Status s = state.Get(kKeyChainId, &value); s.ok()) {
    doc["chain_id"] = value;
  } else if (!s.IsNotFound()) {
    return s;
  }
  doc["initial_height"] = std::to_string(height + 1);
  doc["app_hash"] = "";
  if (Status s = state.Get(kKeyMaxBlockGas, &value); s.ok()) {
    std::uint64_t gas = 0;
    if (!DecodeBigEndian64(value, &gas)) {
      return Status::Corruption(std::string(kKeyMaxBlockGas) + " is malformed");
    }
    doc["consensus_params"]["block"]["max_gas"] = std::to_string(static_cast<std::int64_t>(gas));
  } else if (!s.IsNotFound()) {
    return s;
  }
  if (app_state->contains("poa")) doc["validators"] = json::array();
  doc["app_state"] = std::move(*app_state);
  return doc;
}

Result<json> ExportGenesisAt(const store::MerkleStore& store, std::int64_t height,
                             const json& base, const ModuleList& modules) {
  const std::int64_t latest = store.version();
  if (latest == 0) return Status::InvalidArgument("the store has no committed block");
  if (height == 0) height = latest;
  if (height > latest) {
    return Status::InvalidArgument("height " + std::to_string(height) +
                                   " is not committed (the store's latest is " +
                                   std::to_string(latest) + ")");
  }
  const std::int64_t earliest = std::max<std::int64_t>(store.earliest_version(), 1);
  if (height < earliest) {
    return Status::InvalidArgument(
        "height " + std::to_string(height) + " is no longer kept: the store keeps heights " +
        std::to_string(earliest) + " to " + std::to_string(latest) +
        " (store.keep_recent in config.toml sets how many recent heights are kept; 0 keeps "
        "all)");
  }
  if (height == latest) return ExportGenesisDocument(store, height, base, modules);
  // A past version's keys are not indexed in key order (the store's S index is the latest
  // version's): its tree is walked into memory and read from there.
  auto view = store.View(height);
  if (!view.ok()) return view.status();
  store::MapReader::Map state;
  if (Status s = (*view)->ForEachLeaf([&state](const store::StoreLeaf& leaf) {
        state.emplace(leaf.key, leaf.value);
        return Status::OK();
      });
      !s.ok()) {
    return s;
  }
  const store::MapReader reader(std::move(state));
  return ExportGenesisDocument(reader, height, base, modules);
}

}  // namespace kairos::app
