// Tx decoding (a canonical-encoding checker and value extractor in one pass over the wire) and
// tx building (generated protobuf types, which serialize canonically).
//
// The decoder never hands the bytes to libprotobuf: it walks the tags of each message against a
// small schema table, which lets it reject every second encoding of the same value (ADR-027)
// and read the values in the same pass. Every message we accept is bounded and non-recursive
// (multisig ModeInfo is refused), so there is no recursion-depth concern.
//
// Thread-safe: pure functions; no shared state.
#include "app/tx_codec.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "ante/errors.h"
#include "ante/sign_doc.h"
#include "app/proto_util.h"
#include "cosmos/bank/v1beta1/tx.pb.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "cosmos/tx/v1beta1/tx.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "kairos/locks/v1/tx.pb.h"
#include "store/varint.h"

namespace kairos::app {
namespace {

// ---------------------------------------------------------------------------------------------
// Schemas

enum class Kind : std::uint8_t {
  kUint64,
  kInt64,
  kInt32,  // also enums: a negative value is sign-extended to 10 bytes
  kBool,
  kString,
  kBytes,
  kMessage,
};

struct FieldSpec {
  std::uint32_t number;
  std::string_view name;
  Kind kind;
  bool repeated = false;
};

struct MessageSpec {
  std::string_view name;
  std::span<const FieldSpec> fields;

  const FieldSpec* Find(std::uint32_t number) const {
    for (const FieldSpec& f : fields) {
      if (f.number == number) return &f;
    }
    return nullptr;
  }
};

constexpr FieldSpec kTxRawFields[] = {
    {1, "body_bytes", Kind::kBytes},
    {2, "auth_info_bytes", Kind::kBytes},
    {3, "signatures", Kind::kBytes, true},
};
constexpr FieldSpec kTxBodyFields[] = {
    {1, "messages", Kind::kMessage, true},
    {2, "memo", Kind::kString},
    {3, "timeout_height", Kind::kUint64},
    {4, "unordered", Kind::kBool},
    {5, "timeout_timestamp", Kind::kMessage},
    {1023, "extension_options", Kind::kMessage, true},
    {2047, "non_critical_extension_options", Kind::kMessage, true},
};
constexpr FieldSpec kAnyFields[] = {
    {1, "type_url", Kind::kString},
    {2, "value", Kind::kBytes},
};
constexpr FieldSpec kTimestampFields[] = {
    {1, "seconds", Kind::kInt64},
    {2, "nanos", Kind::kInt32},
};
constexpr FieldSpec kMsgSendFields[] = {
    {1, "from_address", Kind::kString},
    {2, "to_address", Kind::kString},
    {3, "amount", Kind::kMessage, true},
};
constexpr FieldSpec kLockSlotFields[] = {
    {1, "resource", Kind::kString},
    {2, "key", Kind::kString},
};
constexpr FieldSpec kMsgLocksRegisterFields[] = {
    {1, "sender", Kind::kString},
};
constexpr FieldSpec kMsgLocksRefundRegistrationFields[] = {
    {1, "sender", Kind::kString},
    {2, "address", Kind::kString},
};
constexpr FieldSpec kMsgLocksAcquireFields[] = {
    {1, "sender", Kind::kString},
    {2, "slots", Kind::kMessage, true},
    {3, "max_deposit", Kind::kString},
};
constexpr FieldSpec kMsgLocksWriteFields[] = {
    {1, "sender", Kind::kString},
    {2, "resource", Kind::kString},
    {3, "key", Kind::kString},
    {4, "op", Kind::kInt32},
    {5, "value", Kind::kInt64},
    {6, "max_deposit", Kind::kString},
};
constexpr FieldSpec kMsgLocksReleaseFields[] = {
    {1, "sender", Kind::kString},
    {2, "holder", Kind::kString},
};
constexpr FieldSpec kCoinFields[] = {
    {1, "denom", Kind::kString},
    {2, "amount", Kind::kString},
};
constexpr FieldSpec kAuthInfoFields[] = {
    {1, "signer_infos", Kind::kMessage, true},
    {2, "fee", Kind::kMessage},
    {3, "tip", Kind::kMessage},
};
constexpr FieldSpec kSignerInfoFields[] = {
    {1, "public_key", Kind::kMessage},
    {2, "mode_info", Kind::kMessage},
    {3, "sequence", Kind::kUint64},
};
constexpr FieldSpec kModeInfoFields[] = {
    {1, "single", Kind::kMessage},
    {2, "multi", Kind::kMessage},
};
constexpr FieldSpec kModeInfoSingleFields[] = {
    {1, "mode", Kind::kInt32},
};
constexpr FieldSpec kPubKeyFields[] = {
    {1, "key", Kind::kBytes},
};
constexpr FieldSpec kFeeFields[] = {
    {1, "amount", Kind::kMessage, true},
    {2, "gas_limit", Kind::kUint64},
    {3, "payer", Kind::kString},
    {4, "granter", Kind::kString},
};

constexpr MessageSpec kTxRaw{"TxRaw", kTxRawFields};
constexpr MessageSpec kTxBody{"TxBody", kTxBodyFields};
constexpr MessageSpec kAny{"Any", kAnyFields};
constexpr MessageSpec kTimestamp{"Timestamp", kTimestampFields};
constexpr MessageSpec kMsgSend{"MsgSend", kMsgSendFields};
constexpr MessageSpec kCoin{"Coin", kCoinFields};
constexpr MessageSpec kLockSlot{"Slot", kLockSlotFields};
constexpr MessageSpec kMsgLocksRegister{"MsgRegister", kMsgLocksRegisterFields};
constexpr MessageSpec kMsgLocksRefundRegistration{"MsgRefundRegistration",
                                                  kMsgLocksRefundRegistrationFields};
constexpr MessageSpec kMsgLocksAcquire{"MsgAcquire", kMsgLocksAcquireFields};
constexpr MessageSpec kMsgLocksWrite{"MsgWrite", kMsgLocksWriteFields};
constexpr MessageSpec kMsgLocksRelease{"MsgRelease", kMsgLocksReleaseFields};
constexpr MessageSpec kAuthInfo{"AuthInfo", kAuthInfoFields};
constexpr MessageSpec kSignerInfo{"SignerInfo", kSignerInfoFields};
constexpr MessageSpec kModeInfo{"ModeInfo", kModeInfoFields};
constexpr MessageSpec kModeInfoSingle{"ModeInfo.Single", kModeInfoSingleFields};
constexpr MessageSpec kPubKey{"PubKey", kPubKeyFields};
constexpr MessageSpec kFee{"Fee", kFeeFields};

constexpr std::uint32_t kMaxFieldNumber = (1u << 29) - 1;
constexpr std::uint32_t kNonCriticalBit = 1u << 10;  // the SDK's bit11NonCritical
constexpr std::uint64_t kSignModeDirect = 1;
// google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z.
constexpr std::int64_t kMinTimestampSeconds = -62135596800;
constexpr std::int64_t kMaxTimestampSeconds = 253402300799;
constexpr std::int64_t kNanosPerSecond = 1'000'000'000;

// ---------------------------------------------------------------------------------------------
// Helpers

// Where a message sits in the tx, rendered only when an error is reported.
struct Path {
  const Path* parent = nullptr;
  std::string_view name;
  int index = -1;

