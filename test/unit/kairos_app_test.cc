// Unit tests for app/kairos_app: the state machine over a real MerkleStore in a temp dir, driven
// with real signed Cosmos txs (MsgSend), its app hash checked against the reference SMT root of
// the state it should hold (a model of accounts and balances, written out as store keys).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "abci/dispatcher.h"
#include "app/hex.h"
#include "app/config.h"
#include "app/kairos_app.h"
#include "app/node_options.h"
#include "app/version.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "cosmos/ics23/v1/proofs.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "smt_reference.h"
#include "store/merkle_store.h"
#include "store/sha256.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

using app::KairosApp;
namespace pb = ::tendermint::abci;
namespace ics23 = cosmos::ics23::v1;
using Txs = std::vector<std::string>;

constexpr char kChainId[] = "kairos-test";
constexpr std::int64_t kMaxGas = 10'000'000;

const TestKey kAlice = MakeKey("alice");  // account 0 of Funded()
const TestKey kBob = MakeKey("bob");      // account 1 of Funded()
const TestKey kCarol = MakeKey("carol", crypto::KeyType::kEd25519);  // no genesis account

std::vector<std::pair<TestKey, std::string>> Funded() {
  return {{kAlice, "1000000stake"}, {kBob, "1000stake"}};
}

// The fee collector module account, derived as the SDK derives module addresses.
TestKey FeeCollector() {
  TestKey k;
  k.address = crypto::Sha256("fee_collector").substr(0, 20);
  k.bech32 = crypto::EncodeAccountAddress(k.address);
  return k;
}

// The block time of height `h` in these tests.
std::int64_t TimeOf(std::int64_t h) { return kT0 + h * kSecond; }

std::string SendWith(const TestKey& from, const TestKey& to, const std::string& amount,
                     const SendOptions& o, std::string_view chain_id = kChainId) {
  return app::BuildSignedTx(SpecOf({MakeSend(from, to, amount)}, o),
                            {SignerOf(from, o.account_number, o.unordered ? 0 : o.sequence)},
                            chain_id);
}

// A signed MsgSend from `from` (account `number`, at `sequence`) paying `fee`.
std::string Send(const TestKey& from, const TestKey& to, const std::string& amount,
                 std::uint64_t number, std::uint64_t sequence,
                 const std::string& fee = "200stake") {
  SendOptions o;
  o.account_number = number;
  o.sequence = sequence;
  o.fee = fee;
  return SendWith(from, to, amount, o);
}

// A node home with a database that outlives the app objects opened on it.
class Node {
 public:
  // Opens (or reopens) the app on the database in the temp dir.
  KairosApp& Open() {
    app_.reset();  // closes the database first, as a process exit would
    store::StoreOptions so;
    so.dir = dir_ / "data";
    so.keep_recent = 3;
    so.prune_interval = 1;
    auto db = store::MerkleStore::Open(so);
    REQUIRE(db.ok());
    auto app = KairosApp::Open(std::move(*db), options);
    REQUIRE(app.ok());
    app_ = std::move(*app);
    return *app_;
  }
  // Destroys the app without anything else: a crash at this instant, as far as disk goes.
  void Crash() { app_.reset(); }
  KairosApp& app() { return *app_; }
  app::AppOptions options;

 private:
  TempDir dir_;
  std::unique_ptr<KairosApp> app_;
};

pb::RequestInitChain GenesisRequest(std::int64_t initial_height = 1,
                                    const std::string& app_state = AppStateJson(Funded())) {
  pb::RequestInitChain req;
  req.set_chain_id(kChainId);
  req.set_initial_height(initial_height);
  req.set_app_state_bytes(app_state);
  req.mutable_consensus_params()->mutable_block()->set_max_gas(kMaxGas);
  return req;
}

pb::ResponseInitChain InitChain(KairosApp& app, std::int64_t initial_height = 1,
                                const std::string& app_state = AppStateJson(Funded())) {
  return app.InitChain(GenesisRequest(initial_height, app_state));
}

void SetTime(google::protobuf::Timestamp* t, std::int64_t unix_nanos) {
  t->set_seconds(unix_nanos / kSecond);
  t->set_nanos(static_cast<std::int32_t>(unix_nanos % kSecond));
}

// FinalizeBlock at `height` (0: let the app pick the next), at TimeOf(the height) unless `time`.
pb::ResponseFinalizeBlock Finalize(KairosApp& app, std::int64_t height, const Txs& txs = {},
                                   std::optional<std::int64_t> time = std::nullopt) {
  pb::RequestFinalizeBlock req;
  req.set_height(height);
  SetTime(req.mutable_time(), time ? *time : TimeOf(height != 0 ? height : app.last_height() + 1));
  for (const auto& tx : txs) req.add_txs(tx);
  return app.FinalizeBlock(req);
}

// FinalizeBlock then Commit; returns the app hash.
std::string Block(KairosApp& app, std::int64_t height, const Txs& txs = {}) {
  const pb::ResponseFinalizeBlock res = Finalize(app, height, txs);
  app.Commit({});
  return res.app_hash();
}

// Opens the node, runs InitChain with Funded() and commits an empty block 1 (at TimeOf(1)).
// Returns its app hash, the genesis root.
std::string Start(Node& node) {
  KairosApp& app = node.Open();
  InitChain(app);
  return Block(app, 1);
}

pb::ResponseCheckTx CheckTx(KairosApp& app, const std::string& tx) {
  pb::RequestCheckTx req;
  req.set_tx(tx);
  req.set_type(pb::NEW);
  return app.CheckTx(req);
}

pb::ResponseQuery Query(KairosApp& app, const std::string& path, std::int64_t height = 0,
                        const std::string& data = "", bool prove = false) {
  pb::RequestQuery req;
  req.set_path(path);
  req.set_height(height);
  req.set_data(data);
  req.set_prove(prove);
  return app.Query(req);
}

pb::ResponseQuery QueryKey(KairosApp& app, const std::string& key, std::int64_t height,
                           bool prove) {
  return Query(app, "/store/" + app::HexEncode(key), height, "", prove);
}

void CheckInfo(KairosApp& app, std::int64_t height, const std::string& app_hash) {
  const pb::ResponseInfo info = app.Info({});
  CHECK(info.last_block_height() == height);
  CHECK(info.last_block_app_hash() == app_hash);
}

std::string BE64(std::int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(static_cast<std::uint64_t>(v) >> (56 - 8 * i));
  }
  return out;
}

// Store keys (app/auth.h, app/bank.h).
std::string AccountKey(const std::string& address) { return "auth/acc/" + address; }
std::string BalanceKey(const std::string& address, const std::string& denom) {
  return "bank/bal/" + std::string(1, static_cast<char>(address.size())) + address + denom;
}

// cosmos.auth.v1beta1.BaseAccount, encoded here from the definition.
std::string AccountBytes(const std::string& address, std::uint64_t number, std::uint64_t sequence,
                         const TestKey* key) {
  cosmos::auth::v1beta1::BaseAccount a;
  a.set_address(crypto::EncodeAccountAddress(address));
  if (key != nullptr) {
    if (key->type == crypto::KeyType::kSecp256k1) {
      cosmos::crypto::secp256k1::PubKey k;
      k.set_key(key->pub);
      a.mutable_pub_key()->set_type_url("/cosmos.crypto.secp256k1.PubKey");
      a.mutable_pub_key()->set_value(k.SerializeAsString());
    } else {
      cosmos::crypto::ed25519::PubKey k;
      k.set_key(key->pub);
      a.mutable_pub_key()->set_type_url("/cosmos.crypto.ed25519.PubKey");
      a.mutable_pub_key()->set_value(k.SerializeAsString());
    }
  }
  a.set_account_number(number);
  a.set_sequence(sequence);
  return a.SerializeAsString();
}

// The state the app should hold: the chain identity and limits, accounts and balances.
struct Model {
  struct Account {
    std::uint64_t number = 0;
    std::uint64_t sequence = 0;
    std::optional<TestKey> key;  // set by the first tx the account signs
  };

  bool initialised = true;  // false: a chain without InitChain (abci-cli), no keys at all
  std::string chain_id = kChainId;
  std::int64_t initial_height = 1;
  store::KvLimits limits;
  std::int64_t max_gas = kMaxGas;
  std::map<std::string, Account> accounts;                                // raw address
  std::map<std::pair<std::string, std::string>, std::uint64_t> balances;  // (address, denom)
  std::map<std::string, std::uint64_t> supply;

  static Model Genesis(const std::vector<std::pair<TestKey, std::string>>& funded,
                       std::int64_t initial_height = 1, const store::KvLimits& limits = {}) {
    Model m;
    m.initial_height = initial_height;
    m.limits = limits;
    for (const auto& [key, coins] : funded) {
      m.EnsureAccount(key.address);
      auto parsed = ante::Coins::Parse(coins);
      REQUIRE(parsed.ok());
      for (const auto& c : parsed->coins()) {
        const auto amount = c.amount.convert_to<std::uint64_t>();
        m.balances[{key.address, c.denom}] += amount;
        m.supply[c.denom] += amount;
      }
    }
    return m;
  }

  void EnsureAccount(const std::string& address) {
    if (accounts.contains(address)) return;
    const std::uint64_t number = accounts.size();
    accounts[address].number = number;
  }
  void Move(const std::string& from, const std::string& to, std::uint64_t amount,
            const std::string& denom = "stake") {
    auto& have = balances[{from, denom}];
    REQUIRE(have >= amount);
    have -= amount;
    balances[{to, denom}] += amount;
  }
  // What the ante of an ordered tx keeps: the fee, the sequence and the public key.
  void Ante(const TestKey& from, std::uint64_t fee) {
    REQUIRE(accounts.contains(from.address));
    if (fee > 0) Move(from.address, FeeCollector().address, fee);
    Account& a = accounts[from.address];
    ++a.sequence;
    a.key = from;
  }
  // A successful ordered MsgSend.
  void Send(const TestKey& from, const TestKey& to, std::uint64_t amount, std::uint64_t fee = 200) {
    Ante(from, fee);
    Move(from.address, to.address, amount);
    EnsureAccount(to.address);
  }

