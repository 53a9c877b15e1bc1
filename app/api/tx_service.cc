// TxService: see tx_service.h.
#include "app/api/tx_service.h"

#include <absl/time/time.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <variant>

#include "ante/errors.h"
#include "app/api/comet_json.h"
#include "app/api/proto_json.h"
#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "app/proto_util.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/base64.h"
#include "crypto/hash.h"

namespace kairos::app::api {

namespace txv = cosmos::tx::v1beta1;
using cosmos::base::abci::v1beta1::TxResponse;
using nlohmann::json;
using namespace comet_json;  // NOLINT: this file converts CometBFT's answers

namespace {

constexpr std::string_view kBroadcastTx = "BroadcastTx";
constexpr std::string_view kGetTx = "GetTx";
constexpr std::string_view kGetTxsEvent = "GetTxsEvent";
constexpr char kTxTypeUrl[] = "/cosmos.tx.v1beta1.Tx";
constexpr std::uint64_t kMaxPage = 100;  // CometBFT's tx_search per_page cap
constexpr std::size_t kMaxQueryBytes = 4096;
constexpr std::size_t kMaxCachedTimes = 4096;
constexpr std::chrono::milliseconds kRpcTimeout{10'000};

CallResult Ok(const google::protobuf::MessageLite& m) {
  return {Code::kOk, {}, SerializeDeterministic(m), 0};
}

CallResult Bad(std::string message) { return {Code::kInvalidArgument, std::move(message), {}, 0}; }

// A block time as the SDK prints TxResponse.timestamp (Go's time.RFC3339, in UTC: seconds, "Z").
std::string Rfc3339Seconds(const std::string& comet_time) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, comet_time, &t, &err)) {
    throw BadAnswer{"time \"" + comet_time + "\": " + err};
  }
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// One tx of CometBFT's /tx or /tx_search answer as the SDK's TxResponse, and the tx decoded
// (false when its bytes are not a Cosmos tx: such a tx cannot pass CheckTx or a proposal here,
// but the tx index is CometBFT's, so it is not trusted to hold only ours).
bool FillTxResponse(const json& r, const std::string& timestamp, TxResponse* out, txv::Tx* tx) {
  out->set_height(Int(r, "height"));
  out->set_txhash(Str(r, "hash"));
  const json& res = r.contains("tx_result") ? r["tx_result"] : json::object();
  out->set_code(static_cast<std::uint32_t>(Int(res, "code")));
  out->set_codespace(Str(res, "codespace"));
  out->set_data(HexEncode(B64(Str(res, "data"), "tx_result.data"), /*upper=*/true));
  out->set_raw_log(Str(res, "log"));
  out->set_info(Str(res, "info"));
  out->set_gas_wanted(Int(res, "gas_wanted"));
  out->set_gas_used(Int(res, "gas_used"));
  if (res.contains("events") && res["events"].is_array()) {
    for (const json& e : res["events"]) SetEvent(e, out->add_events());
  }
  out->set_timestamp(timestamp);
  const std::string raw = B64(Str(r, "tx"), "tx");
  // Tx and TxRaw have the same field numbers and wire types, so a TxRaw's bytes are a Tx's.
  // A tx that does not print as JSON (an Any of a type unknown here, which the ante lets
  // through in non-critical extension options) is answered without its decoded form: one
  // such tx must not make every page that holds it fail over REST.
  if (!ParseProto(raw, tx) || !ToJson(txv::Tx::descriptor(), raw).ok()) return false;
  out->mutable_tx()->set_type_url(kTxTypeUrl);
  out->mutable_tx()->set_value(raw);
  return true;
}

// The SDK's TxResponse for a broadcast refused by CometBFT's mempool before the app saw it
// (client/broadcast.go CheckCometError): the SDK's code for the case, or nullopt for an error
// that is not one of them.
std::optional<TxResponse> CometRefusal(const std::string& message, const std::string& txhash) {
  struct Case {
    std::string_view text;
    ante::SdkCode code;
  };
  static constexpr Case kCases[] = {
      {"tx already exists in cache", ante::kTxInMempoolCache},
      {"mempool is full", ante::kMempoolIsFull},
      {"tx too large", ante::kTxTooLarge},
  };
  for (const Case& c : kCases) {
    if (message.find(c.text) == std::string::npos) continue;
    TxResponse out;
    out.set_txhash(txhash);
    out.set_code(static_cast<std::uint32_t>(c.code));
    out.set_codespace(ante::kCodespaceSdk);
    out.set_raw_log(message);
    return out;
  }
  return std::nullopt;
}

CallResult BroadcastAnswer(TxResponse tx_response) {
  txv::BroadcastTxResponse out;
  *out.mutable_tx_response() = std::move(tx_response);
  return Ok(out);
}

// A failed RPC call: CometBFT refused it (INVALID_ARGUMENT, with its message), or could not be
// reached or answered what is not JSON-RPC (UNAVAILABLE).
CallResult RpcFailure(const std::string& rpc, std::string_view what, const Status& why) {
  if (why.code() == Status::Code::kInvalidArgument) return Bad(why.message());
  return Unavailable(rpc, what, why);
}

}  // namespace

