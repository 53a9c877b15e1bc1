// kairosd export's core (app/genesis.h ExportAppState and the modules' ExportGenesis): a chain
// with accounts that sent ordered and unordered txs (sequences, public keys, pending nonces),
// fees and a poa section is exported at its last height; a fresh app InitChains from that
// app_state, and every key and value of both stores must be equal except meta/initial_height
// (H + 1 by design). A past height, walked from its tree, exports what it exported when it
// was the latest; heights not kept or not committed are refused with the kept range (the bank
// section carries denom metadata, which round-trip too). Also:
// the original genesis format parses as before.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "app/auth/genesis.h"
#include "app/bank/genesis.h"
#include "app/chain_meta.h"
#include "app/genesis.h"
#include "app/module_list.h"
#include "crypto/base64.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

using nlohmann::json;

// Every key and value of the store's latest version.
std::map<std::string, std::string> AllKeys(const store::MerkleStore& s) {
  std::map<std::string, std::string> out;
  auto it = s.Iterate("", store::PrefixEnd(""));
  for (; it->Valid(); it->Next()) out.emplace(it->key(), it->value());
  REQUIRE(it->status().ok());
  return out;
}

// keep_recent 0: every version kept.
std::unique_ptr<store::MerkleStore> OpenStore(const std::filesystem::path& dir,
                                              std::int64_t keep_recent = 0,
                                              std::int64_t prune_interval = 10) {
  store::StoreOptions so;
  so.dir = dir;
  so.keep_recent = keep_recent;
  so.prune_interval = prune_interval;
  auto db = store::MerkleStore::Open(so);
  REQUIRE(db.ok());
  return std::move(*db);
}

