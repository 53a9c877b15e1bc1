// comet_json: see comet_json.h.
#include "app/api/comet_json.h"

#include <absl/time/time.h>

#include "app/hex.h"
#include "crypto/base64.h"

namespace kairos::app::api::comet_json {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) throw BadAnswer{std::string(key) + " is not a string"};
  return j[key].get<std::string>();
}

std::int64_t Int(const json& j, const char* key) {
  try {
    return client::JsonInt(j, key);
  } catch (const std::exception&) {
    throw BadAnswer{std::string(key) + " is not an integer"};
  }
}

std::string Hex(const json& j, const char* key) {
  std::string out;
  if (!HexDecode(Str(j, key), &out)) throw BadAnswer{std::string(key) + " is not hex"};
  return out;
}

std::string B64(const std::string& text, const char* what) {
  auto b = crypto::Base64Decode(text);
  if (!b) throw BadAnswer{std::string(what) + " is not base64"};
  return *b;
}

void SetTime(const std::string& text, google::protobuf::Timestamp* out) {
  if (text.empty()) return;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    throw BadAnswer{"time \"" + text + "\": " + err};
  }
  const std::int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos >= 0 ? nanos / 1'000'000'000 : (nanos - 999'999'999) / 1'000'000'000);
  out->set_nanos(static_cast<std::int32_t>(nanos - out->seconds() * 1'000'000'000));
}

void SetEvent(const json& j, tendermint::abci::Event* out) {
  out->set_type(Str(j, "type"));
  if (!j.contains("attributes") || !j["attributes"].is_array()) return;
  for (const json& a : j["attributes"]) {
    auto* attr = out->add_attributes();
    attr->set_key(Str(a, "key"));
    attr->set_value(Str(a, "value"));
    attr->set_index(a.contains("index") && a["index"].is_boolean() && a["index"].get<bool>());
  }
}

CallResult NotUnderstood(const std::string& what) {
  return {Code::kInternal, "CometBFT's answer is not understood: " + what, {}, 0};
}

std::variant<client::RpcClient, CallResult> Connect(const std::string& rpc,
                                                    std::chrono::milliseconds timeout) {
  if (rpc.empty()) {
    return CallResult{Code::kUnavailable,
                      "this node has no CometBFT RPC to read from ([query] cometbft_rpc is \"\")",
                      {}, 0};
  }
  auto url = client::ParseNodeUrl(rpc);
  if (!url.ok()) {
    return CallResult{Code::kUnavailable, "[query] cometbft_rpc: " + url.status().message(), {}, 0};
  }
  return client::RpcClient(*url, timeout);
}

CallResult Unavailable(const std::string& rpc, std::string_view what, const Status& why) {
  return {Code::kUnavailable,
          "CometBFT's RPC at " + rpc + " did not answer /" + std::string(what) + ": " +
              why.message(),
          {}, 0};
}

}  // namespace kairos::app::api::comet_json