  std::string Render() const {
    std::string out = parent ? parent->Render() + "." : std::string();
    out += name;
    if (index >= 0) out += "[" + std::to_string(index) + "]";
    return out;
  }
};

// Text from a tx for a log line (ante::Printable), cut at 96 bytes.
std::string Quote(std::string_view s) { return ante::Printable(s, 96); }

// Strict UTF-8 as Go's utf8.Valid sees it: no overlong forms, no surrogates, <= U+10FFFF.
bool ValidUtf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return false;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return false;
    i += len;
  }
  return true;
}

// Reads a varint. Returns nullptr on success, else what is wrong with it.
const char* ReadVarint(std::string_view& in, std::uint64_t* out) {
  const UvarintResult r = DecodeUvarint(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(in.data()), in.size()));
  if (r.status == UvarintStatus::kTruncated) return "truncated varint";
  if (r.status == UvarintStatus::kOverflow) return "varint overflows 64 bits";
  if (r.length > 1 && in[r.length - 1] == 0) return "non-minimal varint";
  in.remove_prefix(r.length);
  *out = r.value;
  return nullptr;
}

std::string_view WireTypeName(int wt) {
  switch (wt) {
    case 0: return "varint";
    case 1: return "fixed64";
    case 2: return "length-delimited";
    case 3: return "start-group";
    case 4: return "end-group";
    case 5: return "fixed32";
    default: return "invalid";
  }
}

int WireTypeOf(Kind k) {
  switch (k) {
    case Kind::kUint64:
    case Kind::kInt64:
    case Kind::kInt32:
    case Kind::kBool: return 0;
    default: return 2;
  }
}

std::string_view SignModeName(std::uint64_t mode) {
  switch (mode) {
    case 0: return "SIGN_MODE_UNSPECIFIED";
    case 1: return "SIGN_MODE_DIRECT";
    case 2: return "SIGN_MODE_TEXTUAL";
    case 3: return "SIGN_MODE_DIRECT_AUX";
    case 127: return "SIGN_MODE_LEGACY_AMINO_JSON";
    case 191: return "SIGN_MODE_EIP_191";
    default: return {};
  }
}

// GetSigners' list: each address once, in the order first added. The messages, and so the
// candidates, are as many as the tx's bytes allow (the ante's signature limit comes after
// decoding), so past a few a set of the ones seen answers "already there?" instead of a search
// of the list, which would make decoding quadratic in the messages. The set holds views of the
// caller's strings (the tx's messages and fee payer), which outlive it.
class UniqueSigners {
 public:
  explicit UniqueSigners(std::size_t candidates) {
    if (candidates > kScanned) seen_.reserve(candidates);
  }
  // REQUIRES: `address` outlives this object.
  void Add(std::string_view address) {
    if (order_.size() < kScanned) {
      if (std::find(order_.begin(), order_.end(), address) == order_.end()) {
        order_.push_back(address);
      }
      return;
    }
    if (seen_.empty()) seen_.insert(order_.begin(), order_.end());
    if (seen_.insert(address).second) order_.push_back(address);
  }
  std::vector<std::string> List() const { return {order_.begin(), order_.end()}; }