TEST_CASE("export: InitChain of the exported app_state rebuilds every key and value",
          "[export]") {
  const TestKey alice = MakeKey("alice"), bob = MakeKey("bob"), carol = MakeKey("carol");
  const TestKey dave = MakeKey("dave", crypto::KeyType::kEd25519);
  TempDir dir;
  std::string app_state;
  std::int64_t height = 0;
  std::map<std::string, std::string> original;
  {
    auto db = OpenStore(dir / "a");
    auto opened = app::KairosApp::Open(std::move(db));
    REQUIRE(opened.ok());
    auto& a = **opened;
    const TestKey validator = MakeKey("validator", crypto::KeyType::kEd25519);
    json genesis = json::parse(AppStateJson(
        {{alice, "1000000stake,50atom"}, {bob, "1000stake"}, {dave, "5000stake"}}));
    genesis["store"] = {{"max_key_bytes", "2048"}};
    // Two denoms' metadata, listed out of base order (the export lists them in it).
    genesis["bank"]["denom_metadata"] = json::parse(R"([
      {"description": "the staking coin", "base": "stake", "display": "STK", "name": "Stake",
       "symbol": "STK", "uri": "https://example.org/stake.svg", "uri_hash": "ab",
       "denom_units": [{"denom": "stake", "exponent": 0, "aliases": ["microstk"]},
                       {"denom": "STK", "exponent": "6"}]},
      {"base": "atom", "display": "atom", "name": "Atom", "symbol": "ATOM",
       "denom_units": [{"denom": "atom"}]}])");
    json validator_entry = json::object();
    validator_entry["pub_key"] = {{"@type", "/cosmos.crypto.ed25519.PubKey"},
                                  {"key", crypto::Base64Encode(validator.pub)}};
    validator_entry["power"] = "10";
    validator_entry["moniker"] = "v0";
    genesis["poa"] = json::object();
    genesis["poa"]["authority"] = alice.bech32;
    genesis["poa"]["validators"] = json::array({validator_entry});
    abci_pb::RequestInitChain init;
    init.set_chain_id(TestChain::kChainId);
    init.set_initial_height(1);
    init.set_app_state_bytes(genesis.dump());
    init.mutable_consensus_params()->mutable_block()->set_max_gas(10'000'000);
    a.InitChain(init);

    auto block = [&](std::vector<std::string> txs, std::int64_t t) {
      abci_pb::RequestFinalizeBlock req;
      req.set_height(a.last_height() + 1);
      req.mutable_time()->set_seconds(t / kSecond);
      for (auto& tx : txs) req.add_txs(tx);
      auto res = a.FinalizeBlock(req);
      for (const auto& r : res.tx_results()) REQUIRE(r.code() == 0);
      a.Commit({});
    };
    auto send = [](const TestKey& from, const TestKey& to, const std::string& amount,
                   std::uint64_t number, SendOptions o) {
      o.account_number = number;
      if (o.fee.empty()) o.fee = "200stake";
      return app::BuildSignedTx(SpecOf({MakeSend(from, to, amount)}, o),
                                {SignerOf(from, number, o.unordered ? 0 : o.sequence)},
                                TestChain::kChainId);
    };
    SendOptions seq0, seq1;
    seq1.sequence = 1;
    SendOptions unordered;
    unordered.unordered = true;
    unordered.timeout_unix_nanos = kT0 + 300 * kSecond;
    // alice: two ordered txs and one unordered (pending nonce); carol gets a new account;
    // dave (ed25519) signs once.
    block({send(alice, bob, "10stake", 0, seq0), send(dave, carol, "7stake", 2, seq0)},
          kT0 + kSecond);
    block({send(alice, carol, "5atom", 0, seq1), send(alice, bob, "3stake", 0, unordered)},
          kT0 + 2 * kSecond);
    height = a.last_height();
  }
  // As `kairosd export` does: the node is stopped, the store opened again.
  auto modules = app::ModuleList::Chain();
  {
    auto db = OpenStore(dir / "a");
    REQUIRE(db->version() == height);
    original = AllKeys(*db);
    auto exported = app::ExportAppState(*db, *modules);
    REQUIRE(exported.ok());
    app_state = exported->dump();
  }
  const json doc = json::parse(app_state);
  // The new fields are there: alice's sequence 2 and key, next account number, alice's nonce,
  // the supply.
  const json& alice_entry = doc["auth"]["accounts"];
  bool found = false;
  for (const json& acc : alice_entry) {
    if (acc["address"] == alice.bech32) {
      found = true;
      CHECK(acc["sequence"] == "2");
      CHECK(acc["account_number"] == "0");
      CHECK(acc["pub_key"]["@type"] == "/cosmos.crypto.secp256k1.PubKey");
      CHECK(acc["pub_key"]["key"] == crypto::Base64Encode(alice.pub));
    }
  }
  CHECK(found);
  CHECK(doc["auth"]["next_account_number"] == "4");
  REQUIRE(doc["auth"]["unordered_nonces"].size() == 1);
  CHECK(doc["auth"]["unordered_nonces"][0]["signer"] == alice.bech32);
  CHECK(doc["auth"]["unordered_nonces"][0]["timeout"] ==
        std::to_string(kT0 + 300 * kSecond));
  CHECK(doc["bank"]["create_accounts"] == false);
  CHECK(doc["store"]["max_key_bytes"] == "2048");
  CHECK(doc.contains("poa"));
  CHECK(!doc.contains("locks"));  // the chain has no locks state
  // The SDK's JSON shape, every field, in base denom order.
  REQUIRE(doc["bank"]["denom_metadata"].size() == 2);
  CHECK(doc["bank"]["denom_metadata"][0] == json::parse(R"({"description": "", "base": "atom",
      "display": "atom", "name": "Atom", "symbol": "ATOM", "uri": "", "uri_hash": "",
      "denom_units": [{"denom": "atom", "exponent": 0, "aliases": []}]})"));
  CHECK(doc["bank"]["denom_metadata"][1]["denom_units"] == json::parse(R"([
      {"denom": "stake", "exponent": 0, "aliases": ["microstk"]},
      {"denom": "STK", "exponent": 6, "aliases": []}])"));
  CHECK(doc["bank"]["denom_metadata"][1]["uri"] == "https://example.org/stake.svg");

  // A fresh chain from the export, at H + 1.
  std::map<std::string, std::string> rebuilt;
  {
    auto opened = app::KairosApp::Open(OpenStore(dir / "b"));
    REQUIRE(opened.ok());
    auto& b = **opened;
    abci_pb::RequestInitChain init;
    init.set_chain_id(TestChain::kChainId);
    init.set_initial_height(height + 1);
    init.set_app_state_bytes(app_state);
    init.mutable_consensus_params()->mutable_block()->set_max_gas(10'000'000);
    b.InitChain(init);
    abci_pb::RequestFinalizeBlock req;  // an empty block commits the genesis writes
    req.set_height(height + 1);
    req.mutable_time()->set_seconds(kT0 / kSecond + 3);
    b.FinalizeBlock(req);
    b.Commit({});
  }
  {
    auto db = OpenStore(dir / "b");
    rebuilt = AllKeys(*db);
  }
  CHECK(rebuilt.at(app::kKeyInitialHeight) !=
        original.at(app::kKeyInitialHeight));
  original.erase(app::kKeyInitialHeight);
  rebuilt.erase(app::kKeyInitialHeight);
  CHECK(original.size() > 20);
  // Key by key, so that a failure names the first difference.
  for (const auto& [key, value] : original) {
    INFO("key " << ante::Printable(key, 96));
    REQUIRE(rebuilt.count(key) == 1);
    CHECK(rebuilt.at(key) == value);
  }
  for (const auto& [key, value] : rebuilt) {
    INFO("key only in the rebuilt store: " << ante::Printable(key, 96));
    CHECK(original.count(key) == 1);
  }
}

