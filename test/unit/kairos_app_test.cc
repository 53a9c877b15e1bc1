// Unit tests for app/kairos_app: the state machine over a real MerkleStore in a temp dir, its
// app hash checked against the reference SMT root of the state it should hold.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <map>
#include <vector>
#include <memory>
#include <stdexcept>
#include <string>

#include "abci/dispatcher.h"
#include "app/hex.h"
#include "app/kairos_app.h"
#include "cosmos/ics23/v1/proofs.pb.h"
#include "app/version.h"
#include "smt_reference.h"
#include "store/merkle_store.h"
#include "temp_dir.h"

using kairos::app::KairosApp;
namespace pb = ::tendermint::abci;

namespace {

using Txs = google::protobuf::RepeatedPtrField<std::string>;

Txs MakeTxs(std::initializer_list<std::string> txs) {
  Txs out;
  for (const auto& tx : txs) out.Add()->assign(tx);
  return out;
}

// A node home with a database that outlives the app objects opened on it.
class Node {
 public:
  // Opens (or reopens) the app on the database in the temp dir.
  KairosApp& Open() {
    app_.reset();  // closes the database first, as a process exit would
    kairos::store::StoreOptions options;
    options.dir = dir_ / "data";
    options.keep_recent = 3;
    options.prune_interval = 1;
    auto db = kairos::store::MerkleStore::Open(options);
    REQUIRE(db.ok());
    auto app = KairosApp::Open(std::move(*db), limits);
    REQUIRE(app.ok());
    app_ = std::move(*app);
    return *app_;
  }
  // Destroys the app without anything else: a crash at this instant, as far as disk goes.
  void Crash() { app_.reset(); }
  KairosApp& app() { return *app_; }
  kairos::store::KvLimits limits;

 private:
  kairos::test::TempDir dir_;
  std::unique_ptr<KairosApp> app_;
};

pb::ResponseFinalizeBlock Finalize(KairosApp& app, std::int64_t height, const Txs& txs) {
  pb::RequestFinalizeBlock req;
  req.set_height(height);
  *req.mutable_txs() = txs;
  return app.FinalizeBlock(req);
}

// FinalizeBlock then Commit; returns the app hash.
std::string Block(KairosApp& app, std::int64_t height, const Txs& txs = {}) {
  const std::string hash = Finalize(app, height, txs).app_hash();
  app.Commit({});
  return hash;
}

pb::ResponseInitChain InitChain(KairosApp& app, std::int64_t initial_height) {
  pb::RequestInitChain req;
  req.set_chain_id("kairos-test");
  req.set_initial_height(initial_height);
  return app.InitChain(req);
}

pb::ResponseQuery Query(KairosApp& app, const std::string& path, std::int64_t height = 0) {
  pb::RequestQuery req;
  req.set_path(path);
  req.set_height(height);
  return app.Query(req);
}

std::string BE64(std::int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<std::uint64_t>(v) >> (56 - 8 * i));
  return out;
}

// The state the app should hold, and its reference root.
struct Model {
  std::map<std::string, std::string> state;

  void Genesis(const std::string& chain_id, std::int64_t initial_height,
               const kairos::store::KvLimits& limits = {}) {
    state["meta/chain_id"] = chain_id;
    state["meta/initial_height"] = BE64(initial_height);
    state["meta/max_key_bytes"] = BE64(static_cast<std::int64_t>(limits.max_key_bytes));
    state["meta/max_value_bytes"] = BE64(static_cast<std::int64_t>(limits.max_value_bytes));
  }
  void Apply(std::int64_t height, const Txs& txs) {
    for (const auto& tx : txs) {
      if (!tx.empty()) state.insert_or_assign(KairosApp::TxWrite(tx).first, KairosApp::TxWrite(tx).second);
    }
    (void)height;  // a block writes only what its txs write
  }
  std::string Root() const {
    std::vector<std::pair<kairos::store::Hash, kairos::store::Hash>> leaves;
    for (const auto& [k, v] : state) {
      leaves.emplace_back(kairos::store::Sha256Of(k), kairos::store::Sha256Of(v));
    }
    return kairos::store::ToBytes(kairos::test::ReferenceRoot(leaves));
  }
};

