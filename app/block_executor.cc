// The block executor of KairosApp (kairos_app.h): proposals (PrepareProposal, ProcessProposal),
// FinalizeBlock (PreBlock, the txs, EndBlock, the root) and Commit.
#include "app/kairos_app.h"

#include "app/chain_meta.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "absl/cleanup/cleanup.h"
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
#include "app/version.h"
#include "store/big_endian.h"
#include "store/sha256.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

std::unique_ptr<store::Branch> KairosApp::ProposalState(std::int64_t height,
                                                         std::int64_t time_unix_nanos) const {
  auto scratch = std::make_unique<store::Branch>(*store_, limits_);
  if (store_->version() == 0) scratch->Apply(genesis_);
  const ante::BlockInfo block{chain_id_, height, time_unix_nanos, max_block_gas_};
  BlockHookResult ignored;  // a proposal answers no events
  for (const auto& m : modules_->modules()) {
    if (Status s = m->PreBlock(*scratch, block, &ignored); !s.ok()) {
      StopOnBrokenStore("PreBlock of a proposal", s);
    }
  }
  return scratch;
}

std::optional<KairosApp::ProposalFault> KairosApp::CheckProposal(
    const google::protobuf::RepeatedPtrField<std::string>& txs, std::int64_t height,
    std::int64_t time_unix_nanos) const {
  auto scratch = ProposalState(height, time_unix_nanos);
  const ante::BlockInfo block{chain_id_, height, time_unix_nanos, max_block_gas_};
  std::uint64_t total_gas = 0;
  for (int i = 0; i < txs.size(); ++i) {
    const auto index = static_cast<std::size_t>(i);
    auto decoded = DecodeTx(txs[i]);
    if (auto* err = std::get_if<TxError>(&decoded)) return ProposalFault{index, err->log};
    const ante::Tx& tx = std::get<ante::Tx>(decoded);
    TxOutcome out = runner_.Run(ante::ExecMode::kProcessProposal, tx, *scratch, block);
    CheckStore(out.status, "a proposal check");
    if (!out.status.ok()) return ProposalFault{index, out.status.log()};
    // The block's gas is the sum of its txs' gas limits (as the SDK's proposal handler counts).
    total_gas += tx.gas_limit;
    if (max_block_gas_ >= 0 && total_gas > static_cast<std::uint64_t>(max_block_gas_)) {
      return ProposalFault{index, "the txs' gas limits add up to " + std::to_string(total_gas) +
                                      ", over the block's max gas " +
                                      std::to_string(max_block_gas_)};
    }
  }
  return std::nullopt;
}

pb::ResponsePrepareProposal KairosApp::PrepareProposal(const pb::RequestPrepareProposal& req) {
  const BlockWork work(&state_sync_->block_gate());  // a snapshot being written waits
  // The block comes from the app mempool, by priority, each sender's txs in sequence order,
  // not from req.txs' order. A tx of req.txs the pool does not hold (kairosd restarted while
  // CometBFT kept its mempool) is judged and added first, so it is not lost.
  const ante::BlockInfo next = CheckBlockInfo();
  for (const std::string& tx : req.txs()) {
    if (!pool_.Contains(crypto::Sha256(tx))) pool_.CheckNew(tx, next);
  }
  const std::int64_t time = UnixNanosOf(req.time());
  auto scratch = ProposalState(req.height(), time);
  const ante::BlockInfo block{chain_id_, req.height(), time, max_block_gas_};
  pb::ResponsePrepareProposal res;
  for (std::string& tx : pool_.FillProposal(*scratch, block, req.max_tx_bytes(), max_block_gas_)) {
    res.add_txs(std::move(tx));
  }
  Log()->debug("PrepareProposal {}: {} tx(s) from the mempool ({} offered by CometBFT)",
               req.height(), res.txs_size(), req.txs_size());
  return res;
}

