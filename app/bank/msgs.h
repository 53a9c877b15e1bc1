// x/bank's messages (cosmos.bank.v1beta1, the SDK's shape and field numbers): MsgSend, and
// MsgUpdateParams (the authority's; its handler: msg_server.h), their decoding (canonical
// protobuf through app::ProtoReader), encoding and ValidateBasic; and the bank params.
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ante/coins.h"
#include "ante/errors.h"
#include "ante/msg.h"
#include "app/proto_reader.h"

namespace kairos::app::bank {

struct MsgSend {
  static constexpr std::string_view kTypeUrl = "/cosmos.bank.v1beta1.MsgSend";

  std::string from_address;  // bech32 as sent
  std::string to_address;    // bech32 as sent
  std::string from;          // raw 20-byte address (decoded by the decoder)
  std::string to;            // raw address bytes
  ante::Coins amount;

  const std::string& signer() const { return from; }
  // What the mempool reserves of the sender besides the fee.
  const ante::Coins& spends() const { return amount; }
  std::string Encode() const;
};

// Any.value of a MsgSend, canonical; addresses decoded, coins validated (codes 2 and 10).
bool DecodeMsgSend(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                   MsgSend& msg);

// Stateless checks of a MsgSend (the SDK's ValidateBasic): codes 7 and 10.
ante::TxStatus ValidateMsgSend(const MsgSend& msg);

// cosmos.bank.v1beta1.Params as Kairos keeps it: default_send_enabled only (no per-denom flags).
struct Params {
  bool default_send_enabled = true;
  bool operator==(const Params&) const = default;
};

struct MsgUpdateParams {
  static constexpr std::string_view kTypeUrl = "/cosmos.bank.v1beta1.MsgUpdateParams";
  std::string authority_address;  // the bech32 text as sent; empty when built in code
  std::string authority;          // raw
  Params params;                  // an absent params message: default_send_enabled false
  // How many params.send_enabled entries were sent (ValidateBasic refuses any).
  std::size_t send_enabled_entries = 0;
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

// Any.value of a MsgUpdateParams, canonical; the authority decoded (code 2 naming it).
bool DecodeMsgUpdateParams(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                           MsgUpdateParams& msg);

}  // namespace kairos::app::bank
