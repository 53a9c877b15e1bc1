#include "app/bank/keeper.h"

#include <algorithm>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/bank/errors.h"
#include "app/module.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"

namespace kairos::app::bank {

namespace {

constexpr std::string_view kDefaultDenom = "stake";

constexpr std::string_view kBalancePrefix = "bank/bal/";

using ante::TxStatus;


Result<ante::Uint256> ParseStored(const std::string& value, std::string_view what) {
  return BankKeeper::DecodeAmount(value, what);
}

}  // namespace

Result<ante::Uint256> BankKeeper::DecodeAmount(std::string_view value, std::string_view what) {
  auto v = ante::ParseAmount(value);
  if (!v.ok()) return Status::Corruption(std::string(what) + " in the state is malformed");
  return *v;
}

std::string BankKeeper::MetadataKey(std::string_view base_denom) {
  std::string key(kMetadataPrefix);
  key += base_denom;
  return key;
}

Status BankKeeper::SetMetadata(store::KvStore& kv,
                               const cosmos::bank::v1beta1::Metadata& m) const {
  return kv.Set(MetadataKey(m.base()), SerializeDeterministic(m));
}

Result<std::vector<cosmos::bank::v1beta1::Metadata>> BankKeeper::ListMetadata(
    const store::KvReader& kv) const {
  std::vector<cosmos::bank::v1beta1::Metadata> out;
  auto it = kv.Iterate(kMetadataPrefix, store::PrefixEnd(kMetadataPrefix));
  for (; it->Valid(); it->Next()) {
    cosmos::bank::v1beta1::Metadata m;
    const std::string_view value = it->value();
    if (!it->status().ok()) break;
    if (!ParseProto(value, &m)) {
      return Status::Corruption("denom metadata in the state are malformed");
    }
    out.push_back(std::move(m));
  }
  if (!it->status().ok()) return it->status();
  return out;
}

std::string BankKeeper::EncodeParams(const Params& p) {
  // Never empty (a store value cannot be), unlike the protobuf of {false}.
  return nlohmann::json{{"default_send_enabled", p.default_send_enabled}}.dump();
}

Result<Params> BankKeeper::DecodeParams(std::string_view text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    return Params{j.at("default_send_enabled").get<bool>()};
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("bank params in the state are malformed: ") + e.what());
  }
}

Result<Params> BankKeeper::ReadParams(const store::KvReader& kv) const {
  std::string value;
  Status s = kv.Get(kParamsKey, &value);
  if (s.IsNotFound()) return Params{};
  if (!s.ok()) return s;
  return DecodeParams(value);
}

Result<bool> BankKeeper::HasParams(const store::KvReader& kv) const {
  std::string value;
  Status s = kv.Get(kParamsKey, &value);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return s;
  return true;
}

Status BankKeeper::LoadParams(const store::KvReader& kv) {
  auto p = ReadParams(kv);
  if (!p.ok()) return p.status();
  default_send_enabled_.store(p->default_send_enabled, std::memory_order_release);
  return Status::OK();
}

Status BankKeeper::WriteParams(store::KvStore& kv, const Params& p) const {
  return kv.Set(kParamsKey, EncodeParams(p));
}

const std::string& FeeCollectorAddress() {
  static const std::string address = ModuleAddress("fee_collector");
  return address;
}

bool BankKeeper::IsBlockedRecipient(std::string_view address) const {
  return address == FeeCollectorAddress() ||
         std::binary_search(blocked_.begin(), blocked_.end(), address);
}

std::string BankKeeper::BalancePrefix(std::string_view address) {
  std::string key;
  AppendBalanceKey(address, "", &key);  // a balance key without its denom
  return key;
}

std::string BankKeeper::BalanceKey(std::string_view address, std::string_view denom) {
  std::string key;
  AppendBalanceKey(address, denom, &key);
  return key;
}

namespace {

// GetBalance and SetBalance run several times per tx on the application thread: the key is
// built in a buffer that keeps its capacity, not in a new string each time.
std::string& KeyBuffer(std::string_view address, std::string_view denom) {
  thread_local std::string key;
  key.clear();
  BankKeeper::AppendBalanceKey(address, denom, &key);
  return key;
}

}  // namespace

void BankKeeper::AppendBalanceKey(std::string_view address, std::string_view denom,
                                  std::string* out) {
  out->reserve(out->size() + kBalancePrefix.size() + 1 + address.size() + denom.size());
  out->append(kBalancePrefix);
  out->push_back(static_cast<char>(address.size()));
  out->append(address);
  out->append(denom);
}

std::string BankKeeper::SupplyKey(std::string_view denom) {
  std::string key(kSupplyPrefix);
  key += denom;
  return key;
}

Result<ante::Uint256> BankKeeper::GetBalance(const store::KvReader& kv, std::string_view address,
                                             std::string_view denom) const {
  std::string value;
  Status s = kv.Get(KeyBuffer(address, denom), &value);
  if (s.IsNotFound()) return ante::Uint256(0);
  if (!s.ok()) return s;
  return ParseStored(value, "a balance");
}