void CheckInfo(KairosApp& app, std::int64_t height, const std::string& app_hash) {
  const pb::ResponseInfo info = app.Info({});
  CHECK(info.last_block_height() == height);
  CHECK(info.last_block_app_hash() == app_hash);
}

// PrepareProposal's answer for `txs` under `max_tx_bytes`, as a count of the txs kept.
int Prepared(KairosApp& app, const Txs& txs, std::int64_t max_tx_bytes) {
  pb::RequestPrepareProposal req;
  *req.mutable_txs() = txs;
  req.set_max_tx_bytes(max_tx_bytes);
  const pb::ResponsePrepareProposal res = app.PrepareProposal(req);
  for (int i = 0; i < res.txs_size(); ++i) CHECK(res.txs(i) == txs.Get(i));  // a prefix
  return res.txs_size();
}

}  // namespace

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
  pb::RequestInitChain req;
  req.set_chain_id("kairos-test");
  req.set_initial_height(1);
  auto* v = req.add_validators();
  v->mutable_pub_key()->set_ed25519(std::string(32, '\x07'));
  v->set_power(10);
  const pb::ResponseInitChain res = app.InitChain(req);
  REQUIRE(res.validators_size() == 1);
  CHECK(res.validators(0).pub_key().ed25519() == std::string(32, '\x07'));
  CHECK(res.validators(0).power() == 10);
  Model genesis;
  genesis.Genesis("kairos-test", 1);
  CHECK(res.app_hash() == genesis.Root());
  CHECK_FALSE(res.has_consensus_params());
  CheckInfo(app, 0, "");  // nothing is committed by InitChain
}

TEST_CASE("TxWrite: key=value sets kv/key, anything else is recorded by hash", "[kairos_app]") {
  CHECK(KairosApp::TxWrite("name=satoshi") == std::pair<std::string, std::string>("kv/name", "satoshi"));
  CHECK(KairosApp::TxWrite("a=b=c") == std::pair<std::string, std::string>("kv/a", "b=c"));
  for (const std::string& tx : std::vector<std::string>{"plain", "=value", "key=", std::string("\x00\xff", 2)}) {
    const auto [key, value] = KairosApp::TxWrite(tx);
    CHECK(key.rfind("tx/", 0) == 0);
    CHECK(key.size() == 3 + 64);
    CHECK(value == tx);
  }
}

TEST_CASE("FinalizeBlock answers each tx and returns the root of the new state", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  const Txs txs = MakeTxs({"a=1", "bb", std::string("\x00\xff", 2), "a=2"});
  const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
  REQUIRE(res.tx_results_size() == 4);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  Model model;
  model.Genesis("kairos-test", 1);
  model.Apply(1, txs);
  CHECK(model.state.at("kv/a") == "2");  // later txs see earlier ones
  CHECK(res.app_hash() == model.Root());
  CHECK(Finalize(app, 1, {}).tx_results_size() == 0);
}

TEST_CASE("a failing tx gets a code and leaves the state as it was", "[kairos_app]") {
  Node node;
  node.limits.max_value_bytes = 16;  // the genesis chain id (11 bytes) still fits
  KairosApp& app = node.Open();
  InitChain(app, 1);
  const Txs txs = MakeTxs({"ok=1", "", "big=12345678901234567", "ok2=2"});
  const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
  REQUIRE(res.tx_results_size() == 4);
  CHECK(res.tx_results(0).code() == 0);
  CHECK(res.tx_results(1).code() == kairos::app::kCodeTxDecode);
  CHECK_THAT(res.tx_results(1).log(), Catch::Contains("empty tx"));
  CHECK(res.tx_results(2).code() == kairos::app::kCodeInvalidRequest);
  CHECK(res.tx_results(2).codespace() == "sdk");
  CHECK_THAT(res.tx_results(2).log(), Catch::Contains("store.max_value_bytes"));
  CHECK(res.tx_results(3).code() == 0);
  Model model;
  model.Genesis("kairos-test", 1, node.limits);
  model.Apply(1, MakeTxs({"ok=1", "ok2=2"}));
  CHECK(res.app_hash() == model.Root());
}

