// Tx decoding and building in the Cosmos SDK v0.53 wire format (TxRaw, SIGN_MODE_DIRECT).
//
// DecodeTx accepts only the canonical encoding (ADR-027), at every level it reads (TxRaw,
// TxBody, Any, MsgSend, the kairos.locks.v1 messages and their Slot, Coin, Timestamp, AuthInfo,
// SignerInfo, ModeInfo, PubKey, Fee):
// fields in ascending order (a repeated field's elements consecutive), minimal varints, no
// default scalar written (0, false, ""), no duplicate singular field or oneof member, the wire
// type of the schema, bools as 1, int32/enums sign-extended, valid UTF-8 in strings, no groups,
// nothing after the last field. Unknown fields are refused, except non-critical ones (field
// number & 1024) inside the body and the messages it carries, as the SDK's RejectUnknownFields
// allows them there. So no valid tx has two encodings.
//
// Codes (codespace sdk), logs "<where>: <what>: <description>" naming the message and field:
//   2  ErrTxDecode: any encoding problem above; unknown message or public key type URL
//      ("unable to resolve type URL ..."); a bad bech32 address ("invalid from address ...",
//      "invalid to address ...", "invalid fee payer address ...", "invalid fee granter
//      address ...", "invalid sender address ...", "invalid holder address ...", "invalid
//      registration address ..."); a coin amount or a locks max_deposit that is not a plain
//      decimal < 2^256 (and a max_deposit "0": zero is the empty string); a MsgWrite.op other
//      than 1 (set) or 2 (add); a Timestamp outside
//      0001..9999, nanos outside [0, 1e9), or outside the int64 Unix-nanosecond range;
//      AuthInfo.tip set; a SignerInfo without mode_info.
//   8  ErrInvalidPubKey: a public key of the wrong length for its type.
//   10 ErrInvalidCoins: MsgSend.amount or Fee.amount not valid coins (denom, order,
//      duplicates, zero amounts): ante::Coins cannot hold invalid coins, so this is checked here.
//   37 ErrNotSupported: multisig ModeInfo, or a sign mode other than SIGN_MODE_DIRECT.
// Not checked here (the ante's ValidateBasic does): at least one message, signature count,
// gas_limit <= 2^63-1, a non-empty MsgSend.amount, the locks messages' ValidateBasic
// (app/locks/msgs.h). Extension options are counted, not resolved.
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ante/tx.h"
#include "app/proto_reader.h"

namespace kairos::app {

inline constexpr std::string_view kSecp256k1PubKeyTypeUrl = "/cosmos.crypto.secp256k1.PubKey";
inline constexpr std::string_view kEd25519PubKeyTypeUrl = "/cosmos.crypto.ed25519.PubKey";

// Decodes TxRaw bytes. On success every field of ante::Tx is filled, including signers.
std::variant<ante::Tx, TxError> DecodeTx(std::string_view raw);

// What a signer needs to sign (also used by tests, the CLI and the benchmarks).
struct SignerKey {
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string private_key;  // 32 bytes
  std::uint64_t account_number = 0;
  std::uint64_t sequence = 0;
  bool include_pubkey = true;
};

struct TxSpec {
  std::vector<ante::Msg> msgs;
  std::string memo;
  std::uint64_t timeout_height = 0;
  bool unordered = false;
  std::optional<std::int64_t> timeout_unix_nanos;
  ante::Coins fee;
  std::uint64_t gas_limit = 200000;
  std::string fee_payer;    // raw bytes, optional
  std::string fee_granter;  // raw bytes, optional
};

// The canonical TxBody / AuthInfo bytes for a spec and its signers (public keys derived from
// the private keys).
std::string EncodeTxBody(const TxSpec& spec);
std::string EncodeAuthInfo(const TxSpec& spec, const std::vector<SignerKey>& signers);
// A complete signed TxRaw: one SIGN_MODE_DIRECT signature per signer, in order.
// Message addresses: the bech32 field (from_address, sender_address, ...) when set, else the
// bech32 of the raw bytes.
// Throws std::invalid_argument for a secp256k1 private key that is not a valid scalar.
std::string BuildSignedTx(const TxSpec& spec, const std::vector<SignerKey>& signers,
                          std::string_view chain_id);

}  // namespace kairos::app
