// PoaKeeper: the proof-of-authority module's state and the rules that change it. It provides
// app::AuthorityKeeper: the authority it keeps is who may change every module's params and the
// validator set.
//
// Store layout (all under "poa/", so in the app hash and provable; <addr> is a validator's
// 20-byte consensus address, CometBFT's):
//   poa/authority            the authority's raw 20-byte account address (absent: none)
//   poa/params               kairos.poa.v1.Params
//   poa/key_types            kairos.poa.v1.KeyTypes: InitChain's consensus params'
//                            validator.pub_key_types, fixed at genesis
//   poa/totals               kairos.poa.v1.Totals: the set's total power and size
//   poa/val/<addr>           kairos.poa.v1.Validator (power > 0; a removed one is deleted)
//   poa/pending_block        kairos.poa.v1.PendingBlock    } written by the block's changes,
//   poa/pending/<addr>       kairos.poa.v1.PendingChange   } deleted by EndBlock: never committed
// A chain whose genesis has no app_state.poa writes none of these: it has no authority, and
// its validator set is CometBFT's genesis set, fixed.
//
// The pending keys are in the store, not in memory, so that a failed tx (whose branch is
// dropped) leaves no trace in them, and the proposal branches see their own.
//
// The rules of SetValidator (each a clear error; errors.h): the key's type is allowed by the
// consensus params; no other key has the same consensus address; power 0 only for a validator
// in the set; the set never becomes empty; it holds at most max_validators; its total power
// stays <= CometBFT's MaxTotalVotingPower; and the block's changes move less than a third of
// the total power the set had at the block's start: 3 * sum over the validators changed in the
// block of |power now - power at the block's start| < that total.
//
// Thread-compatible: no state of its own; everything is in the store argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ante/context.h"
#include "app/module.h"
#include "app/poa/consensus_key.h"
#include "app/poa/params.h"
#include "kairos/poa/v1/poa.pb.h"
#include "store/kv.h"

namespace kairos::app::poa {

struct Validator {
  ConsensusKey pub_key;
  std::int64_t power = 0;
  std::string moniker;
  std::string operator_address;  // raw 20 bytes; empty when not given
  bool operator==(const Validator&) const = default;
};

struct Totals {
  std::int64_t power = 0;
  std::uint32_t validators = 0;
  bool operator==(const Totals&) const = default;
};

// What SetValidator did.
struct SetOutcome {
  std::string consensus_address;
  std::int64_t previous_power = 0;  // 0: the key was not in the set
  std::string_view action;          // "add", "update" or "remove"
  Totals totals;                    // after the change
};

class PoaKeeper final : public AuthorityKeeper {
 public:
  static constexpr std::string_view kAuthorityKey = "poa/authority";
  static constexpr std::string_view kParamsKey = "poa/params";
  static constexpr std::string_view kKeyTypesKey = "poa/key_types";
  static constexpr std::string_view kTotalsKey = "poa/totals";
  static constexpr std::string_view kValidatorPrefix = "poa/val/";
  static constexpr std::string_view kPendingBlockKey = "poa/pending_block";
  static constexpr std::string_view kPendingPrefix = "poa/pending/";
  static std::string ValidatorKey(std::string_view consensus_address);
  static std::string PendingKey(std::string_view consensus_address);

  // ---- reads (absence is the default, never NotFound)
  Result<std::string> GetAuthority(const store::KvReader& kv) const override;
  Result<Params> GetParams(const store::KvReader& kv) const;  // Params{} when absent
  // Whether the chain has the module's genesis (poa/params is written then).
  Result<bool> Present(const store::KvReader& kv) const;
  // ["ed25519"] (CometBFT's default) when absent.
  Result<std::vector<std::string>> GetKeyTypes(const store::KvReader& kv) const;
  Result<Totals> GetTotals(const store::KvReader& kv) const;
  Result<std::optional<Validator>> GetValidator(const store::KvReader& kv,
                                                std::string_view consensus_address) const;
  // The whole set in consensus-address order.
  Result<std::vector<Validator>> ListValidators(const store::KvReader& kv) const;

  // ---- writes without the rules (genesis and the message server)
  Status SetAuthority(store::KvStore& kv, std::string_view raw) const;
  Status SetParams(store::KvStore& kv, const Params& p) const;
  Status SetKeyTypes(store::KvStore& kv, const std::vector<std::string>& types) const;
  Status SetTotals(store::KvStore& kv, const Totals& t) const;
  Status WriteValidator(store::KvStore& kv, const Validator& v) const;

  // ---- the rules
  // Adds, re-weights or (power 0) removes `v` on ctx.store, recording the block's pending
  // change. REQUIRES: ValidateBasic's checks passed (power in [0, kMaxTotalVotingPower], key of
  // the right size). A rule broken: its error (errors.h), nothing written.
  ante::TxStatus SetValidator(ante::Context& ctx, const Validator& v, SetOutcome* out) const;

  // EndBlock: the block's validator updates (each changed validator whose power differs from
  // its power at the block's start; sorted by consensus address), and the pending keys
  // deleted. Nothing when the block changed nothing. Not OK only when the store fails.
  Status TakeValidatorUpdates(store::KvStore& kv,
                              std::vector<tendermint::abci::ValidatorUpdate>* out) const;
};

kairos::poa::v1::Validator ToProto(const Validator& v);
// Corruption when the stored record is not a valid validator.
Result<Validator> FromProto(const kairos::poa::v1::Validator& pb);

}  // namespace kairos::app::poa
