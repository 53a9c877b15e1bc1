#include "app/auth/keeper.h"

#include <nlohmann/json.hpp>

#include "ante/errors.h"
#include "ante/wire.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "store/big_endian.h"
#include "store/varint.h"

namespace kairos::app::auth {

namespace {



}  // namespace

std::string AuthKeeper::AccountKey(std::string_view address) {
  std::string key(kAccountPrefix);
  key += address;
  return key;
}

std::string AuthKeeper::UnorderedNonceKey(std::int64_t timeout, std::string_view signer) {
  std::string key(kUnorderedPrefix);
  key += EncodeBigEndian64(static_cast<std::uint64_t>(timeout) ^ (std::uint64_t{1} << 63));
  key += signer;
  return key;
}

std::string AuthKeeper::EncodeParams(const ante::AuthParams& p) {
  nlohmann::json j = {
      {"max_memo_characters", std::to_string(p.max_memo_characters)},
      {"tx_sig_limit", std::to_string(p.tx_sig_limit)},
      {"tx_size_cost_per_byte", std::to_string(p.tx_size_cost_per_byte)},
      {"sig_verify_cost_secp256k1", std::to_string(p.sig_verify_cost_secp256k1)},
      {"sig_verify_cost_ed25519", std::to_string(p.sig_verify_cost_ed25519)},
      {"unordered_enabled", p.unordered_enabled},
      {"unordered_max_timeout_nanos", std::to_string(p.unordered_max_timeout_nanos)},
      {"unordered_gas_cost", std::to_string(p.unordered_gas_cost)},
  };
  return j.dump();  // nlohmann::json objects keep keys sorted: deterministic
}

Result<ante::AuthParams> AuthKeeper::DecodeParams(std::string_view text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    ante::AuthParams p;
    p.max_memo_characters = std::stoull(j.at("max_memo_characters").get<std::string>());
    p.tx_sig_limit = std::stoull(j.at("tx_sig_limit").get<std::string>());
    p.tx_size_cost_per_byte = std::stoull(j.at("tx_size_cost_per_byte").get<std::string>());
    p.sig_verify_cost_secp256k1 =
        std::stoull(j.at("sig_verify_cost_secp256k1").get<std::string>());
    p.sig_verify_cost_ed25519 = std::stoull(j.at("sig_verify_cost_ed25519").get<std::string>());
    p.unordered_enabled = j.at("unordered_enabled").get<bool>();
    p.unordered_max_timeout_nanos =
        std::stoll(j.at("unordered_max_timeout_nanos").get<std::string>());
    p.unordered_gas_cost = std::stoull(j.at("unordered_gas_cost").get<std::string>());
    return p;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("auth params in the state are malformed: ") + e.what());
  }
}

Result<ante::AuthParams> AuthKeeper::ReadParams(const store::KvReader& kv) const {
  std::string value;
  Status s = kv.Get(kParamsKey, &value);
  if (s.IsNotFound()) return params();
  if (!s.ok()) return s;
  return DecodeParams(value);
}

Status AuthKeeper::LoadParams(const store::KvReader& kv) {
  auto p = ReadParams(kv);
  if (!p.ok()) return p.status();
  set_params(*p);
  return Status::OK();
}

Status AuthKeeper::WriteParams(store::KvStore& kv, const ante::AuthParams& p) const {
  return kv.Set(kParamsKey, EncodeParams(p));
}

