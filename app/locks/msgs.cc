#include "app/locks/msgs.h"

#include <limits>
#include <utility>

#include "app/authority_msg.h"
#include "app/proto_util.h"
#include "kairos/locks/v1/tx.pb.h"

namespace kairos::app::locks {

namespace {

constexpr FieldSpec kLockSlotFields[] = {
    {1, "resource", ProtoKind::kString},
    {2, "key", ProtoKind::kString},
};
constexpr FieldSpec kMsgRegisterFields[] = {
    {1, "sender", ProtoKind::kString},
};
constexpr FieldSpec kMsgRefundRegistrationFields[] = {
    {1, "sender", ProtoKind::kString},
    {2, "address", ProtoKind::kString},
};
constexpr FieldSpec kMsgAcquireFields[] = {
    {1, "sender", ProtoKind::kString},
    {2, "slots", ProtoKind::kMessage, true},
    {3, "max_deposit", ProtoKind::kString},
};
constexpr FieldSpec kMsgWriteFields[] = {
    {1, "sender", ProtoKind::kString},
    {2, "resource", ProtoKind::kString},
    {3, "key", ProtoKind::kString},
    {4, "op", ProtoKind::kInt32},
    {5, "value", ProtoKind::kInt64},
    {6, "max_deposit", ProtoKind::kString},
};
constexpr FieldSpec kMsgReleaseFields[] = {
    {1, "sender", ProtoKind::kString},
    {2, "holder", ProtoKind::kString},
};
constexpr FieldSpec kParamsFields[] = {
    {1, "session_period", ProtoKind::kUint64},
    {2, "cooloff_period", ProtoKind::kUint64},
    {3, "whitelist_period", ProtoKind::kUint64},
    {4, "refund_holding_period", ProtoKind::kUint64},
    {5, "base_deposit", ProtoKind::kString},
    {6, "whitelist_fee", ProtoKind::kString},
    {7, "max_locks_per_session", ProtoKind::kUint64},
    {8, "scale_refund", ProtoKind::kBool},
    {9, "release_bounty_bps", ProtoKind::kUint64},
    {10, "forfeit_sink", ProtoKind::kString},
    {11, "end_block_cleanup_limit", ProtoKind::kUint64},
};
constexpr MessageSpec kParamsSpec{"Params", kParamsFields};
constexpr MessageSpec kLockSlotSpec{"Slot", kLockSlotFields};
constexpr MessageSpec kMsgRegisterSpec{"MsgRegister", kMsgRegisterFields};
constexpr MessageSpec kMsgRefundRegistrationSpec{"MsgRefundRegistration",
                                                 kMsgRefundRegistrationFields};
constexpr MessageSpec kMsgAcquireSpec{"MsgAcquire", kMsgAcquireFields};
constexpr MessageSpec kMsgWriteSpec{"MsgWrite", kMsgWriteFields};
constexpr MessageSpec kMsgReleaseSpec{"MsgRelease", kMsgReleaseFields};

namespace lpb = kairos::locks::v1;

void SetSlot(const LockSlot& slot, lpb::Slot* pb) {
  pb->set_resource(slot.resource);
  pb->set_key(slot.key);
}

bool DecodeLockSlot(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                    LockSlot& slot) {
  return reader.Walk(data, kLockSlotSpec, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    (f.number == 1 ? slot.resource : slot.key) = std::string(b);
    return true;
  });
}

// kairos.locks.v1.Params, canonical, into *out (then FromProto: a period past int64 or a bad
// amount is a decode error naming the field).
bool DecodeParams(ProtoReader& reader, std::string_view data, const ProtoPath& path,
                  Params* out) {
  lpb::Params pb;
  bool ok = reader.Walk(data, kParamsSpec, path,
                        [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
                          switch (f.number) {
                            case 1: pb.set_session_period(v); break;
                            case 2: pb.set_cooloff_period(v); break;
                            case 3: pb.set_whitelist_period(v); break;
                            case 4: pb.set_refund_holding_period(v); break;
                            case 5: pb.set_base_deposit(std::string(b)); break;
                            case 6: pb.set_whitelist_fee(std::string(b)); break;
                            case 7: pb.set_max_locks_per_session(v); break;
                            case 8: pb.set_scale_refund(v != 0); break;
                            case 9:
                              if (v > std::numeric_limits<std::uint32_t>::max()) {
                                return reader.FailAt(path, kParamsSpec, f.name, f.number,
                                                     "not a uint32: " + std::to_string(v));
                              }
                              pb.set_release_bounty_bps(static_cast<std::uint32_t>(v));
                              break;
                            case 10: pb.set_forfeit_sink(std::string(b)); break;
                            case 11: pb.set_end_block_cleanup_limit(v); break;
                          }
                          return true;
                        });
  if (!ok) return false;
  auto params = FromProto(pb);
  if (!params.ok()) {
    return reader.Fail(ante::kTxDecode, path.Render() + ": " + params.status().message());
  }
  *out = std::move(*params);
  return true;
}

}  // namespace

std::string MsgUpdateParams::Encode() const {
  lpb::MsgUpdateParams pb;
  pb.set_authority(AddressText(authority_address, authority));
  *pb.mutable_params() = ToProto(params);
  return SerializeDeterministic(pb);
}

std::string MsgRegister::Encode() const {
  lpb::MsgRegister pb;
  pb.set_sender(AddressText(sender_address, sender));
  return SerializeDeterministic(pb);
}