  // Every key the store should hold, with its value; nullopt for a value the model does not
  // spell out (the auth params, whose encoding is the keeper's business).
  std::map<std::string, std::optional<std::string>> Expected() const {
    std::map<std::string, std::optional<std::string>> out;
    if (!initialised) return out;
    if (!chain_id.empty()) out["meta/chain_id"] = chain_id;
    out["meta/initial_height"] = BE64(initial_height);
    out["meta/max_key_bytes"] = BE64(static_cast<std::int64_t>(limits.max_key_bytes));
    out["meta/max_value_bytes"] = BE64(static_cast<std::int64_t>(limits.max_value_bytes));
    out["meta/max_block_gas"] = BE64(max_gas);
    out["auth/params"] = std::nullopt;
    out["bank/denom"] = "stake";
    if (!accounts.empty()) out["auth/next_account_number"] = BE64(std::ssize(accounts));
    for (const auto& [address, a] : accounts) {
      out[AccountKey(address)] =
          AccountBytes(address, a.number, a.sequence, a.key ? &*a.key : nullptr);
    }
    for (const auto& [at, amount] : balances) {
      if (amount > 0) out[BalanceKey(at.first, at.second)] = std::to_string(amount);
    }
    for (const auto& [denom, amount] : supply) out["bank/supply/" + denom] = std::to_string(amount);
    return out;
  }

  // The reference root of the expected state. Reads each key at the committed `height` through
  // the /store query: the values the model spells out must match, the others must be there.
  std::string Root(KairosApp& app, std::int64_t height) const {
    std::vector<std::pair<store::Hash, store::Hash>> leaves;
    for (const auto& [key, value] : Expected()) {
      INFO("key " << app::HexEncode(key) << " at height " << height);
      const pb::ResponseQuery res = QueryKey(app, key, height, /*prove=*/false);
      CHECK(res.code() == 0);
      CHECK(res.log().empty());  // not "key not found"
      if (value) CHECK(app::HexEncode(res.value()) == app::HexEncode(*value));
      const std::string v = value ? *value : res.value();
      CHECK_FALSE(v.empty());
      leaves.emplace_back(store::Sha256Of(key), store::Sha256Of(v));
    }
    return store::ToBytes(ReferenceRoot(leaves));
  }
};

// --- ICS-23 proof checks --------------------------------------------------------------------

// Applies an existence proof's ops: the root it commits to.
std::string RootOfExistence(const ics23::ExistenceProof& p) {
  using store::Sha256Of;
  std::string h = store::ToBytes(Sha256Of(std::string(1, '\0') +
                                          store::ToBytes(Sha256Of(p.key())) +
                                          store::ToBytes(Sha256Of(p.value()))));
  for (const auto& op : p.path()) h = store::ToBytes(Sha256Of(op.prefix() + h + op.suffix()));
  return h;
}

// The ICS-23 proof in `op`, a proof op for `key`.
ics23::CommitmentProof ProofIn(const tendermint::crypto::ProofOp& op, const std::string& key) {
  CHECK(op.type() == "ics23:smt");
  CHECK(op.key() == key);
  ics23::CommitmentProof proof;
  REQUIRE(proof.ParseFromString(op.data()));
  return proof;
}

// `op` proves that `key` holds `value` in the tree whose root is `root`.
void CheckExistenceProof(const tendermint::crypto::ProofOp& op, const std::string& key,
                         const std::string& value, const std::string& root) {
  const ics23::CommitmentProof proof = ProofIn(op, key);
  REQUIRE(proof.has_exist());
  CHECK(proof.exist().key() == key);
  CHECK(proof.exist().value() == value);
  CHECK(RootOfExistence(proof.exist()) == root);
}

// `op` proves that `key` is absent from the tree whose root is `root`.
void CheckNonExistenceProof(const tendermint::crypto::ProofOp& op, const std::string& key,
                            const std::string& root) {
  const ics23::CommitmentProof proof = ProofIn(op, key);
  REQUIRE(proof.has_nonexist());
  CHECK(proof.nonexist().key() == key);
  REQUIRE((proof.nonexist().has_left() || proof.nonexist().has_right()));
  if (proof.nonexist().has_left()) CHECK(RootOfExistence(proof.nonexist().left()) == root);
  if (proof.nonexist().has_right()) CHECK(RootOfExistence(proof.nonexist().right()) == root);
}

bool HasEvent(const pb::ExecTxResult& r, const std::string& type) {
  for (const auto& e : r.events()) {
    if (e.type() == type) return true;
  }
  return false;
}

// --- module queries ------------------------------------------------------------------------

template <class Request>
pb::ResponseQuery ModuleQuery(KairosApp& app, const std::string& path, const Request& q,
                              std::int64_t height = 0, bool prove = false) {
  return Query(app, path, height, q.SerializeAsString(), prove);
}

pb::ResponseQuery AccountQuery(KairosApp& app, const TestKey& key, std::int64_t height = 0,
                               bool prove = false) {
  cosmos::auth::v1beta1::QueryAccountRequest q;
  q.set_address(key.bech32);
  return ModuleQuery(app, "/cosmos.auth.v1beta1.Query/Account", q, height, prove);
}

// The BaseAccount in an Account answer.
cosmos::auth::v1beta1::BaseAccount AccountOf(const pb::ResponseQuery& res) {
  REQUIRE(res.code() == 0);
  cosmos::auth::v1beta1::QueryAccountResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  CHECK(r.account().type_url() == "/cosmos.auth.v1beta1.BaseAccount");
  cosmos::auth::v1beta1::BaseAccount a;
  REQUIRE(a.ParseFromString(r.account().value()));
  return a;
}

// `key`'s account as Query/Account answers it at `height`, with a proof checked against
// `app_hash`, the app hash of that height.
cosmos::auth::v1beta1::BaseAccount ProvenAccount(KairosApp& app, const TestKey& key,
                                                 std::int64_t height,
                                                 const std::string& app_hash) {
  const pb::ResponseQuery res = AccountQuery(app, key, height, /*prove=*/true);
  CHECK(res.height() == height);
  const auto account = AccountOf(res);
  CHECK(account.address() == key.bech32);
  cosmos::auth::v1beta1::QueryAccountResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  REQUIRE(res.proof_ops().ops_size() == 1);
  CheckExistenceProof(res.proof_ops().ops(0), AccountKey(key.address), r.account().value(),
                      app_hash);
  return account;
}

pb::ResponseQuery BalanceQuery(KairosApp& app, const std::string& address,
                               const std::string& denom, std::int64_t height = 0,
                               bool prove = false) {
  cosmos::bank::v1beta1::QueryBalanceRequest q;
  q.set_address(address);
  q.set_denom(denom);
  return ModuleQuery(app, "/cosmos.bank.v1beta1.Query/Balance", q, height, prove);
}

pb::ResponseQuery AllBalancesQuery(KairosApp& app, const std::string& address,
                                   std::int64_t height = 0, bool prove = false) {
  cosmos::bank::v1beta1::QueryAllBalancesRequest q;
  q.set_address(address);
  return ModuleQuery(app, "/cosmos.bank.v1beta1.Query/AllBalances", q, height, prove);
}

void CheckBadRequest(const pb::ResponseQuery& res, const std::string& log) {
  CHECK(res.code() == app::kCodeInvalidRequest);
  CHECK(res.codespace() == "sdk");
  CHECK_THAT(res.log(), Catch::Contains(log));
  CHECK(res.value().empty());
}

}  // namespace

TEST_CASE("tx.index_events marks only the listed attributes for CometBFT's indexer; the app "
          "hash and the results are the same", "[kairos_app]") {
  app::AppOptions only;
  only.index_events = {"transfer.recipient", "message.sender", "transfer.recipient"};
  TestChain all({{kAlice, "1000stake"}});
  TestChain some({{kAlice, "1000stake"}}, "", only);
  const std::string tx = all.Send(kAlice, kBob, "7stake");
  REQUIRE(tx == some.Send(kAlice, kBob, "7stake"));
  const auto a = all.Block({tx}, TimeOf(1));
  const auto b = some.Block({tx}, TimeOf(1));
  CHECK(a.app_hash() == b.app_hash());
  REQUIRE(a.tx_results_size() == 1);
  REQUIRE(b.tx_results_size() == 1);
  CHECK(b.tx_results(0).code() == 0);
  REQUIRE(a.tx_results(0).events_size() == b.tx_results(0).events_size());
  std::size_t marked = 0, attributes = 0;
  for (int i = 0; i < b.tx_results(0).events_size(); ++i) {
    const auto& ea = a.tx_results(0).events(i);
    const auto& eb = b.tx_results(0).events(i);
    REQUIRE(ea.attributes_size() == eb.attributes_size());
    for (int j = 0; j < eb.attributes_size(); ++j) {
      ++attributes;
      INFO(eb.type() << "." << eb.attributes(j).key());
      CHECK(ea.attributes(j).index());  // the default: every attribute
      CHECK(ea.attributes(j).value() == eb.attributes(j).value());
      const std::string name = eb.type() + "." + eb.attributes(j).key();
      CHECK(eb.attributes(j).index() == (name == "transfer.recipient" || name == "message.sender"));
      if (eb.attributes(j).index()) ++marked;
    }
  }
  CHECK(marked >= 2);  // a transfer's recipient and the message's sender
  CHECK(attributes > marked);
}

