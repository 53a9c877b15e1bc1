#include "app/query_router.h"

#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "ante/errors.h"
#include "app/hex.h"
#include "app/proofs.h"
#include "app/proto_util.h"
#include "app/store_failure.h"
#include "app/tx_codec.h"
#include "app/version.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/bech32.h"
#include "kairos/mempool/v1/query.pb.h"
#include "store/big_endian.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

namespace {

// A byte string as printable text for logs and responses (proto3 strings must be UTF-8).
std::string Printable(const std::string& bytes) { return ante::Printable(bytes, 128); }

bool IsBroken(const Status& s) {
  return s.code() == Status::Code::kCorruption || s.code() == Status::Code::kIOError;
}

pb::ResponseQuery QueryError(std::uint32_t code, std::string log) {
  pb::ResponseQuery res;
  res.set_code(code);
  res.set_codespace(ante::kCodespaceSdk);
  res.set_log(std::move(log));
  return res;
}

bool DecodeAddress(const std::string& text, std::string* out) {
  auto a = crypto::DecodeAccountAddress(text);
  if (!a.ok()) return false;
  *out = *a;
  return true;
}

}  // namespace

QueryRouter::QueryRouter(const store::MerkleStore& store, const ModuleList& modules,
                         const TxRunner& runner, const TxPool& pool, QueryLimits limits)
    : store_(store),
      modules_(modules),
      runner_(runner),
      pool_(pool),
      limits_(limits),
      facts_(std::make_shared<const ChainFacts>()) {}

void QueryRouter::Publish(ChainFacts facts) {
  auto next = std::make_shared<const ChainFacts>(std::move(facts));
  std::lock_guard lock(facts_mu_);
  facts_ = std::move(next);
}

std::shared_ptr<const ChainFacts> QueryRouter::facts() const {
  std::lock_guard lock(facts_mu_);
  return facts_;
}

Result<std::shared_ptr<const store::StoreView>> QueryRouter::ViewAt(std::int64_t height,
                                                                    Response* error) const {
  if (height < 0) {
    *error = QueryError(ante::kInvalidHeight,
                        "invalid height: cannot query with a negative height " +
                            std::to_string(height));
    return Status::InvalidArgument("negative height");
  }
  auto view = store_.View(height);
  if (view.ok()) return view;
  if (IsBroken(view.status())) {
    StopOnBrokenStore("a query at height " + std::to_string(height), view.status());
  }
  *error = QueryError(ante::kInvalidHeight, "invalid height: " + view.status().message());
  return view.status();
}

void QueryRouter::AttachProof(const store::StoreView& view, const std::string& key,
                              Response* res) const {
  store::KeyProof proof;
  if (Status s = view.Prove(key, &proof); IsBroken(s)) {
    StopOnBrokenStore("a proof at height " + std::to_string(view.version()), s);
  } else if (!s.ok()) {
    res->set_log(res->log() + (res->log().empty() ? "" : "; ") + "no proof: " + s.message());
    return;
  }
  const auto ops = ToProofOps(key, proof);  // named: a temporary would die before the loop
  for (const auto& op : ops.ops()) *res->mutable_proof_ops()->add_ops() = op;
}

