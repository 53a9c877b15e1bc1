// Unit tests for app/kairos_app: the hash-chain state machine over a real LevelDB in a temp dir.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>

#include "abci/dispatcher.h"
#include "app/kairos_app.h"
#include "app/version.h"
#include "store/db.h"
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
    auto db = kairos::store::Db::Open(dir_ / "data");
    REQUIRE(db.ok());
    auto app = KairosApp::Open(std::move(*db));
    REQUIRE(app.ok());
    app_ = std::move(*app);
    return *app_;
  }
  // Destroys the app without anything else: a crash at this instant, as far as disk goes.
  void Crash() { app_.reset(); }
  KairosApp& app() { return *app_; }

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

TEST_CASE("InitChain echoes the validators and returns an empty app hash", "[kairos_app]") {
  Node node;
  pb::RequestInitChain req;
  req.set_chain_id("kairos-test");
  for (int i = 0; i < 3; ++i) {
    auto* v = req.add_validators();
    v->mutable_pub_key()->set_ed25519(std::string(32, static_cast<char>('a' + i)));
    v->set_power(10 + i);
  }
  const pb::ResponseInitChain res = node.Open().InitChain(req);
  REQUIRE(res.validators_size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(res.validators(i).SerializeAsString() == req.validators(i).SerializeAsString());
  }
  CHECK(res.app_hash().empty());
  CHECK_FALSE(res.has_consensus_params());
}

TEST_CASE("FinalizeBlock answers each tx and returns the next hash-chain step", "[kairos_app]") {
  Node node;
  KairosApp& app = node.Open();
  InitChain(app, 1);
  const Txs txs = MakeTxs({"a", "bb", std::string("\x00\xff", 2)});
  const pb::ResponseFinalizeBlock res = Finalize(app, 1, txs);
  REQUIRE(res.tx_results_size() == 3);
  for (const auto& r : res.tx_results()) CHECK(r.code() == 0);
  CHECK(res.app_hash().size() == 32);
  CHECK(res.app_hash() == KairosApp::NextAppHash("", 1, txs));
  CHECK(Finalize(app, 1, {}).tx_results_size() == 0);
}

TEST_CASE("the app hash changes every block and depends on the txs", "[kairos_app]") {
  const Txs ab = MakeTxs({"a", "b"});
  const std::string h1 = KairosApp::NextAppHash("", 1, ab);
  CHECK(KairosApp::NextAppHash("", 1, ab) == h1);                       // deterministic
  CHECK(KairosApp::NextAppHash("", 2, ab) != h1);                       // height
  CHECK(KairosApp::NextAppHash("x", 1, ab) != h1);                      // previous hash
  CHECK(KairosApp::NextAppHash("", 1, MakeTxs({"b", "a"})) != h1);      // order
  CHECK(KairosApp::NextAppHash("", 1, MakeTxs({"ab"})) != h1);          // boundaries
  CHECK(KairosApp::NextAppHash("", 1, MakeTxs({"a", "b", ""})) != h1);  // count

  Node node;
  KairosApp& app = node.Open();
  const std::string b1 = Block(app, 1, ab);
  const std::string b2 = Block(app, 2, ab);
  const std::string b3 = Block(app, 3);
  CHECK(b1 == h1);
  CHECK(b2 == KairosApp::NextAppHash(b1, 2, ab));
  CHECK(b3 == KairosApp::NextAppHash(b2, 3, {}));
  CHECK(b1 != b2);
  CHECK(b2 != b3);
}

TEST_CASE("Commit persists exactly the committed height and hash", "[kairos_app]") {
  Node node;
  std::string hash;
  {
    KairosApp& app = node.Open();
    InitChain(app, 1);
    for (int h = 1; h <= 3; ++h) hash = Block(app, h, MakeTxs({"tx" + std::to_string(h)}));
    CheckInfo(app, 3, hash);
    CHECK(app.last_height() == 3);
    CHECK(app.last_app_hash() == hash);
  }
  KairosApp& reopened = node.Open();
  CheckInfo(reopened, 3, hash);
  CHECK(Query(reopened, "/app/height").value() == "3");
  // The chain goes on from there.
  CHECK(Finalize(reopened, 4, {}).app_hash() == KairosApp::NextAppHash(hash, 4, {}));
}

TEST_CASE("a crash between FinalizeBlock and Commit leaves the previous height", "[kairos_app]") {
  Node node;
  const Txs txs = MakeTxs({"x", "y"});
  std::string h1, h2;
  {
    KairosApp& app = node.Open();
    InitChain(app, 1);
    h1 = Block(app, 1, txs);
    h2 = Finalize(app, 2, txs).app_hash();
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 1, h1);
  CHECK(Finalize(app, 2, txs).app_hash() == h2);  // the re-sent block gives the same hash
  app.Commit({});
  CheckInfo(node.Open(), 2, h2);
}

TEST_CASE("a crash before the first Commit leaves the empty chain", "[kairos_app]") {
  Node node;
  std::string h1;
  {
    KairosApp& app = node.Open();
    InitChain(app, 1);
    h1 = Finalize(app, 1, MakeTxs({"g"})).app_hash();
    node.Crash();
  }
  KairosApp& app = node.Open();
  CheckInfo(app, 0, "");
  InitChain(app, 1);  // CometBFT replays InitChain for an app at height 0
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
  const std::string h1 = Block(app, 0);
  CHECK(h1 == KairosApp::NextAppHash("", 1, {}));
  CHECK(app.last_height() == 1);
  const Txs txs = MakeTxs({"z"});
  CHECK(Block(app, 0, txs) == KairosApp::NextAppHash(h1, 2, txs));
  CHECK(app.last_height() == 2);
}

TEST_CASE("InitChain initial_height sets the first block's height", "[kairos_app]") {
  Node node;
  std::string h5;
  {
    KairosApp& app = node.Open();
    InitChain(app, 5);
    CHECK_THROWS_WITH(Finalize(app, 1, {}), Catch::Contains("next height is 5"));
    h5 = Block(app, 5);
    CHECK(h5 == KairosApp::NextAppHash("", 5, {}));
    CheckInfo(app, 5, h5);
  }
  // The initial height is committed with the first block; the next is 6 after a restart.
  KairosApp& app = node.Open();
  CHECK_THROWS_WITH(Finalize(app, 7, {}), Catch::Contains("next height is 6"));
  CHECK(Finalize(app, 0, {}).app_hash() == KairosApp::NextAppHash(h5, 6, {}));
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
  CHECK(app.CheckTx({}).code() == 0);
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
