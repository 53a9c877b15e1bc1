#include "app/bank/msgs.h"

#include <utility>
#include <vector>

#include "app/authority_msg.h"
#include "app/proto_util.h"
#include "cosmos/bank/v1beta1/tx.pb.h"
#include "crypto/bech32.h"
#include "crypto/keys.h"

namespace kairos::app::bank {

namespace {

constexpr FieldSpec kMsgSendFields[] = {
    {1, "from_address", ProtoKind::kString},
    {2, "to_address", ProtoKind::kString},
    {3, "amount", ProtoKind::kMessage, true},
};
constexpr MessageSpec kMsgSendSpec{"MsgSend", kMsgSendFields};

constexpr FieldSpec kParamsFields[] = {
    {1, "send_enabled", ProtoKind::kMessage, true},
    {2, "default_send_enabled", ProtoKind::kBool},
};
constexpr MessageSpec kParamsSpec{"Params", kParamsFields};

}  // namespace

std::string MsgSend::Encode() const {
  cosmos::bank::v1beta1::MsgSend pb;
  pb.set_from_address(AddressText(from_address, from));
  pb.set_to_address(AddressText(to_address, to));
  SetCoins(amount, pb.mutable_amount());
  return SerializeDeterministic(pb);
}

bool DecodeMsgSend(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                   MsgSend& msg) {
  std::vector<ante::Coin> coins;
  int coin_index = 0;
  bool ok = reader.Walk(data, kMsgSendSpec, path,
                        [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
                          switch (f.number) {
                            case 1: msg.from_address = std::string(b); return true;
                            case 2: msg.to_address = std::string(b); return true;
                            case 3:
                              return reader.DecodeCoin(b, ProtoPath{&path, "amount", coin_index++},
                                                       coins);
                          }
                          return true;
                        });
  if (!ok) return false;
  if (!reader.DecodeAddress(msg.from_address, path, "from", &msg.from)) return false;
  if (!reader.DecodeAddress(msg.to_address, path, "to", &msg.to)) return false;
  return reader.MakeCoins(std::move(coins), ProtoPath{&path, "amount"}, &msg.amount);
}

ante::TxStatus ValidateMsgSend(const MsgSend& msg) {
  if (msg.from.size() != crypto::kAddressBytes) {
    return ante::TxStatus::Error(ante::kInvalidAddress, "invalid from address");
  }
  if (msg.to.empty()) return ante::TxStatus::Error(ante::kInvalidAddress, "invalid to address");
  if (msg.amount.empty()) {
    return ante::TxStatus::Error(ante::kInvalidCoins, "send amount must be positive: empty");
  }
  return ante::TxStatus::OK();
}

std::string MsgUpdateParams::Encode() const {
  cosmos::bank::v1beta1::MsgUpdateParams pb;
  pb.set_authority(AddressText(authority_address, authority));
  pb.mutable_params()->set_default_send_enabled(params.default_send_enabled);
  return SerializeDeterministic(pb);
}

bool DecodeMsgUpdateParams(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                           MsgUpdateParams& msg) {
  // Proto3: an absent params message, or an absent default_send_enabled, is false.
  msg.params.default_send_enabled = false;
  auto decode_params = [&](std::string_view b, const ProtoPath& at) {
    return reader.Walk(b, kParamsSpec, at,
                       [&](const FieldSpec& f, std::uint64_t v, std::string_view) {
                         if (f.number == 1) {
                           ++msg.send_enabled_entries;
                         } else {
                           msg.params.default_send_enabled = v != 0;
                         }
                         return true;
                       });
  };
  return DecodeUpdateParams(reader, data, path, &msg.authority_address, &msg.authority,
                            decode_params);
}

}  // namespace kairos::app::bank
