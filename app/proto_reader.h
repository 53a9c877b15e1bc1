// ProtoReader: reads protobuf messages strictly canonical (ADR-027), against a small schema
// table, and reads their values in the same pass. The tx decoder (app/tx_codec.cc) and every
// module's message decoder (Module::DecodeMsg) use it, so every message of a tx is held to the
// same rules: fields in order, no duplicate of a non-repeated field, no explicit default, valid
// UTF-8 strings, minimal varints, unknown fields refused (non-critical ones only in the tx body).
// An error names the field path ("tx.body.messages[0]: MsgSend.amount (#3): ...").
//
// Thread-safety: a ProtoReader is used by one thread at a time; the schema tables are constants.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ante/coins.h"
#include "ante/errors.h"

namespace kairos::app {

// A tx (or message) that cannot be decoded: an sdk code (2 mostly) and the log.
struct TxError {
  std::uint32_t code = 2;
  std::string log;
};

enum class ProtoKind : std::uint8_t {
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
  ProtoKind kind;
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

// Where a message sits in the tx, rendered only when an error is reported.
struct ProtoPath {
  const ProtoPath* parent = nullptr;
  std::string_view name;
  int index = -1;

  std::string Render() const {
    std::string out;
    AppendTo(&out);
    return out;
  }
  void AppendTo(std::string* out) const {
    if (parent != nullptr) {
      parent->AppendTo(out);
      out->push_back('.');
    }
    out->append(name);
    if (index >= 0) {
      out->push_back('[');
      out->append(std::to_string(index));
      out->push_back(']');
    }
  }
};

// Strict UTF-8 as Go's utf8.Valid sees it: no overlong forms, no surrogates, <= U+10FFFF.
bool ValidUtf8(std::string_view s);
// Reads a protobuf varint (minimal encoding only). nullptr on success, else what is wrong.
const char* ReadProtoVarint(std::string_view& in, std::uint64_t* out);
std::string_view WireTypeName(int wire_type);
int WireTypeOf(ProtoKind k);

class ProtoReader {
 public:
  std::optional<TxError> error;

  // Walks the fields of one message, enforcing the canonical rules, and calls
  // on_field(spec, varint, bytes) -> bool for every known field.
  template <class OnField>
  bool Walk(std::string_view data, const MessageSpec& m, const ProtoPath& path,
            OnField&& on_field);

  // Sets `error` (code, msg + ": " + the code's description) and returns false.
  bool Fail(std::uint32_t code, std::string msg);
  // A code-2 error at a field: "<path>: <Message>.<field> (#n): <problem>".
  bool FailAt(const ProtoPath& path, const MessageSpec& m, std::string_view field,
              std::uint32_t number, std::string_view problem);

  // A google.protobuf.Any's type URL and value.
  bool DecodeAny(std::string_view data, const ProtoPath& path, std::string_view* type_url,
                 std::string_view* value);
  // A bech32 account address ("kairos1...") into raw bytes; `what` names it in the error.
  bool DecodeAddress(std::string_view bech32, const ProtoPath& path, std::string_view what,
                     std::string* raw);
  // One cosmos.base.v1beta1.Coin, appended to `out` (not yet checked as a set).
  bool DecodeCoin(std::string_view data, const ProtoPath& path, std::vector<ante::Coin>& out);
  // Coins as the SDK validates them: sorted, no duplicate, no zero (code 10).
  bool MakeCoins(std::vector<ante::Coin> coins, const ProtoPath& path, ante::Coins* out);
  // A decimal amount field ("" is 0; "0" is a second encoding of it and is refused).
  bool DecodeAmountField(std::string_view text, const ProtoPath& path, std::string_view field,
                         ante::Uint256* out);

  // Text from a tx for a log line (ante::Printable), cut at 96 bytes.
  static std::string Quote(std::string_view s);

 protected:
  // Non-critical unknown fields (number & 1024) are allowed inside the tx body only,
  // recursively, as the SDK's RejectUnknownFields(body, allowUnknownNonCriticals=true) does.
  bool allow_noncritical_ = false;

 private:
  static constexpr std::uint32_t kMaxFieldNumber = (1u << 29) - 1;
  static constexpr std::uint32_t kNonCriticalBit = 1u << 10;  // the SDK's bit11NonCritical
};

template <class OnField>
bool ProtoReader::Walk(std::string_view data, const MessageSpec& m, const ProtoPath& path,
                   OnField&& on_field) {
  std::uint32_t last = 0;
  while (!data.empty()) {
    std::uint64_t tag;
    if (const char* bad = ReadProtoVarint(data, &tag)) {
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
        if (const char* bad = ReadProtoVarint(data, &varint)) return FailAt(path, m, fname, number, bad);
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
        if (const char* bad = ReadProtoVarint(data, &len)) {
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
      case ProtoKind::kUint64:
      case ProtoKind::kInt64:
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (0) written explicitly");
        }
        break;
      case ProtoKind::kInt32:
        if (varint > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()) &&
            varint < 0xFFFF'FFFF'8000'0000ull) {
          return FailAt(path, m, fname, number, "int32 value is not a sign-extended 32-bit value");
        }
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (0) written explicitly");
        }
        break;
      case ProtoKind::kBool:
        if (varint == 0 && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (false) written explicitly");
        }
        if (varint > 1) {
          return FailAt(path, m, fname, number, "bool encoded as a value other than 1");
        }
        break;
      case ProtoKind::kString:
        if (!ValidUtf8(bytes)) return FailAt(path, m, fname, number, "string is not valid UTF-8");
        [[fallthrough]];
      case ProtoKind::kBytes:
        if (bytes.empty() && !f->repeated) {
          return FailAt(path, m, fname, number, "default value (empty) written explicitly");
        }
        break;
      case ProtoKind::kMessage:
        break;  // an empty sub-message is a set field, not a default
    }
    if (!on_field(*f, varint, bytes)) return false;
  }
  return true;
}


}  // namespace kairos::app