TEST_CASE("Info before InitChain reports the empty chain", "[kairos_app]") {
  Node node;
  const pb::ResponseInfo info = node.Open().Info({});
  CHECK(info.last_block_height() == 0);
  CHECK(info.last_block_app_hash().empty());
  CHECK(info.data() == "kairos");
  CHECK(info.app_version() == 1);
  CHECK(info.version() == kairos::kVersion);
}

TEST_CASE("InitChain echoes the validators and returns the genesis root", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  pb::RequestInitChain req = GenesisRequest();
  auto* v = req.add_validators();
  v->mutable_pub_key()->set_ed25519(std::string(32, '\x07'));
  v->set_power(10);
  const pb::ResponseInitChain res = app.InitChain(req);
  REQUIRE(res.validators_size() == 1);
  CHECK(res.validators(0).pub_key().ed25519() == std::string(32, '\x07'));
  CHECK(res.validators(0).power() == 10);
  CHECK_FALSE(res.has_consensus_params());
  CHECK(res.app_hash().size() == 32);
  CheckInfo(app, 0, "");  // nothing is committed by InitChain

  // The genesis state is committed with the first block, which (empty) writes nothing else:
  // its root is the genesis root, and it is the root of the accounts and balances app_state
  // lists.
  CHECK(Block(app, 1) == res.app_hash());
  CHECK(Model::Genesis(Funded()).Root(app, 1) == res.app_hash());
}

TEST_CASE("InitChain numbers the listed accounts first, then those only funded", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  const std::string app_state =
      R"({"auth":{"accounts":[{"address":")" + kCarol.bech32 + R"("}]},)" +
      R"("bank":{"balances":[{"address":")" + kAlice.bech32 +
      R"(","coins":[{"denom":"stake","amount":"7"}]}]}})";
  const std::string genesis = InitChain(app, 1, app_state).app_hash();
  CHECK(Block(app, 1) == genesis);
  Model model;
  model.EnsureAccount(kCarol.address);  // 0
  model.EnsureAccount(kAlice.address);  // 1
  model.balances[{kAlice.address, "stake"}] = 7;
  model.supply["stake"] = 7;
  CHECK(model.Root(app, 1) == genesis);
}

TEST_CASE("InitChain refuses a bad app_state, naming the JSON path, and keeps nothing",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  const std::string bad_amount =
      R"({"bank":{"balances":[{"address":")" + kAlice.bech32 +
      R"(","coins":[{"denom":"stake","amount":"-5"}]}]}})";
  CHECK_THROWS_WITH(InitChain(app, 1, bad_amount),
                    Catch::Contains("app_state.bank.balances[0].coins[0].amount") &&
                        Catch::Contains("-5"));
  CHECK_THROWS_WITH(InitChain(app, 1, R"({"bank":{"balances":[{"address":"kairos1nope"}]}})"),
                    Catch::Contains("app_state.bank.balances[0].address"));
  CHECK_THROWS_WITH(InitChain(app, 1, R"({"auth":{"params":{"tx_sig_limit":"x"}}})"),
                    Catch::Contains("app_state.auth.params.tx_sig_limit"));
  CHECK_THROWS_WITH(InitChain(app, 1, R"({"bank":{"denoms":"stake"}})"),
                    Catch::Contains("app_state.bank.denoms") && Catch::Contains("unknown field"));
  CHECK_THROWS_WITH(InitChain(app, 1, "{not json"), Catch::Contains("not valid JSON"));
  CheckInfo(app, 0, "");

  // The refused genesis left nothing behind: a good one gives the same root as on a fresh node.
  const std::string genesis = InitChain(app, 1).app_hash();
  Node fresh;
  CHECK(InitChain(fresh.Open(), 1).app_hash() == genesis);
  CHECK(Block(app, 1) == genesis);
  CHECK(Model::Genesis(Funded()).Root(app, 1) == genesis);
}

TEST_CASE("FinalizeBlock answers each tx and returns the root of the new state", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  const std::string genesis = InitChain(app).app_hash();
  // Later txs see earlier ones: alice's second tx needs the sequence her first one set, and bob
  // spends more than his genesis balance, which alice's first tx topped up.
  const Txs txs = {Send(kAlice, kBob, "500stake", 0, 0), Send(kAlice, kCarol, "50stake", 0, 1),
                   Send(kBob, kAlice, "1200stake", 1, 0, "100stake")};
  const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
  REQUIRE(res.tx_results_size() == 3);
  for (const auto& r : res.tx_results()) {
    INFO(r.log());
    CHECK(r.code() == 0);
    CHECK(r.gas_wanted() == 200000);
    CHECK(r.gas_used() > 0);
    CHECK(r.gas_used() <= r.gas_wanted());
    CHECK(HasEvent(r, "transfer"));
  }
  CHECK(res.app_hash() != genesis);

  // A second FinalizeBlock of the block (before Commit), now empty: nothing to answer, and the
  // genesis root again.
  const pb::ResponseFinalizeBlock empty = Finalize(app, 1, {});
  CHECK(empty.tx_results_size() == 0);
  CHECK(empty.app_hash() == genesis);

  CHECK(Block(app, 1, txs) == res.app_hash());
  Model model = Model::Genesis(Funded());
  model.Send(kAlice, kBob, 500);
  model.Send(kAlice, kCarol, 50);  // carol's account is new: number 2
  model.Send(kBob, kAlice, 1200, 100);
  CHECK(model.Root(app, 1) == res.app_hash());
  CHECK(model.balances.at({kBob.address, "stake"}) == 200);  // the model agrees on the story
}

TEST_CASE("a failing tx gets a code and leaves the state as it was", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app);
  Model model = Model::Genesis(Funded());

  SECTION("the ante rejects it: nothing of it is kept, not even its fee or sequence") {
    SendOptions low_gas;
    low_gas.sequence = 1;
    low_gas.fee = "200stake";
    low_gas.gas = 1000;  // less than the tx size costs
    SendOptions at1;
    at1.sequence = 1;
    at1.fee = "200stake";
    const Txs txs = {
        Send(kAlice, kBob, "100stake", 0, 0),
        "",
        "\x0a\x05garb",
        Send(kAlice, kBob, "100stake", 0, 5),                             // wrong sequence
        SendWith(kAlice, kBob, "100stake", at1, "other-chain"),          // bad signature
        Send(kBob, kAlice, "1stake", 1, 0, "5000stake"),                  // cannot pay the fee
        Send(kCarol, kAlice, "1stake", 2, 0),                             // no account
        SendWith(kAlice, kBob, "100stake", low_gas),                      // out of gas
        Send(kAlice, kBob, "50stake", 0, 1),
    };
    const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
    REQUIRE(res.tx_results_size() == 9);
    const auto expect = [&](int i, std::uint32_t code, const std::string& log) {
      INFO("tx " << i << ": " << res.tx_results(i).log());
      CHECK(res.tx_results(i).code() == code);
      CHECK(res.tx_results(i).codespace() == "sdk");
      CHECK_THAT(res.tx_results(i).log(), Catch::Contains(log));
    };
    CHECK(res.tx_results(0).code() == 0);
    expect(1, 2, "tx bytes are empty");
    expect(2, 2, "tx parse error");
    expect(3, 32, "account sequence mismatch, expected 1, got 5");
    expect(4, 4, "signature verification failed");
    expect(5, 5, "insufficient funds to pay the fee 5000stake");
    expect(6, 9, kCarol.bech32 + " does not exist");
    expect(7, 11, "out of gas");
    CHECK(res.tx_results(8).code() == 0);  // sequence 1: none of the failed txs moved it
    app.Commit({});
    model.Send(kAlice, kBob, 100);
    model.Send(kAlice, kBob, 50);
    CHECK(model.Root(app, 1) == res.app_hash());
  }

  SECTION("the message fails after the ante passed: the fee and the sequence are kept") {
    const Txs txs = {
        Send(kAlice, kBob, "2000000stake", 0, 0),      // more than alice has
        Send(kAlice, FeeCollector(), "1stake", 0, 1),  // a module account cannot receive
        Send(kAlice, kBob, "10stake", 0, 2),           // sequence 2: both failures moved it
    };
    const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
    REQUIRE(res.tx_results_size() == 3);
    CHECK(res.tx_results(0).code() == 5);
    CHECK(res.tx_results(0).codespace() == "sdk");
    CHECK_THAT(res.tx_results(0).log(),
               Catch::Contains("message index: 0") && Catch::Contains("999800stake") &&
                   Catch::Contains("2000000stake") && Catch::Contains("insufficient funds"));
    CHECK(res.tx_results(0).gas_used() > 0);
    CHECK_FALSE(HasEvent(res.tx_results(0), "transfer"));  // the message's events are dropped
    CHECK(res.tx_results(1).code() == 4);
    CHECK_THAT(res.tx_results(1).log(), Catch::Contains("is not allowed to receive funds"));
    CHECK(res.tx_results(2).code() == 0);
    app.Commit({});
    model.Ante(kAlice, 200);
    model.Ante(kAlice, 200);
    model.Send(kAlice, kBob, 10);
    CHECK(model.Root(app, 1) == res.app_hash());
    CHECK(model.balances.at({kBob.address, "stake"}) == 1010);
  }
}