Result<ante::Coins> BankKeeper::GetAllBalances(const store::KvReader& kv,
                                               std::string_view address) const {
  const std::string prefix = BalancePrefix(address);
  std::vector<ante::Coin> coins;
  auto it = kv.Iterate(prefix, store::PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) {
    auto amount = ParseStored(std::string(it->value()), "a balance");
    if (!amount.ok()) return amount.status();
    coins.push_back({std::string(it->key().substr(prefix.size())), *amount});
  }
  if (!it->status().ok()) return it->status();
  auto result = ante::Coins::FromSorted(std::move(coins));
  if (!result.ok()) return Status::Corruption("balances in the state: " + result.status().message());
  return *result;
}

Result<std::vector<std::pair<std::string, std::vector<ante::Coin>>>> BankKeeper::ListBalances(
    const store::KvReader& kv) const {
  std::vector<std::pair<std::string, std::vector<ante::Coin>>> out;
  auto it = kv.Iterate(kBalancePrefix, store::PrefixEnd(kBalancePrefix));
  for (; it->Valid(); it->Next()) {
    std::string_view rest = it->key().substr(kBalancePrefix.size());
    const std::size_t length = rest.empty() ? 0 : static_cast<unsigned char>(rest[0]);
    if (rest.size() < 1 + length) return Status::Corruption("a balance key is malformed");
    std::string_view address = rest.substr(1, length);
    auto amount = ParseStored(std::string(it->value()), "a balance");
    if (!amount.ok()) return amount.status();
    if (out.empty() || out.back().first != address) {
      out.emplace_back(std::string(address), std::vector<ante::Coin>());
    }
    out.back().second.push_back({std::string(rest.substr(1 + length)), *amount});
  }
  if (!it->status().ok()) return it->status();
  return out;
}

Result<std::vector<ante::Coin>> BankKeeper::ListSupply(const store::KvReader& kv) const {
  std::vector<ante::Coin> out;
  auto it = kv.Iterate(kSupplyPrefix, store::PrefixEnd(kSupplyPrefix));
  for (; it->Valid(); it->Next()) {
    auto amount = ParseStored(std::string(it->value()), "the supply");
    if (!amount.ok()) return amount.status();
    out.push_back({std::string(it->key().substr(kSupplyPrefix.size())), *amount});
  }
  if (!it->status().ok()) return it->status();
  return out;
}

Status BankKeeper::SetBalance(store::KvStore& kv, std::string_view address,
                              const ante::Coin& coin) const {
  const std::string& key = KeyBuffer(address, coin.denom);
  if (coin.amount == 0) return kv.Delete(key);
  return kv.Set(key, ante::ToString(coin.amount));
}

Result<ante::Uint256> BankKeeper::GetSupply(const store::KvReader& kv,
                                            std::string_view denom) const {
  std::string value;
  Status s = kv.Get(SupplyKey(denom), &value);
  if (s.IsNotFound()) return ante::Uint256(0);
  if (!s.ok()) return s;
  return ParseStored(value, "the supply");
}

TxStatus BankKeeper::Mint(store::KvStore& kv, std::string_view address,
                          const ante::Coins& coins) const {
  try {
    for (const ante::Coin& c : coins.coins()) {
      auto balance = GetBalance(kv, address, c.denom);
      if (!balance.ok()) return TxStatus::FromStore(balance.status());
      auto supply = GetSupply(kv, c.denom);
      if (!supply.ok()) return TxStatus::FromStore(supply.status());
      if (Status s = SetBalance(kv, address, {c.denom, *balance + c.amount}); !s.ok()) {
        return TxStatus::FromStore(s);
      }
      if (Status s = kv.Set(SupplyKey(c.denom), ante::ToString(*supply + c.amount)); !s.ok()) {
        return TxStatus::FromStore(s);
      }
    }
  } catch (const std::overflow_error&) {
    return TxStatus::Error(ante::kInvalidCoins, "minting " + coins.ToString() +
                                                    " overflows a 256-bit amount");
  }
  return TxStatus::OK();
}

TxStatus BankKeeper::Move(store::KvStore& kv, std::string_view from, std::string_view to,
                          const ante::Coins& amount, bool fee) const {
  try {
    for (const ante::Coin& c : amount.coins()) {
      auto have = GetBalance(kv, from, c.denom);
      if (!have.ok()) return TxStatus::FromStore(have.status());
      if (*have < c.amount) {
        // Built only here: every fee payment would otherwise format a message it never uses.
        std::string log = fee ? "insufficient funds to pay the fee " + amount.ToString() + ": "
                              : std::string();
        log += "spendable balance " + ante::ToString(*have) + c.denom + " is smaller than " +
               ante::ToString(c.amount) + c.denom;
        return TxStatus::Error(ante::kInsufficientFunds, std::move(log));
      }
      if (Status s = SetBalance(kv, from, {c.denom, *have - c.amount}); !s.ok()) {
        return TxStatus::FromStore(s);
      }
      auto to_have = GetBalance(kv, to, c.denom);
      if (!to_have.ok()) return TxStatus::FromStore(to_have.status());
      if (Status s = SetBalance(kv, to, {c.denom, *to_have + c.amount}); !s.ok()) {
        return TxStatus::FromStore(s);
      }
    }
  } catch (const std::overflow_error&) {
    return TxStatus::Error(ante::kInvalidCoins, "the recipient's balance would overflow");
  }
  return TxStatus::OK();
}