TEST_CASE("export: a past height exports what it exported when it was the latest",
          "[export]") {
  const TestKey alice = MakeKey("alice"), bob = MakeKey("bob");
  TempDir dir;
  auto modules = app::ModuleList::Chain();
  const json base = json::object();
  // Blocks on the store in dir/a, through the app (opened on it, then closed again).
  auto run_blocks = [&](bool init, int count, std::uint64_t first_sequence) {
    auto opened = app::KairosApp::Open(OpenStore(dir / "a"));
    REQUIRE(opened.ok());
    auto& a = **opened;
    if (init) {
      abci_pb::RequestInitChain req;
      req.set_chain_id(TestChain::kChainId);
      req.set_initial_height(1);
      req.set_app_state_bytes(AppStateJson({{alice, "1000000stake"}, {bob, "1000stake"}}));
      req.mutable_consensus_params()->mutable_block()->set_max_gas(10'000'000);
      a.InitChain(req);
    }
    for (int i = 0; i < count; ++i) {
      SendOptions o;
      o.account_number = 0;
      o.sequence = first_sequence + static_cast<std::uint64_t>(i);
      o.fee = "200stake";
      const std::string tx =
          app::BuildSignedTx(SpecOf({MakeSend(alice, bob, std::to_string(i + 1) + "stake")}, o),
                             {SignerOf(alice, 0, o.sequence)}, TestChain::kChainId);
      abci_pb::RequestFinalizeBlock req;
      req.set_height(a.last_height() + 1);
      req.mutable_time()->set_seconds(kT0 / kSecond + a.last_height() + 1);
      req.add_txs(tx);
      auto res = a.FinalizeBlock(req);
      REQUIRE(res.tx_results_size() == 1);
      REQUIRE(res.tx_results(0).code() == 0);
      a.Commit({});
    }
  };
  auto export_at = [&](std::int64_t height) {
    auto db = OpenStore(dir / "a");
    auto doc = app::ExportGenesisAt(*db, height, base, *modules);
    INFO(doc.status().ToString());
    REQUIRE(doc.ok());
    return std::make_pair(*doc, db->version());
  };

  run_blocks(/*init=*/true, 3, 0);
  const auto [when_latest, height] = export_at(0);  // read in place (the key index)
  REQUIRE(height == 3);
  // More blocks change the balances; the store's default recent_versions (4) is passed, so
  // height 3 is rebuilt from the changesets for the walk.
  run_blocks(/*init=*/false, 6, 3);
  const auto [now, latest] = export_at(height);
  REQUIRE(latest == 9);
  CHECK(now.dump() == when_latest.dump());
  CHECK(now["initial_height"] == "4");
  // The latest export is another state (alice sent more), so the comparison above can fail.
  const auto [newest, newest_height] = export_at(0);
  CHECK(newest["app_state"]["bank"] != when_latest["app_state"]["bank"]);
}

TEST_CASE("export: a height that is not kept or not committed is refused", "[export]") {
  TempDir dir;
  auto modules = app::ModuleList::Chain();
  auto db = OpenStore(dir / "a", /*keep_recent=*/2, /*prune_interval=*/1);
  auto empty = app::ExportGenesisAt(*db, 0, json::object(), *modules);
  REQUIRE(!empty.ok());
  CHECK(empty.status().message() == "the store has no committed block");
  for (store::Version v = 1; v <= 6; ++v) {
    REQUIRE(db->Stage(v, {{"k", std::to_string(v)}}).ok());
    REQUIRE(db->Commit().ok());
  }
  const store::Version earliest = db->earliest_version();
  REQUIRE(earliest > 1);
  REQUIRE(earliest < 6);
  auto pruned = app::ExportGenesisAt(*db, earliest - 1, json::object(), *modules);
  REQUIRE(!pruned.ok());
  CHECK(pruned.status().code() == Status::Code::kInvalidArgument);
  CHECK(pruned.status().message() ==
        "height " + std::to_string(earliest - 1) + " is no longer kept: the store keeps heights " +
            std::to_string(earliest) +
            " to 6 (store.keep_recent in config.toml sets how many recent heights are kept; 0 "
            "keeps all)");
  auto future = app::ExportGenesisAt(*db, 7, json::object(), *modules);
  REQUIRE(!future.ok());
  CHECK(future.status().message() == "height 7 is not committed (the store's latest is 6)");
  // The oldest kept height is exported (the walk of a version below the latest).
  CHECK(app::ExportGenesisAt(*db, earliest, json::object(), *modules).ok());
}