// BaseAccount is read and written several times per tx (fee, pubkey, signature, sequence), so
// its codec is written out here instead of going through libprotobuf's reflection-free but
// allocating parser. The bytes are exactly SerializeDeterministic(cosmos.auth.v1beta1
// .BaseAccount) (a unit test compares the two): address = 1, pub_key = 2 (Any: type_url = 1,
// value = 2, itself a PubKey{key = 1}), account_number = 3, sequence = 4; defaults omitted.
namespace {

using ante::wire::AppendBytesField;

// One field of a message being read: its number, wire type, and value (the varint, or the
// bytes of a length-delimited field).
struct Field {
  int number = 0;
  int wire_type = 0;
  std::uint64_t varint = 0;
  std::string_view bytes;
};

// Reads the next field; false at the end or on malformed input (`*bad` tells which).
bool NextField(std::string_view& in, Field* f, bool* bad) {
  *bad = false;
  if (in.empty()) return false;
  std::uint64_t tag = 0;
  if (!ReadUvarint(&in, &tag) || (tag >> 3) == 0 || (tag >> 3) > (1u << 29)) {
    *bad = true;
    return false;
  }
  f->number = static_cast<int>(tag >> 3);
  f->wire_type = static_cast<int>(tag & 7);
  if (f->wire_type == 0) {
    if (!ReadUvarint(&in, &f->varint)) *bad = true;
  } else if (f->wire_type == 2) {
    std::uint64_t len = 0;
    if (!ReadUvarint(&in, &len) || len > in.size()) {
      *bad = true;
    } else {
      f->bytes = in.substr(0, len);
      in.remove_prefix(len);
    }
  } else {
    *bad = true;  // BaseAccount has no fixed-width fields
  }
  return !*bad;
}

// The `key` (field 1) of a secp256k1 or ed25519 PubKey message.
bool DecodeKeyMessage(std::string_view msg, std::string* key) {
  key->clear();
  Field f;
  bool bad = false;
  while (NextField(msg, &f, &bad)) {
    if (f.number == 1 && f.wire_type == 2) key->assign(f.bytes);
  }
  return !bad;
}

}  // namespace

namespace {

// The encoded size of a length-delimited field numbered below 16 (a one-byte tag).
std::size_t BytesFieldSize(std::size_t length) { return 1 + UvarintSize(length) + length; }

}  // namespace

std::string AuthKeeper::EncodeAccount(const ante::Account& a) {
  std::string out;
  AppendAccount(a, &out);
  return out;
}

// The nested messages (Any, PubKey) are written in place, their lengths computed first: no
// temporary strings (this runs for every account write, several per tx).
void AuthKeeper::AppendAccount(const ante::Account& a, std::string* out) {
  out->reserve(out->size() + (a.pub_key ? 160 : 80));
  if (a.address_bech32.empty()) {
    AppendBytesField(1, crypto::EncodeAccountAddress(a.address), out);
  } else {
    AppendBytesField(1, a.address_bech32, out);
  }
  if (a.pub_key) {
    const std::string_view type_url = a.pub_key->type == crypto::KeyType::kSecp256k1
                                          ? kSecp256k1PubKeyTypeUrl
                                          : kEd25519PubKeyTypeUrl;
    const std::size_t key_msg =
        a.pub_key->key.empty() ? 0 : BytesFieldSize(a.pub_key->key.size());
    const std::size_t any = BytesFieldSize(type_url.size()) + (key_msg ? BytesFieldSize(key_msg) : 0);
    ante::wire::AppendTag(2, 2, out);
    AppendUvarint(any, out);
    AppendBytesField(1, type_url, out);
    if (key_msg) {
      ante::wire::AppendTag(2, 2, out);
      AppendUvarint(key_msg, out);
      AppendBytesField(1, a.pub_key->key, out);
    }
  }
  if (a.account_number != 0) ante::wire::AppendVarintField(3, a.account_number, out);
  if (a.sequence != 0) ante::wire::AppendVarintField(4, a.sequence, out);
}

Result<ante::Account> AuthKeeper::DecodeAccount(std::string_view bytes,
                                                std::string_view address) {
  ante::Account a;
  a.address = std::string(address);
  Field f;
  bool bad = false;
  while (NextField(bytes, &f, &bad)) {
    if (f.number == 1 && f.wire_type == 2) {
      a.address_bech32.assign(f.bytes);
    } else if (f.number == 3 && f.wire_type == 0) {
      a.account_number = f.varint;
    } else if (f.number == 4 && f.wire_type == 0) {
      a.sequence = f.varint;
    } else if (f.number == 2 && f.wire_type == 2) {
      std::string_view any = f.bytes;
      std::string_view type_url, value;
      Field g;
      while (NextField(any, &g, &bad)) {
        if (g.wire_type != 2) continue;
        if (g.number == 1) type_url = g.bytes;
        if (g.number == 2) value = g.bytes;
      }
      if (bad) break;
      ante::PubKey key;
      if (type_url == kSecp256k1PubKeyTypeUrl) {
        key.type = crypto::KeyType::kSecp256k1;
      } else if (type_url == kEd25519PubKeyTypeUrl) {
        key.type = crypto::KeyType::kEd25519;
      } else {
        return Status::Corruption("an account has an unknown key type " +
                                  ante::Printable(type_url, 96));
      }
      if (!DecodeKeyMessage(value, &key.key)) {
        return Status::Corruption("an account's public key does not parse");
      }
      a.pub_key = std::move(key);
    }
  }
  if (bad) return Status::Corruption("an account in the state does not parse");
  return a;
}