namespace {

// Genesis keys are at most 35 bytes long ("bank/bal/" + 1 + 20 + "stake"); an unordered tx's
// nonce key is 43 ("auth/unordered/" + 8 + 20).
constexpr std::size_t kChainMaxKey = 40;

struct ChildAnswer {
  int exit_status = -1;  // as waitpid reports it
  std::string output;    // its stdout and stderr
};

// Runs the hidden test cases `spec` selects in this binary, in a fresh process, so that a node
// that stops (std::_Exit) does not take the test runner with it.
ChildAnswer RunTestInChild(const std::string& spec) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    execl("/proc/self/exe", "kairos_unit_tests", spec.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  ChildAnswer answer;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
    answer.output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  REQUIRE(waitpid(pid, &answer.exit_status, 0) == pid);
  return answer;
}

}  // namespace

// Funded()'s app_state with an app_state.store section.
std::string AppStateWithStore(const std::string& store_json) {
  std::string app_state = AppStateJson(Funded());
  app_state.pop_back();
  return app_state + R"(,"store":)" + store_json + "}";
}

// Run by the next test in a child process (hidden: not run on its own).
TEST_CASE("child: a tx over the chain's key limit, after a restart", "[.][kairos_app_child]") {
  Node node;
  InitChain(node.Open(), 1,
            AppStateWithStore(R"({"max_key_bytes":")" + std::to_string(kChainMaxKey) + R"("})"));
  Block(node.app(), 1);
  KairosApp& app = node.Open();
  std::cout << "limit " << app.limits().max_key_bytes << std::endl;
  SendOptions unordered;
  unordered.unordered = true;
  unordered.timeout_unix_nanos = TimeOf(2) + 60 * kSecond;
  unordered.fee = "200stake";
  const std::string tx = SendWith(kAlice, kBob, "10stake", unordered);
  const pb::ResponseCheckTx check = CheckTx(app, tx);
  std::cout << "check " << check.code() << " " << check.log() << std::endl;
  const pb::ResponseFinalizeBlock res = Finalize(app, 2, {tx});
  std::cout << "finalize " << res.tx_results(0).code() << " " << res.tx_results(0).log()
            << std::endl;
  app.Commit({});
  // The tx left nothing: the state is the genesis state.
  store::KvLimits chain_limits;
  chain_limits.max_key_bytes = kChainMaxKey;
  CHECK(Model::Genesis(Funded(), 1, chain_limits).Root(app, 2) == res.app_hash());
}

TEST_CASE("the size limits are the chain's: from genesis app_state.store, kept in the state",
          "[kairos_app]") {
  // A tx over the chain's limit is refused with a code (an invalid tx never stops a node), in
  // CheckTx and in FinalizeBlock, after a restart too.
  const ChildAnswer child = RunTestInChild("[kairos_app_child]");
  INFO("child output:\n" << child.output);
  CHECK(WIFEXITED(child.exit_status));
  CHECK(WEXITSTATUS(child.exit_status) == 0);  // 74: the node stopped on the tx
  CHECK_THAT(child.output, Catch::Contains("limit 40\n"));
  CHECK_THAT(child.output, Catch::Contains("check 18 ") &&
                               Catch::Contains("(genesis app_state.store.max_key_bytes)"));
  CHECK_THAT(child.output, Catch::Contains("finalize 18 "));

  // The limits themselves, in this process: written by InitChain, read back from the state.
  Node node;
  const std::string genesis =
      InitChain(node.Open(), 1,
                AppStateWithStore(R"({"max_key_bytes":")" + std::to_string(kChainMaxKey) +
                                  R"(","max_value_bytes":4096})"))
          .app_hash();
  Block(node.app(), 1);
  KairosApp& app = node.Open();
  CHECK(app.limits().max_key_bytes == kChainMaxKey);
  CHECK(app.limits().max_value_bytes == 4096);
  store::KvLimits chain_limits;
  chain_limits.max_key_bytes = kChainMaxKey;
  chain_limits.max_value_bytes = 4096;
  CHECK(Model::Genesis(Funded(), 1, chain_limits).Root(app, 1) == genesis);

  // Without app_state.store, the defaults.
  Node plain;
  InitChain(plain.Open());
  Block(plain.app(), 1);
  CHECK(plain.Open().limits().max_key_bytes == store::KvLimits{}.max_key_bytes);
  CHECK(plain.app().limits().max_value_bytes == store::KvLimits{}.max_value_bytes);
}

TEST_CASE("a bad app_state.store stops InitChain with its JSON path", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  for (const auto& [store_json, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"max_key_bytes":"0"})",
            "genesis app_state.store.max_key_bytes: must be from 1 to 65536, got 0"},
           {R"({"max_value_bytes":"67108865"})",
            "genesis app_state.store.max_value_bytes: must be from 1 to 67108864, got 67108865"},
           {R"({"max_key_bytes":"4k"})",
            "genesis app_state.store.max_key_bytes: not a non-negative 64-bit integer: \"4k\""},
           {R"({"max_keys":1})", "genesis app_state.store.max_keys: unknown field (known: "
                                 "max_key_bytes, max_value_bytes)"},
           {R"({"max_key_bytes":20})",  // too small for the genesis accounts' keys
            "genesis account: invalid argument: key of 24 bytes exceeds the limit of 20 "
            "(genesis app_state.store.max_key_bytes)"}}) {
    INFO(store_json);
    try {
      InitChain(app, 1, AppStateWithStore(store_json));
      FAIL("InitChain accepted it");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == message);
    }
  }
  CHECK(app.last_height() == 0);
}

TEST_CASE("two nodes whose configs differ compute the same app hashes", "[kairos_app]") {
  // Each node opens its store and app from its own config.toml, as kairosd does. The size limits
  // were once node settings that InitChain wrote into the genesis state, so two validators
  // whose configs differed computed different app hashes from block 1 on.
  struct ConfiguredNode {
    TempDir dir;
    std::unique_ptr<KairosApp> app;
    explicit ConfiguredNode(const std::string& toml) {
      auto config = app::ParseConfig(toml, "config.toml");
      INFO(config.status().message());
      REQUIRE(config.ok());
      auto db = store::MerkleStore::Open(app::StoreOptionsFor(*config, dir / "data"));
      REQUIRE(db.ok());
      auto opened = KairosApp::Open(std::move(*db), app::AppOptionsFor(*config));
      REQUIRE(opened.ok());
      app = std::move(*opened);
    }
  };
  ConfiguredNode plain("");
  ConfiguredNode small("[store]\nmax_key_bytes = " + std::to_string(kChainMaxKey) +
                       "\nmax_value_bytes = 1024\n");
  const std::string genesis_plain = InitChain(*plain.app).app_hash();
  const std::string genesis_small = InitChain(*small.app).app_hash();
  CHECK(app::HexEncode(genesis_plain) == app::HexEncode(genesis_small));
  SendOptions unordered;  // writes a 43-byte nonce key
  unordered.unordered = true;
  unordered.timeout_unix_nanos = TimeOf(2) + 60 * kSecond;
  const std::vector<Txs> blocks = {{Send(kAlice, kBob, "10stake", 0, 0)},
                                   {SendWith(kAlice, kBob, "5stake", unordered)}};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto height = static_cast<std::int64_t>(i + 1);
    INFO("block " << height);
    const pb::ResponseFinalizeBlock a = Finalize(*plain.app, height, blocks[i]);
    const pb::ResponseFinalizeBlock b = Finalize(*small.app, height, blocks[i]);
    REQUIRE(a.tx_results_size() == 1);
    REQUIRE(b.tx_results_size() == 1);
    CHECK(a.tx_results(0).code() == 0);
    CHECK(b.tx_results(0).code() == 0);
    CHECK(app::HexEncode(a.app_hash()) == app::HexEncode(b.app_hash()));
    plain.app->Commit({});
    small.app->Commit({});
  }
}

TEST_CASE("CheckTx runs the tx on the check state", "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();

  // Two txs of one sender before any block: the second passes because the check state saw the
  // first one's sequence.
  const std::string seq0 = Send(kAlice, kBob, "10stake", 0, 0);
  const std::string seq1 = Send(kAlice, kBob, "10stake", 0, 1);
  const pb::ResponseCheckTx first = CheckTx(app, seq0);
  CHECK(first.code() == 0);
  CHECK(first.gas_wanted() == 200000);
  CHECK(first.gas_used() > 0);
  CHECK(CheckTx(app, seq1).code() == 0);
  const pb::ResponseCheckTx again = CheckTx(app, seq1);
  CHECK(again.code() == 19);
  CHECK(again.codespace() == "sdk");
  CHECK(again.log() == "tx already in mempool");
  // Another tx on sequence 0: a replacement of the pooled one, refused without the bump.
  const pb::ResponseCheckTx old = CheckTx(app, Send(kAlice, kBob, "11stake", 0, 0));
  CHECK(old.code() == 13);  // same sequence as a pooled tx: a replacement, without the bump

  const pb::ResponseCheckTx empty = CheckTx(app, "");
  CHECK(empty.code() == app::kCodeTxDecode);
  CHECK(empty.codespace() == "sdk");
  CHECK_THAT(empty.log(), Catch::Contains("tx bytes are empty"));
  const pb::ResponseCheckTx poor = CheckTx(app, Send(kBob, kAlice, "1stake", 1, 0, "5000stake"));
  CHECK(poor.code() == 5);
  CHECK_THAT(poor.log(), Catch::Contains("insufficient funds"));

  // The check state is not the block's: a block with only the second tx fails it, and CheckTx
  // wrote nothing to the committed state.
  CheckInfo(app, 1, h1);
  const pb::ResponseFinalizeBlock res = Finalize(app, 2, {seq1});
  CHECK(res.tx_results(0).code() == 32);
  CHECK(res.app_hash() == h1);
  app.Commit({});
  // Commit rebuilds the check state from the committed one (alice's sequence still 0) plus the
  // pool: seq0 was not in the block, so it stays in the mempool and counts again; seq1 left
  // with the block (failed), and is accepted anew on top of seq0.
  CHECK(CheckTx(app, seq0).code() == 19);
  CHECK(CheckTx(app, seq1).code() == 0);
}

