#include "app/client/genesis_edit.h"

#include <sys/stat.h>

#include <cctype>
#include <charconv>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "ante/coins.h"
#include "app/client/file_util.h"
#include "app/genesis.h"
#include "crypto/bech32.h"

namespace kairos::client {

namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view kAccountTooLate =
    "InitChain read the genesis accounts when the chain began, so an account added now would "
    "never be funded. Send coins from a funded account instead (kairosd tx send FROM ADDRESS "
    "AMOUNT), or start a new chain (scripts/run-node.sh --reset, which keeps the keyring)";
constexpr std::string_view kPoaTooLate =
    "InitChain read the genesis validators when the chain began; change the set of a running "
    "chain with its authority's `kairosd tx poa set-validator`";

Status Bad(const std::string& what) { return Status::InvalidArgument(what); }

// Sets `parent[key]` to `value` when absent or null. False if it is there with another type.
bool EnsureMember(json& parent, const char* key, json value) {
  const json::value_t type = value.type();
  if (!parent.contains(key) || parent[key].is_null()) parent[key] = std::move(value);
  return parent[key].type() == type;
}

// The index of the entry of `list` whose "address" decodes to `raw`; -1 if none.
Result<int> FindAddress(const json& list, const std::string& raw, const std::string& path) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = path + "[" + std::to_string(i) + "].address";
    if (!list[i].is_object() || !list[i].contains("address") || !list[i]["address"].is_string()) {
      return Bad("genesis " + where + ": missing or not a string");
    }
    Result<std::string> a = crypto::DecodeAccountAddress(list[i]["address"].get<std::string>());
    if (!a.ok()) return Bad("genesis " + where + ": " + a.status().message());
    if (*a == raw) return static_cast<int>(i);
  }
  return -1;
}

// The coins of an existing balance entry, summed (the node checks them again afterwards).
Result<ante::Coins> ReadCoins(const json& coins, const std::string& path) {
  if (!coins.is_array()) return Bad("genesis " + path + ": must be an array");
  ante::Coins total;
  for (std::size_t i = 0; i < coins.size(); ++i) {
    const std::string where = "genesis " + path + "[" + std::to_string(i) + "]";
    const json& c = coins[i];
    if (!c.is_object() || !c.contains("denom") || !c["denom"].is_string() ||
        !c.contains("amount")) {
      return Bad(where + ": expected {\"denom\": ..., \"amount\": \"...\"}");
    }
    std::string amount_text;
    if (c["amount"].is_string()) {
      amount_text = c["amount"].get<std::string>();
    } else if (c["amount"].is_number_unsigned()) {
      amount_text = std::to_string(c["amount"].get<std::uint64_t>());
    } else {
      return Bad(where + ".amount: not a decimal string");
    }
    Result<ante::Uint256> amount = ante::ParseAmount(amount_text);
    if (!amount.ok()) return Bad(where + ".amount: " + amount.status().message());
    if (*amount == 0) continue;
    Result<ante::Coins> one = ante::Coins::FromSorted({{c["denom"].get<std::string>(), *amount}});
    if (!one.ok()) return Bad(where + ": " + one.status().message());
    total = total.Add(*one);
  }
  return total;
}

json CoinsJson(const ante::Coins& coins) {
  json out = json::array();
  for (const ante::Coin& c : coins.coins()) {
    out.push_back({{"denom", c.denom}, {"amount", ante::ToString(c.amount)}});
  }
  return out;
}

// The denom of the first entry of "1000stake,5atom" as written ("stake").
std::string FirstDenom(std::string_view coins) {
  std::string_view first = coins.substr(0, coins.find(','));
  std::size_t i = 0;
  while (i < first.size() && std::isspace(static_cast<unsigned char>(first[i]))) ++i;
  while (i < first.size() && std::isdigit(static_cast<unsigned char>(first[i]))) ++i;
  std::string_view denom = first.substr(i);
  while (!denom.empty() && std::isspace(static_cast<unsigned char>(denom.back()))) {
    denom.remove_suffix(1);
  }
  return std::string(denom);
}

}  // namespace