pb::ResponseQuery QueryRouter::Handle(const pb::RequestQuery& req) const {
  const std::string& path = req.path();
  if (path == "/store" || path == "store") return Store(req.data(), req.height(), req.prove());
  for (const std::string_view prefix : {"/store/", "store/"}) {
    if (path.rfind(prefix, 0) == 0) {
      std::string key;
      if (!HexDecode(std::string_view(path).substr(prefix.size()), &key)) {
        return QueryError(ante::kInvalidRequest,
                          "invalid request: the store path takes a hex key, as " +
                              std::string(prefix) + "<hex>; got '" + Printable(path) + "'");
      }
      return Store(key, req.height(), req.prove());
    }
  }
  if (path == "/cosmos.tx.v1beta1.Service/Simulate") return Simulate(req);
  if (path == "/kairos.mempool.v1.Query/Stats") return MempoolStats();
  if (path == "/kairos.mempool.v1.Query/SenderTxs") return MempoolSenderTxs(req.data());
  if (path.rfind("/cosmos.", 0) == 0 || path.rfind("/kairos.", 0) == 0) return ModuleQuery(path, req);
  const std::int64_t latest = store_.LatestCommitted().version;
  if (req.height() != 0 && req.height() != latest) {
    return QueryError(ante::kInvalidHeight,
                      "path " + Printable(path) + " is answered at the latest height (" +
                          std::to_string(latest) + ") only; got height " +
                          std::to_string(req.height()));
  }
  Response res;
  res.set_height(latest);
  if (path == "/app/version") {
    res.set_value(kVersion);
  } else if (path == "/app/height") {
    res.set_value(std::to_string(latest));
    if (req.prove()) {  // not a state key: nothing to prove it against
      res.set_log("no proof: /app/height is not in the state (proofs come with /store/<hex key> "
                  "and the module queries)");
    }
  } else {
    return QueryError(ante::kUnknownRequest,
                      "unknown query path '" + Printable(path) +
                          "'; known paths: /cosmos.auth.v1beta1.Query/{Account,Accounts,"
                          "AccountInfo,Params}, "
                          "/cosmos.bank.v1beta1.Query/Balance, "
                          "/cosmos.bank.v1beta1.Query/{AllBalances,SpendableBalances,"
                          "SpendableBalanceByDenom,TotalSupply,SupplyOf,Params,DenomMetadata,"
                          "DenomsMetadata}, "
                          "/cosmos.tx.v1beta1.Service/Simulate, "
                          "/kairos.auth.v1.Query/UnorderedNonce, "
                          "/kairos.mempool.v1.Query/{Stats,SenderTxs}, "
                          "/kairos.locks.v1.Query/{Holder,"
                          "Session,DepositQuote,Registration,Params,Var}, "
                          "/kairos.poa.v1.Query/{Validators,Validator,Authority,Params}, "
                          "/app/version, "
                          "/app/height, "
                          "/store/<hex key>, /store (key in data)");
  }
  return res;
}

pb::ResponseQuery QueryRouter::MempoolStats() const {
  // This node's pool, now: not part of the state, so no height and no proof.
  const mempool::Stats s = pool_.stats();
  kairos::mempool::v1::QueryStatsResponse r;
  r.set_size(s.size);
  r.set_bytes(s.bytes);
  r.set_senders(s.senders);
  r.set_parked(s.parked);
  for (std::size_t i = 0; i < s.rejected.size(); ++i) {
    auto* c = r.add_rejections();
    c->set_reason(mempool::Name(static_cast<mempool::RejectReason>(i)));
    c->set_count(s.rejected[i]);
  }
  for (std::size_t i = 0; i < s.removed.size(); ++i) {
    const auto reason = static_cast<mempool::RemoveReason>(i);
    kairos::mempool::v1::ReasonCount* c = nullptr;
    switch (reason) {
      case mempool::RemoveReason::kEvicted:
      case mempool::RemoveReason::kReplaced: c = r.add_evictions(); break;
      case mempool::RemoveReason::kExpiredBlocks:
      case mempool::RemoveReason::kExpiredTime:
      case mempool::RemoveReason::kExpiredParked: c = r.add_expiries(); break;
      default: c = r.add_removals(); break;
    }
    c->set_reason(mempool::Name(reason));
    c->set_count(s.removed[i]);
  }
  Response res;
  res.set_height(store_.LatestCommitted().version);
  res.set_value(SerializeDeterministic(r));
  return res;
}

