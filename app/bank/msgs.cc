#include "app/bank/msgs.h"

#include <utility>
#include <vector>

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

}  // namespace kairos::app::bank