TxStatus BankKeeper::Burn(ante::Context& ctx, std::string_view from,
                          const ante::Coins& amount) const {
  store::KvStore& kv = *ctx.store;
  for (const ante::Coin& c : amount.coins()) {
    auto have = GetBalance(kv, from, c.denom);
    if (!have.ok()) return TxStatus::FromStore(have.status());
    auto supply = GetSupply(kv, c.denom);
    if (!supply.ok()) return TxStatus::FromStore(supply.status());
    if (*have < c.amount || *supply < c.amount) {
      return TxStatus::Error(ante::kInsufficientFunds,
                             "burning: spendable balance " + ante::ToString(*have) + c.denom +
                                 " is smaller than " + ante::ToString(c.amount) + c.denom);
    }
    if (Status s = SetBalance(kv, from, {c.denom, *have - c.amount}); !s.ok()) {
      return TxStatus::FromStore(s);
    }
    if (Status s = kv.Set(SupplyKey(c.denom), ante::ToString(*supply - c.amount)); !s.ok()) {
      return TxStatus::FromStore(s);
    }
  }
  const std::string burner = crypto::EncodeAccountAddress(from);
  const std::string coins = amount.ToString();
  ctx.Emit("coin_spent", {{"spender", burner}, {"amount", coins}});
  ctx.Emit("burn", {{"burner", burner}, {"amount", coins}});
  return TxStatus::OK();
}

Result<std::string> BankKeeper::GetDenom(const store::KvReader& kv) const {
  std::string denom;
  Status s = kv.Get(kDenomKey, &denom);
  if (s.IsNotFound()) return std::string(kDefaultDenom);
  if (!s.ok()) return s;
  return denom;
}

TxStatus BankKeeper::DeductFee(store::KvStore& kv, std::string_view payer,
                               const ante::Coins& fee) const {
  return Move(kv, payer, FeeCollectorAddress(), fee, /*fee=*/true);
}

Status BankKeeper::ReturnFee(store::KvStore& kv, std::string_view payer,
                             const ante::Coins& fee) const {
  const std::string& collector = FeeCollectorAddress();
  for (const ante::Coin& c : fee.coins()) {
    auto collected = GetBalance(kv, collector, c.denom);
    if (!collected.ok()) return collected.status();
    auto have = GetBalance(kv, payer, c.denom);
    if (!have.ok()) return have.status();
    if (*collected < c.amount) continue;  // cannot happen: the fee went in on this branch
    if (Status s = SetBalance(kv, collector, {c.denom, *collected - c.amount}); !s.ok()) return s;
    if (Status s = SetBalance(kv, payer, {c.denom, *have + c.amount}); !s.ok()) return s;
  }
  return Status::OK();
}

TxStatus BankKeeper::Send(ante::Context& ctx, std::string_view from, std::string_view to,
                          const ante::Coins& amount) const {
  store::KvStore& kv = *ctx.store;
  TxStatus s = Move(kv, from, to, amount, /*fee=*/false);
  if (!s.ok()) return s;
  auto acc = auth_.GetAccount(kv, to);
  if (!acc.ok()) return TxStatus::FromStore(acc.status());
  if (!*acc) {
    auto created = auth_.NewAccount(kv, to);
    if (!created.ok()) return TxStatus::FromStore(created.status());
  }
  const std::string sender = crypto::EncodeAccountAddress(from);
  const std::string recipient = crypto::EncodeAccountAddress(to);
  const std::string coins = amount.ToString();
  ctx.Emit("coin_spent", {{"spender", sender}, {"amount", coins}});
  ctx.Emit("coin_received", {{"receiver", recipient}, {"amount", coins}});
  ctx.Emit("transfer", {{"recipient", recipient}, {"sender", sender}, {"amount", coins}});
  ctx.Emit("message", {{"sender", sender}});
  return TxStatus::OK();
}

TxStatus BankKeeper::HandleMsgSend(ante::Context& ctx, const MsgSend& msg,
                                   std::size_t msg_index) const {
  if (TxStatus s = ValidateMsgSend(msg); !s.ok()) return s;
  // The SDK's IsSendEnabledCoins, before the blocked-recipient check as there. Kairos has no
  // per-denom flags, so the first coin names the refusal.
  if (!params().default_send_enabled) {
    return Error(kErrSendDisabled,
                 msg.amount.coins().front().denom + " transfers are currently disabled");
  }
  if (IsBlockedRecipient(msg.to)) {
    return TxStatus::Error(ante::kUnauthorized,
                           msg.to_address + " is not allowed to receive funds");
  }
  ctx.Emit("message", {{"action", "/cosmos.bank.v1beta1.MsgSend"},
                       {"sender", msg.from_address},
                       {"module", "bank"},
                       {"msg_index", std::to_string(msg_index)}});
  return Send(ctx, msg.from, msg.to, msg.amount);
}

}  // namespace kairos::app::bank
