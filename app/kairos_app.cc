#include "app/kairos_app.h"

#include <cstdlib>
#include <stdexcept>

#include "app/hex.h"
#include "app/logging.h"
#include "app/proofs.h"
#include "app/version.h"
#include "store/sha256.h"

namespace kairos::app {

namespace {

// Keys of the chain identity and the chain-wide limits in the store.
constexpr char kKeyChainId[] = "meta/chain_id";
constexpr char kKeyInitialHeight[] = "meta/initial_height";
constexpr char kKeyMaxKeyBytes[] = "meta/max_key_bytes";
constexpr char kKeyMaxValueBytes[] = "meta/max_value_bytes";

std::string EncodeInt64(std::int64_t v) {
  std::string out(8, '\0');
  const auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (56 - 8 * i));
  return out;
}

bool DecodeInt64(const std::string& in, std::int64_t* v) {
  if (in.size() != 8) return false;
  std::uint64_t u = 0;
  for (unsigned char c : in) u = (u << 8) | c;
  *v = static_cast<std::int64_t>(u);
  return true;
}

// A byte string as printable text for logs and responses (proto3 strings must be UTF-8).
std::string Printable(const std::string& bytes, std::size_t max = 128) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < max; ++i) {
    const unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x" + HexEncode(std::string_view(bytes).substr(i, 1));
    }
  }
  if (bytes.size() > max) out += "...";
  return out;
}

// Size of `tx` as an element of a repeated bytes field: what CometBFT counts against
// max_tx_bytes (types.ComputeProtoSizeForTxs).
std::int64_t ProtoSizeOfTx(const std::string& tx) {
  std::int64_t len_bytes = 1;
  for (std::uint64_t n = tx.size(); n >= 0x80; n >>= 7) ++len_bytes;
  return 1 + len_bytes + static_cast<std::int64_t>(tx.size());
}

// The store cannot be read or written: the node is broken. Answering on from a store that
// fails would be worse than stopping, so stop loudly (as CometBFT expects of a broken app).
[[noreturn]] void StopOnBrokenStore(const std::string& what, const Status& s) {
  Log()->critical("{} failed: {}. The store is broken; stopping.", what, s.ToString());
  spdlog::shutdown();
  std::_Exit(74);  // EX_IOERR
}

bool IsBroken(const Status& s) {
  return s.code() == Status::Code::kCorruption || s.code() == Status::Code::kIOError;
}

std::string HexUpper(const std::string& bytes) { return HexEncode(bytes, /*upper=*/true); }

pb::ResponseQuery QueryError(std::uint32_t code, const char* codespace, std::string log) {
  pb::ResponseQuery res;
  res.set_code(code);
  res.set_codespace(codespace);
  res.set_log(std::move(log));
  return res;
}

}  // namespace

Result<std::unique_ptr<KairosApp>> KairosApp::Open(std::unique_ptr<store::MerkleStore> store,
                                                   store::KvLimits genesis_limits) {
  std::unique_ptr<KairosApp> app(new KairosApp(std::move(store), genesis_limits));
  const store::MerkleStore& s = *app->store_;
  if (s.version() == 0) {
    Log()->info("no committed state in the store: waiting for InitChain");
    return app;
  }
  std::string value;
  if (Status st = s.Get(kKeyChainId, &value); st.ok()) {
    app->chain_id_ = value;
  } else if (!st.IsNotFound()) {
    return st;
  }
  if (Status st = s.Get(kKeyInitialHeight, &value); st.ok()) {
    if (!DecodeInt64(value, &app->initial_height_)) {
      return Status::Corruption(std::string(kKeyInitialHeight) + " is not an 8-byte height");
    }
  } else if (!st.IsNotFound()) {
    return st;
  }
  // The chain's own limits, fixed at genesis, override the node's configuration.
  for (auto [key, field] : {std::pair{kKeyMaxKeyBytes, &store::KvLimits::max_key_bytes},
                            std::pair{kKeyMaxValueBytes, &store::KvLimits::max_value_bytes}}) {
    Status st = s.Get(key, &value);
    if (st.IsNotFound()) continue;
    std::int64_t limit = 0;
    if (!st.ok()) return st;
    if (!DecodeInt64(value, &limit) || limit <= 0) {
      return Status::Corruption(std::string(key) + " is not a positive 8-byte integer");
    }
    app->limits_.*field = static_cast<std::size_t>(limit);
  }
  app->check_state_ = std::make_unique<store::Branch>(*app->store_, app->limits_);
  Log()->info("loaded committed state: chain {} height {} app hash {}",
              Printable(app->chain_id_), s.version(), HexUpper(app->last_app_hash()));
  return app;
}