pb::ResponseProcessProposal KairosApp::ProcessProposal(const pb::RequestProcessProposal& req) {
  const BlockWork work(&state_sync_->block_gate());  // a snapshot being written waits
  pb::ResponseProcessProposal res;
  if (auto fault = CheckProposal(req.txs(), req.height(), UnixNanosOf(req.time()))) {
    Log()->warn("ProcessProposal {}: REJECT, tx {} of {}: {}", req.height(), fault->index,
                req.txs_size(), fault->reason);
    res.set_status(pb::ResponseProcessProposal::REJECT);
    return res;
  }
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

void KairosApp::ListBlockSignatures(
    const std::vector<std::variant<ante::Tx, TxError>>& decoded,
    BlockSignatureCheck* check) const {
  // Jobs: (pubkey, sign bytes, signature) from the committed state. A signer whose account or
  // key is new in this block is left to the ante, which verifies it in block order.
  for (const auto& d : decoded) {
    check->AddTx();
    const auto* tx = std::get_if<ante::Tx>(&d);
    if (tx == nullptr) continue;
    for (std::size_t i = 0; i < tx->signers.size() && i < tx->signatures.size(); ++i) {
      auto acc = auth_.ReadAccount(*store_, tx->signers[i]);
      if (!acc.ok() || !*acc) continue;
      std::optional<ante::PubKey> key = (*acc)->pub_key;
      if (!key && i < tx->signer_infos.size()) key = tx->signer_infos[i].public_key;
      if (!key) continue;
      check->Add({*key,
                  ante::SignDocBytes(tx->body_bytes, tx->auth_info_bytes, chain_id_,
                                     (*acc)->account_number),
                  &tx->signatures[i]});
    }
  }
}

void KairosApp::MarkIndexedEvents(pb::ResponseFinalizeBlock* res) const {
  if (options_.index_events.empty()) return;  // every attribute (Context::Emit marks them all)
  std::string name;  // "type.key", in one buffer for the whole block
  const auto mark = [this, &name](pb::Event& e) {
    for (pb::EventAttribute& a : *e.mutable_attributes()) {
      name.assign(e.type()).append(1, '.').append(a.key());
      a.set_index(std::binary_search(options_.index_events.begin(), options_.index_events.end(),
                                     name));
    }
  };
  for (pb::Event& e : *res->mutable_events()) mark(e);
  for (pb::ExecTxResult& r : *res->mutable_tx_results()) {
    for (pb::Event& e : *r.mutable_events()) mark(e);
  }
}

pb::ResponseFinalizeBlock KairosApp::FinalizeBlock(const pb::RequestFinalizeBlock& req) {
  block_started_ = std::chrono::steady_clock::now();
  // A snapshot being written waits from here to the end of Commit; a block that throws (the
  // node stops) opens it again.
  state_sync_->block_gate().Close();
  absl::Cleanup open_on_throw = [this] { state_sync_->block_gate().Open(); };
  const std::int64_t last = store_->version();
  const std::int64_t expected = last == 0 ? initial_height_ : last + 1;
  // abci-cli leaves height unset; a node always sets it.
  const std::int64_t height = req.height() == 0 ? expected : req.height();
  if (height != expected) {
    throw std::runtime_error("FinalizeBlock for height " + std::to_string(height) +
                             " but the next height is " + std::to_string(expected) +
                             " (last committed " + std::to_string(last) + ")");
  }
  const std::int64_t block_time = UnixNanosOf(req.time());
  // Always from the last committed state: a block re-sent after a crash, or a second
  // FinalizeBlock before Commit, gives the same result.
  store::Branch block(*store_, limits_);
  if (last == 0) block.Apply(genesis_);

  const ante::BlockInfo info{chain_id_, height, block_time, max_block_gas_};
  // PreBlock, before any tx runs (auth: the expired unordered nonces, timeout <= block time).
  BlockHookResult hooks;
  for (const auto& m : modules_->modules()) {
    if (Status s = m->PreBlock(block, info, &hooks); !s.ok()) {
      StopOnBrokenStore("PreBlock of block " + std::to_string(height), s);
    }
  }

  std::vector<std::variant<ante::Tx, TxError>> decoded;
  decoded.reserve(static_cast<std::size_t>(req.txs_size()));
  std::size_t valid = 0;
  staged_hashes_.clear();
  staged_senders_.clear();
  for (const std::string& raw : req.txs()) {
    decoded.push_back(DecodeTx(raw));
    if (auto* tx = std::get_if<ante::Tx>(&decoded.back())) {
      ++valid;
      staged_hashes_.push_back(tx->hash);
      if (!tx->signers.empty()) staged_senders_.push_back(tx->signers.front());
    }
  }
  // Helper threads verify the signatures from the back of the block while the txs run from
  // the front (app/block_signatures.h). A helper per 64 txs at most: a small block is not
  // worth a thread.
  const std::size_t helpers =
      std::min(std::max<std::size_t>(options_.signature_threads, 1) - 1, valid / 64);
  BlockSignatureCheck signatures(&signature_cache_, helpers);
  if (helpers > 0) ListBlockSignatures(decoded, &signatures);
  signatures.Start();

  pb::ResponseFinalizeBlock res;
  for (auto& e : hooks.events) *res.add_events() = std::move(e);
  hooks.events.clear();
  std::size_t failed = 0;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    auto& d = decoded[i];
    pb::ExecTxResult* result = res.add_tx_results();
    if (auto* err = std::get_if<TxError>(&d)) {
      result->set_code(err->code);
      result->set_codespace(ante::kCodespaceSdk);
      result->set_log(std::move(err->log));
      ++failed;
      continue;
    }
    signatures.BeforeTx(i);
    TxOutcome out = runner_.Run(ante::ExecMode::kFinalize, std::get<ante::Tx>(d), block, info);
    CheckStore(out.status, "FinalizeBlock");
    result->set_gas_wanted(static_cast<std::int64_t>(out.gas_wanted));
    result->set_gas_used(static_cast<std::int64_t>(out.gas_used));
    if (!out.status.ok()) {
      result->set_code(out.status.code());
      result->set_codespace(std::string(out.status.codespace()));
      result->set_log(out.status.log());
      ++failed;
    }
    for (auto& e : out.events) *result->add_events() = std::move(e);
  }
  // EndBlock, in the list's order (locks: end up to end_block_cleanup_limit expired sessions).
  for (const auto& m : modules_->modules()) {
    if (Status s = m->EndBlock(block, info, &hooks); !s.ok()) {
      StopOnBrokenStore("EndBlock of block " + std::to_string(height), s);
    }
  }
  for (auto& e : hooks.events) *res.add_events() = std::move(e);
  for (auto& v : hooks.validator_updates) *res.add_validator_updates() = std::move(v);
  MarkIndexedEvents(&res);
  const store::ChangeSet changes = block.changes();
  auto root = store_->Stage(height, changes, EncodeInt64(block_time));
  if (!root.ok()) {
    throw std::runtime_error("computing the app hash of block " + std::to_string(height) +
                             ": " + root.status().ToString());
  }
  staged_height_ = height;
  staged_block_time_ = block_time;
  staged_txs_ = static_cast<std::size_t>(req.txs_size());
  staged_failed_ = failed;
  res.set_app_hash(store::ToBytes(*root));
  if (options_.metrics != nullptr) {
    staged_results_.Clear();
    for (const pb::ExecTxResult& r : res.tx_results()) staged_results_.Add(r.codespace(), r.code());
    staged_change_bytes_ = 0;
    for (const auto& [key, value] : changes) {
      staged_change_bytes_ += key.size() + (value ? value->size() : 0);
    }
    staged_change_writes_ = changes.size();
    options_.metrics->ObserveBlockExecution(std::chrono::steady_clock::now() - block_started_);
  }
  std::string done;
  for (const std::string& line : hooks.summary) done += ", " + line;
  Log()->debug("FinalizeBlock {}: {} txs ({} failed){}, app hash {}", height, req.txs_size(),
               failed, done, HexEncode(res.app_hash(), true));
  std::move(open_on_throw).Cancel();  // open at the end of Commit
  return res;
}