 private:
  static constexpr std::size_t kScanned = 8;
  std::vector<std::string_view> order_;
  // absl's per-process seeded hash: outsiders choose the addresses.
  absl::flat_hash_set<std::string_view, absl::Hash<std::string_view>, std::equal_to<>> seen_;
};

// ---------------------------------------------------------------------------------------------
// The decoder

class Decoder {
 public:
  std::optional<TxError> error;

  bool DecodeTxRaw(std::string_view raw, ante::Tx& tx);

 private:
  // Non-critical unknown fields (number & 1024) are allowed inside the body only, recursively,
  // as the SDK's RejectUnknownFields(body, allowUnknownNonCriticals=true) does.
  bool allow_noncritical_ = false;

  bool Fail(std::uint32_t code, std::string msg) {
    msg += ": ";
    msg += ante::SdkDescription(code);
    error = TxError{code, std::move(msg)};
    return false;
  }
  bool FailAt(const Path& path, const MessageSpec& m, std::string_view field, std::uint32_t number,
              std::string_view problem) {
    std::string msg = path.Render() + ": " + std::string(m.name);
    if (!field.empty()) {
      msg += ".";
      msg += field;
    } else {
      msg += " field";
    }
    msg += " (#" + std::to_string(number) + "): ";
    msg += problem;
    return Fail(ante::kTxDecode, std::move(msg));
  }

  // Walks the fields of one message, enforcing the canonical rules, and calls
  // on_field(spec, varint, bytes) -> bool for every known field.
  template <class OnField>
  bool Walk(std::string_view data, const MessageSpec& m, const Path& path, OnField&& on_field);

  bool DecodeBody(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeAny(std::string_view data, const Path& path, std::string_view* type_url,
                 std::string_view* value);
  bool DecodeMsg(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeMsgSend(std::string_view data, const Path& path, ante::MsgSend& msg);
  // The kairos.locks.v1 messages (app/locks).
  bool DecodeLocksMsg(std::string_view type_url, std::string_view data, const Path& path,
                      ante::Msg* out);
  bool DecodeLockSlot(std::string_view data, const Path& path, ante::LockSlot& slot);
  // A decimal amount field ("" is 0; "0" is a second encoding of it and is refused).
  bool DecodeAmountField(std::string_view text, const Path& path, std::string_view field,
                         ante::Uint256* out);
  bool DecodeCoin(std::string_view data, const Path& path, std::vector<ante::Coin>& out);
  bool MakeCoins(std::vector<ante::Coin> coins, const Path& path, ante::Coins* out);
  bool DecodeTimestamp(std::string_view data, const Path& path, std::int64_t* unix_nanos);
  bool DecodeAuthInfo(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeSignerInfo(std::string_view data, const Path& path, ante::SignerInfo& info);
  bool DecodeModeInfo(std::string_view data, const Path& path, ante::SignerInfo& info);
  bool DecodePubKey(std::string_view data, const Path& path, ante::PubKey& key);
  bool DecodeFee(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeAddress(std::string_view bech32, const Path& path, std::string_view what,
                     std::string* raw);
};

template <class OnField>
bool Decoder::Walk(std::string_view data, const MessageSpec& m, const Path& path,
                   OnField&& on_field) {
  std::uint32_t last = 0;
  while (!data.empty()) {
    std::uint64_t tag;
    if (const char* bad = ReadVarint(data, &tag)) {
      return Fail(ante::kTxDecode, path.Render() + ": " + std::string(m.name) + ": tag: " + bad);
    }
    if ((tag >> 3) == 0 || (tag >> 3) > kMaxFieldNumber) {
      return Fail(ante::kTxDecode, path.Render() + ": " + std::string(m.name) +
                                       ": invalid field number " + std::to_string(tag >> 3));
    }
    const auto number = static_cast<std::uint32_t>(tag >> 3);
    const int wt = static_cast<int>(tag & 7);
    const FieldSpec* f = m.Find(number);
    const std::string_view fname = f ? f->name : std::string_view();
    if (number < last) {
      return FailAt(path, m, fname, number,
                    "fields out of order (after #" + std::to_string(last) + ")");
    }
    if (number == last && !(f && f->repeated)) {
      return FailAt(path, m, fname, number, "duplicate field");
    }
    last = number;

    std::uint64_t varint = 0;
    std::string_view bytes;
    switch (wt) {
      case 0:
        if (const char* bad = ReadVarint(data, &varint)) return FailAt(path, m, fname, number, bad);
        break;
      case 1:
      case 5: {
        const std::size_t size = wt == 1 ? 8 : 4;
        if (data.size() < size) return FailAt(path, m, fname, number, "truncated fixed-size value");
        data.remove_prefix(size);
        break;
      }
      case 2: {
        std::uint64_t len;
        if (const char* bad = ReadVarint(data, &len)) {
          return FailAt(path, m, fname, number, std::string("length: ") + bad);
        }
        if (len > data.size()) return FailAt(path, m, fname, number, "length past the end");
        bytes = data.substr(0, static_cast<std::size_t>(len));
        data.remove_prefix(static_cast<std::size_t>(len));
        break;
      }
      default:
        return FailAt(path, m, fname, number,
                      "wire type " + std::to_string(wt) + " (" +
                          std::string(WireTypeName(wt)) + ") is not allowed");
    }

    if (f == nullptr) {
      if ((number & kNonCriticalBit) != 0 && allow_noncritical_) continue;
      return FailAt(path, m, {}, number,
                    (number & kNonCriticalBit) != 0 ? "unknown non-critical field (only allowed in "
                                                      "the tx body)"
                                                    : "unknown field");
    }
    if (wt != WireTypeOf(f->kind)) {
      return FailAt(path, m, fname, number,
                    "wrong wire type " + std::to_string(wt) + " (" +
                        std::string(WireTypeName(wt)) + "), want " +
                        std::to_string(WireTypeOf(f->kind)) + " (" +
                        std::string(WireTypeName(WireTypeOf(f->kind))) + ")");
    }
    switch (f->kind) {
      case Kind::kUint64:
      case Kind::kInt64:
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (0) written explicitly");
        }
        break;
      case Kind::kInt32:
        if (varint > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()) &&
            varint < 0xFFFF'FFFF'8000'0000ull) {
          return FailAt(path, m, fname, number, "int32 value is not a sign-extended 32-bit value");
        }
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (0) written explicitly");
        }
        break;
      case Kind::kBool:
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (false) written explicitly");
        }
        if (varint > 1) {
          return FailAt(path, m, fname, number, "bool encoded as a value other than 1");
        }
        break;
      case Kind::kString:
        if (!ValidUtf8(bytes)) return FailAt(path, m, fname, number, "string is not valid UTF-8");
        [[fallthrough]];
      case Kind::kBytes:
        if (bytes.empty() && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (empty) written explicitly");
        }
        break;
      case Kind::kMessage:
        break;  // an empty sub-message is a set field, not a default
    }
    if (!on_field(*f, varint, bytes)) return false;
  }
  return true;
}

