// Unit tests for abci/dispatcher: each Request case reaches its Application method and comes
// back as the matching Response case; bad requests and throwing methods become Exceptions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "abci/dispatcher.h"
#include "abci/frame.h"
#include "abci/varint.h"

using kairos::abci::Dispatcher;
using kairos::abci::FrameDecoder;
namespace pb = ::tendermint::abci;
using R = pb::Request;

namespace {

// Sets every scalar and repeated scalar field of `m` (and one element of each repeated message
// field) to a non-default value derived from `tag`, so that the message is recognisably not a
// default one.
void FillDistinctively(google::protobuf::Message* m, const std::string& tag, int depth = 0) {
  using FD = google::protobuf::FieldDescriptor;
  const auto* refl = m->GetReflection();
  const auto* desc = m->GetDescriptor();
  const auto number = static_cast<std::int32_t>(tag.size());
  for (int i = 0; i < desc->field_count(); ++i) {
    const FD* f = desc->field(i);
    if (f->is_repeated()) {
      switch (f->cpp_type()) {
        case FD::CPPTYPE_STRING: refl->AddString(m, f, "fake-" + tag); break;
        case FD::CPPTYPE_UINT32: refl->AddUInt32(m, f, number); break;
        case FD::CPPTYPE_MESSAGE:
          if (depth == 0) FillDistinctively(refl->AddMessage(m, f), tag, depth + 1);
          break;
        default: break;
      }
      continue;
    }
    switch (f->cpp_type()) {
      case FD::CPPTYPE_STRING: refl->SetString(m, f, "fake-" + tag); break;
      case FD::CPPTYPE_INT32: refl->SetInt32(m, f, number); break;
      case FD::CPPTYPE_INT64: refl->SetInt64(m, f, number); break;
      case FD::CPPTYPE_UINT32: refl->SetUInt32(m, f, number); break;
      case FD::CPPTYPE_UINT64: refl->SetUInt64(m, f, number); break;
      case FD::CPPTYPE_BOOL: refl->SetBool(m, f, true); break;
      case FD::CPPTYPE_ENUM: {
        const auto* e = f->enum_type();
        refl->SetEnum(m, f, e->value(e->value_count() - 1));
        break;
      }
      default: break;  // nested messages: left unset
    }
  }
}

// Records each call (method name, request bytes, response bytes) and answers with a response
// filled by FillDistinctively: proof that the dispatcher passed the app's own answer on.
class RecordingApp final : public kairos::abci::Application {
 public:
  struct Call {
    std::string method;
    std::string request;   // the serialized request message
    std::string response;  // the serialized response message
  };
  std::vector<Call> calls;
  std::string throw_in;  // a method name: that method throws std::runtime_error

  pb::ResponseEcho Echo(const pb::RequestEcho& r) override { return Answer{this, "Echo", r}; }
  pb::ResponseInfo Info(const pb::RequestInfo& r) override { return Answer{this, "Info", r}; }
  pb::ResponseQuery Query(const pb::RequestQuery& r) override { return Answer{this, "Query", r}; }
  pb::ResponseCheckTx CheckTx(const pb::RequestCheckTx& r) override {
    return Answer{this, "CheckTx", r};
  }
  pb::ResponseInsertTx InsertTx(const pb::RequestInsertTx& r) override {
    return Answer{this, "InsertTx", r};
  }
  pb::ResponseReapTxs ReapTxs(const pb::RequestReapTxs& r) override {
    return Answer{this, "ReapTxs", r};
  }
  pb::ResponseInitChain InitChain(const pb::RequestInitChain& r) override {
    return Answer{this, "InitChain", r};
  }
  pb::ResponsePrepareProposal PrepareProposal(const pb::RequestPrepareProposal& r) override {
    return Answer{this, "PrepareProposal", r};
  }
  pb::ResponseProcessProposal ProcessProposal(const pb::RequestProcessProposal& r) override {
    return Answer{this, "ProcessProposal", r};
  }
  pb::ResponseExtendVote ExtendVote(const pb::RequestExtendVote& r) override {
    return Answer{this, "ExtendVote", r};
  }
  pb::ResponseVerifyVoteExtension VerifyVoteExtension(
      const pb::RequestVerifyVoteExtension& r) override {
    return Answer{this, "VerifyVoteExtension", r};
  }
  pb::ResponseFinalizeBlock FinalizeBlock(const pb::RequestFinalizeBlock& r) override {
    return Answer{this, "FinalizeBlock", r};
  }
  pb::ResponseCommit Commit(const pb::RequestCommit& r) override {
    return Answer{this, "Commit", r};
  }
  pb::ResponseListSnapshots ListSnapshots(const pb::RequestListSnapshots& r) override {
    return Answer{this, "ListSnapshots", r};
  }
  pb::ResponseOfferSnapshot OfferSnapshot(const pb::RequestOfferSnapshot& r) override {
    return Answer{this, "OfferSnapshot", r};
  }
  pb::ResponseLoadSnapshotChunk LoadSnapshotChunk(const pb::RequestLoadSnapshotChunk& r) override {
    return Answer{this, "LoadSnapshotChunk", r};
  }
  pb::ResponseApplySnapshotChunk ApplySnapshotChunk(
      const pb::RequestApplySnapshotChunk& r) override {
    return Answer{this, "ApplySnapshotChunk", r};
  }

