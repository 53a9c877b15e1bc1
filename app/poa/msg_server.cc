#include "app/poa/msg_server.h"

#include "app/hex.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"

namespace kairos::app::poa {

namespace {

using ante::TxStatus;

TxStatus CheckAddress(const std::string& raw, std::string_view what) {
  if (raw.size() != crypto::kAddressBytes) {
    return TxStatus::Error(ante::kInvalidAddress,
                           "invalid " + std::string(what) + " address: " +
                               std::to_string(raw.size()) + " bytes, want " +
                               std::to_string(crypto::kAddressBytes));
  }
  return TxStatus::OK();
}

std::string Bech32(std::string_view raw) {
  return raw.empty() ? std::string() : crypto::EncodeAccountAddress(raw);
}

}  // namespace

TxStatus ValidateBasic(const MsgSetValidator& msg) {
  if (TxStatus s = CheckAddress(msg.authority, "authority"); !s.ok()) return s;
  if (!msg.operator_address.empty()) {
    if (TxStatus s = CheckAddress(msg.operator_address, "operator"); !s.ok()) return s;
  }
  if (msg.pub_key.bytes.empty()) {
    return TxStatus::Error(ante::kInvalidPubKey, "MsgSetValidator.pub_key is required");
  }
  if (std::string problem = KeyProblem(msg.pub_key); !problem.empty()) {
    return TxStatus::Error(ante::kInvalidPubKey, "MsgSetValidator.pub_key: " + problem);
  }
  if (msg.power < 0) {
    return TxStatus::Error(ante::kInvalidRequest,
                           "MsgSetValidator.power must not be negative, got " +
                               std::to_string(msg.power));
  }
  if (msg.power > kMaxTotalVotingPower) {
    return TxStatus::Error(ante::kInvalidRequest,
                           "MsgSetValidator.power " + std::to_string(msg.power) +
                               " is over CometBFT's maximum total voting power " +
                               std::to_string(kMaxTotalVotingPower));
  }
  if (msg.moniker.size() > kMaxMonikerBytes) {
    return TxStatus::Error(ante::kInvalidRequest,
                           "MsgSetValidator.moniker is " + std::to_string(msg.moniker.size()) +
                               " bytes, at most " + std::to_string(kMaxMonikerBytes));
  }
  return TxStatus::OK();
}

TxStatus ValidateBasic(const MsgUpdateAuthority& msg) {
  if (TxStatus s = CheckAddress(msg.authority, "authority"); !s.ok()) return s;
  return CheckAddress(msg.new_authority, "new authority");
}

TxStatus ValidateBasic(const MsgUpdateParams& msg) {
  if (TxStatus s = CheckAddress(msg.authority, "authority"); !s.ok()) return s;
  if (Status s = Validate(msg.params); !s.ok()) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgUpdateParams.params." + s.message());
  }
  return TxStatus::OK();
}

template <class Msg>
TxStatus MsgServer::Begin(ante::Context& ctx, const Msg& msg, std::size_t msg_index) const {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  auto authority = keeper_.GetAuthority(*ctx.store);
  if (!authority.ok()) return TxStatus::FromStore(authority.status());
  if (authority->empty()) {
    return TxStatus::Error(ante::kUnauthorized,
                           "expected authority (none: this chain's genesis sets no "
                           "app_state.poa.authority), got " +
                               Bech32(msg.authority));
  }
  if (*authority != msg.authority) {
    return TxStatus::Error(ante::kUnauthorized, "expected authority " + Bech32(*authority) +
                                                    ", got " + Bech32(msg.authority));
  }
  ctx.Emit("message", {{"action", std::string(Msg::kTypeUrl)},
                       {"sender", Bech32(msg.authority)},
                       {"module", std::string(kModuleName)},
                       {"msg_index", std::to_string(msg_index)}});
  return TxStatus::OK();
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgSetValidator& msg,
                           std::size_t msg_index) const {
  if (TxStatus s = Begin(ctx, msg, msg_index); !s.ok()) return s;
  SetOutcome outcome;
  Validator v{msg.pub_key, msg.power, msg.moniker, msg.operator_address};
  if (TxStatus s = keeper_.SetValidator(ctx, v, &outcome); !s.ok()) return s;
  ctx.Emit("poa_set_validator",
           {{"consensus_address", HexEncode(outcome.consensus_address, /*upper=*/true)},
            {"pub_key_type", std::string(KeyTypeName(msg.pub_key.type))},
            {"pub_key", crypto::Base64Encode(msg.pub_key.bytes)},
            {"power", std::to_string(msg.power)},
            {"previous_power", std::to_string(outcome.previous_power)},
            {"action", std::string(outcome.action)},
            {"moniker", msg.moniker},
            {"operator_address", Bech32(msg.operator_address)},
            {"total_power", std::to_string(outcome.totals.power)},
            {"validators", std::to_string(outcome.totals.validators)}});
  return TxStatus::OK();
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgUpdateAuthority& msg,
                           std::size_t msg_index) const {
  if (TxStatus s = Begin(ctx, msg, msg_index); !s.ok()) return s;
  if (Status s = keeper_.SetAuthority(*ctx.store, msg.new_authority); !s.ok()) {
    return TxStatus::FromStore(s);
  }
  ctx.Emit("poa_update_authority", {{"previous_authority", Bech32(msg.authority)},
                                    {"new_authority", Bech32(msg.new_authority)}});
  return TxStatus::OK();
}

TxStatus MsgServer::Handle(ante::Context& ctx, const MsgUpdateParams& msg,
                           std::size_t msg_index) const {
  if (TxStatus s = Begin(ctx, msg, msg_index); !s.ok()) return s;
  auto totals = keeper_.GetTotals(*ctx.store);
  if (!totals.ok()) return TxStatus::FromStore(totals.status());
  if (msg.params.max_validators < totals->validators) {
    return TxStatus::Error(ante::kInvalidRequest,
                           "MsgUpdateParams.params.max_validators " +
                               std::to_string(msg.params.max_validators) + " is below the " +
                               std::to_string(totals->validators) +
                               " validators in the set: remove some first");
  }
  if (Status s = keeper_.SetParams(*ctx.store, msg.params); !s.ok()) {
    return TxStatus::FromStore(s);
  }
  ctx.Emit("poa_update_params", {{"max_validators", std::to_string(msg.params.max_validators)}});
  return TxStatus::OK();
}

}  // namespace kairos::app::poa