bool Decoder::DecodeTxRaw(std::string_view raw, ante::Tx& tx) {
  const Path root{nullptr, "tx"};
  if (raw.empty()) return Fail(ante::kTxDecode, "tx bytes are empty");
  std::string_view body, auth_info;
  bool ok = Walk(raw, kTxRaw, root, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    switch (f.number) {
      case 1: body = b; break;
      case 2: auth_info = b; break;
      case 3: tx.signatures.emplace_back(b); break;
    }
    return true;
  });
  if (!ok) return false;
  tx.body_bytes = std::string(body);
  tx.auth_info_bytes = std::string(auth_info);

  allow_noncritical_ = true;
  if (!DecodeBody(body, Path{&root, "body"}, tx)) return false;
  allow_noncritical_ = false;
  if (!DecodeAuthInfo(auth_info, Path{&root, "auth_info"}, tx)) return false;

  // GetSigners: unique message signers in order, then the fee payer if not among them.
  UniqueSigners signers(tx.msgs.size() + 1);
  for (const ante::Msg& msg : tx.msgs) signers.Add(ante::SignerOf(msg));
  if (!tx.fee_payer.empty()) signers.Add(tx.fee_payer);
  tx.signers = signers.List();
  tx.raw_size = raw.size();
  tx.hash = crypto::Sha256(raw);
  return true;
}

bool Decoder::DecodeBody(std::string_view data, const Path& path, ante::Tx& tx) {
  int msg_index = 0;
  return Walk(data, kTxBody, path, [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
    switch (f.number) {
      case 1: return DecodeMsg(b, Path{&path, "messages", msg_index++}, tx);
      case 2: tx.memo = std::string(b); return true;
      case 3: tx.timeout_height = v; return true;
      case 4: tx.unordered = true; return true;
      case 5: {
        std::int64_t nanos;
        if (!DecodeTimestamp(b, Path{&path, "timeout_timestamp"}, &nanos)) return false;
        tx.timeout_unix_nanos = nanos;
        return true;
      }
      case 1023:
      case 2047: {
        // Extension options are counted, not resolved: the ante rejects any extension option
        // (code 31) and ignores non-critical ones. Their Any wrapper must still be canonical.
        std::string_view type_url, value;
        auto& count = f.number == 1023 ? tx.extension_options : tx.non_critical_extension_options;
        if (!DecodeAny(b, Path{&path, f.name, static_cast<int>(count)}, &type_url, &value)) {
          return false;
        }
        ++count;
        return true;
      }
    }
    return true;
  });
}

bool Decoder::DecodeAny(std::string_view data, const Path& path, std::string_view* type_url,
                        std::string_view* value) {
  *type_url = {};
  *value = {};
  return Walk(data, kAny, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    (f.number == 1 ? *type_url : *value) = b;
    return true;
  });
}

bool Decoder::DecodeMsg(std::string_view data, const Path& path, ante::Tx& tx) {
  std::string_view type_url, value;
  if (!DecodeAny(data, path, &type_url, &value)) return false;
  if (type_url == kMsgSendTypeUrl) {
    ante::MsgSend msg;
    if (!DecodeMsgSend(value, path, msg)) return false;
    tx.msgs.emplace_back(std::move(msg));
    tx.msg_type_urls.emplace_back(type_url);
    return true;
  }
  if (type_url.starts_with(kLocksTypeUrlPrefix)) {
    ante::Msg msg;
    if (!DecodeLocksMsg(type_url, value, path, &msg)) return false;
    tx.msgs.push_back(std::move(msg));
    tx.msg_type_urls.emplace_back(type_url);
    return true;
  }
  return Fail(ante::kTxDecode, "unable to resolve type URL " + Quote(type_url) + " in " +
                                   path.Render());
}

