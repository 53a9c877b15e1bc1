// Tx decoding and building in the Cosmos SDK v0.53 wire format (TxRaw, SIGN_MODE_DIRECT).
//
// DecodeTx accepts only the canonical encoding (ADR-027): fields in ascending order, minimal
// varints, no default values written, no unknown fields except non-critical ones (field number
// with bit 11 set, i.e. >= 1024) in TxBody. So no valid tx has two encodings. Everything that
// fails is code 2 (sdk ErrTxDecode) with a log that names the message and the field.
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ante/tx.h"

namespace kairos::app {

struct TxError {
  std::uint32_t code = 2;
  std::string log;
};

inline constexpr std::string_view kMsgSendTypeUrl = "/cosmos.bank.v1beta1.MsgSend";
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
  std::string fee_payer;  // raw bytes, optional
};

// The canonical TxBody / AuthInfo bytes for a spec and its signers (public keys derived from
// the private keys).
std::string EncodeTxBody(const TxSpec& spec);
std::string EncodeAuthInfo(const TxSpec& spec, const std::vector<SignerKey>& signers);
// A complete signed TxRaw: one SIGN_MODE_DIRECT signature per signer, in order.
std::string BuildSignedTx(const TxSpec& spec, const std::vector<SignerKey>& signers,
                          std::string_view chain_id);

}  // namespace kairos::app
