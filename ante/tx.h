// Tx: a decoded, canonically encoded Cosmos SDK transaction (TxRaw -> TxBody + AuthInfo), as the
// ante pipeline and the message handlers see it. app/tx_codec builds it from bytes; ante/ never
// sees protobuf wire bytes except body_bytes/auth_info_bytes, which the signatures cover. The
// messages are ante::Msg (ante/msg.h): the ante sees their signers and type URLs only; their
// types belong to the modules (app/<module>/msgs.h).
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ante/coins.h"
#include "ante/msg.h"
#include "crypto/keys.h"

namespace kairos::ante {

struct PubKey {
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string key;  // 33 bytes (secp256k1, compressed) or 32 bytes (ed25519)
  bool operator==(const PubKey&) const = default;
};

struct SignerInfo {
  std::optional<PubKey> public_key;  // may be absent once the account has a key in state
  std::uint64_t sequence = 0;
  // ModeInfo.single.mode is SIGN_MODE_DIRECT (else SIGN_MODE_UNSPECIFIED, which only a
  // simulation accepts).
  bool sign_mode_direct = true;
};

struct Tx {
  std::size_t raw_size = 0;     // the size of the TxRaw bytes as received (not kept: only
                                // the size gas needs them, and the caller holds the bytes)
  std::string hash;             // SHA-256(raw), 32 bytes
  std::string body_bytes;       // TxRaw.body_bytes (covered by the signatures)
  std::string auth_info_bytes;  // TxRaw.auth_info_bytes

  // TxBody
  std::vector<Msg> msgs;
  std::vector<std::string> msg_type_urls;  // parallel to msgs
  std::string memo;
  std::uint64_t timeout_height = 0;
  bool unordered = false;
  // TxBody.timeout_timestamp as Unix nanoseconds; nullopt when unset.
  std::optional<std::int64_t> timeout_unix_nanos;
  std::size_t extension_options = 0;               // count; the ante rejects any
  std::size_t non_critical_extension_options = 0;  // count; ignored

  // AuthInfo
  std::vector<SignerInfo> signer_infos;
  Coins fee;
  std::uint64_t gas_limit = 0;
  std::string fee_payer;  // raw address bytes, empty when unset
  std::string fee_granter;

  std::vector<std::string> signatures;  // TxRaw.signatures

  // GetSigners(): the unique message signers in message order, then the fee payer if set and
  // not already one of them. Raw address bytes.
  std::vector<std::string> signers;
  // The account that pays the fee: fee_payer if set, else signers[0] ("" for a tx with no
  // signer at all, which ValidateBasic refuses).
  const std::string& FeePayer() const {
    static const std::string kNone;
    if (!fee_payer.empty()) return fee_payer;
    return signers.empty() ? kNone : signers.front();
  }
};

}  // namespace kairos::ante