 private:
  // Converts to whichever response type the method returns: fills it, records the call (or
  // throws, for the method named in throw_in) and returns it.
  struct Answer {
    RecordingApp* app;
    const char* method;
    const google::protobuf::Message& request;

    template <class Res>
    operator Res() const {  // NOLINT: implicit by design
      if (app->throw_in == method) throw std::runtime_error("disk on fire");
      Res res;
      FillDistinctively(&res, method);
      app->calls.push_back({method, request.SerializeAsString(), res.SerializeAsString()});
      return res;
    }
  };
};

// One row per Request case: its method name and how to fill a request with distinctive input.
struct Case {
  R::ValueCase value_case;
  const char* method;
  std::function<void(R*)> fill;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {R::kEcho, "Echo", [](R* r) { r->mutable_echo()->set_message("ping"); }},
      {R::kFlush, "Flush", [](R* r) { r->mutable_flush(); }},
      {R::kInfo, "Info", [](R* r) { r->mutable_info()->set_version("0.38.25"); }},
      {R::kInitChain, "InitChain", [](R* r) { r->mutable_init_chain()->set_chain_id("c-1"); }},
      {R::kQuery, "Query", [](R* r) { r->mutable_query()->set_path("/app/height"); }},
      {R::kCheckTx, "CheckTx", [](R* r) { r->mutable_check_tx()->set_tx("tx-1"); }},
      {R::kCommit, "Commit", [](R* r) { r->mutable_commit(); }},
      {R::kListSnapshots, "ListSnapshots", [](R* r) { r->mutable_list_snapshots(); }},
      {R::kOfferSnapshot, "OfferSnapshot",
       [](R* r) { r->mutable_offer_snapshot()->set_app_hash("h"); }},
      {R::kLoadSnapshotChunk, "LoadSnapshotChunk",
       [](R* r) { r->mutable_load_snapshot_chunk()->set_height(5); }},
      {R::kApplySnapshotChunk, "ApplySnapshotChunk",
       [](R* r) { r->mutable_apply_snapshot_chunk()->set_chunk("c"); }},
      {R::kPrepareProposal, "PrepareProposal",
       [](R* r) { r->mutable_prepare_proposal()->add_txs("p"); }},
      {R::kProcessProposal, "ProcessProposal",
       [](R* r) { r->mutable_process_proposal()->set_height(3); }},
      {R::kExtendVote, "ExtendVote", [](R* r) { r->mutable_extend_vote()->set_height(4); }},
      {R::kVerifyVoteExtension, "VerifyVoteExtension",
       [](R* r) { r->mutable_verify_vote_extension()->set_vote_extension("v"); }},
      {R::kFinalizeBlock, "FinalizeBlock", [](R* r) { r->mutable_finalize_block()->add_txs("f"); }},
      {R::kInsertTx, "InsertTx", [](R* r) { r->mutable_insert_tx()->set_tx("i"); }},
      {R::kReapTxs, "ReapTxs", [](R* r) { r->mutable_reap_txs()->set_max_bytes(10); }},
  };
  return cases;
}