TEST_CASE("the app hash follows the state: txs change it, an empty block does not",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  const std::string genesis = InitChain(app).app_hash();
  Model model = Model::Genesis(Funded());
  std::string previous = genesis;
  std::uint64_t sequence = 0;
  for (int h = 1; h <= 4; ++h) {
    INFO("height " << h);
    Txs txs;
    if (h != 3) {
      txs.push_back(Send(kAlice, kBob, std::to_string(h) + "stake", 0, sequence++));
      model.Send(kAlice, kBob, static_cast<std::uint64_t>(h));
    }
    const std::string hash = Block(app, h, txs);
    CHECK(hash == model.Root(app, h));
    if (h == 3) {
      CHECK(hash == previous);  // empty: CometBFT's create_empty_blocks = false can then idle
    } else {
      CHECK(hash != previous);
    }
    previous = hash;
  }
}

TEST_CASE("Commit persists exactly the committed height and hash", "[kairos_app]") {
  Node node;
  std::string hash;
  Model model = Model::Genesis(Funded());
  {
    KairosApp& app = node.Open();
    InitChain(app);
    for (int h = 1; h <= 3; ++h) {
      hash = Block(app, h, {Send(kAlice, kBob, "1stake", 0, h - 1)});
      model.Send(kAlice, kBob, 1);
    }
    CheckInfo(app, 3, hash);
    CHECK(app.last_height() == 3);
    CHECK(app.last_app_hash() == hash);
  }
  KairosApp& reopened = node.Open();
  CheckInfo(reopened, 3, hash);
  CHECK(Query(reopened, "/app/height").value() == "3");
  CHECK(model.Root(reopened, 3) == hash);
  // The chain goes on from there: alice's sequence 3 was persisted.
  const pb::ResponseFinalizeBlock res = Finalize(reopened, 4, {Send(kAlice, kBob, "1stake", 0, 3)});
  CHECK(res.tx_results(0).code() == 0);
  reopened.Commit({});
  model.Send(kAlice, kBob, 1);
  CHECK(model.Root(reopened, 4) == res.app_hash());
}

TEST_CASE("a crash between FinalizeBlock and Commit leaves the previous height", "[kairos_app]") {
  Node node;
  const Txs block2 = {Send(kAlice, kBob, "3stake", 0, 1)};
  std::string h1, h2;
  {
    KairosApp& app = node.Open();
    InitChain(app);
    h1 = Block(app, 1, {Send(kAlice, kBob, "1stake", 0, 0)});
    h2 = Finalize(app, 2, block2).app_hash();
    REQUIRE(h2 != h1);
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 1, h1);
  Model model = Model::Genesis(Funded());
  model.Send(kAlice, kBob, 1);
  CHECK(model.Root(app, 1) == h1);  // nothing of block 2 (alice's sequence is 1)
  const pb::ResponseFinalizeBlock again = Finalize(app, 2, block2);  // the re-sent block
  CHECK(again.tx_results(0).code() == 0);
  CHECK(again.app_hash() == h2);
  app.Commit({});
  CheckInfo(node.Open(), 2, h2);
  model.Send(kAlice, kBob, 3);
  CHECK(model.Root(node.app(), 2) == h2);
}

TEST_CASE("a crash before the first Commit leaves the empty chain", "[kairos_app]") {
  Node node;
  const Txs txs = {Send(kAlice, kBob, "1stake", 0, 0)};
  std::string genesis, h1;
  {
    KairosApp& app = node.Open();
    genesis = InitChain(app).app_hash();
    h1 = Finalize(app, 1, txs).app_hash();
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 0, "");
  CHECK(AccountQuery(app, kAlice).code() == app::kCodeInvalidHeight);  // nothing committed
  CHECK(InitChain(app).app_hash() == genesis);  // CometBFT replays InitChain at height 0
  const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.app_hash() == h1);
}

TEST_CASE("a second FinalizeBlock of a block before Commit gives the same app hash",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app);
  SECTION("the first block") {
    const Txs txs = {Send(kAlice, kBob, "1stake", 0, 0)};
    const std::string first = Finalize(app, 1, txs).app_hash();
    CHECK(Finalize(app, 1, {Send(kAlice, kBob, "2stake", 0, 0)}).app_hash() != first);
    // Not "sequence 1 now": every FinalizeBlock starts from the committed state.
    CHECK(Finalize(app, 1, txs).tx_results(0).code() == 0);
    CHECK(Finalize(app, 1, txs).app_hash() == first);
    CHECK(Finalize(app, 0, txs).app_hash() == first);
    app.Commit({});
    CheckInfo(app, 1, first);
  }
  SECTION("a later block") {
    Block(app, 1);
    const Txs txs = {Send(kBob, kAlice, "1stake", 1, 0)};
    const std::string second = Finalize(app, 2, txs).app_hash();
    CHECK(Finalize(app, 2, txs).app_hash() == second);
    app.Commit({});
    CheckInfo(app, 2, second);
  }
}

TEST_CASE("FinalizeBlock for the wrong height throws, and the dispatcher reports it",
          "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  CHECK_THROWS_WITH(Finalize(app, 3, {}),
                    Catch::Contains("height 3") && Catch::Contains("next height is 2"));
  CHECK_THROWS_AS(Finalize(app, 1, {}), std::runtime_error);
  CheckInfo(app, 1, h1);

  abci::Dispatcher dispatcher(app);
  pb::Request req;
  req.mutable_finalize_block()->set_height(5);
  const pb::Response res = dispatcher.Handle(req);
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(),
             Catch::Contains("FinalizeBlock failed") && Catch::Contains("next height is 2"));
}

TEST_CASE("FinalizeBlock height 0 means the next height", "[kairos_app]") {
  SECTION("no InitChain (abci-cli): the empty state") {
    Node node;
    KairosApp& app = node.Open();
    Model empty;
    empty.initialised = false;
    const std::string h1 = Block(app, 0);
    CHECK(h1 == empty.Root(app, 1));
    CHECK(app.last_height() == 1);
    // Nobody has an account: the tx fails and the state stays empty.
    const pb::ResponseFinalizeBlock res = Finalize(app, 0, {Send(kAlice, kBob, "1stake", 0, 0)});
    CHECK(res.tx_results(0).code() == 9);
    app.Commit({});
    CHECK(res.app_hash() == empty.Root(app, 2));
    CHECK(app.last_height() == 2);
  }
  SECTION("after InitChain") {
    Node node;
    KairosApp& app = node.Open();
    InitChain(app);
    Model model = Model::Genesis(Funded());
    const std::string h1 = Block(app, 0);
    CHECK(h1 == model.Root(app, 1));
    CHECK(app.last_height() == 1);
    const std::string h2 = Block(app, 0, {Send(kAlice, kBob, "1stake", 0, 0)});
    CHECK(app.last_height() == 2);
    model.Send(kAlice, kBob, 1);
    CHECK(h2 == model.Root(app, 2));
  }
}

TEST_CASE("InitChain initial_height sets the first block's height", "[kairos_app]") {
  Node node;
  Model model = Model::Genesis(Funded(), 5);
  {
    KairosApp& app = node.Open();
    InitChain(app, 5);
    CHECK_THROWS_WITH(Finalize(app, 1, {}), Catch::Contains("next height is 5"));
    const std::string h5 = Block(app, 5, {Send(kAlice, kBob, "1stake", 0, 0)});
    model.Send(kAlice, kBob, 1);
    CHECK(h5 == model.Root(app, 5));
    CheckInfo(app, 5, h5);
  }
  // The initial height is committed with the first block; the next is 6 after a restart.
  KairosApp& app = node.Open();
  CHECK_THROWS_WITH(Finalize(app, 7, {}), Catch::Contains("next height is 6"));
  const pb::ResponseFinalizeBlock res = Finalize(app, 0, {Send(kAlice, kBob, "1stake", 0, 1)});
  CHECK(res.tx_results(0).code() == 0);
  app.Commit({});
  CHECK(app.last_height() == 6);
  model.Send(kAlice, kBob, 1);
  CHECK(res.app_hash() == model.Root(app, 6));
}

TEST_CASE("InitChain on an initialised chain throws", "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  CHECK_THROWS_WITH(InitChain(app), Catch::Contains("initialised already"));
  CheckInfo(app, 1, h1);
}

TEST_CASE("Query answers the app's paths at the latest height", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  for (int h = 1; h <= 3; ++h) Block(app, h);

  const pb::ResponseQuery version = Query(app, "/app/version");
  CHECK(version.code() == 0);
  CHECK(version.value() == kairos::kVersion);
  CHECK(version.height() == 3);

  const pb::ResponseQuery height = Query(app, "/app/height", 3);
  CHECK(height.code() == 0);
  CHECK(height.value() == "3");
  CHECK(height.log().empty());
  // With prove=true it answers and says there is no proof (before: silently none).
  const pb::ResponseQuery proved = Query(app, "/app/height", 3, "", true);
  CHECK(proved.code() == 0);
  CHECK(proved.value() == "3");
  CHECK(proved.proof_ops().ops_size() == 0);
  CHECK_THAT(proved.log(), Catch::Contains("no proof: /app/height is not in the state"));
}

