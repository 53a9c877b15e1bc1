// The poa module's messages (kairos.poa.v1, proto/kairos/poa/v1/tx.proto), their decoding
// (canonical protobuf through app::ProtoReader) and encoding. The signer of each is its
// `authority`. ValidateBasic is in msg_server.h.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ante/msg.h"
#include "app/poa/consensus_key.h"
#include "app/poa/params.h"
#include "app/proto_reader.h"

namespace kairos::app::poa {

inline constexpr std::string_view kTypeUrlPrefix = "/kairos.poa.v1.";

// `*_address` fields are the bech32 text as sent (empty when built in code: Encode then writes
// the bech32 of the raw bytes); the fields without the suffix are the raw bytes.
struct MsgSetValidator {
  static constexpr std::string_view kTypeUrl = "/kairos.poa.v1.MsgSetValidator";
  std::string authority_address;
  std::string authority;
  ConsensusKey pub_key;  // bytes empty: no pub_key was sent (ValidateBasic refuses it)
  std::int64_t power = 0;
  std::string moniker;
  std::string operator_address_text;
  std::string operator_address;  // raw; empty when not given
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

struct MsgUpdateAuthority {
  static constexpr std::string_view kTypeUrl = "/kairos.poa.v1.MsgUpdateAuthority";
  std::string authority_address;
  std::string authority;
  std::string new_authority_address;
  std::string new_authority;
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

struct MsgUpdateParams {
  static constexpr std::string_view kTypeUrl = "/kairos.poa.v1.MsgUpdateParams";
  std::string authority_address;
  std::string authority;
  Params params{0};  // as sent: an absent params message is all zero (ValidateBasic refuses it)
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

// Decodes Any.value of one of the messages above (by type URL) into *out. False with
// reader.error set: code 2 for a bad encoding or an unknown type URL, code 8 for a pub_key
// that is not an ed25519 or secp256k1 key of the right size.
bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out);

}  // namespace kairos::app::poa
