#include "app/poa/msgs.h"

#include <limits>
#include <utility>

#include "app/authority_msg.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"
#include "kairos/poa/v1/tx.pb.h"

namespace kairos::app::poa {

namespace {

namespace ppb = kairos::poa::v1;

constexpr FieldSpec kMsgSetValidatorFields[] = {
    {1, "authority", ProtoKind::kString},
    {2, "pub_key", ProtoKind::kMessage},
    {3, "power", ProtoKind::kInt64},
    {4, "moniker", ProtoKind::kString},
    {5, "operator_address", ProtoKind::kString},
};
constexpr FieldSpec kMsgUpdateAuthorityFields[] = {
    {1, "authority", ProtoKind::kString},
    {2, "new_authority", ProtoKind::kString},
};
constexpr FieldSpec kParamsFields[] = {
    {1, "max_validators", ProtoKind::kUint64},
};
constexpr FieldSpec kPubKeyFields[] = {
    {1, "key", ProtoKind::kBytes},
};
constexpr MessageSpec kMsgSetValidatorSpec{"MsgSetValidator", kMsgSetValidatorFields};
constexpr MessageSpec kMsgUpdateAuthoritySpec{"MsgUpdateAuthority", kMsgUpdateAuthorityFields};
constexpr MessageSpec kParamsSpec{"Params", kParamsFields};
constexpr MessageSpec kPubKeySpec{"PubKey", kPubKeyFields};

std::string AddressOrText(const std::string& text, const std::string& raw) {
  return text.empty() && !raw.empty() ? crypto::EncodeAccountAddress(raw) : text;
}

// pub_key: an Any of /cosmos.crypto.ed25519.PubKey or /cosmos.crypto.secp256k1.PubKey.
bool DecodeConsensusKey(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                        ConsensusKey* key) {
  std::string_view type_url, value;
  if (!reader.DecodeAny(data, path, &type_url, &value)) return false;
  if (type_url == kEd25519PubKeyTypeUrl) {
    key->type = crypto::KeyType::kEd25519;
  } else if (type_url == kSecp256k1PubKeyTypeUrl) {
    key->type = crypto::KeyType::kSecp256k1;
  } else {
    return reader.Fail(ante::kInvalidPubKey,
                       path.Render() + ": type URL \"" + ProtoReader::Quote(type_url) +
                           "\" is not a consensus key type (" +
                           std::string(kEd25519PubKeyTypeUrl) + " or " +
                           std::string(kSecp256k1PubKeyTypeUrl) + ")");
  }
  bool ok = reader.Walk(value, kPubKeySpec, path,
                        [&](const FieldSpec&, std::uint64_t, std::string_view b) {
                          key->bytes = std::string(b);
                          return true;
                        });
  if (!ok) return false;
  if (std::string problem = KeyProblem(*key); !problem.empty()) {
    return reader.Fail(ante::kInvalidPubKey, path.Render() + ": " + problem);
  }
  return true;
}

}  // namespace

std::string MsgSetValidator::Encode() const {
  ppb::MsgSetValidator pb;
  pb.set_authority(AddressOrText(authority_address, authority));
  if (!pub_key.bytes.empty()) *pb.mutable_pub_key() = ToAny(pub_key);
  pb.set_power(power);
  pb.set_moniker(moniker);
  pb.set_operator_address(AddressOrText(operator_address_text, operator_address));
  return SerializeDeterministic(pb);
}

std::string MsgUpdateAuthority::Encode() const {
  ppb::MsgUpdateAuthority pb;
  pb.set_authority(AddressOrText(authority_address, authority));
  pb.set_new_authority(AddressOrText(new_authority_address, new_authority));
  return SerializeDeterministic(pb);
}

std::string MsgUpdateParams::Encode() const {
  ppb::MsgUpdateParams pb;
  pb.set_authority(AddressOrText(authority_address, authority));
  *pb.mutable_params() = ToProto(params);
  return SerializeDeterministic(pb);
}

bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out) {
  if (type_url == MsgSetValidator::kTypeUrl) {
    MsgSetValidator m;
    std::string_view authority, operator_address;
    bool ok = reader.Walk(data, kMsgSetValidatorSpec, path,
                          [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
                            switch (f.number) {
                              case 1: authority = b; break;
                              case 2:
                                return DecodeConsensusKey(reader, b, ProtoPath{&path, "pub_key"},
                                                          &m.pub_key);
                              case 3: m.power = static_cast<std::int64_t>(v); break;
                              case 4: m.moniker = std::string(b); break;
                              case 5: operator_address = b; break;
                            }
                            return true;
                          });
    if (!ok) return false;
    m.authority_address = std::string(authority);
    if (!reader.DecodeAddress(authority, path, "authority", &m.authority)) return false;
    if (!operator_address.empty()) {
      m.operator_address_text = std::string(operator_address);
      if (!reader.DecodeAddress(operator_address, path, "operator", &m.operator_address)) {
        return false;
      }
    }
    *out = std::move(m);
    return true;
  }
  if (type_url == MsgUpdateAuthority::kTypeUrl) {
    MsgUpdateAuthority m;
    std::string_view authority, new_authority;
    bool ok = reader.Walk(data, kMsgUpdateAuthoritySpec, path,
                          [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
                            (f.number == 1 ? authority : new_authority) = b;
                            return true;
                          });
    if (!ok) return false;
    m.authority_address = std::string(authority);
    m.new_authority_address = std::string(new_authority);
    if (!reader.DecodeAddress(authority, path, "authority", &m.authority) ||
        !reader.DecodeAddress(new_authority, path, "new authority", &m.new_authority)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  if (type_url == MsgUpdateParams::kTypeUrl) {
    MsgUpdateParams m;
    auto decode_params = [&](std::string_view b, const ProtoPath& at) {
      return reader.Walk(b, kParamsSpec, at,
                         [&](const FieldSpec&, std::uint64_t v, std::string_view) {
                           if (v > std::numeric_limits<std::uint32_t>::max()) {
                             return reader.FailAt(at, kParamsSpec, "max_validators", 1,
                                                  "not a uint32: " + std::to_string(v));
                           }
                           m.params.max_validators = static_cast<std::uint32_t>(v);
                           return true;
                         });
    };
    if (!DecodeUpdateParams(reader, data, path, &m.authority_address, &m.authority,
                            decode_params)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  return reader.Fail(ante::kTxDecode, "unable to resolve type URL " + ProtoReader::Quote(type_url) +
                                          " in " + path.Render());
}

}  // namespace kairos::app::poa