bool Decoder::DecodeLocksMsg(std::string_view type_url, std::string_view data, const Path& path,
                             ante::Msg* out) {
  // Every locks message starts with `sender` (#1); the rest are strings, except Acquire's
  // slots, Write's op and value.
  std::string_view sender, second;
  auto read_strings = [&](const MessageSpec& spec) {
    return Walk(data, spec, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
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
    if (!DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (second_raw != nullptr) {
      m.*second_text = std::string(second);
      if (!DecodeAddress(second, path, second_what, &(m.*second_raw))) return false;
    }
    *out = std::move(m);
    return true;
  };
  if (type_url == kMsgLocksRegisterTypeUrl) {
    return addresses(kMsgLocksRegister, ante::MsgLocksRegister{}, "", nullptr, nullptr);
  }
  if (type_url == kMsgLocksRefundRegistrationTypeUrl) {
    using M = ante::MsgLocksRefundRegistration;
    return addresses(kMsgLocksRefundRegistration, M{}, "registration", &M::address_bech32,
                     &M::address);
  }
  if (type_url == kMsgLocksReleaseTypeUrl) {
    using M = ante::MsgLocksRelease;
    return addresses(kMsgLocksRelease, M{}, "holder", &M::holder_address, &M::holder);
  }
  if (type_url == kMsgLocksAcquireTypeUrl) {
    ante::MsgLocksAcquire m;
    std::string_view max_deposit;
    int slot_index = 0;
    bool ok = Walk(data, kMsgLocksAcquire, path,
                   [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
                     switch (f.number) {
                       case 1: sender = b; return true;
                       case 2:
                         return DecodeLockSlot(b, Path{&path, "slots", slot_index++},
                                               m.slots.emplace_back());
                       case 3: max_deposit = b; return true;
                     }
                     return true;
                   });
    if (!ok) return false;
    m.sender_address = std::string(sender);
    if (!DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (!DecodeAmountField(max_deposit, path, "MsgAcquire.max_deposit", &m.max_deposit)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  if (type_url == kMsgLocksWriteTypeUrl) {
    ante::MsgLocksWrite m;
    std::string_view max_deposit;
    std::uint64_t op = 0;
    bool ok = Walk(data, kMsgLocksWrite, path,
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
    if (op != static_cast<std::uint64_t>(ante::LockWriteOp::kSet) &&
        op != static_cast<std::uint64_t>(ante::LockWriteOp::kAdd)) {
      return Fail(ante::kTxDecode,
                  path.Render() + ": MsgWrite.op (#4): unknown WriteOp " +
                      std::to_string(static_cast<std::int32_t>(static_cast<std::uint32_t>(op))) +
                      " (1 set, 2 add)");
    }
    m.op = static_cast<ante::LockWriteOp>(op);
    m.sender_address = std::string(sender);
    if (!DecodeAddress(sender, path, "sender", &m.sender)) return false;
    if (!DecodeAmountField(max_deposit, path, "MsgWrite.max_deposit", &m.max_deposit)) {
      return false;
    }
    *out = std::move(m);
    return true;
  }
  return Fail(ante::kTxDecode, "unable to resolve type URL " + Quote(type_url) + " in " +
                                   path.Render());
}

bool Decoder::DecodeLockSlot(std::string_view data, const Path& path, ante::LockSlot& slot) {
  return Walk(data, kLockSlot, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    (f.number == 1 ? slot.resource : slot.key) = std::string(b);
    return true;
  });
}

bool Decoder::DecodeAmountField(std::string_view text, const Path& path, std::string_view field,
                                ante::Uint256* out) {
  *out = 0;
  if (text.empty()) return true;
  Result<ante::Uint256> parsed = ante::ParseAmount(text);
  if (!parsed.ok()) {
    return Fail(ante::kTxDecode, path.Render() + ": " + std::string(field) + " \"" + Quote(text) +
                                     "\": " + parsed.status().message());
  }
  if (*parsed == 0) {
    return Fail(ante::kTxDecode, path.Render() + ": " + std::string(field) +
                                     " \"0\": zero is written as the empty string");
  }
  *out = *parsed;
  return true;
}

bool Decoder::DecodeMsgSend(std::string_view data, const Path& path, ante::MsgSend& msg) {
  std::vector<ante::Coin> coins;
  int coin_index = 0;
  bool ok = Walk(data, kMsgSend, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    switch (f.number) {
      case 1: msg.from_address = std::string(b); return true;
      case 2: msg.to_address = std::string(b); return true;
      case 3: return DecodeCoin(b, Path{&path, "amount", coin_index++}, coins);
    }
    return true;
  });
  if (!ok) return false;
  if (!DecodeAddress(msg.from_address, path, "from", &msg.from)) return false;
  if (!DecodeAddress(msg.to_address, path, "to", &msg.to)) return false;
  return MakeCoins(std::move(coins), Path{&path, "amount"}, &msg.amount);
}

bool Decoder::DecodeAddress(std::string_view bech32, const Path& path, std::string_view what,
                            std::string* raw) {
  Result<std::string> decoded = crypto::DecodeAccountAddress(bech32);
  if (!decoded.ok()) {
    return Fail(ante::kTxDecode, "invalid " + std::string(what) + " address \"" + Quote(bech32) +
                                     "\" in " + path.Render() + ": " + decoded.status().message());
  }
  *raw = std::move(*decoded);
  return true;
}

bool Decoder::DecodeCoin(std::string_view data, const Path& path, std::vector<ante::Coin>& out) {
  std::string_view denom, amount;
  bool ok = Walk(data, kCoin, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    (f.number == 1 ? denom : amount) = b;
    return true;
  });
  if (!ok) return false;
  ante::Uint256 value = 0;  // an omitted amount is the default, zero
  if (!amount.empty()) {
    Result<ante::Uint256> parsed = ante::ParseAmount(amount);
    if (!parsed.ok()) {
      return Fail(ante::kTxDecode,
                  path.Render() + ": Coin.amount \"" + Quote(amount) + "\": " +
                      parsed.status().message());
    }
    value = *parsed;
  }
  out.push_back(ante::Coin{std::string(denom), value});
  return true;
}

bool Decoder::MakeCoins(std::vector<ante::Coin> coins, const Path& path, ante::Coins* out) {
  Result<ante::Coins> valid = ante::Coins::FromSorted(std::move(coins));
  if (!valid.ok()) {
    return Fail(ante::kInvalidCoins, path.Render() + ": " + valid.status().message());
  }
  *out = std::move(*valid);
  return true;
}

bool Decoder::DecodeTimestamp(std::string_view data, const Path& path, std::int64_t* unix_nanos) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  auto on_field = [&](const FieldSpec& f, std::uint64_t v, std::string_view) {
    if (f.number == 1) {
      seconds = static_cast<std::int64_t>(v);
    } else {
      nanos = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    }
    return true;
  };
  if (!Walk(data, kTimestamp, path, on_field)) return false;
  if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds) {
    return Fail(ante::kTxDecode, path.Render() + ": Timestamp.seconds " + std::to_string(seconds) +
                                     " is outside 0001-01-01..9999-12-31");
  }
  if (nanos < 0 || nanos >= kNanosPerSecond) {
    return Fail(ante::kTxDecode, path.Render() + ": Timestamp.nanos " + std::to_string(nanos) +
                                     " is outside [0, 1e9)");
  }
  // seconds * 1e9 + nanos; for a negative seconds borrow one second first, so INT64_MIN
  // (seconds -9223372037, nanos 145224192) does not overflow in the product.
  if (seconds < 0 && nanos > 0) {
    seconds += 1;
    nanos -= kNanosPerSecond;
  }
  std::int64_t total;
  if (__builtin_mul_overflow(seconds, kNanosPerSecond, &total) ||
      __builtin_add_overflow(total, nanos, &total)) {
    return Fail(ante::kTxDecode, path.Render() + ": timestamp " + std::to_string(seconds) +
                                     "s is outside the int64 Unix-nanosecond range (1677..2262)");
  }
  *unix_nanos = total;
  return true;
}

bool Decoder::DecodeAuthInfo(std::string_view data, const Path& path, ante::Tx& tx) {
  int signer_index = 0;
  return Walk(data, kAuthInfo, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    switch (f.number) {
      case 1: {
        ante::SignerInfo info;
        if (!DecodeSignerInfo(b, Path{&path, "signer_infos", signer_index++}, info)) return false;
        tx.signer_infos.push_back(std::move(info));
        return true;
      }
      case 2: return DecodeFee(b, Path{&path, "fee"}, tx);
      case 3:
        return Fail(ante::kTxDecode, path.Render() + ": AuthInfo.tip (#3): tips are not supported");
    }
    return true;
  });
}

