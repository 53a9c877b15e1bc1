// Tx: a decoded, canonically encoded Cosmos SDK transaction (TxRaw -> TxBody + AuthInfo), as the
// ante pipeline and the message handlers see it. app/tx_decoder builds it from bytes; ante/ never
// sees protobuf wire bytes except body_bytes/auth_info_bytes, which the signatures cover.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ante/coins.h"
#include "crypto/keys.h"

namespace kairos::ante {

struct PubKey {
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string key;  // 33 bytes (secp256k1, compressed) or 32 bytes (ed25519)
  bool operator==(const PubKey&) const = default;
};

// cosmos.bank.v1beta1.MsgSend
struct MsgSend {
  std::string from_address;  // bech32 as sent
  std::string to_address;    // bech32 as sent
  std::string from;          // raw 20-byte address (decoded by the decoder)
  std::string to;            // raw address bytes
  Coins amount;
};

// kairos.locks.v1.Slot: a shared variable and, for a map variable, an element key ("" names the
// resource's single variable).
struct LockSlot {
  std::string resource;
  std::string key;
  bool operator==(const LockSlot&) const = default;
};

// kairos.locks.v1 messages (app/locks). `sender_address` is the bech32 as sent, `sender` the
// raw 20-byte address the decoder took from it; likewise for the other addresses.
struct MsgLocksRegister {
  std::string sender_address;
  std::string sender;
};

struct MsgLocksRefundRegistration {
  std::string sender_address;
  std::string sender;
  std::string address_bech32;
  std::string address;
};

struct MsgLocksAcquire {
  std::string sender_address;
  std::string sender;
  std::vector<LockSlot> slots;
  Uint256 max_deposit = 0;
};

enum class LockWriteOp { kUnspecified = 0, kSet = 1, kAdd = 2 };

struct MsgLocksWrite {
  std::string sender_address;
  std::string sender;
  LockSlot slot;
  LockWriteOp op = LockWriteOp::kUnspecified;
  std::int64_t value = 0;  // the new value (kSet) or the signed delta (kAdd)
  Uint256 max_deposit = 0;
};

struct MsgLocksRelease {
  std::string sender_address;
  std::string sender;
  std::string holder_address;
  std::string holder;
};

using Msg = std::variant<MsgSend, MsgLocksRegister, MsgLocksRefundRegistration, MsgLocksAcquire,
                         MsgLocksWrite, MsgLocksRelease>;

// The one signer of a message (raw address bytes): MsgSend's from, every other one's sender.
inline const std::string& SignerOf(const Msg& msg) {
  return std::visit(
      [](const auto& m) -> const std::string& {
        if constexpr (std::is_same_v<std::decay_t<decltype(m)>, MsgSend>) {
          return m.from;
        } else {
          return m.sender;
        }
      },
      msg);
}

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
