// See proto_reader.h.
#include "app/proto_reader.h"

#include <utility>

#include "crypto/bech32.h"
#include "store/varint.h"

namespace kairos::app {

namespace {

constexpr FieldSpec kAnyFields[] = {
    {1, "type_url", ProtoKind::kString},
    {2, "value", ProtoKind::kBytes},
};
constexpr FieldSpec kCoinFields[] = {
    {1, "denom", ProtoKind::kString},
    {2, "amount", ProtoKind::kString},
};
constexpr MessageSpec kAny{"Any", kAnyFields};
constexpr MessageSpec kCoin{"Coin", kCoinFields};

}  // namespace

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

const char* ReadProtoVarint(std::string_view& in, std::uint64_t* out) {
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

int WireTypeOf(ProtoKind k) {
  switch (k) {
    case ProtoKind::kUint64:
    case ProtoKind::kInt64:
    case ProtoKind::kInt32:
    case ProtoKind::kBool: return 0;
    default: return 2;
  }
}


bool ProtoReader::Fail(std::uint32_t code, std::string msg) {
  msg += ": ";
  msg += ante::SdkDescription(code);
  error = TxError{code, std::move(msg)};
  return false;
}

bool ProtoReader::FailAt(const ProtoPath& path, const MessageSpec& m, std::string_view field,
                         std::uint32_t number, std::string_view problem) {
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

std::string ProtoReader::Quote(std::string_view s) { return ante::Printable(s, 96); }

bool ProtoReader::DecodeAny(std::string_view data, const ProtoPath& path, std::string_view* type_url,
                        std::string_view* value) {
  *type_url = {};
  *value = {};
  return Walk(data, kAny, path, [&](const FieldSpec& f, std::uint64_t, std::string_view b) {
    (f.number == 1 ? *type_url : *value) = b;
    return true;
  });
}

bool ProtoReader::DecodeAmountField(std::string_view text, const ProtoPath& path, std::string_view field,
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

bool ProtoReader::DecodeAddress(std::string_view bech32, const ProtoPath& path, std::string_view what,
                            std::string* raw) {
  Result<std::string> decoded = crypto::DecodeAccountAddress(bech32);
  if (!decoded.ok()) {
    return Fail(ante::kTxDecode, "invalid " + std::string(what) + " address \"" + Quote(bech32) +
                                     "\" in " + path.Render() + ": " + decoded.status().message());
  }
  *raw = std::move(*decoded);
  return true;
}

bool ProtoReader::DecodeCoin(std::string_view data, const ProtoPath& path, std::vector<ante::Coin>& out) {
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

bool ProtoReader::MakeCoins(std::vector<ante::Coin> coins, const ProtoPath& path, ante::Coins* out) {
  Result<ante::Coins> valid = ante::Coins::FromSorted(std::move(coins));
  if (!valid.ok()) {
    return Fail(ante::kInvalidCoins, path.Render() + ": " + valid.status().message());
  }
  *out = std::move(*valid);
  return true;
}

}  // namespace kairos::app
