#include "app/poa/module.h"

#include "app/hex.h"
#include "app/poa/genesis.h"
#include "app/poa/queries.h"
#include "crypto/base64.h"

namespace kairos::app::poa {

namespace {

// Calls f(const T&) for the message's type among the module's; `other` when none.
template <class F, class Other>
auto Visit(const ante::Msg& msg, F&& f, Other&& other) {
  if (const auto* m = msg.As<MsgSetValidator>()) return f(*m);
  if (const auto* m = msg.As<MsgUpdateAuthority>()) return f(*m);
  if (const auto* m = msg.As<MsgUpdateParams>()) return f(*m);
  return other();
}

}  // namespace

std::vector<std::string_view> PoaModule::msg_type_urls() const {
  return {MsgSetValidator::kTypeUrl, MsgUpdateAuthority::kTypeUrl, MsgUpdateParams::kTypeUrl};
}

bool PoaModule::DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                          const ProtoPath& at, ante::Msg* out) const {
  return poa::DecodeMsg(reader, type_url, value, at, out);
}

ante::TxStatus PoaModule::ValidateBasic(const ante::Msg& msg) const {
  return Visit(
      msg, [](const auto& m) { return poa::ValidateBasic(m); },
      [&] { return Module::ValidateBasic(msg); });
}

ante::TxStatus PoaModule::Handle(ante::Context& ctx, const ante::Msg& msg,
                                 std::size_t msg_index) const {
  return Visit(
      msg, [&](const auto& m) { return server_.Handle(ctx, m, msg_index); },
      [&] { return Module::Handle(ctx, msg, msg_index); });
}

std::vector<std::string_view> PoaModule::query_prefixes() const { return {kQueryPathPrefix}; }

Result<QueryAnswer> PoaModule::Query(const QueryRequest& req) const {
  return HandleQuery(keeper_, req);
}

Result<std::unique_ptr<ModuleGenesis>> PoaModule::ParseGenesis(
    const nlohmann::json* section) const {
  auto g = poa::ParseGenesis(section);
  if (!g.ok()) return g.status();
  return std::unique_ptr<ModuleGenesis>(std::make_unique<GenesisState>(std::move(*g)));
}

Status PoaModule::InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                              const GenesisContext& ctx) const {
  return poa::InitGenesis(state, keeper_, dynamic_cast<const GenesisState&>(genesis), ctx);
}

Result<std::optional<nlohmann::json>> PoaModule::ExportGenesis(
    const store::KvReader& state) const {
  return poa::ExportGenesis(state, keeper_);
}

Status PoaModule::EndBlock(store::KvStore& state, const ante::BlockInfo&,
                           BlockHookResult* out) const {
  std::vector<tendermint::abci::ValidatorUpdate> updates;
  if (Status s = keeper_.TakeValidatorUpdates(state, &updates); !s.ok()) return s;
  if (updates.empty()) return Status::OK();
  for (const auto& u : updates) {
    const bool ed = u.pub_key().has_ed25519();
    const std::string& bytes = ed ? u.pub_key().ed25519() : u.pub_key().secp256k1();
    const ConsensusKey key{ed ? crypto::KeyType::kEd25519 : crypto::KeyType::kSecp256k1, bytes};
    tendermint::abci::Event event;
    event.set_type("poa_validator_update");
    using Attribute = std::pair<std::string, std::string>;
    for (auto [k, v] : {Attribute{"consensus_address", HexEncode(ConsensusAddress(key), true)},
                        Attribute{"pub_key_type", std::string(KeyTypeName(key.type))},
                        Attribute{"pub_key", crypto::Base64Encode(bytes)},
                        Attribute{"power", std::to_string(u.power())}}) {
      auto* attr = event.add_attributes();
      attr->set_key(k);
      attr->set_value(v);
      attr->set_index(true);
    }
    out->events.push_back(std::move(event));
  }
  out->summary.push_back(std::to_string(updates.size()) + " validator update(s)");
  for (auto& u : updates) out->validator_updates.push_back(std::move(u));
  return Status::OK();
}

}  // namespace kairos::app::poa
