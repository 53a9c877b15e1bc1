#include "app/poa/keeper.h"

#include <cstdlib>
#include <utility>

#include "app/hex.h"
#include "app/poa/errors.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"

namespace kairos::app::poa {

namespace {

namespace ppb = kairos::poa::v1;
using ante::TxStatus;

// Reads `key`; nullopt when absent.
Result<std::optional<std::string>> Read(const store::KvReader& kv, std::string_view key) {
  std::string value;
  Status s = kv.Get(key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return s;
  return std::optional<std::string>(std::move(value));
}

// Reads and parses a stored proto; nullopt when absent, Corruption when unparsable.
template <class Proto>
Result<std::optional<Proto>> ReadProto(const store::KvReader& kv, std::string_view key) {
  auto bytes = Read(kv, key);
  if (!bytes.ok()) return bytes.status();
  if (!*bytes) return std::optional<Proto>();
  Proto pb;
  if (!pb.ParseFromString(**bytes)) {
    return Status::Corruption(std::string(key) + " is malformed");
  }
  return std::optional<Proto>(std::move(pb));
}

TxStatus Store(const Status& s) { return s.ok() ? TxStatus::OK() : TxStatus::FromStore(s); }

// |a - b| for a, b in [0, kMaxTotalVotingPower]: cannot overflow.
std::int64_t Distance(std::int64_t a, std::int64_t b) { return a > b ? a - b : b - a; }

}  // namespace

ppb::Validator ToProto(const Validator& v) {
  ppb::Validator pb;
  *pb.mutable_pub_key() = ToAny(v.pub_key);
  pb.set_power(v.power);
  pb.set_moniker(v.moniker);
  if (!v.operator_address.empty()) {
    pb.set_operator_address(crypto::EncodeAccountAddress(v.operator_address));
  }
  return pb;
}

Result<Validator> FromProto(const ppb::Validator& pb) {
  auto key = FromAny(pb.pub_key());
  if (!key.ok()) {
    return Status::Corruption("a stored validator's pub_key: " + key.status().message());
  }
  Validator v{*key, pb.power(), pb.moniker(), {}};
  if (!pb.operator_address().empty()) {
    auto op = crypto::DecodeAccountAddress(pb.operator_address());
    if (!op.ok()) return Status::Corruption("a stored validator's operator_address is malformed");
    v.operator_address = *op;
  }
  return v;
}

std::string PoaKeeper::ValidatorKey(std::string_view consensus_address) {
  return std::string(kValidatorPrefix) + std::string(consensus_address);
}

std::string PoaKeeper::PendingKey(std::string_view consensus_address) {
  return std::string(kPendingPrefix) + std::string(consensus_address);
}

// ---- reads

Result<std::string> PoaKeeper::GetAuthority(const store::KvReader& kv) const {
  auto a = Read(kv, kAuthorityKey);
  if (!a.ok()) return a.status();
  return a->value_or(std::string());
}

Result<Params> PoaKeeper::GetParams(const store::KvReader& kv) const {
  auto pb = ReadProto<ppb::Params>(kv, kParamsKey);
  if (!pb.ok()) return pb.status();
  return *pb ? FromProto(**pb) : Params{};
}

Result<bool> PoaKeeper::Present(const store::KvReader& kv) const {
  auto bytes = Read(kv, kParamsKey);
  if (!bytes.ok()) return bytes.status();
  return bytes->has_value();
}

Result<std::vector<std::string>> PoaKeeper::GetKeyTypes(const store::KvReader& kv) const {
  auto pb = ReadProto<ppb::KeyTypes>(kv, kKeyTypesKey);
  if (!pb.ok()) return pb.status();
  if (!*pb) return std::vector<std::string>{std::string(kEd25519KeyType)};
  return std::vector<std::string>((*pb)->pub_key_types().begin(), (*pb)->pub_key_types().end());
}

Result<Totals> PoaKeeper::GetTotals(const store::KvReader& kv) const {
  auto pb = ReadProto<ppb::Totals>(kv, kTotalsKey);
  if (!pb.ok()) return pb.status();
  if (!*pb) return Totals{};
  return Totals{(*pb)->power(), (*pb)->validators()};
}

Result<std::optional<Validator>> PoaKeeper::GetValidator(
    const store::KvReader& kv, std::string_view consensus_address) const {
  auto pb = ReadProto<ppb::Validator>(kv, ValidatorKey(consensus_address));
  if (!pb.ok()) return pb.status();
  if (!*pb) return std::optional<Validator>();
  auto v = FromProto(**pb);
  if (!v.ok()) return v.status();
  return std::optional<Validator>(std::move(*v));
}

Result<std::vector<Validator>> PoaKeeper::ListValidators(const store::KvReader& kv) const {
  std::vector<Validator> out;
  auto it = kv.Iterate(kValidatorPrefix, store::PrefixEnd(kValidatorPrefix));
  for (; it->Valid(); it->Next()) {
    ppb::Validator pb;
    if (!pb.ParseFromString(std::string(it->value()))) {
      return Status::Corruption("a stored validator is malformed");
    }
    auto v = FromProto(pb);
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  if (Status s = it->status(); !s.ok()) return s;
  return out;
}

// ---- writes

Status PoaKeeper::SetAuthority(store::KvStore& kv, std::string_view raw) const {
  return kv.Set(kAuthorityKey, raw);
}

Status PoaKeeper::SetParams(store::KvStore& kv, const Params& p) const {
  // A message that sets every field to its default encodes to nothing, and a value is never
  // empty (store/kv.h); Validate refuses max_validators 0, the only field, so this holds.
  return kv.Set(kParamsKey, SerializeDeterministic(ToProto(p)));
}

Status PoaKeeper::SetKeyTypes(store::KvStore& kv, const std::vector<std::string>& types) const {
  ppb::KeyTypes pb;
  for (const std::string& t : types) pb.add_pub_key_types(t);
  const std::string bytes = SerializeDeterministic(pb);
  return bytes.empty() ? kv.Delete(kKeyTypesKey) : kv.Set(kKeyTypesKey, bytes);
}

Status PoaKeeper::SetTotals(store::KvStore& kv, const Totals& t) const {
  ppb::Totals pb;
  pb.set_power(t.power);
  pb.set_validators(t.validators);
  const std::string bytes = SerializeDeterministic(pb);
  return bytes.empty() ? kv.Delete(kTotalsKey) : kv.Set(kTotalsKey, bytes);
}

Status PoaKeeper::WriteValidator(store::KvStore& kv, const Validator& v) const {
  const std::string key = ValidatorKey(ConsensusAddress(v.pub_key));
  if (v.power == 0) return kv.Delete(key);
  return kv.Set(key, SerializeDeterministic(ToProto(v)));
}

// ---- the rules

TxStatus PoaKeeper::SetValidator(ante::Context& ctx, const Validator& v, SetOutcome* out) const {
  store::KvStore& kv = *ctx.store;
  const std::string address = ConsensusAddress(v.pub_key);
  const std::string shown = Describe(v.pub_key) + " (consensus address " +
                            HexEncode(address, /*upper=*/true) + ")";

  auto types = GetKeyTypes(kv);
  if (!types.ok()) return Store(types.status());
  const std::string_view type = KeyTypeName(v.pub_key.type);
  bool allowed = false;
  std::string allowed_list;
  for (const std::string& t : *types) {
    allowed = allowed || t == type;
    allowed_list += (allowed_list.empty() ? "" : ", ") + t;
  }
  if (!allowed) {
    return Error(kErrKeyTypeNotAllowed, "the consensus params allow validator keys of type " +
                                            allowed_list + ", not " + std::string(type));
  }

  auto existing = GetValidator(kv, address);
  if (!existing.ok()) return Store(existing.status());
  if (*existing && (*existing)->pub_key != v.pub_key) {
    return Error(kErrAddressCollision, shown + " has the consensus address of the validator's " +
                                           Describe((*existing)->pub_key));
  }
  const std::int64_t old_power = *existing ? (*existing)->power : 0;
  if (v.power == 0 && !*existing) {
    return Error(kErrNotValidator, "cannot remove " + shown + ": it is not in the validator set");
  }

  auto params = GetParams(kv);
  if (!params.ok()) return Store(params.status());
  auto totals = GetTotals(kv);
  if (!totals.ok()) return Store(totals.status());
  Totals after = *totals;
  if (old_power == 0) ++after.validators;
  if (v.power == 0) --after.validators;
  if (after.validators == 0) {
    return Error(kErrEmptySet, "removing " + shown + " would leave the validator set empty");
  }
  if (after.validators > params->max_validators) {
    return Error(kErrTooManyValidators,
                 "adding " + shown + " would make " + std::to_string(after.validators) +
                     " validators, over max_validators " +
                     std::to_string(params->max_validators));
  }
  if (__builtin_sub_overflow(totals->power, old_power, &after.power) ||
      __builtin_add_overflow(after.power, v.power, &after.power)) {
    return Error(kErrOverflow, "the total power overflows");
  }
  if (after.power > kMaxTotalVotingPower) {
    return Error(kErrTotalPower, "the total power would be " + std::to_string(after.power) +
                                     ", over CometBFT's maximum " +
                                     std::to_string(kMaxTotalVotingPower));
  }

  // The block's change so far, and this validator's power at the block's start.
  auto block = ReadProto<kairos::poa::v1::PendingBlock>(kv, kPendingBlockKey);
  if (!block.ok()) return Store(block.status());
  auto pending = ReadProto<kairos::poa::v1::PendingChange>(kv, PendingKey(address));
  if (!pending.ok()) return Store(pending.status());
  const std::int64_t start_total = *block ? (*block)->start_total_power() : totals->power;
  const std::int64_t changed_before = *block ? (*block)->changed_power() : 0;
  const std::int64_t start_power = *pending ? (*pending)->start_power() : old_power;
  std::int64_t changed = 0, tripled = 0;
  if (__builtin_sub_overflow(changed_before, Distance(old_power, start_power), &changed) ||
      __builtin_add_overflow(changed, Distance(v.power, start_power), &changed) ||
      __builtin_mul_overflow(changed, 3, &tripled)) {
    return Error(kErrOverflow, "the block's power change overflows");
  }
  if (tripled >= start_total) {
    return Error(kErrPowerChange,
                 "setting " + shown + " to power " + std::to_string(v.power) +
                     " would make this block's validator changes move " + std::to_string(changed) +
                     " of the " + std::to_string(start_total) +
                     " total power at the block's start; they must move less than a third (" +
                     std::to_string(changed) + " * 3 >= " + std::to_string(start_total) + ")");
  }

  // Every rule holds: write.
  if (Status s = WriteValidator(kv, v); !s.ok()) return Store(s);
  if (Status s = SetTotals(kv, after); !s.ok()) return Store(s);
  if (!*pending) {
    kairos::poa::v1::PendingChange pb;
    *pb.mutable_pub_key() = ToAny(v.pub_key);
    pb.set_start_power(start_power);
    if (Status s = kv.Set(PendingKey(address), SerializeDeterministic(pb)); !s.ok()) {
      return Store(s);
    }
  }
  kairos::poa::v1::PendingBlock pb;
  pb.set_start_total_power(start_total);
  pb.set_changed_power(changed);
  if (Status s = kv.Set(kPendingBlockKey, SerializeDeterministic(pb)); !s.ok()) return Store(s);

  if (out != nullptr) {
    out->consensus_address = address;
    out->previous_power = old_power;
    out->action = old_power == 0 ? "add" : v.power == 0 ? "remove" : "update";
    out->totals = after;
  }
  return TxStatus::OK();
}

Status PoaKeeper::TakeValidatorUpdates(
    store::KvStore& kv, std::vector<tendermint::abci::ValidatorUpdate>* out) const {
  auto block = Read(kv, kPendingBlockKey);
  if (!block.ok()) return block.status();
  if (!*block) return Status::OK();  // the usual block: one read
  std::vector<std::pair<std::string, kairos::poa::v1::PendingChange>> changes;
  {
    auto it = kv.Iterate(kPendingPrefix, store::PrefixEnd(kPendingPrefix));
    for (; it->Valid(); it->Next()) {
      kairos::poa::v1::PendingChange pb;
      if (!pb.ParseFromString(std::string(it->value()))) {
        return Status::Corruption("a pending validator change is malformed");
      }
      changes.emplace_back(std::string(it->key()), std::move(pb));
    }
    if (Status s = it->status(); !s.ok()) return s;
  }
  for (const auto& [key, change] : changes) {
    const std::string_view address = std::string_view(key).substr(kPendingPrefix.size());
    auto now = GetValidator(kv, address);
    if (!now.ok()) return now.status();
    const std::int64_t power = *now ? (*now)->power : 0;
    // Added and removed again, or set back to where it started: CometBFT must not hear of it
    // (removing a validator it does not have would stop the chain).
    if (power != change.start_power()) {
      auto key_of = FromAny(change.pub_key());
      if (!key_of.ok()) {
        return Status::Corruption("a pending change's pub_key: " + key_of.status().message());
      }
      out->push_back(ToValidatorUpdate(*key_of, power));
    }
    if (Status s = kv.Delete(key); !s.ok()) return s;
  }
  return kv.Delete(kPendingBlockKey);
}

}  // namespace kairos::app::poa