TEST_CASE("the size limits are the chain's, fixed at genesis, not each node's config",
          "[kairos_app]") {
  Node node;
  node.limits.max_value_bytes = 16;
  InitChain(node.Open(), 1);
  Block(node.app(), 1);
  // The operator raises the limit in config.toml and restarts: the chain's limit still rules,
  // in CheckTx and in FinalizeBlock, so every node keeps computing the same results.
  node.limits.max_value_bytes = 1 << 20;
  KairosApp& app = node.Open();
  CHECK(app.limits().max_value_bytes == 16);
  pb::RequestCheckTx check;
  check.set_tx("big=12345678901234567");
  CHECK(app.CheckTx(check).code() == kairos::app::kCodeInvalidRequest);
  const pb::ResponseFinalizeBlock res = Finalize(app, 2, MakeTxs({"big=12345678901234567"}));
  CHECK(res.tx_results(0).code() == kairos::app::kCodeInvalidRequest);
}

TEST_CASE("CheckTx runs the tx on the check state", "[kairos_app]") {
  Node node;
  node.limits.max_value_bytes = 8;
  KairosApp& app = node.Open();
  pb::RequestCheckTx req;
  req.set_tx("k=v");
  CHECK(app.CheckTx(req).code() == 0);
  req.set_tx("");
  const pb::ResponseCheckTx empty = app.CheckTx(req);
  CHECK(empty.code() == kairos::app::kCodeTxDecode);
  CHECK(empty.codespace() == "sdk");
  req.set_tx("k=123456789");
  const pb::ResponseCheckTx big = app.CheckTx(req);
  CHECK(big.code() == kairos::app::kCodeInvalidRequest);
  CHECK_THAT(big.log(), Catch::Contains("store.max_value_bytes"));
}

TEST_CASE("the app hash follows the state: txs change it, an empty block does not",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  Model model;
  model.Genesis("kairos-test", 1);
  std::string previous;
  for (int h = 1; h <= 4; ++h) {
    const Txs txs = h == 3 ? Txs() : MakeTxs({"k" + std::to_string(h % 2) + "=" + std::to_string(h)});
    model.Apply(h, txs);
    const std::string hash = Block(app, h, txs);
    CHECK(hash == model.Root());
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
  Model model;
  model.Genesis("kairos-test", 1);
  {
    KairosApp& app = node.Open();
    InitChain(app, 1);
    for (int h = 1; h <= 3; ++h) {
      const Txs txs = MakeTxs({"tx" + std::to_string(h)});
      model.Apply(h, txs);
      hash = Block(app, h, txs);
    }
    CheckInfo(app, 3, hash);
    CHECK(app.last_height() == 3);
    CHECK(app.last_app_hash() == hash);
  }
  KairosApp& reopened = node.Open();
  CheckInfo(reopened, 3, hash);
  CHECK(Query(reopened, "/app/height").value() == "3");
  // The chain goes on from there.
  model.Apply(4, {});
  CHECK(Finalize(reopened, 4, {}).app_hash() == model.Root());
}

TEST_CASE("a crash between FinalizeBlock and Commit leaves the previous height", "[kairos_app]") {
  Node node;
  const Txs txs = MakeTxs({"x=1", "y=2"});
  std::string h1, h2;
  {
    KairosApp& app = node.Open();
    InitChain(app, 1);
    h1 = Block(app, 1, txs);
    h2 = Finalize(app, 2, MakeTxs({"x=3"})).app_hash();
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 1, h1);
  CHECK(Finalize(app, 2, MakeTxs({"x=3"})).app_hash() == h2);  // the re-sent block: same hash
  app.Commit({});
  CheckInfo(node.Open(), 2, h2);
}

TEST_CASE("a crash before the first Commit leaves the empty chain", "[kairos_app]") {
  Node node;
  std::string genesis, h1;
  {
    KairosApp& app = node.Open();
    genesis = InitChain(app, 1).app_hash();
    h1 = Finalize(app, 1, MakeTxs({"g"})).app_hash();
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 0, "");
  CHECK(InitChain(app, 1).app_hash() == genesis);  // CometBFT replays InitChain at height 0
  CHECK(Finalize(app, 1, MakeTxs({"g"})).app_hash() == h1);
}

TEST_CASE("a second FinalizeBlock of a block before Commit gives the same app hash",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  const Txs txs = MakeTxs({"t"});
  SECTION("the first block") {
    const std::string first = Finalize(app, 1, txs).app_hash();
    CHECK(Finalize(app, 1, MakeTxs({"other"})).app_hash() != first);
    CHECK(Finalize(app, 1, txs).app_hash() == first);
    CHECK(Finalize(app, 0, txs).app_hash() == first);
    app.Commit({});
    CheckInfo(app, 1, first);
  }
  SECTION("a later block") {
    Block(app, 1);
    const std::string second = Finalize(app, 2, txs).app_hash();
    CHECK(Finalize(app, 2, txs).app_hash() == second);
    app.Commit({});
    CheckInfo(app, 2, second);
  }
}

TEST_CASE("FinalizeBlock for the wrong height throws, and the dispatcher reports it",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  Block(app, 1);
  CHECK_THROWS_WITH(Finalize(app, 3, {}),
                    Catch::Contains("height 3") && Catch::Contains("next height is 2"));
  CHECK_THROWS_AS(Finalize(app, 1, {}), std::runtime_error);
  CheckInfo(app, 1, app.last_app_hash());

  kairos::abci::Dispatcher dispatcher(app);
  pb::Request req;
  req.mutable_finalize_block()->set_height(5);
  const pb::Response res = dispatcher.Handle(req);
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(),
             Catch::Contains("FinalizeBlock failed") && Catch::Contains("next height is 2"));
}

