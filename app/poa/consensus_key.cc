#include "app/poa/consensus_key.h"

#include "app/proto_util.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "crypto/base64.h"

namespace kairos::app::poa {

std::string_view KeyTypeName(crypto::KeyType type) {
  return type == crypto::KeyType::kEd25519 ? kEd25519KeyType : kSecp256k1KeyType;
}

std::string_view KeyTypeUrl(crypto::KeyType type) {
  return type == crypto::KeyType::kEd25519 ? kEd25519PubKeyTypeUrl : kSecp256k1PubKeyTypeUrl;
}

std::string KeyProblem(const ConsensusKey& key) {
  const std::size_t want = key.type == crypto::KeyType::kEd25519 ? crypto::kEd25519PubKeyBytes
                                                                 : crypto::kSecp256k1PubKeyBytes;
  if (key.bytes.size() != want) {
    return std::string(KeyTypeName(key.type)) + " key is " + std::to_string(key.bytes.size()) +
           " bytes, want " + std::to_string(want);
  }
  if (key.type == crypto::KeyType::kSecp256k1 && key.bytes[0] != 0x02 && key.bytes[0] != 0x03) {
    return "secp256k1 key is not compressed (first byte 0x02 or 0x03)";
  }
  return {};
}

std::string ConsensusAddress(const ConsensusKey& key) {
  return crypto::AddressOf(key.type, key.bytes);
}

google::protobuf::Any ToAny(const ConsensusKey& key) {
  google::protobuf::Any any;
  any.set_type_url(std::string(KeyTypeUrl(key.type)));
  if (key.type == crypto::KeyType::kEd25519) {
    cosmos::crypto::ed25519::PubKey pb;
    pb.set_key(key.bytes);
    any.set_value(SerializeDeterministic(pb));
  } else {
    cosmos::crypto::secp256k1::PubKey pb;
    pb.set_key(key.bytes);
    any.set_value(SerializeDeterministic(pb));
  }
  return any;
}

Result<ConsensusKey> FromAny(std::string_view type_url, std::string_view value) {
  ConsensusKey key;
  if (type_url == kEd25519PubKeyTypeUrl) {
    key.type = crypto::KeyType::kEd25519;
  } else if (type_url == kSecp256k1PubKeyTypeUrl) {
    key.type = crypto::KeyType::kSecp256k1;
  } else {
    return Status::InvalidArgument("type URL \"" + std::string(type_url) +
                                   "\" is not a consensus key type (" +
                                   std::string(kEd25519PubKeyTypeUrl) + " or " +
                                   std::string(kSecp256k1PubKeyTypeUrl) + ")");
  }
  // Both PubKey messages are {bytes key = 1}.
  cosmos::crypto::ed25519::PubKey pb;
  if (!pb.ParseFromString(std::string(value)) || SerializeDeterministic(pb) != value) {
    return Status::InvalidArgument("the value is not a canonical " + std::string(type_url));
  }
  key.bytes = pb.key();
  if (std::string problem = KeyProblem(key); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  return key;
}

Result<ConsensusKey> FromAny(const google::protobuf::Any& any) {
  return FromAny(any.type_url(), any.value());
}

tendermint::abci::ValidatorUpdate ToValidatorUpdate(const ConsensusKey& key, std::int64_t power) {
  tendermint::abci::ValidatorUpdate u;
  if (key.type == crypto::KeyType::kEd25519) {
    u.mutable_pub_key()->set_ed25519(key.bytes);
  } else {
    u.mutable_pub_key()->set_secp256k1(key.bytes);
  }
  u.set_power(power);
  return u;
}

Result<ConsensusKey> FromCometKey(const tendermint::crypto::PublicKey& pb) {
  ConsensusKey key;
  switch (pb.sum_case()) {
    case tendermint::crypto::PublicKey::kEd25519:
      key = {crypto::KeyType::kEd25519, pb.ed25519()};
      break;
    case tendermint::crypto::PublicKey::kSecp256K1:
      key = {crypto::KeyType::kSecp256k1, pb.secp256k1()};
      break;
    default:
      return Status::InvalidArgument(
          "a key type other than ed25519 and secp256k1 (the poa module knows only those)");
  }
  if (std::string problem = KeyProblem(key); !problem.empty()) {
    return Status::InvalidArgument(problem);
  }
  return key;
}

std::string Describe(const ConsensusKey& key) {
  return std::string(KeyTypeName(key.type)) + " key " + crypto::Base64Encode(key.bytes);
}

}  // namespace kairos::app::poa
