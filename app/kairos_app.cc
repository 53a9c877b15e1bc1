#include "app/kairos_app.h"

#include "app/chain_meta.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "ante/errors.h"
#include "ante/sign_doc.h"
#include "app/genesis.h"
#include "app/header_time.h"
#include "app/hex.h"
#include "app/auth/module.h"
#include "app/bank/genesis.h"
#include "app/proto_util.h"
#include "app/tx_codec.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "kairos/auth/v1/query.pb.h"
#include "kairos/mempool/v1/query.pb.h"
#include "app/logging.h"
#include "app/proofs.h"
#include "app/store_failure.h"
#include "app/version.h"
#include "store/big_endian.h"
#include "store/sha256.h"

namespace kairos::app {


Result<std::unique_ptr<KairosApp>> KairosApp::Open(std::unique_ptr<store::MerkleStore> store,
                                                   AppOptions options) {
  std::unique_ptr<KairosApp> app(new KairosApp(std::move(store), std::move(options)));
  if (Status s = app->state_sync_->Init(); !s.ok()) return s;
  if (app->store_->version() == 0) {
    Log()->info("no committed state in the store: waiting for InitChain");
    return app;
  }
  if (Status s = app->LoadCommitted(); !s.ok()) return s;
  Log()->info("loaded committed state: chain {} height {} app hash {}", Printable(app->chain_id_),
              app->store_->version(), HexEncode(app->last_app_hash(), true));
  return app;
}

Status KairosApp::LoadCommitted() {
  const store::MerkleStore& s = *store_;
  std::string value;
  if (Status st = s.Get(kKeyChainId, &value); st.ok()) {
    chain_id_ = value;
  } else if (!st.IsNotFound()) {
    return st;
  }
  if (Status st = s.Get(kKeyInitialHeight, &value); st.ok()) {
    if (!DecodeInt64(value, &initial_height_)) {
      return Status::Corruption(std::string(kKeyInitialHeight) + " is not an 8-byte height");
    }
  } else if (!st.IsNotFound()) {
    return st;
  }
  if (Status st = s.Get(kKeyMaxBlockGas, &value); st.ok()) {
    if (!DecodeInt64(value, &max_block_gas_)) {
      return Status::Corruption(std::string(kKeyMaxBlockGas) + " is not an 8-byte integer");
    }
  } else if (!st.IsNotFound()) {
    return st;
  }
  // The chain's limits, fixed at genesis (a store without them, never initialised by InitChain,
  // keeps the defaults).
  for (auto [key, field] : {std::pair{kKeyMaxKeyBytes, &store::KvLimits::max_key_bytes},
                            std::pair{kKeyMaxValueBytes, &store::KvLimits::max_value_bytes}}) {
    Status st = s.Get(key, &value);
    if (st.IsNotFound()) continue;
    std::int64_t limit = 0;
    if (!st.ok()) return st;
    if (!DecodeInt64(value, &limit) || limit <= 0) {
      return Status::Corruption(std::string(key) + " is not a positive 8-byte integer");
    }
    limits_.*field = static_cast<std::size_t>(limit);
  }
  for (const auto& m : modules_->modules()) {
    if (Status st = m->LoadState(s); !st.ok()) return st;
  }
  if (!s.commit_info().empty() && !DecodeInt64(s.commit_info(), &last_block_time_)) {
    return Status::Corruption("the commit info (last block time) is malformed");
  }
  pool_.Reset(*store_, limits_, nullptr);
  PublishChainFacts();
  return Status::OK();
}

KairosApp::KairosApp(std::unique_ptr<store::MerkleStore> store, AppOptions options)
    : store_(std::move(store)),
      options_(std::move(options)),
      pool_(runner_, pool_accounts_, pool_bank_,
            TxPoolOptions{options_.mempool, options_.mempool_recheck_budget_nanos,
                          options_.min_gas_prices, options_.mempool_parked_ttl_blocks,
                          options_.mempool_regossip_interval_nanos}) {
  pool_.Reset(*store_, limits_, nullptr);
  state_sync_ = std::make_unique<StateSync>(store_.get(), options_.state_sync);
  // Sorted and unique, for MarkIndexedEvents' binary search.
  std::sort(options_.index_events.begin(), options_.index_events.end());
  options_.index_events.erase(
      std::unique(options_.index_events.begin(), options_.index_events.end()),
      options_.index_events.end());
}

std::string KairosApp::last_app_hash() const {
  return store_->version() == 0 ? std::string() : store::ToBytes(store_->root_hash());
}

ante::BlockInfo KairosApp::CheckBlockInfo() const {
  ante::BlockInfo b;
  b.chain_id = chain_id_;
  const std::int64_t last = store_->version();
  b.height = last == 0 ? initial_height_ : last + 1;
  b.time_unix_nanos = last_block_time_;
  b.max_gas = max_block_gas_;
  return b;
}

pb::ResponseInfo KairosApp::Info(const pb::RequestInfo& req) {
  // On a query thread, beside blocks: the last committed version as a view sees it.
  pb::ResponseInfo res;
  res.set_data("kairos");
  res.set_version(kVersion);
  res.set_app_version(kAppProtocolVersion);
  const store::MerkleStore::Committed committed = store_->LatestCommitted();
  res.set_last_block_height(committed.version);
  if (committed.version > 0) res.set_last_block_app_hash(store::ToBytes(committed.root));
  Log()->debug("Info from CometBFT {} (ABCI {}): at height {}", Printable(req.version()),
               Printable(req.abci_version()), res.last_block_height());
  return res;
}

pb::ResponseQuery KairosApp::Query(const pb::RequestQuery& req) { return queries_.Handle(req); }

void KairosApp::PublishChainFacts() {
  queries_.Publish(ChainFacts{chain_id_, limits_, max_block_gas_});
}

// --- mempool connection ------------------------------------------------------------------

pb::ResponseCheckTx KairosApp::CheckTx(const pb::RequestCheckTx& req) {
  CheckOutcome out = req.type() == pb::RECHECK ? pool_.Recheck(req.tx(), CheckBlockInfo())
                                               : pool_.CheckNew(req.tx(), CheckBlockInfo());
  pb::ResponseCheckTx res;
  res.set_gas_wanted(static_cast<std::int64_t>(out.gas_wanted));
  res.set_gas_used(static_cast<std::int64_t>(out.gas_used));
  res.set_info(std::move(out.info));
  if (out.code != 0) {
    res.set_code(out.code);
    res.set_codespace(ante::kCodespaceSdk);
    Log()->debug("CheckTx{} rejected: code {}: {}", req.type() == pb::RECHECK ? " (recheck)" : "",
                 out.code, out.log);
    res.set_log(std::move(out.log));
    return res;
  }
  res.set_log(std::move(out.log));  // accepted: empty, or "parked: ..." (tx_pool.h)
  for (auto& e : out.events) *res.add_events() = std::move(e);
  return res;
}

pb::ResponseInsertTx KairosApp::InsertTx(const pb::RequestInsertTx& req) {
  // CometBFT v0.40 with mempool.type = "app": txs from RPC and peers arrive here; the app
  // mempool is the only one, and ReapTxs hands CometBFT what to gossip.
  app_mempool_seen_.store(true, std::memory_order_relaxed);
  pb::ResponseInsertTx res;
  if (store_->version() == 0 && genesis_.empty()) {
    res.set_code(kCodeRetryLater);  // no InitChain yet: retry later
    return res;
  }
  CheckOutcome out = pool_.CheckNew(req.tx(), CheckBlockInfo());
  if (out.code != 0) {
    Log()->debug("InsertTx rejected: code {}: {}", out.code, out.log);
  }
  res.set_code(out.code);
  return res;
}

pb::ResponseCheckTx KairosApp::IngestTx(const std::string& tx) {
  if (store_->version() == 0 && genesis_.empty()) {
    pb::ResponseCheckTx res;
    res.set_code(kCodeRetryLater);
    res.set_log("the chain has not started (no InitChain yet): retry later");
    return res;
  }
  pb::RequestCheckTx req;
  req.set_tx(tx);
  req.set_type(pb::NEW);
  return CheckTx(req);
}

pb::ResponseReapTxs KairosApp::ReapTxs(const pb::RequestReapTxs& req) {
  app_mempool_seen_.store(true, std::memory_order_relaxed);
  pb::ResponseReapTxs res;
  const std::int64_t now =
      options_.monotonic_nanos
          ? options_.monotonic_nanos()
          : std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now().time_since_epoch())
                .count();
  for (std::string& tx : pool_.Reap(req.max_bytes(), req.max_gas(), now)) {
    res.add_txs(std::move(tx));
  }
  return res;
}

pb::ResponseListSnapshots KairosApp::ListSnapshots(const pb::RequestListSnapshots&) {
  return state_sync_->List();  // on a query thread
}

pb::ResponseOfferSnapshot KairosApp::OfferSnapshot(const pb::RequestOfferSnapshot& req) {
  return state_sync_->Offer(req);
}

pb::ResponseLoadSnapshotChunk KairosApp::LoadSnapshotChunk(
    const pb::RequestLoadSnapshotChunk& req) {
  return state_sync_->LoadChunk(req);  // on a query thread
}

pb::ResponseApplySnapshotChunk KairosApp::ApplySnapshotChunk(
    const pb::RequestApplySnapshotChunk& req) {
  bool restored = false;
  pb::ResponseApplySnapshotChunk res = state_sync_->Apply(req, &restored);
  if (restored) {
    // The chain's identity, limits, params and last block time now come from the snapshot,
    // as after a restart at that height.
    if (Status s = LoadCommitted(); !s.ok()) {
      StopOnBrokenStore("loading the state restored from a snapshot", s);
    }
    Log()->info("state sync: chain {} restored at height {}", Printable(chain_id_),
                store_->version());
  }
  return res;
}

}  // namespace kairos::app