KairosApp::KairosApp(std::unique_ptr<store::MerkleStore> store, store::KvLimits limits)
    : store_(std::move(store)),
      limits_(limits),
      check_state_(std::make_unique<store::Branch>(*store_, limits_)) {}

std::string KairosApp::last_app_hash() const {
  return store_->version() == 0 ? std::string() : store::ToBytes(store_->root_hash());
}

std::pair<std::string, std::string> KairosApp::TxWrite(const std::string& tx) {
  const auto eq = tx.find('=');
  if (eq != std::string::npos && eq > 0 && eq + 1 < tx.size()) {
    return {"kv/" + tx.substr(0, eq), tx.substr(eq + 1)};
  }
  return {"tx/" + HexEncode(store::ToBytes(store::Sha256Of(tx))), tx};
}

void KairosApp::ApplyTx(const std::string& tx, store::KvStore& branch, std::uint32_t* code,
                        std::string* log) const {
  *code = 0;
  log->clear();
  if (tx.empty()) {
    *code = kCodeTxDecode;
    *log = "tx parse error: empty tx";
    return;
  }
  const auto [key, value] = TxWrite(tx);
  if (Status s = branch.Set(key, value); !s.ok()) {
    *code = kCodeInvalidRequest;
    *log = "invalid request: " + s.message();
  }
}

pb::ResponseInfo KairosApp::Info(const pb::RequestInfo& req) {
  Log()->debug("Info from CometBFT {} (ABCI {}): at height {}", Printable(req.version()),
               Printable(req.abci_version()), store_->version());
  pb::ResponseInfo res;
  res.set_data("kairos");
  res.set_version(kVersion);
  res.set_app_version(kAppProtocolVersion);
  res.set_last_block_height(store_->version());
  res.set_last_block_app_hash(last_app_hash());
  return res;
}

pb::ResponseQuery KairosApp::Query(const pb::RequestQuery& req) {
  const std::string& path = req.path();
  if (path == "/store" || path == "store") return QueryStore(req.data(), req.height(), req.prove());
  for (const std::string_view prefix : {"/store/", "store/"}) {
    if (path.rfind(prefix, 0) == 0) {
      std::string key;
      if (!HexDecode(std::string_view(path).substr(prefix.size()), &key)) {
        return QueryError(kCodeInvalidRequest, kCodespaceSdk,
                          "invalid request: the store path takes a hex key, as " +
                              std::string(prefix) + "<hex>; got '" + Printable(path) + "'");
      }
      return QueryStore(key, req.height(), req.prove());
    }
  }
  const std::int64_t latest = store_->version();
  if (req.height() != 0 && req.height() != latest) {
    return QueryError(kCodeInvalidHeight, kCodespaceSdk,
                      "path " + Printable(path) + " is answered at the latest height (" +
                          std::to_string(latest) + ") only; got height " +
                          std::to_string(req.height()));
  }
  pb::ResponseQuery res;
  res.set_height(latest);
  if (path == "/app/version") {
    res.set_value(kVersion);
  } else if (path == "/app/height") {
    res.set_value(std::to_string(latest));
  } else {
    return QueryError(kCodeUnknownRequest, kCodespaceSdk,
                      "unknown query path '" + Printable(path) +
                          "'; known paths: /app/version, /app/height, /store/<hex key>, "
                          "/store (key in data)");
  }
  return res;
}

