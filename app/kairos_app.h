// KairosApp: the state machine behind kairosd.
//
// For now its state is the chain's identity (chain_id, initial_height) and a hash chain over
// the committed blocks: app_hash(H) = SHA-256("kairos/block/v1" || app_hash(H-1) || H ||
// tx count || SHA-256 of each tx). Later issues replace it with the authenticated store.
//
// Durability: nothing reaches the disk before Commit. FinalizeBlock computes the next state
// in memory; Commit writes it in one synced LevelDB batch. A crash between the two leaves the
// previous height, and CometBFT's handshake re-sends the block.
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
#include "store/db.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

// sdk codespace codes used by this module (cosmos-sdk types/errors).
inline constexpr std::uint32_t kCodeUnknownRequest = 6;
inline constexpr std::uint32_t kCodeInvalidHeight = 26;
inline constexpr char kCodespaceSdk[] = "sdk";

class KairosApp final : public abci::Application {
 public:
  // Loads the last committed state from `db`. Fails on a corrupt or unreadable database.
  static Result<std::unique_ptr<KairosApp>> Open(std::unique_ptr<store::Db> db);

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

  std::int64_t last_height() const { return committed_.height; }
  const std::string& last_app_hash() const { return committed_.app_hash; }

  // The hash-chain step, exposed for tests.
  static std::string NextAppHash(const std::string& prev, std::int64_t height,
                                 const google::protobuf::RepeatedPtrField<std::string>& txs);

 private:
  struct ChainState {
    std::string chain_id;
    std::int64_t initial_height = 1;
    std::int64_t height = 0;  // last committed height; 0 before the first block
    std::string app_hash;
  };

  explicit KairosApp(std::unique_ptr<store::Db> db, ChainState committed);

  std::unique_ptr<store::Db> db_;
  ChainState committed_;             // what the disk holds
  std::optional<ChainState> next_;   // InitChain or FinalizeBlock output, until Commit
  std::size_t next_tx_count_ = 0;
  std::chrono::steady_clock::time_point block_started_;
};

}  // namespace kairos::app
