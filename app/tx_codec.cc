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
#include "app/module_list.h"
#include "app/proto_util.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "cosmos/tx/v1beta1/tx.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"

namespace kairos::app {
namespace {

using Path = ProtoPath;

// ---------------------------------------------------------------------------------------------
// Schemas

constexpr FieldSpec kTxRawFields[] = {
    {1, "body_bytes", ProtoKind::kBytes},
    {2, "auth_info_bytes", ProtoKind::kBytes},
    {3, "signatures", ProtoKind::kBytes, true},
};
constexpr FieldSpec kTxBodyFields[] = {
    {1, "messages", ProtoKind::kMessage, true},
    {2, "memo", ProtoKind::kString},
    {3, "timeout_height", ProtoKind::kUint64},
    {4, "unordered", ProtoKind::kBool},
    {5, "timeout_timestamp", ProtoKind::kMessage},
    {1023, "extension_options", ProtoKind::kMessage, true},
    {2047, "non_critical_extension_options", ProtoKind::kMessage, true},
};
constexpr FieldSpec kTimestampFields[] = {
    {1, "seconds", ProtoKind::kInt64},
    {2, "nanos", ProtoKind::kInt32},
};
constexpr FieldSpec kAuthInfoFields[] = {
    {1, "signer_infos", ProtoKind::kMessage, true},
    {2, "fee", ProtoKind::kMessage},
    {3, "tip", ProtoKind::kMessage},
};
constexpr FieldSpec kSignerInfoFields[] = {
    {1, "public_key", ProtoKind::kMessage},
    {2, "mode_info", ProtoKind::kMessage},
    {3, "sequence", ProtoKind::kUint64},
};
constexpr FieldSpec kModeInfoFields[] = {
    {1, "single", ProtoKind::kMessage},
    {2, "multi", ProtoKind::kMessage},
};
constexpr FieldSpec kModeInfoSingleFields[] = {
    {1, "mode", ProtoKind::kInt32},
};
constexpr FieldSpec kPubKeyFields[] = {
    {1, "key", ProtoKind::kBytes},
};
constexpr FieldSpec kFeeFields[] = {
    {1, "amount", ProtoKind::kMessage, true},
    {2, "gas_limit", ProtoKind::kUint64},
    {3, "payer", ProtoKind::kString},
    {4, "granter", ProtoKind::kString},
};

constexpr MessageSpec kTxRaw{"TxRaw", kTxRawFields};
constexpr MessageSpec kTxBody{"TxBody", kTxBodyFields};
constexpr MessageSpec kTimestamp{"Timestamp", kTimestampFields};
constexpr MessageSpec kAuthInfo{"AuthInfo", kAuthInfoFields};
constexpr MessageSpec kSignerInfo{"SignerInfo", kSignerInfoFields};
constexpr MessageSpec kModeInfo{"ModeInfo", kModeInfoFields};
constexpr MessageSpec kModeInfoSingle{"ModeInfo.Single", kModeInfoSingleFields};
constexpr MessageSpec kPubKey{"PubKey", kPubKeyFields};
constexpr MessageSpec kFee{"Fee", kFeeFields};

constexpr std::uint64_t kSignModeDirect = 1;
// google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z.
constexpr std::int64_t kMinTimestampSeconds = -62135596800;
constexpr std::int64_t kMaxTimestampSeconds = 253402300799;
constexpr std::int64_t kNanosPerSecond = 1'000'000'000;

// ---------------------------------------------------------------------------------------------
// Helpers

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

class Decoder : public ProtoReader {
 public:
  bool DecodeTxRaw(std::string_view raw, ante::Tx& tx);

 private:
  bool DecodeBody(std::string_view data, const Path& path, ante::Tx& tx);
  // A message: its Any, then the module that owns its type URL decodes the value.
  bool DecodeMsg(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeTimestamp(std::string_view data, const Path& path, std::int64_t* unix_nanos);
  bool DecodeAuthInfo(std::string_view data, const Path& path, ante::Tx& tx);
  bool DecodeSignerInfo(std::string_view data, const Path& path, ante::SignerInfo& info);
  bool DecodeModeInfo(std::string_view data, const Path& path, ante::SignerInfo& info);
  bool DecodePubKey(std::string_view data, const Path& path, ante::PubKey& key);
  bool DecodeFee(std::string_view data, const Path& path, ante::Tx& tx);
};

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

bool Decoder::DecodeMsg(std::string_view data, const Path& path, ante::Tx& tx) {
  std::string_view type_url, value;
  if (!DecodeAny(data, path, &type_url, &value)) return false;
  const Module* module = ModuleList::ForDecoding().ForMsg(type_url);
  if (module == nullptr) {
    return Fail(ante::kTxDecode, "unable to resolve type URL " + Quote(type_url) + " in " +
                                     path.Render());
  }
  ante::Msg msg;
  if (!module->DecodeMsg(type_url, value, *this, path, &msg)) return false;
  tx.msgs.push_back(std::move(msg));
  tx.msg_type_urls.emplace_back(type_url);
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

std::string PublicKeyOf(const SignerKey& key) {
  if (key.type == crypto::KeyType::kEd25519) return crypto::Ed25519PublicKey(key.private_key);
  std::optional<std::string> pub = crypto::Secp256k1PublicKey(key.private_key);
  if (!pub) throw std::invalid_argument("invalid secp256k1 private key");
  return *pub;
}

void PackMsg(const ante::Msg& msg, google::protobuf::Any* any) {
  any->set_type_url(std::string(msg.type_url()));
  any->set_value(msg.Encode());
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