pb::ResponseQuery KairosApp::QueryStore(const std::string& key, std::int64_t height,
                                        bool prove) const {
  const std::int64_t at = height == 0 ? store_->version() : height;
  if (key.empty()) {
    return QueryError(kCodeInvalidRequest, kCodespaceSdk, "invalid request: empty store key");
  }
  if (Status s = store_->CheckVersion(at); !s.ok()) {
    return QueryError(kCodeInvalidHeight, kCodespaceSdk, "invalid height: " + s.message());
  }
  pb::ResponseQuery res;
  res.set_key(key);
  res.set_height(at);
  std::string value;
  if (Status s = store_->GetAt(at, key, &value); s.ok()) {
    res.set_value(std::move(value));
  } else if (s.IsNotFound()) {
    res.set_log("key not found");
  } else if (IsBroken(s)) {
    StopOnBrokenStore("a store query at height " + std::to_string(at), s);
  } else {
    return QueryError(kCodeInvalidRequest, kCodespaceSdk, "invalid request: " + s.message());
  }
  if (prove) {
    store::KeyProof proof;
    if (Status s = store_->Prove(at, key, &proof); IsBroken(s)) {
      StopOnBrokenStore("a proof at height " + std::to_string(at), s);
    } else if (!s.ok()) {  // e.g. an empty tree, which cannot prove absence
      return QueryError(kCodeInvalidRequest, kCodespaceSdk, "invalid request: " + s.message());
    }
    *res.mutable_proof_ops() = ToProofOps(key, proof);
  }
  return res;
}

pb::ResponseCheckTx KairosApp::CheckTx(const pb::RequestCheckTx& req) {
  pb::ResponseCheckTx res;
  std::uint32_t code = 0;
  std::string log;
  ApplyTx(req.tx(), *check_state_, &code, &log);
  if (code != 0) {
    res.set_code(code);
    res.set_codespace(kCodespaceSdk);
    res.set_log(std::move(log));
  }
  return res;
}

pb::ResponseInsertTx KairosApp::InsertTx(const pb::RequestInsertTx&) {
  // CometBFT's app mempool (mempool.type = "app", v0.40) is not supported by this build:
  // refuse rather than accept txs that no ReapTxs would ever return.
  Log()->warn("InsertTx refused: the app-side mempool is not in this build; "
              "set mempool.type = \"flood\" in CometBFT's config.toml");
  pb::ResponseInsertTx res;
  res.set_code(1);
  return res;
}

pb::ResponseReapTxs KairosApp::ReapTxs(const pb::RequestReapTxs&) { return {}; }

pb::ResponseInitChain KairosApp::InitChain(const pb::RequestInitChain& req) {
  if (store_->version() != 0) {
    throw std::runtime_error("InitChain at height " + std::to_string(store_->version()) +
                             ": the chain was initialised already (reset CometBFT and kairosd "
                             "data together)");
  }
  chain_id_ = req.chain_id();
  initial_height_ = req.initial_height() > 0 ? req.initial_height() : 1;
  genesis_.clear();
  if (!chain_id_.empty()) genesis_[kKeyChainId] = chain_id_;
  genesis_[kKeyInitialHeight] = EncodeInt64(initial_height_);
  // This node's configured limits become the chain's: every node must start from the same
  // genesis state, and from then on the values in the state rule, whatever the config says.
  genesis_[kKeyMaxKeyBytes] = EncodeInt64(static_cast<std::int64_t>(limits_.max_key_bytes));
  genesis_[kKeyMaxValueBytes] = EncodeInt64(static_cast<std::int64_t>(limits_.max_value_bytes));
  check_state_ = std::make_unique<store::Branch>(*store_, limits_);
  // The genesis root, computed now and committed with the first block.
  auto root = store_->Stage(initial_height_, genesis_);
  if (!root.ok()) throw std::runtime_error("staging the genesis state: " + root.status().ToString());
  Log()->info("InitChain: chain {} initial height {} with {} validator(s), genesis app hash {}",
              Printable(chain_id_), initial_height_, req.validators_size(),
              HexUpper(store::ToBytes(*root)));
  pb::ResponseInitChain res;
  *res.mutable_validators() = req.validators();
  res.set_app_hash(store::ToBytes(*root));
  return res;
}

pb::ResponsePrepareProposal KairosApp::PrepareProposal(const pb::RequestPrepareProposal& req) {
  pb::ResponsePrepareProposal res;
  std::int64_t total = 0;
  for (const std::string& tx : req.txs()) {
    total += ProtoSizeOfTx(tx);
    if (total > req.max_tx_bytes()) break;
    res.add_txs(tx);
  }
  return res;
}