TEST_CASE("FinalizeBlock height 0 means the next height", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  Model model;  // no InitChain (abci-cli): no genesis keys
  model.Apply(1, {});
  CHECK(Block(app, 0) == model.Root());
  CHECK(app.last_height() == 1);
  const Txs txs = MakeTxs({"z"});
  model.Apply(2, txs);
  CHECK(Block(app, 0, txs) == model.Root());
  CHECK(app.last_height() == 2);
}

TEST_CASE("InitChain initial_height sets the first block's height", "[kairos_app]") {
  Node node;
  Model model;
  model.Genesis("kairos-test", 5);
  {
    KairosApp& app = node.Open();
    InitChain(app, 5);
    CHECK_THROWS_WITH(Finalize(app, 1, {}), Catch::Contains("next height is 5"));
    model.Apply(5, {});
    const std::string h5 = Block(app, 5);
    CHECK(h5 == model.Root());
    CheckInfo(app, 5, h5);
  }
  // The initial height is committed with the first block; the next is 6 after a restart.
  KairosApp& app = node.Open();
  CHECK_THROWS_WITH(Finalize(app, 7, {}), Catch::Contains("next height is 6"));
  model.Apply(6, {});
  CHECK(Finalize(app, 0, {}).app_hash() == model.Root());
}

TEST_CASE("InitChain on an initialised chain throws", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  Block(app, 1);
  CHECK_THROWS_WITH(InitChain(app, 1), Catch::Contains("initialised already"));
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
}

TEST_CASE("Query rejects an unknown path and a height other than the latest", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  Block(app, 1);
  Block(app, 2);

  const pb::ResponseQuery unknown = Query(app, "/bank/balance");
  CHECK(unknown.code() == kairos::app::kCodeUnknownRequest);
  CHECK(unknown.code() == 6);
  CHECK(unknown.codespace() == "sdk");
  CHECK_THAT(unknown.log(), Catch::Contains("'/bank/balance'") && Catch::Contains("/app/height"));
  CHECK(unknown.value().empty());

  // A path that is not UTF-8 is logged printably (ResponseQuery.log is a proto3 string).
  const pb::ResponseQuery binary = Query(app, std::string("/\xff\x01", 3));
  CHECK(binary.code() == 6);
  CHECK_THAT(binary.log(), Catch::Contains("'/\\xff\\x01'"));

  for (std::int64_t h : {3, 1, -1}) {
    INFO("height " << h);
    const pb::ResponseQuery res = Query(app, "/app/height", h);
    CHECK(res.code() == kairos::app::kCodeInvalidHeight);
    CHECK(res.code() == 26);
    CHECK(res.codespace() == "sdk");
    CHECK_THAT(res.log(), Catch::Contains("latest height (2)") &&
                              Catch::Contains("got height " + std::to_string(h)));
    CHECK(res.value().empty());
  }
}