Status AddGenesisAccount(json* genesis, std::string_view address, std::string_view coins_text,
                         AddAccountOptions options) {
  Result<std::string> raw = crypto::DecodeAccountAddress(address);
  if (!raw.ok()) {
    return Bad("invalid address '" + std::string(address) + "': " + raw.status().message());
  }
  const std::string bech32 = crypto::EncodeAccountAddress(*raw);
  Result<ante::Coins> coins = ante::Coins::Parse(coins_text);
  if (!coins.ok()) {
    return Bad("invalid coins '" + std::string(coins_text) + "': " + coins.status().message());
  }
  if (coins->empty()) return Bad("no coins given: expected e.g. 1000stake");
  if (!genesis->is_object()) return Bad("genesis: the document is not a JSON object");

  json doc = *genesis;  // edited as a copy: `genesis` is unchanged on failure
  if (!doc.contains("app_state") || doc["app_state"].is_null() ||
      (doc["app_state"].is_string() && doc["app_state"].get<std::string>().empty())) {
    doc["app_state"] = json::object();
  }
  json& app_state = doc["app_state"];
  if (!app_state.is_object()) return Bad("genesis app_state: must be a JSON object");
  // ordered_json keeps members in a vector: every insertion into an object is done before a
  // reference into that object is taken.
  if (!EnsureMember(app_state, "auth", json::object()) ||
      !EnsureMember(app_state, "bank", json::object())) {
    return Bad("genesis app_state.auth and app_state.bank: must be JSON objects");
  }
  json& auth = app_state["auth"];
  json& bank = app_state["bank"];
  if (!EnsureMember(auth, "accounts", json::array())) {
    return Bad("genesis app_state.auth.accounts: must be an array");
  }
  if (!EnsureMember(bank, "balances", json::array())) {
    return Bad("genesis app_state.bank.balances: must be an array");
  }
  EnsureMember(bank, "denom", json(FirstDenom(coins_text)));
  json* accounts = &auth["accounts"];
  json* balances = &bank["balances"];

  Result<int> account_index = FindAddress(*accounts, *raw, "app_state.auth.accounts");
  if (!account_index.ok()) return account_index.status();
  Result<int> balance_index = FindAddress(*balances, *raw, "app_state.bank.balances");
  if (!balance_index.ok()) return balance_index.status();
  if ((*account_index >= 0 || *balance_index >= 0) && !options.append) {
    return Bad("account " + bech32 +
               " is already in the genesis file (--append adds the coins to its balance)");
  }

  if (*account_index < 0) accounts->push_back({{"address", bech32}});
  if (*balance_index < 0) {
    balances->push_back({{"address", bech32}, {"coins", json::array()}});
    balance_index = static_cast<int>(balances->size() - 1);
  }
  json& entry = (*balances)[static_cast<std::size_t>(*balance_index)];
  const std::string path = "app_state.bank.balances[" + std::to_string(*balance_index) + "].coins";
  if (!entry.contains("coins")) entry["coins"] = json::array();
  Result<ante::Coins> existing = ReadCoins(entry["coins"], path);
  if (!existing.ok()) return existing.status();
  try {
    entry["coins"] = CoinsJson(existing->Add(*coins));
  } catch (const std::overflow_error&) {
    return Bad("the balance of " + bech32 + " would overflow 256 bits");
  }
  Result<app::Genesis> check = app::ParseGenesis(app_state.dump());
  if (!check.ok()) {
    return Bad("the node would not accept the result: " + check.status().message());
  }
  *genesis = std::move(doc);
  return Status::OK();
}

Status CheckChainNotStarted(const std::string& genesis_path, std::string_view consequence) {
  namespace fs = std::filesystem;
  const fs::path home = fs::path(genesis_path).parent_path().parent_path();
  const fs::path data = home / "data";
  std::int64_t signed_height = 0;
  if (Result<std::string> state = ReadWholeFile((data / "priv_validator_state.json").string());
      state.ok()) {
    const json doc = json::parse(*state, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("height")) {
      const json& h = doc["height"];
      if (h.is_number_integer()) {
        signed_height = h.get<std::int64_t>();
      } else if (h.is_string()) {  // CometBFT writes int64s as strings
        const std::string text = h.get<std::string>();
        std::from_chars(text.data(), text.data() + text.size(), signed_height);
      }
    }
  }
  std::error_code ec;
  const bool has_state = fs::exists(data / "state.db", ec);
  if (signed_height <= 0 && !has_state) return Status::OK();
  const std::string how = signed_height > 0
                              ? "its validator has signed blocks up to height " +
                                    std::to_string(signed_height)
                              : "CometBFT has its state in " + (data / "state.db").string();
  return Status::InvalidArgument(
      "the chain of " + genesis_path + " has started (" + how +
      "): " + std::string(consequence));
}

