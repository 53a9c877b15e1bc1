// Reading CometBFT's RPC JSON into protobuf fields, for the services that answer from CometBFT
// (comet_service.cc: blocks and validators; tx_service.cc: txs). CometBFT writes int64 as
// decimal strings, bytes as base64, hashes as upper-case hex and times in RFC 3339; a value
// that is absent or null reads as its zero. A value of the wrong form throws BadAnswer, which
// the services answer as INTERNAL ("CometBFT's answer is not understood: ..."). Pure functions;
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <google/protobuf/timestamp.pb.h>
#include <nlohmann/json.hpp>

#include "app/api/api_backend.h"
#include "app/client/rpc_client.h"
#include "tendermint/abci/types.pb.h"

namespace kairos::app::api::comet_json {

// A conversion failed: CometBFT answered something this code does not understand.
struct BadAnswer {
  std::string what;
};

std::string Str(const nlohmann::json& j, const char* key);
std::int64_t Int(const nlohmann::json& j, const char* key);
std::string Hex(const nlohmann::json& j, const char* key);  // hex text to bytes
std::string B64(const std::string& text, const char* what);   // base64 text to bytes
void SetTime(const std::string& text, google::protobuf::Timestamp* out);
// An ABCI event as CometBFT v0.38 prints it ({"type", "attributes": [{"key", "value",
// "index"}]}, strings as they are).
void SetEvent(const nlohmann::json& j, tendermint::abci::Event* out);

// The answer for a BadAnswer or a JSON exception: INTERNAL, naming it.
CallResult NotUnderstood(const std::string& what);

// A client of CometBFT's RPC at `rpc` ([query] cometbft_rpc) for one call, or the UNAVAILABLE
// answer that says why there is none ("" or a bad address).
std::variant<client::RpcClient, CallResult> Connect(const std::string& rpc,
                                                    std::chrono::milliseconds timeout);

// CometBFT at `rpc` did not answer /`what`: UNAVAILABLE with the reason it gave.
CallResult Unavailable(const std::string& rpc, std::string_view what, const Status& why);

}  // namespace kairos::app::api::comet_json