namespace {

// ReadAccount and ReadSequence run several times per CheckTx on the one application thread:
// their key and value buffers keep their capacity between calls instead of allocating.
struct ReadBuffers {
  std::string key;
  std::string value;
};
ReadBuffers& Buffers() {
  thread_local ReadBuffers buffers;
  return buffers;
}

}  // namespace

Result<std::optional<ante::Account>> AuthKeeper::ReadAccount(const store::KvReader& kv,
                                                             std::string_view address,
                                                             std::size_t* stored_bytes) const {
  ReadBuffers& b = Buffers();
  b.key.assign(kAccountPrefix).append(address);
  Status s = kv.Get(b.key, &b.value);
  if (stored_bytes != nullptr) *stored_bytes = b.key.size() + (s.ok() ? b.value.size() : 0);
  if (s.IsNotFound()) return std::optional<ante::Account>();
  if (!s.ok()) return s;
  auto a = DecodeAccount(b.value, address);
  if (!a.ok()) return a.status();
  return std::optional<ante::Account>(std::move(*a));
}

Result<std::uint64_t> AuthKeeper::ReadSequence(const store::KvReader& kv,
                                               std::string_view address) const {
  ReadBuffers& b = Buffers();
  b.key.assign(kAccountPrefix).append(address);
  Status s = kv.Get(b.key, &b.value);
  if (s.IsNotFound()) return std::uint64_t{0};
  if (!s.ok()) return s;
  std::string_view bytes = b.value;
  std::uint64_t sequence = 0;
  Field f;
  bool bad = false;
  while (NextField(bytes, &f, &bad)) {
    if (f.number == 4 && f.wire_type == 0) sequence = f.varint;
  }
  if (bad) return Status::Corruption("an account in the state does not parse");
  return sequence;
}

Result<std::optional<ante::Account>> AuthKeeper::GetAccount(store::KvStore& kv,
                                                            std::string_view address,
                                                            std::size_t* stored_bytes) const {
  return ReadAccount(kv, address, stored_bytes);
}

Status AuthKeeper::SetAccount(store::KvStore& kv, const ante::Account& account,
                              std::size_t* stored_bytes) const {
  thread_local std::string key, value;  // capacity kept between calls: no allocation per write
  key.assign(kAccountPrefix).append(account.address);
  value.clear();
  AppendAccount(account, &value);
  if (stored_bytes != nullptr) *stored_bytes = key.size() + value.size();
  return kv.Set(key, value);
}

Result<std::uint64_t> AuthKeeper::AccountCount(const store::KvReader& kv) const {
  std::string value;
  std::uint64_t next = 0;
  Status s = kv.Get(kNextAccountNumberKey, &value);
  if (s.ok()) {
    if (!DecodeBigEndian64(value, &next)) {
      return Status::Corruption("auth/next_account_number is malformed");
    }
  } else if (!s.IsNotFound()) {
    return s;
  }
  return next;
}

Status AuthKeeper::SetAccountCount(store::KvStore& kv, std::uint64_t next) const {
  return kv.Set(kNextAccountNumberKey, EncodeBigEndian64(next));
}