pb::ResponseProcessProposal KairosApp::ProcessProposal(const pb::RequestProcessProposal&) {
  pb::ResponseProcessProposal res;
  res.set_status(pb::ResponseProcessProposal::ACCEPT);
  return res;
}

pb::ResponseExtendVote KairosApp::ExtendVote(const pb::RequestExtendVote&) { return {}; }

pb::ResponseVerifyVoteExtension KairosApp::VerifyVoteExtension(
    const pb::RequestVerifyVoteExtension&) {
  pb::ResponseVerifyVoteExtension res;
  res.set_status(pb::ResponseVerifyVoteExtension::ACCEPT);
  return res;
}

pb::ResponseFinalizeBlock KairosApp::FinalizeBlock(const pb::RequestFinalizeBlock& req) {
  block_started_ = std::chrono::steady_clock::now();
  const std::int64_t last = store_->version();
  const std::int64_t expected = last == 0 ? initial_height_ : last + 1;
  // abci-cli leaves height unset; a node always sets it.
  const std::int64_t height = req.height() == 0 ? expected : req.height();
  if (height != expected) {
    throw std::runtime_error("FinalizeBlock for height " + std::to_string(height) +
                             " but the next height is " + std::to_string(expected) +
                             " (last committed " + std::to_string(last) + ")");
  }
  // Always from the last committed state: a block re-sent after a crash, or a second
  // FinalizeBlock before Commit, gives the same result.
  store::Branch block(*store_, limits_);
  if (last == 0) block.Apply(genesis_);
  pb::ResponseFinalizeBlock res;
  for (const std::string& tx : req.txs()) {
    std::uint32_t code = 0;
    std::string log;
    ApplyTx(tx, block, &code, &log);
    pb::ExecTxResult* result = res.add_tx_results();
    if (code != 0) {
      result->set_code(code);
      result->set_codespace(kCodespaceSdk);
      result->set_log(std::move(log));
    }
  }
  auto root = store_->Stage(height, block.changes());
  if (!root.ok()) {
    throw std::runtime_error("computing the app hash of block " + std::to_string(height) +
                             ": " + root.status().ToString());
  }
  staged_height_ = height;
  staged_txs_ = static_cast<std::size_t>(req.txs_size());
  res.set_app_hash(store::ToBytes(*root));
  Log()->debug("FinalizeBlock {}: {} txs, app hash {}", height, req.txs_size(),
               HexUpper(res.app_hash()));
  return res;
}

pb::ResponseCommit KairosApp::Commit(const pb::RequestCommit&) {
  if (staged_height_ == 0) {
    Log()->warn("Commit without a finalized block: nothing to commit at height {}",
                store_->version());
    return {};
  }
  if (Status s = store_->Commit(); !s.ok()) {
    // Going on would answer from a state that is not durable.
    StopOnBrokenStore("Commit of height " + std::to_string(staged_height_) +
                          " (the last durable height is " + std::to_string(store_->version()) +
                          ")",
                      s);
  }
  staged_height_ = 0;
  genesis_.clear();
  check_state_ = std::make_unique<store::Branch>(*store_, limits_);
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            block_started_)
                      .count();
  Log()->info("committed block {}: {} txs, app hash {}, {:.1f} ms", store_->version(),
              staged_txs_, HexUpper(last_app_hash()), ms);
  return {};  // retain_height 0: CometBFT keeps every block
}

pb::ResponseListSnapshots KairosApp::ListSnapshots(const pb::RequestListSnapshots&) {
  return {};
}

pb::ResponseOfferSnapshot KairosApp::OfferSnapshot(const pb::RequestOfferSnapshot&) {
  pb::ResponseOfferSnapshot res;
  res.set_result(pb::ResponseOfferSnapshot::REJECT);  // no state sync yet
  return res;
}

pb::ResponseLoadSnapshotChunk KairosApp::LoadSnapshotChunk(const pb::RequestLoadSnapshotChunk&) {
  return {};
}

pb::ResponseApplySnapshotChunk KairosApp::ApplySnapshotChunk(
    const pb::RequestApplySnapshotChunk&) {
  pb::ResponseApplySnapshotChunk res;
  res.set_result(pb::ResponseApplySnapshotChunk::ABORT);  // no snapshot is ever accepted
  return res;
}

}  // namespace kairos::app
