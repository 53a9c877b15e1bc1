// KairosApp: the state machine behind kairosd, as an ABCI facade over the chain's modules
// (app/module_list.h). Its definitions are in three files: kairos_app.cc (open, Info, Query, the
// mempool connection, snapshots), init_chain.cc (InitChain) and block_executor.cc (proposals,
// FinalizeBlock, Commit); the queries are query_router.h's, the mempool tx_pool.h's.
//
// State lives in the authenticated store (store/MerkleStore): the app hash is its root. Txs are
// Cosmos SDK v0.53 TxRaw bytes (app/tx_codec), run by TxRunner through the ante pipeline
// (ante/) and the module of each message (app/app_modules.cc: auth, bank, locks, poa).
//
// InitChain reads the genesis app_state (app/genesis: one part per module) and writes the chain
// identity, the chain-wide limits (from genesis, never from this node's config) and each
// module's genesis, in the list's order; they are committed with the first block. An empty block writes nothing, so the
// app hash stays the same and CometBFT's create_empty_blocks = false can idle.
//
// FinalizeBlock: every module's PreBlock (auth purges the unordered nonces whose timeout is <=
// the block time), then each tx (ante branch, then message branch), then every module's EndBlock
// (locks ends expired sessions; poa returns the block's validator updates), then the root. While the txs run in block order,
// signature_threads - 1 helper threads verify the block's signatures from its back into the
// signature cache (app/block_signatures.h), so the results never depend on the threads.
//
// Durability: nothing reaches the disk before Commit. FinalizeBlock applies the block to a
// branch of the last committed state and stages the new version; Commit writes it in one
// synced LevelDB batch, with the block time beside it (outside the tree) for CheckTx after a
// restart. A block re-sent after a crash is applied again from the same state.
//
// Mempool: CheckTx (v0.38) and InsertTx (v0.40 app mode) go through TxPool (app/tx_pool.h):
// the ante on the check state, then the priority mempool; PrepareProposal builds the block from
// the pool, re-validating each tx on a scratch branch; ProcessProposal re-runs every tx the same
// way and also bounds the block's total gas; Commit updates the pool and rechecks it.
//
// Queries: Info and Query read committed state only, through store views (app/query_router.h),
// and of the mempool only what PriorityMempool answers under its own mutex (stats, a sender's
// pooled txs), so kairosd runs them on the ABCI query threads beside blocks
// (abci.query_threads).
//
// Thread-safety: every Application method but Info, Query and Echo runs on the ABCI
// application executor, one at a time (see abci/application.h); those three may run on other
// threads at the same time, and touch only thread-safe parts: the store's views, the query
// router's published chain facts, the mempool's stats and sender listings (never the check
// state or TxPool's reservations). The signature cache (also used by
// FinalizeBlock's signature helpers) locks itself.
#pragma once

#include <chrono>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "abci/application.h"
#include "ante/context.h"
#include "ante/errors.h"
#include "ante/decorators.h"
#include "app/auth/module.h"
#include "app/bank/module.h"
#include "app/block_signatures.h"
#include "app/module_list.h"
#include "app/metrics.h"
#include "app/query_router.h"
#include "app/state_sync.h"
#include "app/tx_codec.h"
#include "app/tx_pool.h"
#include "app/tx_runner.h"
#include "store/branch.h"
#include "store/merkle_store.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

// Names the unit tests use for ante::SdkCode codes (ante/errors.h holds the one list).
inline constexpr std::uint32_t kCodeTxDecode = ante::kTxDecode;
inline constexpr std::uint32_t kCodeUnknownRequest = ante::kUnknownRequest;
inline constexpr std::uint32_t kCodeInvalidRequest = ante::kInvalidRequest;
inline constexpr std::uint32_t kCodeKeyNotFound = ante::kKeyNotFound;
inline constexpr std::uint32_t kCodeInvalidHeight = ante::kInvalidHeight;

// This node's own settings (config.toml): none of them reaches the state or the app hash.
struct AppOptions {
  // This node's CheckTx fee policy (config tx.min_gas_prices).
  std::vector<ante::GasPrice> min_gas_prices;
  std::size_t signature_threads = 2;
  // The event attributes ("type.key") FinalizeBlock marks for CometBFT's tx indexer (config
  // tx.index_events); empty: every attribute, as the Cosmos SDK's index-events = []. Node-local:
  // CometBFT leaves events out of the results hash, so this never reaches consensus.
  std::vector<std::string> index_events;
  // The app-side mempool (config [mempool]).
  mempool::Config mempool;
  // Simulate's limits (config [query]).
  QueryLimits query;
  std::int64_t mempool_recheck_budget_nanos = 200'000'000;
  std::int64_t mempool_parked_ttl_blocks = 20;
  std::int64_t mempool_regossip_interval_nanos = 10'000'000'000;
  // A monotonic clock in nanoseconds for the gossip rounds of ReapTxs; null: steady_clock.
  // (Tests set it.) Never used for anything that reaches the state.
  std::function<std::int64_t()> monotonic_nanos;
  // Where block execution, txs by result code and the store commit are recorded (config
  // [metrics]); null records nothing. REQUIRES: outlives the app.
  Metrics* metrics = nullptr;
  // Snapshots taken and served, and restores (config [state_sync]; app/state_sync.h).
  StateSyncOptions state_sync;
};