std::string MsgRefundRegistration::Encode() const {
  lpb::MsgRefundRegistration pb;
  pb.set_sender(AddressText(sender_address, sender));
  pb.set_address(AddressText(address_bech32, address));
  return SerializeDeterministic(pb);
}

std::string MsgAcquire::Encode() const {
  lpb::MsgAcquire pb;
  pb.set_sender(AddressText(sender_address, sender));
  for (const LockSlot& slot : slots) SetSlot(slot, pb.add_slots());
  pb.set_max_deposit(AmountText(max_deposit));
  return SerializeDeterministic(pb);
}

std::string MsgWrite::Encode() const {
  lpb::MsgWrite pb;
  pb.set_sender(AddressText(sender_address, sender));
  pb.set_resource(slot.resource);
  pb.set_key(slot.key);
  pb.set_op(static_cast<lpb::WriteOp>(op));
  pb.set_value(value);
  pb.set_max_deposit(AmountText(max_deposit));
  return SerializeDeterministic(pb);
}

std::string MsgRelease::Encode() const {
  lpb::MsgRelease pb;
  pb.set_sender(AddressText(sender_address, sender));
  pb.set_holder(AddressText(holder_address, holder));
  return SerializeDeterministic(pb);
}

bool DecodeMsg(ProtoReader& reader, std::string_view type_url, std::string_view data,
               const ProtoPath& path, ante::Msg* out) {
  // Every locks message starts with `sender` (#1); the rest are strings, except Acquire's
  // slots, Write's op and value.
  std::string_view sender, second;
  auto read_strings = [&](const MessageSpec& spec) {
    return reader.Walk(data, spec, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
      (f.number == 1 ? sender : second) = b;
      return true;
    });
  };
  // Register, RefundRegistration and Release hold only addresses: sender and maybe #2.
  auto addresses = [&](const MessageSpec& spec, auto m, std::string_view second_what,
                       std::string decltype(m)::*second_text,
                       std::string decltype(m)::*second_raw) {
    if (!read_strings(spec)) return false;
    m.sender_address = std::string(sender);
    if (!reader.DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (second_raw != nullptr) {
      m.*second_text = std::string(second);
      if (!reader.DecodeAddress(second, path, second_what, &(m.*second_raw))) return false;
    }
    *out = std::move(m);
    return true;
  };
  if (type_url == MsgRegister::kTypeUrl) {
    return addresses(kMsgRegisterSpec, MsgRegister{}, "", nullptr, nullptr);
  }
  if (type_url == MsgRefundRegistration::kTypeUrl) {
    using M = MsgRefundRegistration;
    return addresses(kMsgRefundRegistrationSpec, M{}, "registration", &M::address_bech32,
                     &M::address);
  }
  if (type_url == MsgRelease::kTypeUrl) {
    using M = MsgRelease;
    return addresses(kMsgReleaseSpec, M{}, "holder", &M::holder_address, &M::holder);
  }
  if (type_url == MsgAcquire::kTypeUrl) {
    MsgAcquire m;
    std::string_view max_deposit;
    int slot_index = 0;
    bool ok = reader.Walk(data, kMsgAcquireSpec, path,
                   [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
                     switch (f.number) {
                       case 1: sender = b; return true;
                       case 2:
                         return DecodeLockSlot(reader, b, ProtoPath{&path, "slots", slot_index++},
                                               m.slots.emplace_back());
                       case 3: max_deposit = b; return true;
                     }
                     return true;
                   });
    if (!ok) return false;
    m.sender_address = std::string(sender);
    if (!reader.DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (!reader.DecodeAmountField(max_deposit, path, "MsgAcquire.max_deposit", &m.max_deposit)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  if (type_url == MsgWrite::kTypeUrl) {
    MsgWrite m;
    std::string_view max_deposit;
    std::uint64_t op = 0;
    bool ok = reader.Walk(data, kMsgWriteSpec, path,
                   [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
                     switch (f.number) {
                       case 1: sender = b; break;
                       case 2: m.slot.resource = std::string(b); break;
                       case 3: m.slot.key = std::string(b); break;
                       case 4: op = v; break;
                       case 5: m.value = static_cast<std::int64_t>(v); break;
                       case 6: max_deposit = b; break;
                     }
                     return true;
                   });
    if (!ok) return false;
    if (op != static_cast<std::uint64_t>(LockWriteOp::kSet) &&
        op != static_cast<std::uint64_t>(LockWriteOp::kAdd)) {
      return reader.Fail(ante::kTxDecode,
                  path.Render() + ": MsgWrite.op (#4): unknown WriteOp " +
                      std::to_string(static_cast<std::int32_t>(static_cast<std::uint32_t>(op))) +
                      " (1 set, 2 add)");
    }
    m.op = static_cast<LockWriteOp>(op);
    m.sender_address = std::string(sender);
    if (!reader.DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (!reader.DecodeAmountField(max_deposit, path, "MsgWrite.max_deposit", &m.max_deposit)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  if (type_url == MsgUpdateParams::kTypeUrl) {
    MsgUpdateParams m;
    // An absent params message is all zero (not the defaults), which ValidateBasic refuses.
    m.params = *FromProto(lpb::Params{});
    auto decode_params = [&](std::string_view b, const ProtoPath& at) {
      return DecodeParams(reader, b, at, &m.params);
    };
    if (!DecodeUpdateParams(reader, data, path, &m.authority_address, &m.authority,
                            decode_params)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  return reader.Fail(ante::kTxDecode, "unable to resolve type URL " + reader.Quote(type_url) + " in " +
                                   path.Render());
}

}  // namespace kairos::app::locks