TEST_CASE("Query rejects an unknown path and a height other than the latest", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  Block(app, 1);
  Block(app, 2);

  const pb::ResponseQuery unknown = Query(app, "/bank/balance");
  CHECK(unknown.code() == app::kCodeUnknownRequest);
  CHECK(unknown.code() == 6);
  CHECK(unknown.codespace() == "sdk");
  CHECK_THAT(unknown.log(), Catch::Contains("'/bank/balance'") && Catch::Contains("/app/height") &&
                                Catch::Contains("/cosmos.bank.v1beta1.Query/Balance"));
  CHECK(unknown.value().empty());

  // An unknown module method too.
  const pb::ResponseQuery method = Query(app, "/cosmos.bank.v1beta1.Query/DenomOwners");
  CHECK(method.code() == 6);
  CHECK_THAT(method.log(), Catch::Contains("'/cosmos.bank.v1beta1.Query/DenomOwners'"));

  // A path that is not UTF-8 is logged printably (ResponseQuery.log is a proto3 string).
  const pb::ResponseQuery binary = Query(app, std::string("/\xff\x01", 3));
  CHECK(binary.code() == 6);
  CHECK_THAT(binary.log(), Catch::Contains("'/\\xff\\x01'"));

  for (std::int64_t h : {3, 1, -1}) {
    INFO("height " << h);
    const pb::ResponseQuery res = Query(app, "/app/height", h);
    CHECK(res.code() == app::kCodeInvalidHeight);
    CHECK(res.code() == 26);
    CHECK(res.codespace() == "sdk");
    CHECK_THAT(res.log(), Catch::Contains("latest height (2)") &&
                              Catch::Contains("got height " + std::to_string(h)));
    CHECK(res.value().empty());
  }
}

TEST_CASE("store queries answer at any kept height, with proofs of the app hash",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app);
  std::map<int, std::string> hashes;
  for (int h = 1; h <= 6; ++h) {
    hashes[h] = Block(app, h, {Send(kAlice, kBob, "1stake", 0, h - 1, "")});
  }
  const std::string key = BalanceKey(kAlice.address, "stake");
  // keep_recent 3: heights 4..6 are kept.
  for (int h = 4; h <= 6; ++h) {
    INFO("height " << h);
    const std::string balance = std::to_string(1000000 - h);
    const pb::ResponseQuery res = QueryKey(app, key, h, /*prove=*/true);
    CHECK(res.code() == 0);
    CHECK(res.value() == balance);
    CHECK(res.height() == h);
    CHECK(res.key() == key);
    REQUIRE(res.proof_ops().ops_size() == 1);
    CheckExistenceProof(res.proof_ops().ops(0), key, balance, hashes[h]);
  }
  // Height 0 is the latest; the key can also come in data with the path /store.
  const pb::ResponseQuery latest = Query(app, "/store", 0, key);
  CHECK(latest.value() == "999994");
  CHECK(latest.height() == 6);
  CHECK(latest.proof_ops().ops_size() == 0);  // prove=false

  // An absent key: code 0, no value, and a non-existence proof whose neighbours commit to the
  // app hash.
  const std::string absent_key = BalanceKey(kCarol.address, "stake");
  const pb::ResponseQuery absent = QueryKey(app, absent_key, 0, true);
  CHECK(absent.code() == 0);
  CHECK(absent.value().empty());
  CHECK(absent.log() == "key not found");
  REQUIRE(absent.proof_ops().ops_size() == 1);
  CheckNonExistenceProof(absent.proof_ops().ops(0), absent_key, hashes[6]);
}

TEST_CASE("store queries refuse bad keys and heights with a code and a reason", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app);
  for (int h = 1; h <= 6; ++h) Block(app, h);
  const pb::ResponseQuery pruned = QueryKey(app, "meta/chain_id", 2, false);
  CHECK(pruned.code() == app::kCodeInvalidHeight);
  CHECK_THAT(pruned.log(),
             Catch::Contains("not kept") && Catch::Contains("earliest kept version is 4"));
  const pb::ResponseQuery future = QueryKey(app, "meta/chain_id", 7, false);
  CHECK(future.code() == app::kCodeInvalidHeight);
  CHECK_THAT(future.log(), Catch::Contains("not committed yet"));
  const pb::ResponseQuery bad_hex = Query(app, "/store/xyz");
  CHECK(bad_hex.code() == app::kCodeInvalidRequest);
  CHECK(bad_hex.codespace() == "sdk");
  CHECK_THAT(bad_hex.log(), Catch::Contains("hex key"));
  const pb::ResponseQuery empty = Query(app, "/store");
  CHECK(empty.code() == app::kCodeInvalidRequest);
  CHECK_THAT(empty.log(), Catch::Contains("empty store key"));
  // A key longer than the chain's max_key_bytes cannot be in the state: code 18, as for any
  // bad key (before: code 0 and "key not found").
  const std::size_t max_key = app.limits().max_key_bytes;
  const pb::ResponseQuery too_long = QueryKey(app, std::string(max_key + 1, 'k'), 0, false);
  CHECK(too_long.code() == app::kCodeInvalidRequest);
  CHECK(too_long.codespace() == "sdk");
  CHECK_THAT(too_long.log(), Catch::Contains("store key of " + std::to_string(max_key + 1) +
                                             " bytes is longer than the chain's max_key_bytes (" +
                                             std::to_string(max_key) + ")"));
  CHECK(QueryKey(app, std::string(max_key, 'k'), 0, false).code() == 0);  // absent, not bad
}

namespace {

// Size of `tx` as an element of a repeated bytes field, as CometBFT counts it.
std::int64_t ProtoSize(const std::string& tx) {
  std::int64_t varint = 1;
  for (std::uint64_t n = tx.size(); n >= 0x80; n >>= 7) ++varint;
  return 1 + varint + static_cast<std::int64_t>(tx.size());
}

// PrepareProposal's answer for `txs` under `max_tx_bytes` at the next height.
Txs Prepared(KairosApp& app, const Txs& txs, std::int64_t max_tx_bytes) {
  pb::RequestPrepareProposal req;
  for (const auto& tx : txs) req.add_txs(tx);
  req.set_max_tx_bytes(max_tx_bytes);
  req.set_height(app.last_height() + 1);
  SetTime(req.mutable_time(), TimeOf(app.last_height() + 1));
  const pb::ResponsePrepareProposal res = app.PrepareProposal(req);
  return Txs(res.txs().begin(), res.txs().end());
}

pb::ResponseProcessProposal::ProposalStatus Processed(KairosApp& app, const Txs& txs) {
  pb::RequestProcessProposal req;
  for (const auto& tx : txs) req.add_txs(tx);
  req.set_height(app.last_height() + 1);
  SetTime(req.mutable_time(), TimeOf(app.last_height() + 1));
  return app.ProcessProposal(req).status();
}

}  // namespace

TEST_CASE("PrepareProposal fills max_tx_bytes by proto size, skipping what does not fit",
          "[kairos_app]") {
  Node node;
  Start(node);
  KairosApp& app = node.app();
  const Txs txs = {Send(kAlice, kBob, "1stake", 0, 0),
                   Send(kAlice, kBob, "2stake", 0, 1, "200stake"),
                   Send(kBob, kAlice, "3stake", 1, 0, "")};
  // Real txs are longer than 127 bytes: their length takes a 2-byte varint.
  for (const auto& tx : txs) {
    REQUIRE(tx.size() >= 128);
    REQUIRE(tx.size() < 16384);
  }
  const std::int64_t s0 = ProtoSize(txs[0]), s1 = ProtoSize(txs[1]), s2 = ProtoSize(txs[2]);
  CHECK(s0 == static_cast<std::int64_t>(txs[0].size()) + 3);
  // Bob's tx (no fee) is the shortest; all three have priority 0, so arrival order rules.
  REQUIRE(s2 < s1);
  REQUIRE(s2 < s0);
  const Txs all = txs, two = {txs[0], txs[1]}, one = {txs[0]};
  CHECK(Prepared(app, txs, s0 + s1 + s2) == all);
  CHECK(Prepared(app, txs, s0 + s1 + s2 - 1) == two);
  CHECK(Prepared(app, txs, s0 + s1) == two);
  // Alice's second tx does not fit: skipped, and bob's shorter one fills the room.
  CHECK(Prepared(app, txs, s0 + s1 - 1) == (Txs{txs[0], txs[2]}));
  CHECK(Prepared(app, txs, s0) == one);
  // Alice's first does not fit (the varint counts 2 bytes, not 1): her second cannot come
  // without it, bob's can.
  CHECK(Prepared(app, txs, s0 - 1) == Txs{txs[2]});
  CHECK(Prepared(app, txs, s2 - 1).empty());
  CHECK(Prepared(app, txs, 0).empty());
  CHECK(Prepared(app, txs, 1 << 20) == all);
}

TEST_CASE("PrepareProposal leaves out the txs the ante rejects", "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  const std::string a0 = Send(kAlice, kBob, "1stake", 0, 0);
  const std::string a0_again = Send(kAlice, kBob, "5stake", 0, 0);  // a duplicate sequence
  const std::string a1 = Send(kAlice, kBob, "2stake", 0, 1);
  const std::string a3 = Send(kAlice, kBob, "2stake", 0, 3);  // a gap
  const std::string poor = Send(kBob, kAlice, "1stake", 1, 0, "5000stake");
  const std::string garbage = "\x0a\x05garb";
  const Txs proposal = {a0, a0_again, garbage, a1, a3, poor};
  const Txs valid = {a0, a1};
  CHECK(Prepared(app, proposal, 1 << 20) == valid);
  // The ones left out do not count against max_tx_bytes.
  CHECK(Prepared(app, proposal, ProtoSize(a0) + ProtoSize(a1)) == valid);
  CHECK(Prepared(app, proposal, ProtoSize(a0) + ProtoSize(a1) - 1) == Txs{a0});
  // Preparing a proposal changes no state; the valid txs CometBFT offered joined the mempool.
  CheckInfo(app, 1, h1);
  CHECK(CheckTx(app, a0).code() == 19);
  CHECK(Processed(app, valid) == pb::ResponseProcessProposal::ACCEPT);
}

