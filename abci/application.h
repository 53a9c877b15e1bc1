// The interface between the ABCI transport (abci/) and the state machine (app/).
//
// Thread model: every method is called on the one application executor thread, one call at
// a time, whichever of CometBFT's four connections the request came from (as CometBFT's own
// Go server serialises them under one mutex). An implementation therefore needs no locking
// for state that only these methods touch. The exception: with ServerOptions::query_threads
// > 0, Echo, Info and Query run on query threads, concurrently with the other methods and with
// each other, and must be thread-safe (read committed state only). Calls on one connection
// run in that connection's request order; there is no ordering across connections beyond what
// CometBFT itself guarantees (e.g. it flushes the mempool connection before Commit).
//
// Errors: an invalid tx or query is answered with a non-zero code in the response, never by
// throwing. A method throws only when the node itself is broken; the dispatcher turns that into
// a ResponseException, which makes CometBFT stop.
#pragma once

#include "tendermint/abci/types.pb.h"

namespace kairos::abci {

namespace pb = ::tendermint::abci;

class Application {
 public:
  virtual ~Application() = default;

  // Info/query connection (on a query thread when the server has them: see above).
  virtual pb::ResponseEcho Echo(const pb::RequestEcho& req);
  virtual pb::ResponseInfo Info(const pb::RequestInfo& req) = 0;
  virtual pb::ResponseQuery Query(const pb::RequestQuery& req) = 0;

  // Mempool connection.
  virtual pb::ResponseCheckTx CheckTx(const pb::RequestCheckTx& req) = 0;
  // CometBFT v0.39.2+ with mempool.type = "app" only.
  virtual pb::ResponseInsertTx InsertTx(const pb::RequestInsertTx& req) = 0;
  virtual pb::ResponseReapTxs ReapTxs(const pb::RequestReapTxs& req) = 0;

  // Consensus connection.
  virtual pb::ResponseInitChain InitChain(const pb::RequestInitChain& req) = 0;
  virtual pb::ResponsePrepareProposal PrepareProposal(const pb::RequestPrepareProposal& req) = 0;
  virtual pb::ResponseProcessProposal ProcessProposal(const pb::RequestProcessProposal& req) = 0;
  virtual pb::ResponseExtendVote ExtendVote(const pb::RequestExtendVote& req) = 0;
  virtual pb::ResponseVerifyVoteExtension VerifyVoteExtension(
      const pb::RequestVerifyVoteExtension& req) = 0;
  virtual pb::ResponseFinalizeBlock FinalizeBlock(const pb::RequestFinalizeBlock& req) = 0;
  virtual pb::ResponseCommit Commit(const pb::RequestCommit& req) = 0;

  // Snapshot connection.
  virtual pb::ResponseListSnapshots ListSnapshots(const pb::RequestListSnapshots& req) = 0;
  virtual pb::ResponseOfferSnapshot OfferSnapshot(const pb::RequestOfferSnapshot& req) = 0;
  virtual pb::ResponseLoadSnapshotChunk LoadSnapshotChunk(
      const pb::RequestLoadSnapshotChunk& req) = 0;
  virtual pb::ResponseApplySnapshotChunk ApplySnapshotChunk(
      const pb::RequestApplySnapshotChunk& req) = 0;
};

}  // namespace kairos::abci