std::string TxService::BlockTime(client::RpcClient& rpc, std::int64_t height) const {
  {
    std::lock_guard lock(times_mu_);
    if (auto it = times_.find(height); it != times_.end()) return it->second;
  }
  auto header = rpc.Get("header", {{"height", std::to_string(height)}});
  if (!header.ok()) throw header.status();
  const json& hd = header->contains("header") ? (*header)["header"] : json::object();
  std::string time = Rfc3339Seconds(Str(hd, "time"));
  std::lock_guard lock(times_mu_);
  if (times_.size() >= kMaxCachedTimes) times_.erase(times_.begin());
  times_.emplace(height, time);
  return time;
}

bool TxService::Ingest(const std::string& tx, std::function<void(IngestResult)> done,
                       bool* over_limit) const {
  *over_limit = false;
  if (!ingest_) return false;
  if (ingesting_->fetch_add(1) >= max_ingesting_) {
    ingesting_->fetch_sub(1);
    *over_limit = true;
    return false;
  }
  const bool taken = ingest_(tx, [count = ingesting_, done = std::move(done)](IngestResult r) {
    count->fetch_sub(1);
    done(std::move(r));
  });
  if (!taken) ingesting_->fetch_sub(1);
  return taken;
}

bool IsTxServiceMethod(std::string_view method) {
  if (method.rfind(kTxService, 0) != 0) return false;
  const std::string_view name = method.substr(kTxService.size());
  return name == kBroadcastTx || name == kGetTx || name == kGetTxsEvent;
}

void TxService::Call(std::string_view method, const std::string& request,
                     std::function<void(CallResult)> done) const {
  const std::string_view name = method.substr(kTxService.size());
  if (name == kBroadcastTx) return Broadcast(request, std::move(done));
  try {
    if (name == kGetTx) return done(GetTx(request));
    if (name == kGetTxsEvent) return done(GetTxsEvent(request));
  } catch (const Status& header_failure) {  // BlockTime's /header call
    return done(RpcFailure(rpc_, "header", header_failure));
  } catch (const BadAnswer& e) {
    return done(NotUnderstood(e.what));
  } catch (const json::exception& e) {
    return done(NotUnderstood(e.what()));
  }
  done({Code::kUnimplemented, "unknown method " + std::string(method), {}, 0});
}

void TxService::Broadcast(const std::string& request,
                          std::function<void(CallResult)> done) const {
  txv::BroadcastTxRequest req;
  if (!ParseProto(request, &req)) return done(Bad("request is not a BroadcastTxRequest"));
  if (req.tx_bytes().empty()) return done(Bad("invalid empty tx: tx_bytes is empty"));
  const txv::BroadcastMode mode = req.mode();
  if (mode != txv::BROADCAST_MODE_SYNC && mode != txv::BROADCAST_MODE_ASYNC) {
    return done(Bad("unsupported broadcast mode " + txv::BroadcastMode_Name(mode) +
                    ": use BROADCAST_MODE_SYNC or BROADCAST_MODE_ASYNC (BROADCAST_MODE_BLOCK was "
                    "removed in Cosmos SDK 0.47: broadcast, then GetTx)"));
  }
  const std::string txhash = HexEncode(crypto::Sha256(req.tx_bytes()), /*upper=*/true);
  bool over_limit = false;
  if (mode == txv::BROADCAST_MODE_ASYNC) {
    if (Ingest(req.tx_bytes(), [](IngestResult) {}, &over_limit)) {
      TxResponse out;
      out.set_txhash(txhash);
      return done(BroadcastAnswer(std::move(out)));
    }
  } else {
    // `done` is moved into the check's callback only when the ingest takes the tx.
    auto shared_done = std::make_shared<std::function<void(CallResult)>>(std::move(done));
    const bool taken = Ingest(
        req.tx_bytes(),
        [shared_done, txhash](IngestResult r) {
          TxResponse out;
          out.set_txhash(txhash);
          out.set_code(r.code);
          out.set_codespace(std::move(r.codespace));
          out.set_raw_log(std::move(r.log));
          out.set_info(std::move(r.info));
          out.set_gas_wanted(r.gas_wanted);
          out.set_gas_used(r.gas_used);
          (*shared_done)(BroadcastAnswer(std::move(out)));
        },
        &over_limit);
    if (taken) return;
    done = std::move(*shared_done);
  }
  if (over_limit) {
    return done({Code::kResourceExhausted,
                 "too many txs waiting for their check: " + std::to_string(max_ingesting_) +
                     " are queued on this node already (query.api_max_pending); retry later",
                 {}, 0});
  }
  auto connected = Connect(rpc_, kRpcTimeout);
  if (auto* failed = std::get_if<CallResult>(&connected)) return done(std::move(*failed));
  client::RpcClient& rpc = std::get<client::RpcClient>(connected);
  const char* method =
      mode == txv::BROADCAST_MODE_SYNC ? "broadcast_tx_sync" : "broadcast_tx_async";
  auto r = rpc.Call(method, json{{"tx", crypto::Base64Encode(req.tx_bytes())}});
  if (!r.ok()) {
    if (auto refused = CometRefusal(r.status().message(), txhash)) {
      return done(BroadcastAnswer(std::move(*refused)));
    }
    if (r.status().code() == Status::Code::kInvalidArgument) {
      return done({Code::kUnknown, r.status().message(), {}, 0});  // as the SDK: its error, Unknown
    }
    return done(RpcFailure(rpc_, method, r.status()));
  }
  try {
    TxResponse out;
    out.set_txhash(Str(*r, "hash").empty() ? txhash : Str(*r, "hash"));
    out.set_code(static_cast<std::uint32_t>(Int(*r, "code")));
    out.set_codespace(Str(*r, "codespace"));
    out.set_data(HexEncode(B64(Str(*r, "data"), "data"), /*upper=*/true));
    out.set_raw_log(Str(*r, "log"));
    done(BroadcastAnswer(std::move(out)));
  } catch (const BadAnswer& e) {
    done(NotUnderstood(e.what));
  }
}