namespace {

pb::ResponseQuery QueryKey(KairosApp& app, const std::string& key, std::int64_t height,
                           bool prove) {
  pb::RequestQuery req;
  req.set_path("/store/" + kairos::app::HexEncode(key));
  req.set_height(height);
  req.set_prove(prove);
  return app.Query(req);
}

// Applies an existence proof's ops: the root it commits to.
std::string RootOfExistence(const cosmos::ics23::v1::ExistenceProof& p) {
  using kairos::store::Sha256Of;
  std::string h = kairos::store::ToBytes(Sha256Of(
      std::string(1, '\0') + kairos::store::ToBytes(Sha256Of(p.key())) +
      kairos::store::ToBytes(Sha256Of(p.value()))));
  for (const auto& op : p.path()) h = kairos::store::ToBytes(Sha256Of(op.prefix() + h + op.suffix()));
  return h;
}

}  // namespace

TEST_CASE("store queries answer at any kept height, with proofs of the app hash",
          "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  std::map<int, std::string> hashes;
  for (int h = 1; h <= 6; ++h) hashes[h] = Block(app, h, MakeTxs({"a=" + std::to_string(h)}));
  // keep_recent 3: heights 4..6 are kept.
  for (int h = 4; h <= 6; ++h) {
    INFO("height " << h);
    const pb::ResponseQuery res = QueryKey(app, "kv/a", h, /*prove=*/true);
    CHECK(res.code() == 0);
    CHECK(res.value() == std::to_string(h));
    CHECK(res.height() == h);
    CHECK(res.key() == "kv/a");
    REQUIRE(res.proof_ops().ops_size() == 1);
    CHECK(res.proof_ops().ops(0).type() == "ics23:smt");
    CHECK(res.proof_ops().ops(0).key() == "kv/a");
    cosmos::ics23::v1::CommitmentProof proof;
    REQUIRE(proof.ParseFromString(res.proof_ops().ops(0).data()));
    REQUIRE(proof.has_exist());
    CHECK(proof.exist().value() == std::to_string(h));
    CHECK(RootOfExistence(proof.exist()) == hashes[h]);
  }
  // Height 0 is the latest; the key can also come in data with the path /store.
  pb::RequestQuery req;
  req.set_path("/store");
  req.set_data("kv/a");
  const pb::ResponseQuery latest = app.Query(req);
  CHECK(latest.value() == "6");
  CHECK(latest.height() == 6);
  CHECK(latest.proof_ops().ops_size() == 0);  // prove=false

  // An absent key: code 0, no value, and a non-existence proof whose neighbours commit to the
  // app hash.
  const pb::ResponseQuery absent = QueryKey(app, "kv/nope", 0, true);
  CHECK(absent.code() == 0);
  CHECK(absent.value().empty());
  CHECK(absent.log() == "key not found");
  cosmos::ics23::v1::CommitmentProof nonexist;
  REQUIRE(nonexist.ParseFromString(absent.proof_ops().ops(0).data()));
  REQUIRE(nonexist.has_nonexist());
  CHECK(nonexist.nonexist().key() == "kv/nope");
  REQUIRE((nonexist.nonexist().has_left() || nonexist.nonexist().has_right()));
  if (nonexist.nonexist().has_left()) CHECK(RootOfExistence(nonexist.nonexist().left()) == hashes[6]);
  if (nonexist.nonexist().has_right()) CHECK(RootOfExistence(nonexist.nonexist().right()) == hashes[6]);
}

