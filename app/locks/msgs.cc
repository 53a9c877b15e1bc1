#include "app/locks/msgs.h"

#include <utility>

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

}  // namespace

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
  return reader.Fail(ante::kTxDecode, "unable to resolve type URL " + reader.Quote(type_url) + " in " +
                                   path.Render());
}

}  // namespace kairos::app::locks