bool Decoder::DecodeSignerInfo(std::string_view data, const Path& path, ante::SignerInfo& info) {
  bool has_mode_info = false;
  auto on_field = [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
    switch (f.number) {
      case 1: {
        ante::PubKey key;
        if (!DecodePubKey(b, Path{&path, "public_key"}, key)) return false;
        info.public_key = std::move(key);
        return true;
      }
      case 2:
        has_mode_info = true;
        return DecodeModeInfo(b, Path{&path, "mode_info"}, info);
      case 3: info.sequence = v; return true;
    }
    return true;
  };
  if (!Walk(data, kSignerInfo, path, on_field)) return false;
  if (!has_mode_info) {
    return Fail(ante::kTxDecode, path.Render() + ": SignerInfo.mode_info (#2) is missing");
  }
  return true;
}

bool Decoder::DecodeModeInfo(std::string_view data, const Path& path, ante::SignerInfo& info) {
  bool seen = false;
  return Walk(data, kModeInfo, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    if (seen) {
      return Fail(ante::kTxDecode, path.Render() + ": ModeInfo: more than one member of oneof sum");
    }
    seen = true;
    if (f.number == 2) {
      return Fail(ante::kNotSupported, path.Render() + ": multisig signers are not supported");
    }
    std::uint64_t mode = 0;
    const Path single{&path, "single"};
    bool ok = Walk(b, kModeInfoSingle, single, [&](const FieldSpec&, std::uint64_t v,
                                                   std::string_view) {
      mode = v;
      return true;
    });
    if (!ok) return false;
    // SIGN_MODE_UNSPECIFIED decodes (CosmJS simulates with it, as the SDK allows); only
    // SigVerification needs DIRECT, and simulate mode skips it.
    info.sign_mode_direct = mode == kSignModeDirect;
    if (mode != kSignModeDirect && mode != 0) {
      std::string_view name = SignModeName(mode);
      return Fail(ante::kNotSupported,
                  single.Render() + ": sign mode " +
                      (name.empty() ? std::to_string(static_cast<std::int32_t>(mode))
                                    : std::string(name)) +
                      " is not supported (only SIGN_MODE_DIRECT)");
    }
    return true;
  }) && (seen || Fail(ante::kTxDecode, path.Render() + ": ModeInfo has no sum (single or multi)"));
}

