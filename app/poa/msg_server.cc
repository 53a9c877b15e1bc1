#include "app/poa/msg_server.h"

#include "app/authority_msg.h"
#include "app/hex.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"

namespace kairos::app::poa {

namespace {

using ante::TxStatus;

std::string Bech32(std::string_view raw) {
  return raw.empty() ? std::string() : crypto::EncodeAccountAddress(raw);
}

}  // namespace

TxStatus ValidateBasic(const MsgSetValidator& msg) {
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  if (!msg.operator_address.empty()) {
    if (TxStatus s = CheckAddressSize(msg.operator_address, "operator"); !s.ok()) return s;
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
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  return CheckAddressSize(msg.new_authority, "new authority");
}

TxStatus ValidateBasic(const MsgUpdateParams& msg) {
  if (TxStatus s = CheckAddressSize(msg.authority, "authority"); !s.ok()) return s;
  if (Status s = Validate(msg.params); !s.ok()) {
    return TxStatus::Error(ante::kInvalidRequest, "MsgUpdateParams.params." + s.message());
  }
  return TxStatus::OK();
}

template <class Msg>
TxStatus MsgServer::Begin(ante::Context& ctx, const Msg& msg, std::size_t msg_index) const {
  if (TxStatus s = ValidateBasic(msg); !s.ok()) return s;
  return BeginAuthorityMsg(ctx, &keeper_, msg.authority, Msg::kTypeUrl, kModuleName, msg_index);
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
