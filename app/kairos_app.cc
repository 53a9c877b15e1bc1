#include "app/kairos_app.h"

#include <cstdlib>
#include <stdexcept>

#include "app/logging.h"
#include "app/version.h"
#include "store/sha256.h"

namespace kairos::app {

namespace {

// Keys of the committed state in LevelDB.
constexpr char kKeyChainId[] = "meta/chain_id";
constexpr char kKeyInitialHeight[] = "meta/initial_height";
constexpr char kKeyHeight[] = "meta/height";
constexpr char kKeyAppHash[] = "meta/app_hash";

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

std::string Hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

// A byte string as printable text for logs and responses (proto3 strings must be UTF-8).
std::string Printable(const std::string& bytes, std::size_t max = 128) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < max; ++i) {
    const unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
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

}  // namespace

Result<std::unique_ptr<KairosApp>> KairosApp::Open(std::unique_ptr<store::Db> db) {
  ChainState state;
  std::string value;
  Status s = db->Get(kKeyHeight, &value);
  if (s.IsNotFound()) {
    Log()->info("no committed state in {}: waiting for InitChain", db->dir());
    return std::unique_ptr<KairosApp>(new KairosApp(std::move(db), state));
  }
  if (!s.ok()) return s;
  if (!DecodeInt64(value, &state.height) || state.height < 0) {
    return Status::Corruption(db->dir() + ": " + kKeyHeight + " is not an 8-byte height");
  }
  if (s = db->Get(kKeyAppHash, &state.app_hash); !s.ok()) return s;
  if (s = db->Get(kKeyChainId, &state.chain_id); !s.ok()) return s;
  if (s = db->Get(kKeyInitialHeight, &value); !s.ok()) return s;
  if (!DecodeInt64(value, &state.initial_height)) {
    return Status::Corruption(db->dir() + ": " + kKeyInitialHeight + " is not an 8-byte height");
  }
  Log()->info("loaded committed state: chain {} height {} app hash {}",
              Printable(state.chain_id), state.height, Hex(state.app_hash));
  return std::unique_ptr<KairosApp>(new KairosApp(std::move(db), state));
}

KairosApp::KairosApp(std::unique_ptr<store::Db> db, ChainState committed)
    : db_(std::move(db)), committed_(std::move(committed)) {}

std::string KairosApp::NextAppHash(const std::string& prev, std::int64_t height,
                                   const google::protobuf::RepeatedPtrField<std::string>& txs) {
  store::Sha256 chain;
  chain.Update("kairos/block/v1").Update(prev).Update(EncodeInt64(height));
  chain.Update(EncodeInt64(txs.size()));
  for (const std::string& tx : txs) chain.Update(store::Sha256Of(tx));
  return store::ToBytes(chain.Finish());
}

pb::ResponseInfo KairosApp::Info(const pb::RequestInfo& req) {
  Log()->debug("Info from CometBFT {} (ABCI {}): at height {}", Printable(req.version()),
               Printable(req.abci_version()), committed_.height);
  pb::ResponseInfo res;
  res.set_data("kairos");
  res.set_version(kVersion);
  res.set_app_version(kAppProtocolVersion);
  res.set_last_block_height(committed_.height);
  res.set_last_block_app_hash(committed_.app_hash);
  return res;
}

pb::ResponseQuery KairosApp::Query(const pb::RequestQuery& req) {
  pb::ResponseQuery res;
  res.set_height(committed_.height);
  if (req.height() != 0 && req.height() != committed_.height) {
    res.set_code(kCodeInvalidHeight);
    res.set_codespace(kCodespaceSdk);
    res.set_log("path " + Printable(req.path()) + " is answered at the latest height (" +
                std::to_string(committed_.height) + ") only; got height " +
                std::to_string(req.height()));
    return res;
  }
  if (req.path() == "/app/version") {
    res.set_value(kVersion);
  } else if (req.path() == "/app/height") {
    res.set_value(std::to_string(committed_.height));
  } else {
    res.set_code(kCodeUnknownRequest);
    res.set_codespace(kCodespaceSdk);
    res.set_log("unknown query path '" + Printable(req.path()) +
                "'; known paths: /app/version, /app/height");
  }
  return res;
}

pb::ResponseCheckTx KairosApp::CheckTx(const pb::RequestCheckTx&) {
  return {};  // every tx is accepted until transactions are decoded (a later issue)
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
  if (committed_.height != 0) {
    throw std::runtime_error("InitChain at height " + std::to_string(committed_.height) +
                             ": the chain was initialised already (reset CometBFT and kairosd "
                             "data together)");
  }
  ChainState genesis;
  genesis.chain_id = req.chain_id();
  genesis.initial_height = req.initial_height() > 0 ? req.initial_height() : 1;
  next_ = genesis;  // committed together with the first block
  next_tx_count_ = 0;
  Log()->info("InitChain: chain {} initial height {} with {} validator(s)",
              Printable(genesis.chain_id), genesis.initial_height, req.validators_size());
  pb::ResponseInitChain res;
  *res.mutable_validators() = req.validators();
  return res;  // empty app_hash: the genesis state is the empty state
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
  // Always computed from the committed state, so a block re-sent after a crash (or a second
  // FinalizeBlock before Commit) gives the same result.
  ChainState base = committed_;
  if (committed_.height == 0 && next_) {
    // Nothing committed yet: the chain identity comes from InitChain (held in next_). Take only
    // that; next_ may already hold an uncommitted first block, which must not become the base.
    base.chain_id = next_->chain_id;
    base.initial_height = next_->initial_height;
  }
  const std::int64_t expected = base.height == 0 ? base.initial_height : base.height + 1;
  // abci-cli leaves height unset; a node always sets it.
  const std::int64_t height = req.height() == 0 ? expected : req.height();
  if (height != expected) {
    throw std::runtime_error("FinalizeBlock for height " + std::to_string(height) +
                             " but the next height is " + std::to_string(expected) +
                             " (last committed " + std::to_string(committed_.height) + ")");
  }
  ChainState next = base;
  next.height = height;
  next.app_hash = NextAppHash(base.app_hash, height, req.txs());
  next_ = next;
  next_tx_count_ = static_cast<std::size_t>(req.txs_size());

  pb::ResponseFinalizeBlock res;
  for (int i = 0; i < req.txs_size(); ++i) res.add_tx_results();  // code 0
  res.set_app_hash(next.app_hash);
  Log()->debug("FinalizeBlock {}: {} txs, app hash {}", height, req.txs_size(),
               Hex(next.app_hash));
  return res;
}

pb::ResponseCommit KairosApp::Commit(const pb::RequestCommit&) {
  if (!next_ || next_->height == 0) {
    Log()->warn("Commit without a finalized block: nothing to commit at height {}",
                committed_.height);
    return {};
  }
  store::WriteBatch batch;
  batch.Put(kKeyChainId, next_->chain_id);
  batch.Put(kKeyInitialHeight, EncodeInt64(next_->initial_height));
  batch.Put(kKeyHeight, EncodeInt64(next_->height));
  batch.Put(kKeyAppHash, next_->app_hash);
  if (Status s = db_->Write(batch); !s.ok()) {
    // The disk is broken. Going on would answer from a state that is not durable.
    Log()->critical("Commit of height {} failed: {}. Stopping; the last durable height is {}.",
                    next_->height, s.ToString(), committed_.height);
    spdlog::shutdown();
    std::_Exit(74);  // EX_IOERR
  }
  committed_ = *next_;
  next_.reset();
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            block_started_)
                      .count();
  Log()->info("committed block {}: {} txs, app hash {}, {:.1f} ms", committed_.height,
              next_tx_count_, Hex(committed_.app_hash), ms);
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
