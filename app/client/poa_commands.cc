#include "app/client/poa_commands.h"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "app/client/chain_queries.h"
#include "app/client/cli_util.h"
#include "app/hex.h"
#include "app/poa/msgs.h"
#include "app/poa/queries.h"
#include "crypto/bech32.h"
#include "kairos/poa/v1/query.pb.h"

namespace kairos::client {

namespace {

namespace ppb = kairos::poa::v1;
using app::poa::ConsensusKey;

struct PoaTxFlags {
  std::string authority;  // FROM: the authority's key name or address
  std::string target;     // set-validator PUBKEY, update-authority NEW_AUTHORITY
  std::int64_t power = 0;
  std::string key_type = "ed25519";
  std::string moniker;
  std::string operator_address;
  std::uint32_t max_validators = 0;
  bool no_simulate = false;
  TxFlags tx;
};

struct PoaQueryFlags {
  std::string target;
  std::uint64_t limit = 100;
  std::string key_type = "ed25519";
  std::string node;
  std::int64_t height = 0;
  std::string output;
};

std::string Raw(const std::string& bech32) { return *crypto::DecodeAccountAddress(bech32); }

template <class Response>
Response Ask(RpcClient& rpc, std::string_view name, const google::protobuf::MessageLite& request,
             std::int64_t height, std::int64_t* at) {
  Response response;
  *at = Take(QueryProto(rpc, "/kairos.poa.v1.Query/" + std::string(name), request, height,
                        &response),
             kExitFailure, "query poa " + std::string(name) + ": ");
  return response;
}

Result<ConsensusKey> FromBase64(std::string_view b64, crypto::KeyType type) {
  std::string bytes;
  if (!absl::Base64Unescape(absl::string_view(b64.data(), b64.size()), &bytes)) {
    return Status::InvalidArgument("the key is not base64: '" + std::string(b64) + "'");
  }
  ConsensusKey key{type, bytes};
  if (std::string problem = app::poa::KeyProblem(key); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  return key;
}

bool IsHexAddress(std::string_view text) {
  if (text.size() != 40) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

OrderedJson ValidatorJson(const ppb::Validator& v, const std::string& address) {
  OrderedJson j = {{"address", address}, {"power", std::to_string(v.power())}};
  auto key = app::poa::FromAny(v.pub_key());
  if (key.ok()) {
    j["pub_key"] = {{"@type", std::string(app::poa::KeyTypeUrl(key->type))},
                    {"key", absl::Base64Escape(key->bytes)}};
  }
  j["moniker"] = v.moniker();
  j["operator_address"] = v.operator_address();
  return j;
}

void RunQuery(const std::string& home, const std::string& name, const PoaQueryFlags& f) {
  (void)home;
  RpcClient rpc = ConnectForQuery(f.node, f.height);
  const bool json = IsJson(f.output);
  std::int64_t at = 0;
  if (name == "validators") {
    ppb::QueryValidatorsRequest q;
    q.mutable_pagination()->set_limit(f.limit);
    q.mutable_pagination()->set_count_total(true);
    const auto r = Ask<ppb::QueryValidatorsResponse>(rpc, "Validators", q, f.height, &at);
    OrderedJson list = OrderedJson::array();
    for (int i = 0; i < r.validators_size(); ++i) {
      list.push_back(ValidatorJson(r.validators(i), i < r.addresses_size() ? r.addresses(i) : ""));
    }
    if (json) {
      PrintJson({{"validators", list},
                 {"total", std::to_string(r.pagination().total())},
                 {"total_power", std::to_string(r.total_power())},
                 {"height", std::to_string(at)}});
      return;
    }
    std::cout << r.pagination().total() << " validator(s), total power " << r.total_power()
              << " at height " << at << "\n";
    for (const auto& v : list) {
      std::cout << v["address"].get<std::string>() << "  power " << v["power"].get<std::string>()
                << "  " << v["moniker"].get<std::string>() << "\n";
    }
    return;
  }
  if (name == "validator") {
    std::string address = f.target;
    if (!IsHexAddress(address)) {
      const ConsensusKey key = Take(ParseConsensusKey(f.target, f.key_type), kExitUsage);
      address = app::HexEncode(app::poa::ConsensusAddress(key), /*upper=*/true);
    }
    ppb::QueryValidatorRequest q;
    q.set_address(address);
    const auto r = Ask<ppb::QueryValidatorResponse>(rpc, "Validator", q, f.height, &at);
    if (json) {
      PrintJson({{"found", r.found()},
                 {"validator", r.found() ? ValidatorJson(r.validator(), address)
                                         : OrderedJson(nullptr)},
                 {"height", std::to_string(at)}});
    } else if (!r.found()) {
      std::cout << address << " is not a validator\n";
    } else {
      std::cout << address << ": power " << r.validator().power() << ", moniker \""
                << r.validator().moniker() << "\"\n";
    }
    return;
  }
  if (name == "authority") {
    const auto r = Ask<ppb::QueryAuthorityResponse>(rpc, "Authority", ppb::QueryAuthorityRequest(),
                                                    f.height, &at);
    if (json) {
      PrintJson({{"authority", r.authority()}, {"height", std::to_string(at)}});
    } else {
      std::cout << (r.authority().empty() ? "the chain has no authority" : r.authority()) << "\n";
    }
    return;
  }
  const auto r =
      Ask<ppb::QueryParamsResponse>(rpc, "Params", ppb::QueryParamsRequest(), f.height, &at);
  if (json) {
    PrintJson({{"params", {{"max_validators", r.params().max_validators()}}},
               {"height", std::to_string(at)}});
  } else {
    std::cout << "max_validators: " << r.params().max_validators() << "\n";
  }
}

}  // namespace

Result<ConsensusKey> ParseConsensusKey(std::string_view text, std::string_view key_type) {
  const std::string trimmed(
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  if (!trimmed.empty() && trimmed.front() == '{') {
    nlohmann::json j = nlohmann::json::parse(trimmed, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::InvalidArgument("the key is not valid JSON");
    }
    // `cometbft show-validator`: {"type": "tendermint/PubKeyEd25519", "value": "<base64>"}.
    if (j.contains("type") && j.contains("value") && j["type"].is_string() &&
        j["value"].is_string()) {
      const std::string type = j["type"].get<std::string>();
      if (type == "tendermint/PubKeyEd25519") {
        return FromBase64(j["value"].get<std::string>(), crypto::KeyType::kEd25519);
      }
      if (type == "tendermint/PubKeySecp256k1") {
        return FromBase64(j["value"].get<std::string>(), crypto::KeyType::kSecp256k1);
      }
      return Status::InvalidArgument("unsupported consensus key type \"" + type +
                                     "\" (tendermint/PubKeyEd25519 or PubKeySecp256k1)");
    }
    // The SDK's JSON: {"@type": "/cosmos.crypto.ed25519.PubKey", "key": "<base64>"}.
    if (j.contains("@type") && j.contains("key") && j["@type"].is_string() &&
        j["key"].is_string()) {
      const std::string url = j["@type"].get<std::string>();
      if (url == app::poa::kEd25519PubKeyTypeUrl) {
        return FromBase64(j["key"].get<std::string>(), crypto::KeyType::kEd25519);
      }
      if (url == app::poa::kSecp256k1PubKeyTypeUrl) {
        return FromBase64(j["key"].get<std::string>(), crypto::KeyType::kSecp256k1);
      }
      return Status::InvalidArgument("unsupported key @type \"" + url + "\"");
    }
    return Status::InvalidArgument(
        "a key in JSON needs {\"type\", \"value\"} (cometbft show-validator) or {\"@type\", "
        "\"key\"}");
  }
  if (key_type == app::poa::kEd25519KeyType) return FromBase64(trimmed, crypto::KeyType::kEd25519);
  if (key_type == app::poa::kSecp256k1KeyType) {
    return FromBase64(trimmed, crypto::KeyType::kSecp256k1);
  }
  return Status::InvalidArgument("--key-type must be ed25519 or secp256k1, not '" +
                                 std::string(key_type) + "'");
}

void AddPoaTxCommands(CLI::App& tx, const std::string& home) {
  CLI::App* poa = tx.add_subcommand("poa", "Proof of authority: the validator set, by its authority");
  poa->require_subcommand(1);
  const auto common = [](CLI::App* cmd, const std::shared_ptr<PoaTxFlags>& f) {
    AddTxFlags(cmd, &f->tx);
    cmd->add_flag("--no-simulate", f->no_simulate,
                  "Broadcast without running the tx in simulation first");
  };

  auto set = std::make_shared<PoaTxFlags>();
  CLI::App* cmd = poa->add_subcommand(
      "set-validator", "Add a validator, change its power, or remove it (power 0); from H+2");
  cmd->add_option("authority", set->authority, "The authority's key name (or address)")
      ->required();
  cmd->add_option("pubkey", set->target,
                  "Consensus key: `cometbft show-validator` JSON, SDK JSON, or base64")
      ->required();
  cmd->add_option("power", set->power, "Voting power (0 removes)")->required();
  cmd->add_option("--key-type", set->key_type, "Type of a bare base64 key")
      ->check(CLI::IsMember({"ed25519", "secp256k1"}));
  cmd->add_option("--moniker", set->moniker, "A name for the validator (at most 70 bytes)");
  cmd->add_option("--operator", set->operator_address,
                  "Who runs it: an account address or key name (optional)");
  common(cmd, set);
  cmd->callback([&home, set] {
    const ConsensusKey key = Take(ParseConsensusKey(set->target, set->key_type), kExitUsage);
    SignAndBroadcast(home, set->authority, set->tx, !set->no_simulate,
                     [&](const Keyring& keyring, const KeyInfo& from, RpcClient&) {
                       app::poa::MsgSetValidator m;
                       m.authority = Raw(from.address);
                       m.pub_key = key;
                       m.power = set->power;
                       m.moniker = set->moniker;
                       if (!set->operator_address.empty()) {
                         m.operator_address = Raw(
                             Take(ResolveAddress(keyring, set->operator_address), kExitUsage));
                       }
                       return std::vector<ante::Msg>{m};
                     });
  });

  auto upd = std::make_shared<PoaTxFlags>();
  cmd = poa->add_subcommand("update-authority", "Hand the authority to another account");
  cmd->add_option("authority", upd->authority, "The authority's key name (or address)")
      ->required();
  cmd->add_option("new_authority", upd->target, "The new authority: an address or key name")
      ->required();
  common(cmd, upd);
  cmd->callback([&home, upd] {
    SignAndBroadcast(home, upd->authority, upd->tx, !upd->no_simulate,
                     [&](const Keyring& keyring, const KeyInfo& from, RpcClient&) {
                       app::poa::MsgUpdateAuthority m;
                       m.authority = Raw(from.address);
                       m.new_authority =
                           Raw(Take(ResolveAddress(keyring, upd->target), kExitUsage));
                       return std::vector<ante::Msg>{m};
                     });
  });

  auto params = std::make_shared<PoaTxFlags>();
  cmd = poa->add_subcommand("update-params", "Change the poa module's params");
  cmd->add_option("authority", params->authority, "The authority's key name (or address)")
      ->required();
  cmd->add_option("--max-validators", params->max_validators,
                  "How many validators the set may hold (1..10000)")
      ->required();
  common(cmd, params);
  cmd->callback([&home, params] {
    SignAndBroadcast(home, params->authority, params->tx, !params->no_simulate,
                     [&](const Keyring&, const KeyInfo& from, RpcClient&) {
                       app::poa::MsgUpdateParams m;
                       m.authority = Raw(from.address);
                       m.params.max_validators = params->max_validators;
                       return std::vector<ante::Msg>{m};
                     });
  });
}

void AddPoaQueryCommands(CLI::App& query, const std::string& home) {
  CLI::App* poa = query.add_subcommand("poa", "Proof of authority: validators, authority, params");
  poa->require_subcommand(1);
  const struct {
    const char* name;
    const char* target;
    const char* help;
  } commands[] = {
      {"validators", nullptr, "The validator set (the module's; CometBFT applies it at H+2)"},
      {"validator", "address",
       "One validator by consensus address (hex, as /validators shows) or public key"},
      {"authority", nullptr, "Who may change validators and params"},
      {"params", nullptr, "The module's params"},
  };
  for (const auto& c : commands) {
    auto f = std::make_shared<PoaQueryFlags>();
    CLI::App* cmd = poa->add_subcommand(c.name, c.help);
    if (c.target != nullptr) {
      cmd->add_option(c.target, f->target, "Hex consensus address or public key")->required();
      cmd->add_option("--key-type", f->key_type, "Type of a bare base64 key")
          ->check(CLI::IsMember({"ed25519", "secp256k1"}));
    }
    if (std::string(c.name) == "validators") {
      cmd->add_option("--limit", f->limit, "At most this many (the chain answers 100 at most)");
    }
    cmd->add_option("--node", f->node, kNodeFlagHelp);
    cmd->add_option("--height", f->height, "Height to query (0: latest)");
    AddOutputFlag(cmd, &f->output);
    const std::string name = c.name;
    cmd->callback([&home, name, f] { RunQuery(home, name, *f); });
  }
}

}  // namespace kairos::client