pb::ResponseCommit KairosApp::Commit(const pb::RequestCommit&) {
  if (staged_height_ == 0) {
    Log()->warn("Commit without a finalized block: nothing to commit at height {}",
                store_->version());
    state_sync_->block_gate().Open();
    return {};
  }
  const auto commit_started = std::chrono::steady_clock::now();
  if (Status s = store_->Commit(); !s.ok()) {
    // Going on would answer from a state that is not durable.
    StopOnBrokenStore("Commit of height " + std::to_string(staged_height_) +
                          " (the last durable height is " + std::to_string(store_->version()) +
                          ")",
                      s);
  }
  staged_height_ = 0;
  last_block_time_ = staged_block_time_;
  genesis_.clear();
  // A param change the block made (MsgUpdateParams) applies from the next block: the modules
  // refresh what they cache from the committed state, before the mempool rechecks against it.
  for (const auto& m : modules_->modules()) {
    if (Status s = m->LoadState(*store_); !s.ok()) {
      StopOnBrokenStore("loading the " + std::string(m->name()) + " module's state after the "
                        "Commit of height " + std::to_string(store_->version()), s);
    }
  }
  const auto commit_done = std::chrono::steady_clock::now();
  state_sync_->AfterCommit();  // a snapshot every state_sync.snapshot_interval heights
  pool_.AfterCommit(*store_, limits_, store_->version(), staged_hashes_, staged_senders_,
                    CheckBlockInfo());
  if (options_.metrics != nullptr) {
    CommittedBlock committed;
    committed.height = store_->version();
    committed.txs = &staged_results_;
    committed.store_commit = commit_done - commit_started;
    committed.change_bytes = staged_change_bytes_;
    committed.change_writes = staged_change_writes_;
    committed.mempool_update = std::chrono::steady_clock::now() - commit_done;
    options_.metrics->ObserveCommit(committed);
  }
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                            block_started_)
                      .count();
  Log()->info("committed block {}: {} txs ({} failed), app hash {}, {:.1f} ms", store_->version(),
              staged_txs_, staged_failed_, HexEncode(last_app_hash(), true), ms);
  state_sync_->block_gate().Open();
  return {};  // retain_height 0: CometBFT keeps every block
}

}  // namespace kairos::app