bool Decoder::DecodePubKey(std::string_view data, const Path& path, ante::PubKey& key) {
  std::string_view type_url, value;
  if (!DecodeAny(data, path, &type_url, &value)) return false;
  std::size_t want;
  if (type_url == kSecp256k1PubKeyTypeUrl) {
    key.type = crypto::KeyType::kSecp256k1;
    want = crypto::kSecp256k1PubKeyBytes;
  } else if (type_url == kEd25519PubKeyTypeUrl) {
    key.type = crypto::KeyType::kEd25519;
    want = crypto::kEd25519PubKeyBytes;
  } else {
    return Fail(ante::kTxDecode, "unable to resolve type URL " + Quote(type_url) + " in " +
                                     path.Render());
  }
  std::string_view bytes;
  bool ok = Walk(value, kPubKey, path, [&](const FieldSpec&, std::uint64_t, std::string_view b) {
    bytes = b;
    return true;
  });
  if (!ok) return false;
  if (bytes.size() != want) {
    return Fail(ante::kInvalidPubKey, path.Render() + ": " + std::string(type_url) + " key is " +
                                          std::to_string(bytes.size()) + " bytes, want " +
                                          std::to_string(want));
  }
  key.key = std::string(bytes);
  return true;
}

bool Decoder::DecodeFee(std::string_view data, const Path& path, ante::Tx& tx) {
  std::vector<ante::Coin> coins;
  std::string_view payer, granter;
  int coin_index = 0;
  bool ok = Walk(data, kFee, path, [&](const FieldSpec& f, std::uint64_t v, std::string_view b) {
    switch (f.number) {
      case 1: return DecodeCoin(b, Path{&path, "amount", coin_index++}, coins);
      case 2: tx.gas_limit = v; return true;
      case 3: payer = b; return true;
      case 4: granter = b; return true;
    }
    return true;
  });
  if (!ok) return false;
  if (!MakeCoins(std::move(coins), Path{&path, "amount"}, &tx.fee)) return false;
  if (!payer.empty() && !DecodeAddress(payer, path, "fee payer", &tx.fee_payer)) return false;
  if (!granter.empty() && !DecodeAddress(granter, path, "fee granter", &tx.fee_granter)) {
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Building

void SetCoins(const ante::Coins& coins,
              google::protobuf::RepeatedPtrField<cosmos::base::v1beta1::Coin>* out) {
  for (const ante::Coin& c : coins.coins()) {
    cosmos::base::v1beta1::Coin* pb = out->Add();
    pb->set_denom(c.denom);
    pb->set_amount(ante::ToString(c.amount));
  }
}

std::string PublicKeyOf(const SignerKey& key) {
  if (key.type == crypto::KeyType::kEd25519) return crypto::Ed25519PublicKey(key.private_key);
  std::optional<std::string> pub = crypto::Secp256k1PublicKey(key.private_key);
  if (!pub) throw std::invalid_argument("invalid secp256k1 private key");
  return *pub;
}

// An address as the message carries it: the bech32 text when set, else that of the raw bytes.
std::string Bech32Of(const std::string& text, const std::string& raw) {
  return text.empty() ? crypto::EncodeAccountAddress(raw) : text;
}

std::string AmountText(const ante::Uint256& v) {
  return v == 0 ? std::string() : ante::ToString(v);
}

void SetSlot(const ante::LockSlot& slot, kairos::locks::v1::Slot* pb) {
  pb->set_resource(slot.resource);
  pb->set_key(slot.key);
}

void PackMsg(const ante::Msg& msg, google::protobuf::Any* any) {
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        namespace lpb = kairos::locks::v1;
        if constexpr (std::is_same_v<T, ante::MsgSend>) {
          cosmos::bank::v1beta1::MsgSend pb;
          pb.set_from_address(Bech32Of(m.from_address, m.from));
          pb.set_to_address(Bech32Of(m.to_address, m.to));
          SetCoins(m.amount, pb.mutable_amount());
          any->set_type_url(std::string(kMsgSendTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        } else if constexpr (std::is_same_v<T, ante::MsgLocksRegister>) {
          lpb::MsgRegister pb;
          pb.set_sender(Bech32Of(m.sender_address, m.sender));
          any->set_type_url(std::string(kMsgLocksRegisterTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        } else if constexpr (std::is_same_v<T, ante::MsgLocksRefundRegistration>) {
          lpb::MsgRefundRegistration pb;
          pb.set_sender(Bech32Of(m.sender_address, m.sender));
          pb.set_address(Bech32Of(m.address_bech32, m.address));
          any->set_type_url(std::string(kMsgLocksRefundRegistrationTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        } else if constexpr (std::is_same_v<T, ante::MsgLocksAcquire>) {
          lpb::MsgAcquire pb;
          pb.set_sender(Bech32Of(m.sender_address, m.sender));
          for (const ante::LockSlot& slot : m.slots) SetSlot(slot, pb.add_slots());
          pb.set_max_deposit(AmountText(m.max_deposit));
          any->set_type_url(std::string(kMsgLocksAcquireTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        } else if constexpr (std::is_same_v<T, ante::MsgLocksWrite>) {
          lpb::MsgWrite pb;
          pb.set_sender(Bech32Of(m.sender_address, m.sender));
          pb.set_resource(m.slot.resource);
          pb.set_key(m.slot.key);
          pb.set_op(static_cast<lpb::WriteOp>(m.op));
          pb.set_value(m.value);
          pb.set_max_deposit(AmountText(m.max_deposit));
          any->set_type_url(std::string(kMsgLocksWriteTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        } else {
          static_assert(std::is_same_v<T, ante::MsgLocksRelease>);
          lpb::MsgRelease pb;
          pb.set_sender(Bech32Of(m.sender_address, m.sender));
          pb.set_holder(Bech32Of(m.holder_address, m.holder));
          any->set_type_url(std::string(kMsgLocksReleaseTypeUrl));
          any->set_value(SerializeDeterministic(pb));
        }
      },
      msg);
}

}  // namespace

std::variant<ante::Tx, TxError> DecodeTx(std::string_view raw) {
  Decoder decoder;
  ante::Tx tx;
  if (!decoder.DecodeTxRaw(raw, tx)) return std::move(*decoder.error);
  return tx;
}

std::string EncodeTxBody(const TxSpec& spec) {
  cosmos::tx::v1beta1::TxBody body;
  for (const ante::Msg& msg : spec.msgs) PackMsg(msg, body.add_messages());
  body.set_memo(spec.memo);
  body.set_timeout_height(spec.timeout_height);
  body.set_unordered(spec.unordered);
  if (spec.timeout_unix_nanos) {
    const std::int64_t n = *spec.timeout_unix_nanos;
    std::int64_t seconds = n / kNanosPerSecond;
    std::int64_t nanos = n % kNanosPerSecond;
    if (nanos < 0) {  // floor division: nanos must be in [0, 1e9)
      seconds -= 1;
      nanos += kNanosPerSecond;
    }
    google::protobuf::Timestamp* ts = body.mutable_timeout_timestamp();
    ts->set_seconds(seconds);
    ts->set_nanos(static_cast<std::int32_t>(nanos));
  }
  return SerializeDeterministic(body);
}

std::string EncodeAuthInfo(const TxSpec& spec, const std::vector<SignerKey>& signers) {
  cosmos::tx::v1beta1::AuthInfo auth;
  for (const SignerKey& signer : signers) {
    cosmos::tx::v1beta1::SignerInfo* info = auth.add_signer_infos();
    if (signer.include_pubkey) {
      std::string pub = PublicKeyOf(signer);
      google::protobuf::Any* any = info->mutable_public_key();
      if (signer.type == crypto::KeyType::kEd25519) {
        cosmos::crypto::ed25519::PubKey pk;
        pk.set_key(pub);
        any->set_type_url(std::string(kEd25519PubKeyTypeUrl));
        any->set_value(SerializeDeterministic(pk));
      } else {
        cosmos::crypto::secp256k1::PubKey pk;
        pk.set_key(pub);
        any->set_type_url(std::string(kSecp256k1PubKeyTypeUrl));
        any->set_value(SerializeDeterministic(pk));
      }
    }
    info->mutable_mode_info()->mutable_single()->set_mode(
        cosmos::tx::signing::v1beta1::SIGN_MODE_DIRECT);
    info->set_sequence(signer.sequence);
  }
  // The fee is always present (as the Go SDK's builder writes it), empty or not.
  cosmos::tx::v1beta1::Fee* fee = auth.mutable_fee();
  SetCoins(spec.fee, fee->mutable_amount());
  fee->set_gas_limit(spec.gas_limit);
  if (!spec.fee_payer.empty()) fee->set_payer(crypto::EncodeAccountAddress(spec.fee_payer));
  if (!spec.fee_granter.empty()) fee->set_granter(crypto::EncodeAccountAddress(spec.fee_granter));
  return SerializeDeterministic(auth);
}

std::string BuildSignedTx(const TxSpec& spec, const std::vector<SignerKey>& signers,
                          std::string_view chain_id) {
  cosmos::tx::v1beta1::TxRaw raw;
  raw.set_body_bytes(EncodeTxBody(spec));
  raw.set_auth_info_bytes(EncodeAuthInfo(spec, signers));
  for (const SignerKey& signer : signers) {
    const std::string doc = ante::SignDocBytes(raw.body_bytes(), raw.auth_info_bytes(), chain_id,
                                               signer.account_number);
    raw.add_signatures(signer.type == crypto::KeyType::kEd25519
                           ? crypto::Ed25519Sign(signer.private_key, doc)
                           : crypto::Secp256k1Sign(signer.private_key, doc));
  }
  return SerializeDeterministic(raw);
}

}  // namespace kairos::app
