#include "abci/dispatcher.h"

#include <exception>

#include "abci/frame.h"
#include "abci/log.h"
#include "store/varint.h"

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

namespace {

// Appends `sub` as the Response field `field`, framed: uvarint(envelope size), then the
// envelope (one length-delimited field). Byte-identical to serialising a Response holding only
// `sub`, without building one. Returns true (a served request, for Dispatcher::Serve).
bool AppendResponseFrame(int field, const google::protobuf::MessageLite& sub, std::string* out) {
  const std::size_t inner = sub.ByteSizeLong();
  std::uint8_t head[3 * kMaxUvarintBytes];
  const std::size_t tag_len = EncodeUvarint(static_cast<std::uint64_t>(field) << 3 | 2, head);
  std::uint8_t len[kMaxUvarintBytes];
  const std::size_t len_len = EncodeUvarint(inner, len);
  const std::size_t envelope = tag_len + len_len + inner;
  std::uint8_t prefix[kMaxUvarintBytes];
  const std::size_t prefix_len = EncodeUvarint(envelope, prefix);
  out->append(reinterpret_cast<const char*>(prefix), prefix_len);
  out->append(reinterpret_cast<const char*>(head), tag_len);
  out->append(reinterpret_cast<const char*>(len), len_len);
  const std::size_t offset = out->size();
  out->resize(offset + inner);
  sub.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(out->data() + offset));
  return true;
}

}  // namespace

void Dispatcher::HandleInto(const pb::Request& req, std::string* out) {
  if (observer_ == nullptr) {
    Serve(req, out);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const bool ok = Serve(req, out);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (req.value_case() != pb::Request::VALUE_NOT_SET) {
    observer_->OnRequest(req.value_case(), elapsed, !ok);
  }
}

bool Dispatcher::Serve(const pb::Request& req, std::string* out) {
  using R = pb::Request;
  using S = pb::Response;
  const auto method = req.value_case();
  Log()->trace("request {}", MethodName(method));
  try {
    switch (method) {
      case R::kEcho: return AppendResponseFrame(S::kEchoFieldNumber, app_.Echo(req.echo()), out);
      case R::kFlush: return AppendResponseFrame(S::kFlushFieldNumber, pb::ResponseFlush(), out);
      case R::kInfo: return AppendResponseFrame(S::kInfoFieldNumber, app_.Info(req.info()), out);
      case R::kInitChain:
        return AppendResponseFrame(S::kInitChainFieldNumber, app_.InitChain(req.init_chain()),
                                   out);
      case R::kQuery: return AppendResponseFrame(S::kQueryFieldNumber, app_.Query(req.query()), out);
      case R::kCheckTx:
        return AppendResponseFrame(S::kCheckTxFieldNumber, app_.CheckTx(req.check_tx()), out);
      case R::kCommit:
        return AppendResponseFrame(S::kCommitFieldNumber, app_.Commit(req.commit()), out);
      case R::kListSnapshots:
        return AppendResponseFrame(S::kListSnapshotsFieldNumber,
                                   app_.ListSnapshots(req.list_snapshots()), out);
      case R::kOfferSnapshot:
        return AppendResponseFrame(S::kOfferSnapshotFieldNumber,
                                   app_.OfferSnapshot(req.offer_snapshot()), out);
      case R::kLoadSnapshotChunk:
        return AppendResponseFrame(S::kLoadSnapshotChunkFieldNumber,
                                   app_.LoadSnapshotChunk(req.load_snapshot_chunk()), out);
      case R::kApplySnapshotChunk:
        return AppendResponseFrame(S::kApplySnapshotChunkFieldNumber,
                                   app_.ApplySnapshotChunk(req.apply_snapshot_chunk()), out);
      case R::kPrepareProposal:
        return AppendResponseFrame(S::kPrepareProposalFieldNumber,
                                   app_.PrepareProposal(req.prepare_proposal()), out);
      case R::kProcessProposal:
        return AppendResponseFrame(S::kProcessProposalFieldNumber,
                                   app_.ProcessProposal(req.process_proposal()), out);
      case R::kExtendVote:
        return AppendResponseFrame(S::kExtendVoteFieldNumber, app_.ExtendVote(req.extend_vote()),
                                   out);
      case R::kVerifyVoteExtension:
        return AppendResponseFrame(S::kVerifyVoteExtensionFieldNumber,
                                   app_.VerifyVoteExtension(req.verify_vote_extension()), out);
      case R::kFinalizeBlock:
        return AppendResponseFrame(S::kFinalizeBlockFieldNumber,
                                   app_.FinalizeBlock(req.finalize_block()), out);
      case R::kInsertTx:
        return AppendResponseFrame(S::kInsertTxFieldNumber, app_.InsertTx(req.insert_tx()), out);
      case R::kReapTxs:
        return AppendResponseFrame(S::kReapTxsFieldNumber, app_.ReapTxs(req.reap_txs()), out);
      case R::VALUE_NOT_SET: {
        // Either an empty frame or a method field this build does not know (it parses as an
        // unknown field, leaving the oneof unset).
        const bool unknown = !req.GetReflection()->GetUnknownFields(req).empty();
        const char* what = unknown ? "unknown ABCI request (a method this build does not know)"
                                   : "empty ABCI request (no method set)";
        Log()->error("{}: answering with an Exception", what);
        AppendFrame(MakeException(what), out);
        return false;
      }
    }
  } catch (const std::exception& e) {
    Log()->critical("{} failed: {}; answering with an Exception (CometBFT will stop)",
                    MethodName(method), e.what());
    AppendFrame(MakeException(std::string(MethodName(method)) + " failed: " + e.what()), out);
    return false;
  } catch (...) {
    Log()->critical("{} failed with a non-standard exception; answering with an Exception",
                    MethodName(method));
    AppendFrame(MakeException(std::string(MethodName(method)) + " failed: unknown exception"),
                out);
    return false;
  }
  return false;  // not reached: every case returns
}

pb::Response Dispatcher::Handle(const pb::Request& req) {
  std::string frame;
  HandleInto(req, &frame);
  const UvarintResult len = DecodeUvarint(std::span<const std::uint8_t>(
      reinterpret_cast<const std::uint8_t*>(frame.data()), frame.size()));
  pb::Response res;
  res.ParseFromArray(frame.data() + len.length, static_cast<int>(frame.size() - len.length));
  return res;
}

}  // namespace kairos::abci