pb::ResponseQuery QueryRouter::MempoolSenderTxs(const std::string& data) const {
  // This node's pool, now. TxPool::SenderTxs reads the PriorityMempool under its mutex (a copy
  // of the sender's entries, shared and immutable), never the check state or TxPool's own
  // members, which only the executor touches. Any sender may be asked about: the answer is at
  // most one sender's txs, max_txs_per_sender (its ready ones, at most max_parked_per_sender
  // parked ones, its unordered ones), and costs one sender lookup under the pool's mutex.
  constexpr std::string_view kPath = "/kairos.mempool.v1.Query/SenderTxs";
  kairos::mempool::v1::QuerySenderTxsRequest q;
  if (!q.ParseFromString(data)) {
    return QueryError(ante::kInvalidRequest, "invalid request: " + std::string(kPath) +
                                                 ": data is not a QuerySenderTxsRequest");
  }
  std::string address;
  if (!DecodeAddress(q.address(), &address)) {
    return QueryError(ante::kInvalidRequest, "invalid request: " + std::string(kPath) +
                                                 ": invalid address \"" +
                                                 Printable(q.address()) + "\"");
  }
  const mempool::SenderView view = pool_.SenderTxs(address);
  kairos::mempool::v1::QuerySenderTxsResponse r;
  r.set_committed_sequence(view.base);
  r.set_next_sequence(view.next_ready);
  for (const mempool::SenderView::Tx& t : view.txs) {
    using kairos::mempool::v1::PooledTx;
    const mempool::EntryTx& e = t.entry->tx;
    PooledTx* p = r.add_txs();
    p->set_hash(std::string(e.hash.begin(), e.hash.end()));
    p->set_unordered(e.unordered);
    if (e.unordered) {
      p->set_timeout_unix_nanos(static_cast<std::int64_t>(e.nonce));
    } else {
      p->set_sequence(e.nonce);
    }
    p->set_state(t.parked ? PooledTx::STATE_PARKED : PooledTx::STATE_READY);
    p->set_fee_per_gas(e.priority.ToDecimal());
    p->set_gas_wanted(e.gas_wanted);
    p->set_bytes(e.bytes().size());
    p->set_arrival_height(t.entry->arrival_height);
  }
  Response res;
  res.set_height(store_.LatestCommitted().version);
  res.set_value(SerializeDeterministic(r));
  return res;
}

pb::ResponseQuery QueryRouter::Store(const std::string& key, std::int64_t height,
                                     bool prove) const {
  if (key.empty()) return QueryError(ante::kInvalidRequest, "invalid request: empty store key");
  // No state key can be longer than the chain's max_key_bytes: a bad key (code 18), as documented,
  // not "key not found".
  if (const std::shared_ptr<const ChainFacts> chain = facts();
      chain != nullptr && key.size() > chain->limits.max_key_bytes) {
    return QueryError(ante::kInvalidRequest,
                      "invalid request: a store key of " + std::to_string(key.size()) +
                          " bytes is longer than the chain's max_key_bytes (" +
                          std::to_string(chain->limits.max_key_bytes) + ")");
  }
  Response error;
  auto view = ViewAt(height, &error);
  if (!view.ok()) return error;
  Response res;
  res.set_key(key);
  res.set_height((*view)->version());
  std::string value;
  if (Status s = (*view)->Get(key, &value); s.ok()) {
    res.set_value(std::move(value));
  } else if (s.IsNotFound()) {
    res.set_log("key not found");
  } else if (IsBroken(s)) {
    StopOnBrokenStore("a store query at height " + std::to_string((*view)->version()), s);
  } else {
    return QueryError(ante::kInvalidRequest, "invalid request: " + s.message());
  }
  if (prove) AttachProof(**view, key, &res);
  return res;
}

pb::ResponseQuery QueryRouter::ModuleQuery(const std::string& path, const Request& req) const {
  Response error;
  auto view_or = ViewAt(req.height(), &error);
  if (!view_or.ok()) return error;
  const store::StoreView& view = **view_or;
  const std::int64_t at = view.version();
  const auto broken = [&](const Status& s) -> Response {
    if (IsBroken(s)) StopOnBrokenStore("query " + path, s);
    return QueryError(ante::kInvalidRequest, "invalid request: " + path + ": " + s.message());
  };
  Response res;
  res.set_height(at);

  const app::Module* module = modules_.ForQuery(path);
  if (module == nullptr) {
    return QueryError(ante::kUnknownRequest, "unknown query path '" + Printable(path) + "'");
  }
  QueryRequest q;
  q.path = path;
  q.data = req.data();
  q.state = &view;
  q.height = at;
  q.latest_height = store_.LatestCommitted().version;
  auto answer = module->Query(q);
  if (!answer.ok()) return broken(answer.status());
  if (answer->code != 0) {
    Response err = QueryError(answer->code, std::move(answer->log));
    if (!answer->key.empty()) {
      // An answer about a key (not found): its height, and the proof of its absence.
      err.set_height(at);
      if (req.prove()) AttachProof(view, answer->key, &err);
    }
    return err;
  }
  res.set_key(answer->key);
  res.set_value(std::move(answer->value));
  if (req.prove()) {
    if (answer->proven_keys) {
      for (const std::string& key : *answer->proven_keys) AttachProof(view, key, &res);
    } else {
      AttachProof(view, answer->key, &res);
    }
  }
  return res;
}