TEST_CASE("export: a bank supply burned to zero is exported and rebuilt", "[export]") {
  // Burn leaves bank/supply/<denom> at "0"; the balances alone would not write it.
  TempDir dir;
  auto modules = app::ModuleList::Chain();
  const auto& bank = modules->Get<app::bank::BankModule>()->keeper();
  auto db = OpenStore(dir / "a");
  store::Branch state(*db, {});
  const TestKey alice = MakeKey("alice");
  REQUIRE(state.Set(app::bank::BankKeeper::SupplyKey("gone"), "0").ok());
  auto coins = ante::Coins::Parse("5stake");
  REQUIRE(bank.Mint(state, alice.address, *coins).ok());
  auto exported = modules->Find("bank")->ExportGenesis(state);
  REQUIRE(exported.ok());
  REQUIRE(exported->has_value());
  CHECK((**exported)["supply"] ==
        json::parse(R"([{"denom":"gone","amount":"0"},{"denom":"stake","amount":"5"}])"));
  auto parsed = modules->Find("bank")->ParseGenesis(&**exported);
  REQUIRE(parsed.ok());
  auto db2 = OpenStore(dir / "b");
  store::Branch fresh(*db2, {});
  REQUIRE(modules->Find("bank")->InitGenesis(fresh, **parsed, {}).ok());
  std::string value;
  REQUIRE(fresh.Get(app::bank::BankKeeper::SupplyKey("gone"), &value).ok());
  CHECK(value == "0");

  // A supply that does not match the balances is refused, naming the entry.
  json bad = **exported;
  bad["supply"][1]["amount"] = "6";
  auto reparsed = modules->Find("bank")->ParseGenesis(&bad);
  REQUIRE(reparsed.ok());
  auto db3 = OpenStore(dir / "c");
  store::Branch third(*db3, {});
  Status s = modules->Find("bank")->InitGenesis(third, **reparsed, {});
  CHECK(s.message() ==
        "genesis app_state.bank.supply[1].amount: 6stake, but the balances sum to 5stake");
}

TEST_CASE("export: a genesis in the original format parses as before", "[export]") {
  const TestKey alice = MakeKey("alice"), bob = MakeKey("bob");
  auto g = app::ParseGenesis(AppStateJson({{alice, "10stake"}, {bob, "5stake"}}));
  REQUIRE(g.ok());
  const auto& auth = g->Of<app::auth::GenesisState>();
  CHECK(!auth.numbered);
  CHECK(!auth.next_account_number);
  CHECK(auth.unordered_nonces.empty());
  const auto& bank = g->Of<app::bank::GenesisState>();
  CHECK(bank.create_accounts);
  CHECK(!bank.supply);
  REQUIRE(bank.balances.size() == 2);
  auto with_accounts = app::ParseGenesis(
      R"({"auth":{"accounts":[{"address":")" + alice.bech32 + R"("}]}})");
  REQUIRE(with_accounts.ok());
  const auto& listed = with_accounts->Of<app::auth::GenesisState>().accounts;
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].address == alice.address);
  CHECK(listed[0].sequence == 0);
  CHECK(!listed[0].pub_key);
}

TEST_CASE("export: account numbers are all given or none", "[export]") {
  const TestKey alice = MakeKey("alice"), bob = MakeKey("bob");
  auto g = app::ParseGenesis(R"({"auth":{"accounts":[{"address":")" + alice.bech32 +
                             R"(","account_number":"3"},{"address":")" + bob.bech32 + R"("}]}})");
  REQUIRE(!g.ok());
  CHECK(g.status().message() ==
        "genesis app_state.auth.accounts[1].account_number: missing: accounts[0] has one, so "
        "every account must");
  auto low = app::ParseGenesis(R"({"auth":{"accounts":[{"address":")" + alice.bech32 +
                               R"(","account_number":"3"}],"next_account_number":"3"}})");
  REQUIRE(!low.ok());
  CHECK(low.status().message() ==
        "genesis app_state.auth.next_account_number: must be at least 4 (one past every "
        "account's number), got 3");
}

}  // namespace
}  // namespace kairos::test