CallResult TxService::GetTx(const std::string& request) const {
  txv::GetTxRequest req;
  if (!ParseProto(request, &req)) return Bad("request is not a GetTxRequest");
  if (req.hash().empty()) return Bad("tx hash cannot be empty");
  std::string hash;
  if (req.hash().size() != 64 || !HexDecode(req.hash(), &hash)) {
    return Bad("tx hash \"" + req.hash().substr(0, 80) +
               "\" is not a SHA-256 hash: expected 64 hex digits");
  }
  auto connected = Connect(rpc_, kRpcTimeout);
  if (auto* failed = std::get_if<CallResult>(&connected)) return std::move(*failed);
  client::RpcClient& rpc = std::get<client::RpcClient>(connected);
  auto r = rpc.Get("tx", {{"hash", "0x" + HexEncode(hash, /*upper=*/true)}});
  if (!r.ok()) {
    if (r.status().code() == Status::Code::kInvalidArgument &&
        r.status().message().find("not found") != std::string::npos) {
      return {Code::kNotFound, "tx not found: " + HexEncode(hash, /*upper=*/true), {}, 0};
    }
    return RpcFailure(rpc_, "tx", r.status());
  }
  const std::string time = BlockTime(rpc, Int(*r, "height"));
  txv::GetTxResponse out;
  if (!FillTxResponse(*r, time, out.mutable_tx_response(), out.mutable_tx())) {
    out.clear_tx();
  }
  return Ok(out);
}

CallResult TxService::GetTxsEvent(const std::string& request) const {
  txv::GetTxsEventRequest req;
  if (!ParseProto(request, &req)) return Bad("request is not a GetTxsEventRequest");
  std::string query = req.query();
  if (query.empty()) {  // the field cosmos-sdk 0.50 deprecated: its conditions, all of them
    for (const std::string& e : req.events()) query += (query.empty() ? "" : " AND ") + e;
  }
  if (query.empty()) return Bad("query cannot be empty");
  if (query.size() > kMaxQueryBytes) {
    return Bad("query of " + std::to_string(query.size()) + " bytes is over the limit of " +
               std::to_string(kMaxQueryBytes));
  }
  const std::uint64_t page = req.page() == 0 ? 1 : req.page();
  const std::uint64_t limit = req.limit() == 0 ? kMaxPage : std::min(req.limit(), kMaxPage);
  if (page > (1u << 30)) return Bad("page " + std::to_string(page) + " is out of range");
  auto connected = Connect(rpc_, kRpcTimeout);
  if (auto* failed = std::get_if<CallResult>(&connected)) return std::move(*failed);
  client::RpcClient& rpc = std::get<client::RpcClient>(connected);
  if (searching_.exchange(true)) {
    return {Code::kResourceExhausted,
            "another tx search is running on this node (one at a time); retry later", {}, 0};
  }
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(false); }
  } release{searching_};
  auto r = rpc.Call("tx_search", json{{"query", query},
                                      {"prove", false},
                                      {"page", std::to_string(page)},
                                      {"per_page", std::to_string(limit)},
                                      {"order_by", req.order_by() == txv::ORDER_BY_DESC ? "desc"
                                                                                         : "asc"}});
  if (!r.ok()) return RpcFailure(rpc_, "tx_search", r.status());
  const json& txs = r->contains("txs") && (*r)["txs"].is_array() ? (*r)["txs"] : json::array();
  txv::GetTxsEventResponse out;
  for (const json& t : txs) {
    txv::Tx tx;
    if (!FillTxResponse(t, BlockTime(rpc, Int(t, "height")), out.add_tx_responses(), &tx)) {
      tx.Clear();
    }
    *out.add_txs() = std::move(tx);
  }
  out.set_total(static_cast<std::uint64_t>(Int(*r, "total_count")));
  return Ok(out);
}

}  // namespace kairos::app::api