// The message a oneof holds (the request and response oneofs share field names).
const google::protobuf::Message& OneofMessage(const google::protobuf::Message& envelope) {
  const auto* oneof = envelope.GetDescriptor()->FindOneofByName("value");
  const auto* field = envelope.GetReflection()->GetOneofFieldDescriptor(envelope, oneof);
  REQUIRE(field != nullptr);
  return envelope.GetReflection()->GetMessage(envelope, field);
}

std::string OneofName(const google::protobuf::Message& envelope) {
  const auto* oneof = envelope.GetDescriptor()->FindOneofByName("value");
  const auto* field = envelope.GetReflection()->GetOneofFieldDescriptor(envelope, oneof);
  return field == nullptr ? "" : field->name();
}

// A length-delimited field as raw protobuf wire bytes.
std::string LengthDelimited(int field, const std::string& bytes) {
  std::string out;
  kairos::abci::AppendUvarint(static_cast<std::uint64_t>(field) << 3 | 2, &out);
  kairos::abci::AppendUvarint(bytes.size(), &out);
  return out + bytes;
}

R ParseRequest(const std::string& wire) {
  R req;
  REQUIRE(req.ParseFromString(wire));
  return req;
}

}  // namespace

TEST_CASE("the case table covers every Request method", "[dispatcher]") {
  const auto* oneof = R::descriptor()->FindOneofByName("value");
  REQUIRE(oneof != nullptr);
  CHECK(static_cast<std::size_t>(oneof->field_count()) == Cases().size());
  for (int i = 0; i < oneof->field_count(); ++i) {
    const int number = oneof->field(i)->number();
    INFO("request field " << oneof->field(i)->name());
    CHECK(std::any_of(Cases().begin(), Cases().end(),
                      [&](const Case& c) { return c.value_case == number; }));
  }
}

TEST_CASE("every request reaches its method and returns the matching response", "[dispatcher]") {
  for (const Case& c : Cases()) {
    INFO("method " << c.method);
    RecordingApp app;
    Dispatcher dispatcher(app);
    R req;
    c.fill(&req);
    REQUIRE(req.value_case() == c.value_case);
    const pb::Response res = dispatcher.Handle(req);

    REQUIRE(res.value_case() != pb::Response::kException);
    CHECK(OneofName(res) == OneofName(req));
    if (c.value_case == R::kFlush) {
      CHECK(app.calls.empty());  // answered by the dispatcher itself
      continue;
    }
    REQUIRE(app.calls.size() == 1);
    CHECK(app.calls[0].method == c.method);
    CHECK(app.calls[0].request == OneofMessage(req).SerializeAsString());
    CHECK_FALSE(app.calls[0].response.empty());
    CHECK(OneofMessage(res).SerializeAsString() == app.calls[0].response);
  }
}

TEST_CASE("MethodName names every case, and Empty for an unset request", "[dispatcher]") {
  for (const Case& c : Cases()) CHECK(Dispatcher::MethodName(c.value_case) == c.method);
  CHECK(Dispatcher::MethodName(R::VALUE_NOT_SET) == "Empty");
}

TEST_CASE("an empty request gets an Exception saying it is empty", "[dispatcher]") {
  RecordingApp app;
  Dispatcher dispatcher(app);
  const pb::Response res = dispatcher.Handle(ParseRequest(""));
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(), Catch::Contains("empty"));
  CHECK(app.calls.empty());
}

TEST_CASE("a request for a method this build does not know gets an Exception", "[dispatcher]") {
  RecordingApp app;
  Dispatcher dispatcher(app);
  // Field 30 is no Request method: it parses as an unknown field.
  const R req = ParseRequest(LengthDelimited(30, LengthDelimited(1, "x")));
  REQUIRE(req.value_case() == R::VALUE_NOT_SET);
  const pb::Response res = dispatcher.Handle(req);
  REQUIRE(res.value_case() == pb::Response::kException);
  CHECK_THAT(res.exception().error(), Catch::Contains("unknown"));
  CHECK_THAT(res.exception().error(), !Catch::Contains("empty"));
  CHECK(app.calls.empty());
}

TEST_CASE("a method that throws becomes an Exception naming the method and the cause",
          "[dispatcher]") {
  for (const Case& c : Cases()) {
    if (c.value_case == R::kFlush) continue;
    INFO("method " << c.method);
    RecordingApp app;
    app.throw_in = c.method;
    Dispatcher dispatcher(app);
    R req;
    c.fill(&req);
    const pb::Response res = dispatcher.Handle(req);
    REQUIRE(res.value_case() == pb::Response::kException);
    CHECK_THAT(res.exception().error(), Catch::Contains(std::string(c.method) + " failed") &&
                                            Catch::Contains("disk on fire"));
  }
}

