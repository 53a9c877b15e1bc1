#include "abci/dispatcher.h"

#include <exception>

#include "abci/frame.h"
#include "abci/log.h"

namespace kairos::abci {

pb::ResponseEcho Application::Echo(const pb::RequestEcho& req) {
  pb::ResponseEcho res;
  res.set_message(req.message());
  return res;
}

std::string_view Dispatcher::MethodName(pb::Request::ValueCase c) {
  using R = pb::Request;
  switch (c) {
    case R::kEcho: return "Echo";
    case R::kFlush: return "Flush";
    case R::kInfo: return "Info";
    case R::kInitChain: return "InitChain";
    case R::kQuery: return "Query";
    case R::kCheckTx: return "CheckTx";
    case R::kCommit: return "Commit";
    case R::kListSnapshots: return "ListSnapshots";
    case R::kOfferSnapshot: return "OfferSnapshot";
    case R::kLoadSnapshotChunk: return "LoadSnapshotChunk";
    case R::kApplySnapshotChunk: return "ApplySnapshotChunk";
    case R::kPrepareProposal: return "PrepareProposal";
    case R::kProcessProposal: return "ProcessProposal";
    case R::kExtendVote: return "ExtendVote";
    case R::kVerifyVoteExtension: return "VerifyVoteExtension";
    case R::kFinalizeBlock: return "FinalizeBlock";
    case R::kInsertTx: return "InsertTx";
    case R::kReapTxs: return "ReapTxs";
    case R::VALUE_NOT_SET: return "Empty";
  }
  return "Unknown";
}

pb::Response MakeException(std::string_view error) {
  pb::Response res;
  res.mutable_exception()->set_error(std::string(error));
  return res;
}

pb::Response Dispatcher::Handle(const pb::Request& req) {
  using R = pb::Request;
  pb::Response res;
  const auto method = req.value_case();
  Log()->trace("request {}", MethodName(method));
  try {
    switch (method) {
      case R::kEcho: *res.mutable_echo() = app_.Echo(req.echo()); break;
      case R::kFlush: res.mutable_flush(); break;
      case R::kInfo: *res.mutable_info() = app_.Info(req.info()); break;
      case R::kInitChain: *res.mutable_init_chain() = app_.InitChain(req.init_chain()); break;
      case R::kQuery: *res.mutable_query() = app_.Query(req.query()); break;
      case R::kCheckTx: *res.mutable_check_tx() = app_.CheckTx(req.check_tx()); break;
      case R::kCommit: *res.mutable_commit() = app_.Commit(req.commit()); break;
      case R::kListSnapshots:
        *res.mutable_list_snapshots() = app_.ListSnapshots(req.list_snapshots());
        break;
      case R::kOfferSnapshot:
        *res.mutable_offer_snapshot() = app_.OfferSnapshot(req.offer_snapshot());
        break;
      case R::kLoadSnapshotChunk:
        *res.mutable_load_snapshot_chunk() = app_.LoadSnapshotChunk(req.load_snapshot_chunk());
        break;
      case R::kApplySnapshotChunk:
        *res.mutable_apply_snapshot_chunk() = app_.ApplySnapshotChunk(req.apply_snapshot_chunk());
        break;
      case R::kPrepareProposal:
        *res.mutable_prepare_proposal() = app_.PrepareProposal(req.prepare_proposal());
        break;
      case R::kProcessProposal:
        *res.mutable_process_proposal() = app_.ProcessProposal(req.process_proposal());
        break;
      case R::kExtendVote: *res.mutable_extend_vote() = app_.ExtendVote(req.extend_vote()); break;
      case R::kVerifyVoteExtension:
        *res.mutable_verify_vote_extension() =
            app_.VerifyVoteExtension(req.verify_vote_extension());
        break;
      case R::kFinalizeBlock:
        *res.mutable_finalize_block() = app_.FinalizeBlock(req.finalize_block());
        break;
      case R::kInsertTx: *res.mutable_insert_tx() = app_.InsertTx(req.insert_tx()); break;
      case R::kReapTxs: *res.mutable_reap_txs() = app_.ReapTxs(req.reap_txs()); break;
      case R::VALUE_NOT_SET: {
        // Either an empty frame or a method field this build does not know (it parses as an
        // unknown field, leaving the oneof unset).
        const bool unknown = !req.GetReflection()->GetUnknownFields(req).empty();
        const char* what = unknown ? "unknown ABCI request (a method this build does not know)"
                                   : "empty ABCI request (no method set)";
        Log()->error("{}: answering with an Exception", what);
        return MakeException(what);
      }
    }
  } catch (const std::exception& e) {
    Log()->critical("{} failed: {}; answering with an Exception (CometBFT will stop)",
                    MethodName(method), e.what());
    return MakeException(std::string(MethodName(method)) + " failed: " + e.what());
  } catch (...) {
    Log()->critical("{} failed with a non-standard exception; answering with an Exception",
                    MethodName(method));
    return MakeException(std::string(MethodName(method)) + " failed: unknown exception");
  }
  return res;
}

void Dispatcher::HandleInto(const pb::Request& req, std::string* out) {
  AppendFrame(Handle(req), out);
}

}  // namespace kairos::abci
