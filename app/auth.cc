#include "app/auth.h"

#include <nlohmann/json.hpp>

#include "app/big_endian.h"
#include "app/proto_util.h"
#include "app/tx_codec.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "crypto/bech32.h"

namespace kairos::app {

namespace {

constexpr std::string_view kAccountPrefix = "auth/acc/";
constexpr std::string_view kNextAccountNumberKey = "auth/next_account_number";


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

Status AuthKeeper::LoadParams(const store::KvReader& kv) {
  std::string value;
  Status s = kv.Get(kParamsKey, &value);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  auto p = DecodeParams(value);
  if (!p.ok()) return p.status();
  params_ = *p;
  return Status::OK();
}

Status AuthKeeper::SaveParams(store::KvStore& kv) const {
  return kv.Set(kParamsKey, EncodeParams(params_));
}

std::string AuthKeeper::EncodeAccount(const ante::Account& a) {
  cosmos::auth::v1beta1::BaseAccount pb;
  pb.set_address(crypto::EncodeAccountAddress(a.address));
  if (a.pub_key) {
    auto* any = pb.mutable_pub_key();
    if (a.pub_key->type == crypto::KeyType::kSecp256k1) {
      cosmos::crypto::secp256k1::PubKey k;
      k.set_key(a.pub_key->key);
      any->set_type_url(std::string(kSecp256k1PubKeyTypeUrl));
      any->set_value(SerializeDeterministic(k));
    } else {
      cosmos::crypto::ed25519::PubKey k;
      k.set_key(a.pub_key->key);
      any->set_type_url(std::string(kEd25519PubKeyTypeUrl));
      any->set_value(SerializeDeterministic(k));
    }
  }
  pb.set_account_number(a.account_number);
  pb.set_sequence(a.sequence);
  return SerializeDeterministic(pb);
}

Result<ante::Account> AuthKeeper::DecodeAccount(std::string_view bytes,
                                                std::string_view address) {
  cosmos::auth::v1beta1::BaseAccount pb;
  if (!pb.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::Corruption("an account in the state does not parse");
  }
  ante::Account a;
  a.address = std::string(address);
  a.account_number = pb.account_number();
  a.sequence = pb.sequence();
  if (pb.has_pub_key()) {
    ante::PubKey key;
    if (pb.pub_key().type_url() == kSecp256k1PubKeyTypeUrl) {
      cosmos::crypto::secp256k1::PubKey k;
      if (!k.ParseFromString(pb.pub_key().value())) {
        return Status::Corruption("an account's secp256k1 key does not parse");
      }
      key = {crypto::KeyType::kSecp256k1, k.key()};
    } else if (pb.pub_key().type_url() == kEd25519PubKeyTypeUrl) {
      cosmos::crypto::ed25519::PubKey k;
      if (!k.ParseFromString(pb.pub_key().value())) {
        return Status::Corruption("an account's ed25519 key does not parse");
      }
      key = {crypto::KeyType::kEd25519, k.key()};
    } else {
      return Status::Corruption("an account has an unknown key type " + pb.pub_key().type_url());
    }
    a.pub_key = std::move(key);
  }
  return a;
}

Result<std::optional<ante::Account>> AuthKeeper::ReadAccount(const store::KvReader& kv,
                                                             std::string_view address) const {
  std::string value;
  Status s = kv.Get(AccountKey(address), &value);
  if (s.IsNotFound()) return std::optional<ante::Account>();
  if (!s.ok()) return s;
  auto a = DecodeAccount(value, address);
  if (!a.ok()) return a.status();
  return std::optional<ante::Account>(std::move(*a));
}

Result<std::optional<ante::Account>> AuthKeeper::GetAccount(store::KvStore& kv,
                                                            std::string_view address) const {
  return ReadAccount(kv, address);
}

Status AuthKeeper::SetAccount(store::KvStore& kv, const ante::Account& account) const {
  return kv.Set(AccountKey(account.address), EncodeAccount(account));
}

Result<ante::Account> AuthKeeper::NewAccount(store::KvStore& kv, std::string_view address) const {
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

}  // namespace kairos::app