pb::ResponseQuery QueryRouter::Simulate(const Request& req) const {
  cosmos::tx::v1beta1::SimulateRequest q;
  if (!q.ParseFromString(req.data())) {
    return QueryError(ante::kInvalidRequest, "invalid request: data is not a SimulateRequest");
  }
  if (q.tx_bytes().empty()) {
    return QueryError(ante::kInvalidRequest,
                      "invalid request: empty tx_bytes (the deprecated tx field is not "
                      "supported)");
  }
  if (q.tx_bytes().size() > limits_.simulate_max_tx_bytes) {
    return QueryError(ante::kTxTooLarge,
                      "tx too large: " + std::to_string(q.tx_bytes().size()) +
                          " bytes; this node simulates txs of " +
                          std::to_string(limits_.simulate_max_tx_bytes) +
                          " bytes at most (query.simulate_max_tx_bytes)");
  }
  Response error;
  auto view_or = ViewAt(0, &error);
  if (!view_or.ok()) return error;
  const store::StoreView& view = **view_or;
  if (req.height() != 0 && req.height() != view.version()) {
    return QueryError(ante::kInvalidHeight,
                      "invalid height: Simulate runs at the latest height (" +
                          std::to_string(view.version()) + ") only; got height " +
                          std::to_string(req.height()));
  }
  auto decoded = DecodeTx(q.tx_bytes());
  if (auto* err = std::get_if<TxError>(&decoded)) return QueryError(err->code, err->log);
  const ante::Tx& tx = std::get<ante::Tx>(decoded);
  if (tx.msgs.size() > limits_.simulate_max_msgs) {
    return QueryError(ante::kInvalidRequest,
                      "invalid request: the tx has " + std::to_string(tx.msgs.size()) +
                          " messages; this node simulates txs of " +
                          std::to_string(limits_.simulate_max_msgs) +
                          " messages at most (query.simulate_max_msgs)");
  }
  const std::shared_ptr<const ChainFacts> chain = facts();
  ante::BlockInfo block;
  block.chain_id = chain->chain_id;
  block.height = view.version() + 1;
  std::uint64_t time = 0;
  if (DecodeBigEndian64(view.commit_info(), &time)) {
    block.time_unix_nanos = static_cast<std::int64_t>(time);
  }
  block.max_gas = chain->max_block_gas;
  std::uint64_t gas_cap = limits_.simulate_max_gas;
  if (block.max_gas > 0) gas_cap = std::min(gas_cap, static_cast<std::uint64_t>(block.max_gas));
  // On a throwaway branch of the committed state: writes nothing anyone else sees.
  store::Branch scratch(view, chain->limits);
  TxOutcome out = runner_.Run(ante::ExecMode::kSimulate, tx, scratch, block, {},
                              TxRunner::AnteWrites::kUndoOnFailure, gas_cap);
  CheckStore(out.status, "Simulate");
  if (!out.status.ok()) {
    Response res = QueryError(out.status.code(), out.status.log());
    if (out.status.code() == ante::kOutOfGas) {
      res.set_log(res.log() + "; this node simulates up to " + std::to_string(gas_cap) +
                  " gas (query.simulate_max_gas, or the block's max gas when lower)");
    }
    res.set_codespace(std::string(out.status.codespace()));  // "locks" for its own codes
    res.set_height(view.version());
    return res;
  }
  cosmos::tx::v1beta1::SimulateResponse r;
  r.mutable_gas_info()->set_gas_wanted(out.gas_wanted);
  r.mutable_gas_info()->set_gas_used(out.gas_used);
  for (auto& e : out.events) *r.mutable_result()->add_events() = std::move(e);
  Response res;
  res.set_height(view.version());
  res.set_value(SerializeDeterministic(r));
  return res;
}

}  // namespace kairos::app
