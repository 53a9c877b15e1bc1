// CometService: see comet_service.h.
#include "app/api/comet_service.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/api/comet_json.h"
#include "app/client/rpc_client.h"
#include "app/hex.h"
#include "app/proto_util.h"
#include "app/query_router.h"
#include "app/version.h"
#include "cosmos/base/tendermint/v1beta1/query.pb.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"

namespace kairos::app::api {

namespace tm = cosmos::base::tendermint::v1beta1;
using nlohmann::json;

using namespace comet_json;  // NOLINT: this file is made of these conversions

namespace {

constexpr char kValconsPrefix[] = "kairosvalcons";
constexpr std::int64_t kMaxValidatorsPage = 100;  // CometBFT's own per_page cap

void SetBlockId(const json& j, tendermint::types::BlockID* out) {
  out->set_hash(Hex(j, "hash"));
  const json& parts = j.contains("parts") ? j["parts"] : json::object();
  out->mutable_part_set_header()->set_total(static_cast<std::uint32_t>(Int(parts, "total")));
  out->mutable_part_set_header()->set_hash(Hex(parts, "hash"));
}

// The header fields both header messages share (all but the proposer's form).
template <class H>
void SetHeader(const json& j, H* out) {
  const json& v = j.contains("version") ? j["version"] : json::object();
  out->mutable_version()->set_block(static_cast<std::uint64_t>(Int(v, "block")));
  out->mutable_version()->set_app(static_cast<std::uint64_t>(Int(v, "app")));
  out->set_chain_id(Str(j, "chain_id"));
  out->set_height(Int(j, "height"));
  SetTime(Str(j, "time"), out->mutable_time());
  if (j.contains("last_block_id")) SetBlockId(j["last_block_id"], out->mutable_last_block_id());
  out->set_last_commit_hash(Hex(j, "last_commit_hash"));
  out->set_data_hash(Hex(j, "data_hash"));
  out->set_validators_hash(Hex(j, "validators_hash"));
  out->set_next_validators_hash(Hex(j, "next_validators_hash"));
  out->set_consensus_hash(Hex(j, "consensus_hash"));
  out->set_app_hash(Hex(j, "app_hash"));
  out->set_last_results_hash(Hex(j, "last_results_hash"));
  out->set_evidence_hash(Hex(j, "evidence_hash"));
}

// The block parts both block messages share: txs, evidence (by count), the last commit.
template <class B>
void SetBody(const json& block, B* out) {
  const json& data = block.contains("data") ? block["data"] : json::object();
  if (data.contains("txs") && data["txs"].is_array()) {
    for (const json& tx : data["txs"]) out->mutable_data()->add_txs(B64(tx.get<std::string>(), "tx"));
  }
  const json& ev = block.contains("evidence") ? block["evidence"] : json::object();
  if (ev.contains("evidence") && ev["evidence"].is_array()) {
    for (std::size_t i = 0; i < ev["evidence"].size(); ++i) out->mutable_evidence()->add_evidence();
  } else {
    out->mutable_evidence();
  }
  if (!block.contains("last_commit") || block["last_commit"].is_null()) return;
  const json& c = block["last_commit"];
  auto* commit = out->mutable_last_commit();
  commit->set_height(Int(c, "height"));
  commit->set_round(static_cast<std::int32_t>(Int(c, "round")));
  if (c.contains("block_id")) SetBlockId(c["block_id"], commit->mutable_block_id());
  if (c.contains("signatures") && c["signatures"].is_array()) {
    for (const json& s : c["signatures"]) {
      auto* sig = commit->add_signatures();
      sig->set_block_id_flag(static_cast<tendermint::types::BlockIDFlag>(Int(s, "block_id_flag")));
      sig->set_validator_address(Hex(s, "validator_address"));
      SetTime(Str(s, "timestamp"), sig->mutable_timestamp());
      sig->set_signature(B64(Str(s, "signature"), "signature"));
    }
  }
}

template <class R>
void SetBlockResponse(const json& result, R* out) {
  if (!result.contains("block") || !result["block"].is_object()) throw BadAnswer{"no block"};
  const json& block = result["block"];
  const json& header = block.contains("header") ? block["header"] : json::object();
  if (result.contains("block_id")) SetBlockId(result["block_id"], out->mutable_block_id());
  auto* legacy = out->mutable_block();
  SetHeader(header, legacy->mutable_header());
  legacy->mutable_header()->set_proposer_address(Hex(header, "proposer_address"));
  SetBody(block, legacy);
  auto* sdk = out->mutable_sdk_block();
  SetHeader(header, sdk->mutable_header());
  sdk->mutable_header()->set_proposer_address(
      crypto::Bech32Encode(kValconsPrefix, Hex(header, "proposer_address")));
  SetBody(block, sdk);
}

CallResult Ok(const google::protobuf::MessageLite& m) {
  return {Code::kOk, {}, SerializeDeterministic(m), 0};
}

CallResult Bad(std::string message) { return {Code::kInvalidArgument, std::move(message), {}, 0}; }

}  // namespace

CallResult CometService::Call(std::string_view method, const std::string& request) const {
  const std::string_view name = method.substr(kTendermintService.size());
  if (name == "ABCIQuery") {
    tm::ABCIQueryRequest q;
    if (!ParseProto(request, &q)) return Bad("request is not an ABCIQueryRequest");
    tendermint::abci::RequestQuery r;
    r.set_path(q.path());
    r.set_data(q.data());
    r.set_height(q.height());
    r.set_prove(q.prove());
    const tendermint::abci::ResponseQuery a = router_.Handle(r);
    tm::ABCIQueryResponse out;
    out.set_code(a.code());
    out.set_log(a.log());
    out.set_info(a.info());
    out.set_index(a.index());
    out.set_key(a.key());
    out.set_value(a.value());
    for (const auto& op : a.proof_ops().ops()) {
      auto* o = out.mutable_proof_ops()->add_ops();
      o->set_type(op.type());
      o->set_key(op.key());
      o->set_data(op.data());
    }
    out.set_height(a.height());
    out.set_codespace(a.codespace());
    CallResult result = Ok(out);
    result.height = a.height();
    return result;
  }
  auto connected = Connect(rpc_, std::chrono::seconds(5));
  if (auto* failed = std::get_if<CallResult>(&connected)) return std::move(*failed);
  client::RpcClient& rpc = std::get<client::RpcClient>(connected);
  const auto unavailable = [&](std::string_view what, const Status& why) {
    return Unavailable(rpc_, what, why);
  };
  try {
    if (name == "GetNodeInfo" || name == "GetSyncing") {
      auto status = rpc.Get("status", {});
      if (!status.ok()) return unavailable("status", status.status());
      if (name == "GetSyncing") {
        tm::GetSyncingResponse out;
        const json& sync = (*status)["sync_info"];
        out.set_syncing(sync.contains("catching_up") && sync["catching_up"].is_boolean() &&
                        sync["catching_up"].get<bool>());
        return Ok(out);
      }
      const json& ni = (*status)["node_info"];
      tm::GetNodeInfoResponse out;
      auto* d = out.mutable_default_node_info();
      const json& pv = ni.contains("protocol_version") ? ni["protocol_version"] : json::object();
      d->mutable_protocol_version()->set_p2p(static_cast<std::uint64_t>(Int(pv, "p2p")));
      d->mutable_protocol_version()->set_block(static_cast<std::uint64_t>(Int(pv, "block")));
      d->mutable_protocol_version()->set_app(static_cast<std::uint64_t>(Int(pv, "app")));
      d->set_default_node_id(Str(ni, "id"));
      d->set_listen_addr(Str(ni, "listen_addr"));
      d->set_network(Str(ni, "network"));
      d->set_version(Str(ni, "version"));
      d->set_channels(Hex(ni, "channels"));
      d->set_moniker(Str(ni, "moniker"));
      const json& other = ni.contains("other") ? ni["other"] : json::object();
      d->mutable_other()->set_tx_index(Str(other, "tx_index"));
      d->mutable_other()->set_rpc_address(Str(other, "rpc_address"));
      auto* v = out.mutable_application_version();
      v->set_name("kairos");
      v->set_app_name("kairosd");
      v->set_version(kVersion);
      return Ok(out);
    }
    if (name == "GetLatestBlock" || name == "GetBlockByHeight") {
      std::vector<std::pair<std::string, std::string>> args;
      if (name == "GetBlockByHeight") {
        tm::GetBlockByHeightRequest q;
        if (!ParseProto(request, &q)) return Bad("request is not a GetBlockByHeightRequest");
        if (q.height() <= 0) {
          return Bad("height must be greater than 0, got " + std::to_string(q.height()));
        }
        args.emplace_back("height", std::to_string(q.height()));
      }
      auto r = rpc.Get("block", args);
      if (!r.ok()) {
        if (r.status().code() == Status::Code::kInvalidArgument ||
            r.status().message().find("height") != std::string::npos) {
          return Bad(r.status().message());
        }
        return unavailable("block", r.status());
      }
      if (name == "GetLatestBlock") {
        tm::GetLatestBlockResponse out;
        SetBlockResponse(*r, &out);
        return Ok(out);
      }
      tm::GetBlockByHeightResponse out;
      SetBlockResponse(*r, &out);
      return Ok(out);
    }
    if (name == "GetLatestValidatorSet" || name == "GetValidatorSetByHeight") {
      std::int64_t height = 0;
      cosmos::base::query::v1beta1::PageRequest page;
      if (name == "GetValidatorSetByHeight") {
        tm::GetValidatorSetByHeightRequest q;
        if (!ParseProto(request, &q)) return Bad("request is not a GetValidatorSetByHeightRequest");
        if (q.height() <= 0) {
          return Bad("height must be greater than 0, got " + std::to_string(q.height()));
        }
        height = q.height();
        page = q.pagination();
      } else {
        tm::GetLatestValidatorSetRequest q;
        if (!ParseProto(request, &q)) return Bad("request is not a GetLatestValidatorSetRequest");
        page = q.pagination();
      }
      if (!page.key().empty() || page.reverse()) {
        return Bad("pagination: the validator set pages by offset and limit only (no key, no "
                   "reverse), as the Cosmos SDK's");
      }
      const std::int64_t limit = page.limit() == 0
                                     ? kMaxValidatorsPage
                                     : std::min<std::int64_t>(static_cast<std::int64_t>(
                                                                  std::min<std::uint64_t>(page.limit(), 1u << 20)),
                                                              kMaxValidatorsPage);
      const std::uint64_t offset = page.offset();
      // CometBFT pages by page number: read the pages that cover [offset, offset + limit).
      std::vector<json> all;
      std::int64_t total = 0, at = 0;
      for (std::uint64_t p = offset / kMaxValidatorsPage + 1;; ++p) {
        std::vector<std::pair<std::string, std::string>> args = {
            {"page", std::to_string(p)}, {"per_page", std::to_string(kMaxValidatorsPage)}};
        if (height > 0) args.emplace_back("height", std::to_string(height));
        auto r = rpc.Get("validators", args);
        if (!r.ok()) {
          if (p > 1 && r.status().message().find("page") != std::string::npos) break;
          if (r.status().message().find("height") != std::string::npos) return Bad(r.status().message());
          return unavailable("validators", r.status());
        }
        total = Int(*r, "total");
        at = Int(*r, "block_height");
        const std::uint64_t first = (p - 1) * kMaxValidatorsPage;
        const json& vs = (*r)["validators"];
        for (std::size_t i = 0; i < vs.size(); ++i) {
          if (first + i >= offset && static_cast<std::int64_t>(all.size()) < limit) all.push_back(vs[i]);
        }
        if (static_cast<std::int64_t>(all.size()) >= limit ||
            static_cast<std::int64_t>(p * kMaxValidatorsPage) >= total) {
          break;
        }
      }
      const auto fill = [&](auto* out) {
        out->set_block_height(at);
        for (const json& v : all) {
          auto* val = out->add_validators();
          val->set_address(crypto::Bech32Encode(kValconsPrefix, Hex(v, "address")));
          const json& pk = v.contains("pub_key") ? v["pub_key"] : json::object();
          if (Str(pk, "type") != "tendermint/PubKeyEd25519") {
            throw BadAnswer{"validator key type \"" + Str(pk, "type") + "\""};
          }
          cosmos::crypto::ed25519::PubKey key;
          key.set_key(B64(Str(pk, "value"), "pub_key"));
          val->mutable_pub_key()->set_type_url("/cosmos.crypto.ed25519.PubKey");
          val->mutable_pub_key()->set_value(SerializeDeterministic(key));
          val->set_voting_power(Int(v, "voting_power"));
          val->set_proposer_priority(Int(v, "proposer_priority"));
        }
        out->mutable_pagination()->set_total(static_cast<std::uint64_t>(total));
      };
      if (name == "GetValidatorSetByHeight") {
        tm::GetValidatorSetByHeightResponse out;
        fill(&out);
        return Ok(out);
      }
      tm::GetLatestValidatorSetResponse out;
      fill(&out);
      return Ok(out);
    }
  } catch (const BadAnswer& e) {
    return NotUnderstood(e.what);
  } catch (const json::exception& e) {
    return NotUnderstood(e.what());
  }
  return {Code::kUnimplemented, "unknown method " + std::string(method), {}, 0};
}

}  // namespace kairos::app::api