Result<std::vector<ante::Account>> AuthKeeper::ListAccounts(const store::KvReader& kv) const {
  std::vector<ante::Account> out;
  auto it = kv.Iterate(kAccountPrefix, store::PrefixEnd(kAccountPrefix));
  for (; it->Valid(); it->Next()) {
    auto a = DecodeAccount(it->value(), it->key().substr(kAccountPrefix.size()));
    if (!a.ok()) return a.status();
    out.push_back(std::move(*a));
  }
  if (!it->status().ok()) return it->status();
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> AuthKeeper::ListUnorderedNonces(
    const store::KvReader& kv) const {
  std::vector<std::pair<std::string, std::int64_t>> out;
  auto it = kv.Iterate(kUnorderedPrefix, store::PrefixEnd(kUnorderedPrefix));
  for (; it->Valid(); it->Next()) {
    std::string_view rest = it->key().substr(kUnorderedPrefix.size());
    std::uint64_t flipped = 0;
    if (rest.size() < 8 || !DecodeBigEndian64(rest.substr(0, 8), &flipped)) {
      return Status::Corruption("an unordered nonce key in the state is malformed");
    }
    out.emplace_back(std::string(rest.substr(8)),
                     static_cast<std::int64_t>(flipped ^ (std::uint64_t{1} << 63)));
  }
  if (!it->status().ok()) return it->status();
  return out;
}

Result<ante::Account> AuthKeeper::NewAccount(store::KvStore& kv, std::string_view address) const {
  auto count = AccountCount(kv);
  if (!count.ok()) return count.status();
  const std::uint64_t next = *count;
  if (Status w = kv.Set(kNextAccountNumberKey, EncodeBigEndian64(next + 1)); !w.ok()) return w;
  ante::Account a;
  a.address = std::string(address);
  a.account_number = next;
  if (Status w = SetAccount(kv, a); !w.ok()) return w;
  return a;
}

Result<bool> AuthKeeper::HasUnorderedNonce(const store::KvReader& kv, std::string_view signer,
                                           std::int64_t timeout) const {
  std::string value;
  Status s = kv.Get(UnorderedNonceKey(timeout, signer), &value);
  if (s.ok()) return true;
  if (s.IsNotFound()) return false;
  return s;
}

Result<bool> AuthKeeper::TryAddUnorderedNonce(store::KvStore& kv, std::string_view signer,
                                              std::int64_t timeout) const {
  const std::string key = UnorderedNonceKey(timeout, signer);
  std::string value;
  Status s = kv.Get(key, &value);
  if (s.ok()) return false;
  if (!s.IsNotFound()) return s;
  if (Status w = kv.Set(key, "\x01"); !w.ok()) return w;
  return true;
}

Status AuthKeeper::RemoveUnorderedNonce(store::KvStore& kv, std::string_view signer,
                                        std::int64_t timeout) const {
  Status s = kv.Delete(UnorderedNonceKey(timeout, signer));
  return s.IsNotFound() ? Status::OK() : s;
}

Result<std::optional<std::uint64_t>> AuthKeeper::SetSequence(store::KvStore& kv,
                                                             std::string_view address,
                                                             std::uint64_t sequence) const {
  auto acc = ReadAccount(kv, address);
  if (!acc.ok()) return acc.status();
  if (!*acc) return std::optional<std::uint64_t>();
  const std::uint64_t previous = (*acc)->sequence;
  (*acc)->sequence = sequence;
  if (Status s = SetAccount(kv, **acc); !s.ok()) return s;
  return std::optional<std::uint64_t>(previous);
}

Status AuthKeeper::DecrementSequence(store::KvStore& kv, std::string_view address) const {
  auto acc = ReadAccount(kv, address);
  if (!acc.ok()) return acc.status();
  if (!*acc || (*acc)->sequence == 0) return Status::OK();
  --(*acc)->sequence;
  return SetAccount(kv, **acc);
}

Result<std::size_t> AuthKeeper::RemoveExpiredUnorderedNonces(store::KvStore& kv,
                                                             std::int64_t block_time) const {
  // Every key whose 8-byte timeout is <= block_time: [prefix, PrefixEnd(prefix || BE(t))).
  const std::string bound = UnorderedNonceKey(block_time, /*signer=*/"");
  std::vector<std::string> expired;
  {
    auto it = kv.Iterate(kUnorderedPrefix, store::PrefixEnd(bound));
    for (; it->Valid(); it->Next()) expired.emplace_back(it->key());
    if (!it->status().ok()) return it->status();
  }
  for (const std::string& key : expired) {
    if (Status s = kv.Delete(key); !s.ok()) return s;
  }
  return expired.size();
}

}  // namespace kairos::app::auth