class KairosApp final : public abci::Application {
 public:
  // Loads the chain identity, limits and params from the last committed version of `store`.
  static Result<std::unique_ptr<KairosApp>> Open(std::unique_ptr<store::MerkleStore> store,
                                                 AppOptions options = {});

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

  // A tx handed to the app mempool by kairosd itself (gRPC and REST BroadcastTx; app/api/
  // tx_service.h): checked and pooled as InsertTx does, answered in full as CheckTx is.
  // REQUIRES: on the application executor (abci::Server::RunOnExecutor).
  pb::ResponseCheckTx IngestTx(const std::string& tx);
  // True once CometBFT has called InsertTx or ReapTxs: it runs the app mempool (v0.40,
  // mempool.type = "app"), so a tx put in the pool reaches peers through ReapTxs. Thread-safe.
  bool app_mempool_active() const { return app_mempool_seen_.load(std::memory_order_relaxed); }

  std::int64_t last_height() const { return store_->version(); }
  // The snapshots this node keeps (the CLI's snapshots commands, tests).
  StateSync& state_sync() { return *state_sync_; }
  const TxPool& tx_pool() const { return pool_; }
  // The queries of committed state, for the gRPC and REST servers (thread-safe: query_router.h).
  const QueryRouter& query_router() const { return queries_; }
  // Empty before the first block; otherwise the store root.
  std::string last_app_hash() const;
  const store::KvLimits& limits() const { return limits_; }

 private:
  KairosApp(std::unique_ptr<store::MerkleStore> store, AppOptions options);

  std::atomic<bool> app_mempool_seen_{false};

  Status LoadCommitted();
  // The block a CheckTx is judged against: the next height, the last block's time.
  ante::BlockInfo CheckBlockInfo() const;
  // Why a proposal is invalid: the first bad tx and the reason.
  struct ProposalFault {
    std::size_t index = 0;
    std::string reason;
  };
  // Runs a proposal's txs cumulatively on a scratch branch (PreBlock first), and adds up their
  // gas limits against the block's max gas.
  std::optional<ProposalFault> CheckProposal(
      const google::protobuf::RepeatedPtrField<std::string>& txs, std::int64_t height,
      std::int64_t time_unix_nanos) const;
  // Lists the signatures of a block's decoded txs whose keys the committed state knows, tx by
  // tx, for the helper threads of `check`.
  void ListBlockSignatures(const std::vector<std::variant<ante::Tx, TxError>>& decoded,
                           BlockSignatureCheck* check) const;

  // Hands the chain's identity and limits to the query router (after InitChain or open).
  void PublishChainFacts();
  // A scratch branch for a proposal of `height` at `time`: the committed state (and the
  // genesis writes before block 1), after PreBlock.
  std::unique_ptr<store::Branch> ProposalState(std::int64_t height,
                                               std::int64_t time_unix_nanos) const;
  // Sets each event attribute's index flag from options_.index_events (no-op when empty).
  void MarkIndexedEvents(pb::ResponseFinalizeBlock* res) const;

  std::unique_ptr<store::MerkleStore> store_;
  AppOptions options_;
  // Snapshots of store_ (taken after Commit, served) and the restore of an empty node.
  std::unique_ptr<StateSync> state_sync_;
  // The chain's key and value size limits (consensus params): from genesis app_state.store,
  // kept in the state; the defaults until InitChain.
  store::KvLimits limits_;
  std::int64_t max_block_gas_ = -1;  // consensus param block.max_gas, from genesis
  std::int64_t last_block_time_ = 0;  // Unix nanos of the last committed block
  std::int64_t staged_block_time_ = 0;
  // The chain's modules (app/app_modules.cc), with their keepers.
  std::unique_ptr<ModuleList> modules_ = ModuleList::Chain();
  // What the app's own plumbing reads directly: accounts (the block's signature jobs, the
  // mempool's sequences) and balances (the mempool's reservations).
  const auth::AuthKeeper& auth_ = modules_->Get<auth::AuthModule>()->keeper();
  const bank::BankKeeper& bank_ = modules_->Get<bank::BankModule>()->keeper();
  mutable ante::SignatureCache signature_cache_;
  TxRunner runner_{*modules_, &signature_cache_};
  std::string chain_id_;
  std::int64_t initial_height_ = 1;
  // InitChain's writes, applied with the first block (nothing is persisted before Commit).
  store::ChangeSet genesis_;
  // The keepers as the pool expects them (tx_pool.h): reads, and the inverses of the ante's
  // writes.
  PoolAccountKeeperOf<auth::AuthKeeper> pool_accounts_{auth_};
  PoolBankKeeperOf<bank::BankKeeper> pool_bank_{bank_};
  // The app mempool and CheckTx's view (the committed state plus the pool's ready txs).
  TxPool pool_;
  // Info and Query, on any thread (declared after what it reads).
  QueryRouter queries_{*store_, *modules_, runner_, pool_, options_.query};
  // The block being finalized: its tx hashes and first signers, for the mempool at Commit.
  std::vector<std::string> staged_hashes_;
  std::vector<std::string> staged_senders_;
  std::int64_t staged_height_ = 0;
  std::size_t staged_txs_ = 0;
  std::size_t staged_failed_ = 0;
  std::chrono::steady_clock::time_point block_started_;
  // For metrics (options_.metrics set): the staged block's results and change-set size.
  TxResultTally staged_results_;
  std::uint64_t staged_change_bytes_ = 0;
  std::uint64_t staged_change_writes_ = 0;
};

}  // namespace kairos::app
