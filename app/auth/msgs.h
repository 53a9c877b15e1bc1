// x/auth's one message, cosmos.auth.v1beta1.MsgUpdateParams (proto/cosmos/auth/v1beta1/tx.proto,
// the SDK's shape and field numbers), its decoding (canonical protobuf through app::ProtoReader)
// and encoding. Its signer is `authority`. ValidateBasic and the handler: msg_server.h.
//
// The message carries the SDK's five params. Kairos's unordered-tx params
// (app_state.auth.params.unordered_*) are not in the SDK's Params: they stay genesis-only, and an
// update leaves them as they are.
//
// Thread-safe: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ante/keepers.h"
#include "ante/msg.h"
#include "app/proto_reader.h"
#include "cosmos/auth/v1beta1/auth.pb.h"

namespace kairos::app::auth {

// cosmos.auth.v1beta1.Params, as sent (an absent field is 0, which ValidateBasic refuses).
struct SdkParams {
  std::uint64_t max_memo_characters = 0;
  std::uint64_t tx_sig_limit = 0;
  std::uint64_t tx_size_cost_per_byte = 0;
  std::uint64_t sig_verify_cost_ed25519 = 0;
  std::uint64_t sig_verify_cost_secp256k1 = 0;

  static SdkParams Of(const ante::AuthParams& p);
  // The SDK's cosmos.auth.v1beta1.Params message, both ways (MsgUpdateParams, the Params
  // query, the CLI's params update).
  static SdkParams FromProto(const cosmos::auth::v1beta1::Params& p);
  void ToProto(cosmos::auth::v1beta1::Params* out) const;
  // `base` with these five fields replaced (the unordered_* fields kept).
  ante::AuthParams ApplyTo(ante::AuthParams base) const;
};

struct MsgUpdateParams {
  static constexpr std::string_view kTypeUrl = "/cosmos.auth.v1beta1.MsgUpdateParams";
  std::string authority_address;  // the bech32 text as sent; empty when built in code
  std::string authority;          // raw
  SdkParams params;
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

// Decodes Any.value of a MsgUpdateParams into *out. False with reader.error set (code 2 for a
// bad encoding or an unknown type URL).
bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out);

}  // namespace kairos::app::auth