TEST_CASE("store queries refuse bad keys and heights with a code and a reason", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  for (int h = 1; h <= 6; ++h) Block(app, h);
  const pb::ResponseQuery pruned = QueryKey(app, "meta/chain_id", 2, false);
  CHECK(pruned.code() == kairos::app::kCodeInvalidHeight);
  CHECK_THAT(pruned.log(), Catch::Contains("not kept") && Catch::Contains("earliest kept version is 4"));
  const pb::ResponseQuery future = QueryKey(app, "meta/chain_id", 7, false);
  CHECK(future.code() == kairos::app::kCodeInvalidHeight);
  CHECK_THAT(future.log(), Catch::Contains("not committed yet"));
  pb::RequestQuery req;
  req.set_path("/store/xyz");
  const pb::ResponseQuery bad_hex = app.Query(req);
  CHECK(bad_hex.code() == kairos::app::kCodeInvalidRequest);
  CHECK(bad_hex.codespace() == "sdk");
  CHECK_THAT(bad_hex.log(), Catch::Contains("hex key"));
  req.set_path("/store");
  const pb::ResponseQuery empty = app.Query(req);
  CHECK(empty.code() == kairos::app::kCodeInvalidRequest);
  CHECK_THAT(empty.log(), Catch::Contains("empty store key"));
}

TEST_CASE("PrepareProposal keeps the txs that fit max_tx_bytes by proto size", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  // Proto sizes: 1 + varint(len) + len = 12, 1 + 2 + 200 = 203, 1 + 1 + 5 = 7: 222 in all.
  const Txs txs = MakeTxs({std::string(10, 'a'), std::string(200, 'b'), std::string(5, 'c')});
  CHECK(Prepared(app, txs, 222) == 3);
  CHECK(Prepared(app, txs, 221) == 2);
  CHECK(Prepared(app, txs, 215) == 2);
  CHECK(Prepared(app, txs, 214) == 1);
  CHECK(Prepared(app, txs, 12) == 1);
  CHECK(Prepared(app, txs, 11) == 0);
  CHECK(Prepared(app, txs, 0) == 0);
  CHECK(Prepared(app, txs, 1 << 20) == 3);

  // The length varint grows from 1 to 2 bytes at 128.
  CHECK(Prepared(app, MakeTxs({std::string(127, 'x')}), 129) == 1);
  CHECK(Prepared(app, MakeTxs({std::string(128, 'x')}), 131) == 1);
  CHECK(Prepared(app, MakeTxs({std::string(128, 'x')}), 130) == 0);
  // An empty tx still costs its tag and length.
  CHECK(Prepared(app, MakeTxs({"", ""}), 4) == 2);
  CHECK(Prepared(app, MakeTxs({"", ""}), 3) == 1);
}

TEST_CASE("the fixed answers: proposals and votes accepted, snapshots refused", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  pb::RequestProcessProposal process;
  process.add_txs("anything");
  CHECK(app.ProcessProposal(process).status() == pb::ResponseProcessProposal::ACCEPT);
  CHECK(app.VerifyVoteExtension({}).status() == pb::ResponseVerifyVoteExtension::ACCEPT);
  CHECK(app.ExtendVote({}).ByteSizeLong() == 0);
  CHECK(app.OfferSnapshot({}).result() == pb::ResponseOfferSnapshot::REJECT);
  CHECK(app.ListSnapshots({}).snapshots_size() == 0);
  CHECK(app.LoadSnapshotChunk({}).chunk().empty());
  CHECK(app.ApplySnapshotChunk({}).result() == pb::ResponseApplySnapshotChunk::ABORT);
  CHECK(app.CheckTx({}).code() == kairos::app::kCodeTxDecode);  // an empty tx
  CHECK(app.InsertTx({}).code() != 0);
  CHECK(app.ReapTxs({}).txs_size() == 0);
}

TEST_CASE("Commit without FinalizeBlock is harmless", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  CHECK(app.Commit({}).retain_height() == 0);
  CheckInfo(app, 0, "");
  InitChain(app, 3);
  app.Commit({});  // InitChain alone commits nothing, and is kept for the first block
  CheckInfo(app, 0, "");
  const std::string h3 = Block(app, 3);
  app.Commit({});  // a second Commit of the same block
  CheckInfo(app, 3, h3);
  CheckInfo(node.Open(), 3, h3);
}
