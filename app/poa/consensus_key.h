// ConsensusKey: a validator's consensus public key (ed25519 or secp256k1) in the forms the poa
// module meets it: the Cosmos SDK's Any (/cosmos.crypto.ed25519.PubKey, ...) in messages,
// genesis and state; CometBFT's tendermint.crypto.PublicKey in InitChain and validator updates;
// CometBFT's key type names ("ed25519", "secp256k1") in the consensus params; and its
// consensus address (CometBFT's: SHA-256(key)[:20] for ed25519, RIPEMD-160(SHA-256(key)) for
// secp256k1), which keys the validator in the state.
//
// Validator updates: CometBFT v0.38 and v0.40 both encode ValidatorUpdate as {PublicKey pub_key
// = 1 (a oneof: ed25519 = 1, secp256k1 = 2); int64 power = 2} (pub_key_bytes/pub_key_type are
// CometBFT v1.x); test/unit/poa_vectors_test.cc checks our bytes against both versions' Go code.
//
// Value type and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/any.pb.h>

#include "crypto/keys.h"
#include "store/status.h"
#include "tendermint/abci/types.pb.h"

namespace kairos::app::poa {

inline constexpr std::string_view kEd25519PubKeyTypeUrl = "/cosmos.crypto.ed25519.PubKey";
inline constexpr std::string_view kSecp256k1PubKeyTypeUrl = "/cosmos.crypto.secp256k1.PubKey";
// CometBFT's ABCI key type names (types.ABCIPubKeyTypeEd25519, ...), as the consensus params'
// validator.pub_key_types list them.
inline constexpr std::string_view kEd25519KeyType = "ed25519";
inline constexpr std::string_view kSecp256k1KeyType = "secp256k1";

struct ConsensusKey {
  crypto::KeyType type = crypto::KeyType::kEd25519;
  std::string bytes;  // 32 bytes (ed25519) or 33 (compressed secp256k1)
  bool operator==(const ConsensusKey&) const = default;
};

std::string_view KeyTypeName(crypto::KeyType type);  // "ed25519", "secp256k1"
std::string_view KeyTypeUrl(crypto::KeyType type);

// What is wrong with the key's bytes ("" when nothing): the size of its type, and for
// secp256k1 the compressed form's first byte (0x02 or 0x03).
std::string KeyProblem(const ConsensusKey& key);

// REQUIRES: KeyProblem(key) is empty.
std::string ConsensusAddress(const ConsensusKey& key);

google::protobuf::Any ToAny(const ConsensusKey& key);
// The key an Any holds: InvalidArgument saying what is wrong (an unknown type URL, a value that
// is not a PubKey, a KeyProblem).
Result<ConsensusKey> FromAny(std::string_view type_url, std::string_view value);
Result<ConsensusKey> FromAny(const google::protobuf::Any& any);

tendermint::abci::ValidatorUpdate ToValidatorUpdate(const ConsensusKey& key, std::int64_t power);
// A CometBFT public key (InitChain's validators): InvalidArgument for a type other than
// ed25519 and secp256k1 or a KeyProblem.
Result<ConsensusKey> FromCometKey(const tendermint::crypto::PublicKey& pb);

// "ed25519 key <base64>", for logs and errors.
std::string Describe(const ConsensusKey& key);

}  // namespace kairos::app::poa
