// The lease-locks module's messages (kairos.locks.v1), their decoding and encoding.
// ValidateBasic is in msg_server.h.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ante/coins.h"
#include "ante/msg.h"
#include "app/locks/params.h"
#include "app/proto_reader.h"

namespace kairos::app::locks {

inline constexpr std::string_view kTypeUrlPrefix = "/kairos.locks.v1.";

struct LockSlot {
  std::string resource;
  std::string key;
  bool operator==(const LockSlot&) const = default;
};

enum class LockWriteOp { kUnspecified = 0, kSet = 1, kAdd = 2 };

struct MsgRegister {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgRegister";
  std::string sender_address;
  std::string sender;
  const std::string& signer() const { return sender; }
  std::string Encode() const;
};

struct MsgRefundRegistration {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgRefundRegistration";
  std::string sender_address;
  std::string sender;
  std::string address_bech32;
  std::string address;
  const std::string& signer() const { return sender; }
  std::string Encode() const;
};

struct MsgAcquire {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgAcquire";
  std::string sender_address;
  std::string sender;
  std::vector<LockSlot> slots;
  ante::Uint256 max_deposit = 0;
  const std::string& signer() const { return sender; }
  std::string Encode() const;
};

struct MsgWrite {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgWrite";
  std::string sender_address;
  std::string sender;
  LockSlot slot;
  LockWriteOp op = LockWriteOp::kUnspecified;
  std::int64_t value = 0;  // the new value (kSet) or the signed delta (kAdd)
  ante::Uint256 max_deposit = 0;
  const std::string& signer() const { return sender; }
  std::string Encode() const;
};

struct MsgRelease {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgRelease";
  std::string sender_address;
  std::string sender;
  std::string holder_address;
  std::string holder;
  const std::string& signer() const { return sender; }
  std::string Encode() const;
};

// Replaces the module's params; only the chain's authority may send it (msg_server.h).
struct MsgUpdateParams {
  static constexpr std::string_view kTypeUrl = "/kairos.locks.v1.MsgUpdateParams";
  std::string authority_address;  // the bech32 text as sent; empty when built in code
  std::string authority;          // raw
  // As sent, not yet validated; an absent params message decodes as all zero.
  Params params;
  const std::string& signer() const { return authority; }
  std::string Encode() const;
};

// Decodes Any.value of one of the messages above (by type URL) into *out. False with
// reader.error set on a bad encoding or an unknown kairos.locks.v1 type URL.
bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out);

}  // namespace kairos::app::locks