TEST_CASE("the executor closes the snapshot writer's gate from a block's start to its Commit's end",
          "[kairos_app][statesync]") {
  Node node;
  Start(node);
  KairosApp& app = node.app();
  const kairos::app::BlockGate& gate = app.state_sync().block_gate();
  CHECK_FALSE(gate.closed());
  // PrepareProposal and ProcessProposal close it for their own run, a REJECT too.
  CHECK(Prepared(app, {}, 1 << 20).empty());
  CHECK_FALSE(gate.closed());
  CHECK(Processed(app, {"not a tx"}) == pb::ResponseProcessProposal::REJECT);
  CHECK_FALSE(gate.closed());
  // FinalizeBlock closes it; the end of Commit opens it.
  const std::int64_t next = app.last_height() + 1;
  Finalize(app, next);
  CHECK(gate.closed());
  app.Commit({});
  CHECK_FALSE(gate.closed());
  // A Commit with no finalized block leaves it open; a FinalizeBlock that throws (a height out
  // of order) opens it again.
  app.Commit({});
  CHECK_FALSE(gate.closed());
  CHECK_THROWS(Finalize(app, next + 5));
  CHECK_FALSE(gate.closed());
}

TEST_CASE("ProcessProposal accepts a valid block and rejects one with an invalid tx",
          "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  const std::string a0 = Send(kAlice, kBob, "1stake", 0, 0);
  const std::string a1 = Send(kAlice, kBob, "2stake", 0, 1);
  const std::string b0 = Send(kBob, kAlice, "3stake", 1, 0);
  CHECK(Processed(app, {}) == pb::ResponseProcessProposal::ACCEPT);
  CHECK(Processed(app, {a0, a1, b0}) == pb::ResponseProcessProposal::ACCEPT);
  CHECK(Processed(app, {a1, a0}) == pb::ResponseProcessProposal::REJECT);  // wrong order
  CHECK(Processed(app, {a0, a0}) == pb::ResponseProcessProposal::REJECT);  // a replay
  CHECK(Processed(app, {a0, "anything"}) == pb::ResponseProcessProposal::REJECT);
  CHECK(Processed(app, {""}) == pb::ResponseProcessProposal::REJECT);
  CHECK(Processed(app, {Send(kBob, kAlice, "1stake", 1, 0, "5000stake")}) ==
        pb::ResponseProcessProposal::REJECT);
  // A message that would fail in FinalizeBlock is still a valid tx (it pays its fee).
  CHECK(Processed(app, {Send(kAlice, kBob, "2000000stake", 0, 0)}) ==
        pb::ResponseProcessProposal::ACCEPT);
  // Checking proposals wrote nothing: the accepted block runs as if they never were.
  CheckInfo(app, 1, h1);
  const pb::ResponseFinalizeBlock res = Finalize(app, 2, {a0, a1, b0});
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
}

TEST_CASE("the fixed answers: votes accepted; no snapshot without snapshots", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  CHECK(app.VerifyVoteExtension({}).status() == pb::ResponseVerifyVoteExtension::ACCEPT);
  CHECK(app.ExtendVote({}).ByteSizeLong() == 0);
  CHECK(app.OfferSnapshot({}).result() == pb::ResponseOfferSnapshot::REJECT_FORMAT);  // format 0
  CHECK(app.ListSnapshots({}).snapshots_size() == 0);
  CHECK(app.LoadSnapshotChunk({}).chunk().empty());
  CHECK(app.ApplySnapshotChunk({}).result() == pb::ResponseApplySnapshotChunk::ABORT);
  CHECK(app.CheckTx({}).code() == app::kCodeTxDecode);  // an empty tx
  CHECK(app.InsertTx({}).code() != 0);
  CHECK(app.ReapTxs({}).txs_size() == 0);
}

TEST_CASE("a node restored from a snapshot answers and goes on as the node that took it",
          "[kairos_app][statesync]") {
  TempDir snapshots;
  Node source;
  source.options.state_sync.dir = snapshots.path();
  source.options.state_sync.snapshot_interval = 3;
  source.options.state_sync.chunk_bytes = 1024;
  Start(source);
  KairosApp& a = source.app();
  Block(a, 2, {Send(kAlice, kBob, "7stake", 0, 0)});
  Block(a, 3, {Send(kAlice, kBob, "5stake", 0, 1)});  // a snapshot of height 3 is taken
  a.state_sync().WaitIdle();
  const pb::ResponseListSnapshots list = a.ListSnapshots({});
  REQUIRE(list.snapshots_size() == 1);
  const pb::Snapshot& snap = list.snapshots(0);
  CHECK(snap.height() == 3);
  CHECK(snap.format() == store::kSnapshotFormat);
  const std::string app_hash = a.last_app_hash();

  Node joined;
  KairosApp& b = joined.Open();
  pb::RequestOfferSnapshot offer;
  *offer.mutable_snapshot() = snap;
  offer.set_app_hash(app_hash);
  REQUIRE(b.OfferSnapshot(offer).result() == pb::ResponseOfferSnapshot::ACCEPT);
  for (std::uint32_t i = 0; i < snap.chunks(); ++i) {
    pb::RequestLoadSnapshotChunk load;
    load.set_height(3);
    load.set_format(snap.format());
    load.set_chunk(i);
    pb::RequestApplySnapshotChunk apply;
    apply.set_index(i);
    apply.set_chunk(a.LoadSnapshotChunk(load).chunk());
    apply.set_sender("peer");
    REQUIRE(b.ApplySnapshotChunk(apply).result() == pb::ResponseApplySnapshotChunk::ACCEPT);
  }
  // Info, a query, CheckTx and the next block as the source's.
  CheckInfo(b, 3, app_hash);
  CHECK(BalanceQuery(b, kBob.bech32, "stake").value() ==
        BalanceQuery(a, kBob.bech32, "stake").value());
  const std::string next = Send(kAlice, kBob, "1stake", 0, 2);
  CHECK(CheckTx(b, next).code() == 0);
  CHECK(CheckTx(b, Send(kAlice, kBob, "1stake", 0, 1)).code() == CheckTx(a, Send(kAlice, kBob, "1stake", 0, 1)).code());
  CHECK(Block(b, 4, {next}) == Block(a, 4, {next}));
  CheckInfo(joined.Open(), 4, a.last_app_hash());  // and after a restart
}

TEST_CASE("Commit without FinalizeBlock is harmless", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  CHECK(app.Commit({}).retain_height() == 0);
  CheckInfo(app, 0, "");
  const std::string genesis = InitChain(app, 3).app_hash();
  app.Commit({});  // InitChain alone commits nothing, and is kept for the first block
  CheckInfo(app, 0, "");
  const std::string h3 = Block(app, 3);
  CHECK(h3 == genesis);
  app.Commit({});  // a second Commit of the same block
  CheckInfo(app, 3, h3);
  CheckInfo(node.Open(), 3, h3);
  CHECK(Model::Genesis(Funded(), 3).Root(node.app(), 3) == h3);
}

TEST_CASE("Query Account: the BaseAccount at a height, with a proof of that height's app hash",
          "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  const std::string h2 = Block(app, 2, {Send(kAlice, kBob, "10stake", 0, 0)});

  SECTION("before and after alice's first tx") {
    const auto a1 = ProvenAccount(app, kAlice, 1, h1);
    CHECK(a1.account_number() == 0);
    CHECK(a1.sequence() == 0);
    CHECK_FALSE(a1.has_pub_key());

    const auto a2 = ProvenAccount(app, kAlice, 2, h2);
    CHECK(a2.account_number() == 0);
    CHECK(a2.sequence() == 1);
    REQUIRE(a2.has_pub_key());
    CHECK(a2.pub_key().type_url() == "/cosmos.crypto.secp256k1.PubKey");
    cosmos::crypto::secp256k1::PubKey pub;
    REQUIRE(pub.ParseFromString(a2.pub_key().value()));
    CHECK(pub.key() == kAlice.pub);
    CHECK(AccountQuery(app, kAlice).value() == AccountQuery(app, kAlice, 2).value());  // 0: latest

    const auto bob = AccountOf(AccountQuery(app, kBob));
    CHECK(bob.account_number() == 1);
    CHECK(bob.sequence() == 0);
    CHECK_FALSE(bob.has_pub_key());  // receiving does not set a key
  }

  SECTION("an account that does not exist: NotFound, as gRPC says it") {
    const pb::ResponseQuery res = AccountQuery(app, kCarol, 0, /*prove=*/true);
    CHECK(res.code() == app::kCodeKeyNotFound);
    CHECK(res.code() == 22);
    CHECK(res.codespace() == "sdk");
    CHECK_THAT(res.log(),
               Catch::Contains("rpc error: code = NotFound") && Catch::Contains(kCarol.bech32));
    CHECK(res.value().empty());
    REQUIRE(res.proof_ops().ops_size() == 1);
    CheckNonExistenceProof(res.proof_ops().ops(0), AccountKey(kCarol.address), h2);
    // A send creates it, with the next account number and no key yet.
    Block(app, 3, {Send(kAlice, kCarol, "1stake", 0, 1)});
    const auto carol = AccountOf(AccountQuery(app, kCarol));
    CHECK(carol.account_number() == 2);
    CHECK(carol.sequence() == 0);
    CHECK_FALSE(carol.has_pub_key());
    CHECK(AccountQuery(app, kCarol, 2).code() == 22);  // not at the earlier height
  }

  SECTION("bad requests") {
    CheckBadRequest(Query(app, "/cosmos.auth.v1beta1.Query/Account", 0, "\x0a\x05" "ab"),
                    "data is not a QueryAccountRequest");
    cosmos::auth::v1beta1::QueryAccountRequest q;
    q.set_address("cosmos1qqqq");
    CheckBadRequest(ModuleQuery(app, "/cosmos.auth.v1beta1.Query/Account", q),
                    "invalid address \"cosmos1qqqq\"");
    CheckBadRequest(Query(app, "/cosmos.auth.v1beta1.Query/Account"), "invalid address");
    const pb::ResponseQuery future = AccountQuery(app, kAlice, 9);
    CHECK(future.code() == app::kCodeInvalidHeight);
    CHECK_THAT(future.log(), Catch::Contains("not committed yet"));
  }
}

