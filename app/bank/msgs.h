// x/bank's messages: MsgSend (cosmos.bank.v1beta1), its decoding, encoding and ValidateBasic.
//
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "ante/coins.h"
#include "ante/errors.h"
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

}  // namespace kairos::app::bank