TEST_CASE("HandleInto appends the response as one frame", "[dispatcher]") {
  RecordingApp app;
  Dispatcher dispatcher(app);
  R echo;
  echo.mutable_echo()->set_message("a");
  std::string out = "x";
  dispatcher.HandleInto(echo, &out);
  dispatcher.HandleInto(ParseRequest(""), &out);
  REQUIRE(out.substr(0, 1) == "x");

  FrameDecoder decoder(1024);
  decoder.Feed({reinterpret_cast<const std::uint8_t*>(out.data()) + 1, out.size() - 1});
  std::span<const std::uint8_t> frame;
  pb::Response res;
  REQUIRE(decoder.Next(&frame) == FrameDecoder::Status::kFrame);
  REQUIRE(res.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
  CHECK(res.echo().message() == "fake-Echo");
  REQUIRE(decoder.Next(&frame) == FrameDecoder::Status::kFrame);
  REQUIRE(res.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
  CHECK(res.value_case() == pb::Response::kException);
  CHECK(decoder.Next(&frame) == FrameDecoder::Status::kNeedMore);
}

TEST_CASE("HandleInto's hand-built frames equal protobuf's serialisation of the Response",
          "[dispatcher]") {
  for (const Case& c : Cases()) {
    INFO("method " << c.method);
    RecordingApp app;
    Dispatcher dispatcher(app);
    R req;
    c.fill(&req);
    std::string frame;
    dispatcher.HandleInto(req, &frame);
    std::string want;
    kairos::abci::AppendFrame(dispatcher.Handle(req), &want);
    CHECK(frame == want);
    pb::Response res;
    REQUIRE(res.ParseFromString(want.substr(kairos::abci::DecodeUvarint(
        {reinterpret_cast<const std::uint8_t*>(want.data()), want.size()}).length)));
    std::string reserialised;
    kairos::abci::AppendFrame(res, &reserialised);
    CHECK(frame == reserialised);  // a canonical encoding, not just a parseable one
  }
}

TEST_CASE("the default Echo returns the message unchanged", "[dispatcher]") {
  RecordingApp app;
  pb::RequestEcho req;
  req.set_message(std::string("\xff\x00x", 3));
  CHECK(app.Application::Echo(req).message() == req.message());
}

TEST_CASE("invalid UTF-8 in the node's Go strings parses (they are declared bytes)",
          "[dispatcher]") {
  const std::string bad("\xff\xfe\xc3", 3);
  RecordingApp app;
  Dispatcher dispatcher(app);

  SECTION("Echo.message") {
    const R req = ParseRequest(LengthDelimited(1, LengthDelimited(1, bad)));
    REQUIRE(req.echo().message() == bad);
    CHECK(dispatcher.Handle(req).value_case() == pb::Response::kEcho);
    // The default Echo's answer round-trips too (ResponseEcho.message is bytes).
    pb::Response res;
    *res.mutable_echo() = app.Application::Echo(req.echo());
    pb::Response parsed;
    REQUIRE(parsed.ParseFromString(res.SerializeAsString()));
    CHECK(parsed.echo().message() == bad);
  }
  SECTION("Query.path") {
    const R req = ParseRequest(LengthDelimited(6, LengthDelimited(2, bad)));
    CHECK(req.query().path() == bad);
    CHECK(dispatcher.Handle(req).value_case() == pb::Response::kQuery);
  }
  SECTION("InitChain.chain_id") {
    const R req = ParseRequest(LengthDelimited(5, LengthDelimited(2, bad)));
    CHECK(req.init_chain().chain_id() == bad);
    CHECK(dispatcher.Handle(req).value_case() == pb::Response::kInitChain);
  }
  SECTION("Info.version and ApplySnapshotChunk.sender") {
    CHECK(ParseRequest(LengthDelimited(3, LengthDelimited(1, bad))).info().version() == bad);
    CHECK(ParseRequest(LengthDelimited(15, LengthDelimited(3, bad)))
              .apply_snapshot_chunk()
              .sender() == bad);
  }
}