TEST_CASE("Query Balance and AllBalances, with proofs of the app hash", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1, AppStateJson({{kAlice, "1000000stake,500uatom"}, {kBob, "1000stake"}}));
  const std::string h1 = Block(app, 1);
  const std::string h2 = Block(app, 2, {Send(kAlice, kBob, "10stake,5uatom", 0, 0)});

  SECTION("Balance at two heights") {
    for (const auto& [height, hash, amount] :
         {std::tuple{1, h1, "1000000"}, std::tuple{2, h2, "999790"}}) {
      INFO("height " << height);
      const pb::ResponseQuery res = BalanceQuery(app, kAlice.bech32, "stake", height, true);
      REQUIRE(res.code() == 0);
      CHECK(res.height() == height);
      cosmos::bank::v1beta1::QueryBalanceResponse r;
      REQUIRE(r.ParseFromString(res.value()));
      CHECK(r.balance().denom() == "stake");
      CHECK(r.balance().amount() == amount);
      REQUIRE(res.proof_ops().ops_size() == 1);
      CheckExistenceProof(res.proof_ops().ops(0), BalanceKey(kAlice.address, "stake"), amount,
                          hash);
    }
    // No coins of a denom: amount 0, proven absent.
    const pb::ResponseQuery none = BalanceQuery(app, kCarol.bech32, "stake", 0, true);
    REQUIRE(none.code() == 0);
    cosmos::bank::v1beta1::QueryBalanceResponse r;
    REQUIRE(r.ParseFromString(none.value()));
    CHECK(r.balance().amount() == "0");
    REQUIRE(none.proof_ops().ops_size() == 1);
    CheckNonExistenceProof(none.proof_ops().ops(0), BalanceKey(kCarol.address, "stake"), h2);
  }

  SECTION("AllBalances: every denom in order, each proven") {
    const pb::ResponseQuery res = AllBalancesQuery(app, kBob.bech32, 0, true);
    REQUIRE(res.code() == 0);
    CHECK(res.height() == 2);
    cosmos::bank::v1beta1::QueryAllBalancesResponse r;
    REQUIRE(r.ParseFromString(res.value()));
    REQUIRE(r.balances_size() == 2);
    CHECK(r.balances(0).denom() == "stake");
    CHECK(r.balances(0).amount() == "1010");
    CHECK(r.balances(1).denom() == "uatom");
    CHECK(r.balances(1).amount() == "5");
    CHECK(r.pagination().total() == 2);
    REQUIRE(res.proof_ops().ops_size() == 2);
    CheckExistenceProof(res.proof_ops().ops(0), BalanceKey(kBob.address, "stake"), "1010", h2);
    CheckExistenceProof(res.proof_ops().ops(1), BalanceKey(kBob.address, "uatom"), "5", h2);

    const pb::ResponseQuery nobody = AllBalancesQuery(app, kCarol.bech32);
    REQUIRE(nobody.code() == 0);
    cosmos::bank::v1beta1::QueryAllBalancesResponse none;
    REQUIRE(none.ParseFromString(nobody.value()));
    CHECK(none.balances_size() == 0);

    const pb::ResponseQuery past = AllBalancesQuery(app, kBob.bech32, 1);
    CHECK(past.code() == app::kCodeInvalidHeight);
    CHECK_THAT(past.log(), Catch::Contains("latest height (2) only"));
  }

  SECTION("bad requests") {
    CheckBadRequest(Query(app, "/cosmos.bank.v1beta1.Query/Balance", 0, "\x0a\x05" "ab"),
                    "data is not a QueryBalanceRequest");
    CheckBadRequest(BalanceQuery(app, "kairos1zzzz", "stake"), "invalid address");
    CheckBadRequest(BalanceQuery(app, kAlice.bech32, "s"), "invalid denom \"s\"");
    CheckBadRequest(BalanceQuery(app, kAlice.bech32, ""), "invalid denom");
    CheckBadRequest(Query(app, "/cosmos.bank.v1beta1.Query/AllBalances", 0, "\x0a\x05" "ab"),
                    "data is not a QueryAllBalancesRequest");
    CheckBadRequest(AllBalancesQuery(app, "not an address"), "invalid address");
    CHECK(BalanceQuery(app, kAlice.bech32, "stake", -1).code() == app::kCodeInvalidHeight);
  }
}

TEST_CASE("Simulate reports the gas a tx uses and changes nothing", "[kairos_app]") {
  Node node;
  const std::string h1 = Start(node);
  KairosApp& app = node.app();
  const auto simulate = [&](const std::string& tx) {
    cosmos::tx::v1beta1::SimulateRequest q;
    q.set_tx_bytes(tx);
    return ModuleQuery(app, "/cosmos.tx.v1beta1.Service/Simulate", q);
  };
  const std::string tx = Send(kAlice, kBob, "10stake", 0, 0);

  const pb::ResponseQuery res = simulate(tx);
  REQUIRE(res.code() == 0);
  CHECK(res.height() == 1);
  cosmos::tx::v1beta1::SimulateResponse r;
  REQUIRE(r.ParseFromString(res.value()));
  CHECK(r.gas_info().gas_wanted() == 200000);
  CHECK(r.gas_info().gas_used() > 0);
  bool transfer = false;
  for (const auto& e : r.result().events()) transfer = transfer || e.type() == "transfer";
  CHECK(transfer);
  // The same again: Simulate kept nothing, not even in the check state.
  const pb::ResponseQuery again = simulate(tx);
  REQUIRE(again.code() == 0);
  cosmos::tx::v1beta1::SimulateResponse r2;
  REQUIRE(r2.ParseFromString(again.value()));
  CHECK(r2.gas_info().gas_used() == r.gas_info().gas_used());
  CheckInfo(app, 1, h1);
  CHECK(BalanceQuery(app, kBob.bech32, "stake").value() ==
        BalanceQuery(app, kBob.bech32, "stake", 1).value());
  CHECK(AccountOf(AccountQuery(app, kAlice)).sequence() == 0);
  CHECK(CheckTx(app, tx).code() == 0);  // the check state's sequence was still 0

  // Simulate runs on the committed state, not the check state: the pending tx is not seen,
  // so sequence 0 still simulates (as a client that read its sequence from the same committed
  // state expects). A sequence the committed state does not have yet is refused.
  const pb::ResponseQuery pending = simulate(tx);
  CHECK(pending.code() == 0);
  const pb::ResponseQuery ahead = simulate(Send(kAlice, kBob, "10stake", 0, 1));
  CHECK(ahead.code() == 32);
  CHECK(ahead.codespace() == "sdk");

  // A tx whose message would fail: its code and log.
  const pb::ResponseQuery poor = simulate(Send(kBob, kAlice, "5000stake", 1, 0));
  CHECK(poor.code() == 5);
  CHECK_THAT(poor.log(), Catch::Contains("insufficient funds"));

  CheckBadRequest(Query(app, "/cosmos.tx.v1beta1.Service/Simulate", 0, "\x0a\x05" "ab"),
                  "not a SimulateRequest");
  CheckBadRequest(simulate(""), "empty tx_bytes");
  const pb::ResponseQuery garbage = simulate("\x0a\x05garb");
  CHECK(garbage.code() == app::kCodeTxDecode);

  // And the block that then runs the tx sees exactly one transfer.
  CHECK(Block(app, 2, {tx}) != h1);
  Model model = Model::Genesis(Funded());
  model.Send(kAlice, kBob, 10);
  CHECK(model.Root(app, 2) == app.last_app_hash());
}

TEST_CASE("the last block time survives a restart: CheckTx judges timeouts by it",
          "[kairos_app]") {
  Node node;
  Start(node);
  KairosApp& app = node.app();
  Block(app, 2);  // at TimeOf(2)
  const auto unordered = [](std::int64_t timeout) {
    SendOptions o;
    o.unordered = true;
    o.timeout_unix_nanos = timeout;
    o.fee = "200stake";
    return SendWith(kAlice, kBob, "1stake", o);
  };
  const std::string expired = unordered(TimeOf(2) - kSecond);
  const std::string fresh = unordered(TimeOf(2) + 60 * kSecond);

  KairosApp& reopened = node.Open();
  const pb::ResponseCheckTx late = CheckTx(reopened, expired);
  CHECK(late.code() == 42);
  CHECK(late.codespace() == "sdk");
  CHECK_THAT(late.log(), Catch::Contains("tx timeout"));
  // And a timeout within the max TTL of the last block time passes (judged from time 0, its
  // TTL would be decades).
  const pb::ResponseCheckTx ok = CheckTx(reopened, fresh);
  CHECK(ok.code() == 0);
  INFO(ok.log());
  // FinalizeBlock judges by its own block's time.
  const pb::ResponseFinalizeBlock res = Finalize(reopened, 3, {expired, fresh});
  CHECK(res.tx_results(0).code() == 42);
  CHECK(res.tx_results(1).code() == 0);
}

}  // namespace kairos::test
