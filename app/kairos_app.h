// KairosApp: the state machine behind kairosd.
//
// State lives in the authenticated store (store/MerkleStore): the app hash is its root. Until
// transactions are decoded (the next issue), a tx is applied as
//   "key=value"  ->  kv/<key> = value
//   anything else ->  tx/<sha256(tx) in hex> = tx
// InitChain writes the chain identity (meta/chain_id, meta/initial_height) and the chain-wide
// key and value size limits (meta/max_key_bytes, meta/max_value_bytes, taken from the config of
// the node that starts the chain), so the tree is never empty and can always prove absence. Nothing else is written per block: an empty block leaves
// the app hash as it was, which lets CometBFT's create_empty_blocks = false stop making blocks.
//
// Durability: nothing reaches the disk before Commit. FinalizeBlock applies the block to a
// branch of the last committed state and stages the new version; Commit writes it in one
// synced LevelDB batch. A block re-sent after a crash is applied again from the same state.
//
// Thread-safety: every Application method runs on the ABCI application executor, one at a
// time (see abci/application.h); the class holds no locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "abci/application.h"
#include "store/branch.h"
#include "store/merkle_store.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

// sdk codespace codes used by this module (cosmos-sdk types/errors).
inline constexpr std::uint32_t kCodeTxDecode = 2;
inline constexpr std::uint32_t kCodeUnknownRequest = 6;
inline constexpr std::uint32_t kCodeInvalidRequest = 18;
inline constexpr std::uint32_t kCodeInvalidHeight = 26;
inline constexpr char kCodespaceSdk[] = "sdk";

class KairosApp final : public abci::Application {
 public:
  // Loads the chain identity and limits from the last committed version of `store`.
  // `genesis_limits` (the node's config) are used until InitChain writes them into the state;
  // a chain that has them in its state uses those instead.
  static Result<std::unique_ptr<KairosApp>> Open(std::unique_ptr<store::MerkleStore> store,
                                                 store::KvLimits genesis_limits);

  pb::ResponseInfo Info(const pb::RequestInfo& req) override;
  pb::ResponseQuery Query(const pb::RequestQuery& req) override;
  pb::ResponseCheckTx CheckTx(const pb::RequestCheckTx& req) override;
  pb::ResponseInsertTx InsertTx(const pb::RequestInsertTx& req) override;
  pb::ResponseReapTxs ReapTxs(const pb::RequestReapTxs& req) override;
  pb::ResponseInitChain InitChain(const pb::RequestInitChain& req) override;
  pb::ResponsePrepareProposal PrepareProposal(const pb::RequestPrepareProposal& req) override;
  pb::ResponseProcessProposal ProcessProposal(const pb::RequestProcessProposal& req) override;
  pb::ResponseExtendVote ExtendVote(const pb::RequestExtendVote& req) override;
  pb::ResponseVerifyVoteExtension VerifyVoteExtension(
      const pb::RequestVerifyVoteExtension& req) override;
  pb::ResponseFinalizeBlock FinalizeBlock(const pb::RequestFinalizeBlock& req) override;
  pb::ResponseCommit Commit(const pb::RequestCommit& req) override;
  pb::ResponseListSnapshots ListSnapshots(const pb::RequestListSnapshots& req) override;
  pb::ResponseOfferSnapshot OfferSnapshot(const pb::RequestOfferSnapshot& req) override;
  pb::ResponseLoadSnapshotChunk LoadSnapshotChunk(
      const pb::RequestLoadSnapshotChunk& req) override;
  pb::ResponseApplySnapshotChunk ApplySnapshotChunk(
      const pb::RequestApplySnapshotChunk& req) override;

  std::int64_t last_height() const { return store_->version(); }
  // Empty before the first block; otherwise the store root.
  std::string last_app_hash() const;
  const store::KvLimits& limits() const { return limits_; }

  // The state key a tx writes (see the file comment), and its value. Exposed for tests.
  static std::pair<std::string, std::string> TxWrite(const std::string& tx);

 private:
  KairosApp(std::unique_ptr<store::MerkleStore> store, store::KvLimits limits);

  // Applies one tx to `branch`: code 0, or a code and log (the branch is then unchanged: a tx
  // makes one write, which either happens or not. Txs that write several keys run on a branch
  // of their own, applied only on success.)
  void ApplyTx(const std::string& tx, store::KvStore& branch, std::uint32_t* code,
               std::string* log) const;
  pb::ResponseQuery QueryStore(const std::string& key, std::int64_t height, bool prove) const;

  std::unique_ptr<store::MerkleStore> store_;
  store::KvLimits limits_;  // the chain's key and value size limits (consensus-relevant)
  std::string chain_id_;
  std::int64_t initial_height_ = 1;
  // InitChain's writes, applied with the first block (nothing is persisted before Commit).
  store::ChangeSet genesis_;
  // CheckTx's view: the committed state plus the txs checked since. Reset at Commit.
  std::unique_ptr<store::Branch> check_state_;
  std::int64_t staged_height_ = 0;
  std::size_t staged_txs_ = 0;
  std::chrono::steady_clock::time_point block_started_;
};

}  // namespace kairos::app