namespace {

// Reads the genesis file at `path`, applies `edit` and replaces the file atomically (keeping its
// mode). CheckChainNotStarted first, with `consequence`.
Status EditGenesisFile(const std::string& path, std::string_view consequence,
                       const std::function<Status(json*)>& edit) {
  if (Status s = CheckChainNotStarted(path, consequence); !s.ok()) return s;
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) {
      return Status::NotFound("no genesis file at " + path +
                              " (run `cometbft init` first, or pass --genesis PATH)");
    }
    return text.status();
  }
  json genesis;
  try {
    genesis = json::parse(*text);
  } catch (const json::exception& e) {
    return Bad(path + " is not valid JSON: " + e.what());
  }
  if (Status s = edit(&genesis); !s.ok()) return s;
  struct stat st {};
  const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  std::string out;
  try {
    out = genesis.dump(2) + "\n";
  } catch (const json::exception& e) {
    return Bad(path + ": cannot write it back: " + e.what());
  }
  return WriteFileAtomically(path, out, mode);
}

}  // namespace

Status AddGenesisAccountToFile(const std::string& path, std::string_view address,
                               std::string_view coins, AddAccountOptions options) {
  return EditGenesisFile(path, kAccountTooLate, [&](json* genesis) {
    return AddGenesisAccount(genesis, address, coins, options);
  });
}

Status SetGenesisPoa(nlohmann::ordered_json* genesis, std::string_view authority) {
  json doc = *genesis;
  if (!doc.is_object()) return Bad("genesis: expected a JSON object");
  if (!doc.contains("validators") || !doc["validators"].is_array() ||
      doc["validators"].empty()) {
    return Bad("genesis validators: none listed (the poa section is made from CometBFT's "
               "genesis validators: `cometbft init` or `cometbft testnet` writes them)");
  }
  json validators = json::array();
  const json& list = doc["validators"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = "genesis validators[" + std::to_string(i) + "]";
    const json& v = list[i];
    if (!v.is_object() || !v.contains("pub_key") || !v["pub_key"].is_object() ||
        !v["pub_key"].contains("type") || !v["pub_key"]["type"].is_string() ||
        !v["pub_key"].contains("value") || !v["pub_key"]["value"].is_string()) {
      return Bad(where + ".pub_key: expected {\"type\": ..., \"value\": ...}");
    }
    const std::string type = v["pub_key"]["type"].get<std::string>();
    std::string url;
    if (type == "tendermint/PubKeyEd25519") {
      url = "/cosmos.crypto.ed25519.PubKey";
    } else if (type == "tendermint/PubKeySecp256k1") {
      url = "/cosmos.crypto.secp256k1.PubKey";
    } else {
      return Bad(where + ".pub_key.type: \"" + type +
                 "\" is not a key type the poa module takes (tendermint/PubKeyEd25519 or "
                 "tendermint/PubKeySecp256k1)");
    }
    if (!v.contains("power") || !(v["power"].is_string() || v["power"].is_number_integer())) {
      return Bad(where + ".power: missing or not an integer");
    }
    json entry = {{"pub_key", {{"@type", url}, {"key", v["pub_key"]["value"]}}},
                  {"power", v["power"].is_string() ? v["power"].get<std::string>()
                                                   : v["power"].dump()}};
    if (v.contains("name") && v["name"].is_string() && !v["name"].get<std::string>().empty()) {
      entry["moniker"] = v["name"];
    }
    validators.push_back(std::move(entry));
  }
  if (!doc.contains("app_state") || doc["app_state"].is_null() ||
      (doc["app_state"].is_string() && doc["app_state"].get<std::string>().empty())) {
    doc["app_state"] = json::object();
  }
  json& app_state = doc["app_state"];
  if (!app_state.is_object()) return Bad("genesis app_state: must be an object");
  json poa = app_state.contains("poa") && app_state["poa"].is_object() ? app_state["poa"]
                                                                       : json::object();
  if (!authority.empty()) {
    if (Result<std::string> a = crypto::DecodeAccountAddress(authority); !a.ok()) {
      return Bad("authority: " + a.status().message());
    }
    poa["authority"] = std::string(authority);
  }
  poa["validators"] = std::move(validators);
  app_state["poa"] = std::move(poa);
  Result<app::Genesis> check = app::ParseGenesis(app_state.dump());
  if (!check.ok()) {
    return Bad("the node would not accept the result: " + check.status().message());
  }
  *genesis = std::move(doc);
  return Status::OK();
}

Status SetGenesisPoaInFile(const std::string& path, std::string_view authority) {
  return EditGenesisFile(path, kPoaTooLate,
                         [&](json* genesis) { return SetGenesisPoa(genesis, authority); });
}

}  // namespace kairos::client
