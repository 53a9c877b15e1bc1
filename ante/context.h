// Context: what a decorator or message handler sees of the world while one tx runs: the exec
// mode, the block (height, time, chain id, max gas), the gas meter, the gas-metered state branch,
// the events emitted so far and the priority the fee sets. Built per tx by the tx runner (app/).
// Thread-compatible: one tx, one thread.
#pragma once

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

#include "ante/coins.h"
#include "ante/gas.h"
#include "ante/keepers.h"
#include "tendermint/abci/types.pb.h"
#include "store/kv.h"

namespace kairos::ante {

enum class ExecMode {
  kCheck,            // CheckTx (new)
  kReCheck,          // CheckTx (recheck): no ValidateBasic, no signature verification
  kSimulate,         // Simulate query: infinite gas, no signature checks, no nonce writes
  kPrepareProposal,  // on the proposal's scratch branch
  kProcessProposal,  // on the proposal's scratch branch
  kFinalize,         // FinalizeBlock
};

inline bool IsCheck(ExecMode m) { return m == ExecMode::kCheck || m == ExecMode::kReCheck; }

// A tx's fee per unit of gas as unsigned Q64.64 fixed point (64 integer and 64 fraction bits):
// the mempool's priority (mempool/priority.h, which has the same representation; ante/ does not
// depend on mempool/).
using FeePerGas = unsigned __int128;
// floor(amount * 2^64 / gas_limit) for the least amount among the fee's coins (the SDK's
// GetTxPriority takes the least coin), saturated at 2^128 - 1; 0 for no fee or no gas.
FeePerGas FeePerGasQ64(const Coins& fee, std::uint64_t gas_limit);

// A minimum gas price: `atto_per_gas` is the price in units of 10^-18 denom per gas unit (the
// SDK's DecCoin precision), so "0.025stake" is {stake, 25 * 10^15}.
struct GasPrice {
  std::string denom;
  Uint256 atto_per_gas;
};
// "0.025stake,1atom" -> prices; InvalidArgument naming the bad entry.
Result<std::vector<GasPrice>> ParseGasPrices(std::string_view text);

// RFC 3339 UTC with nanoseconds, e.g. "2026-11-21T10:00:00.000000001Z".
std::string FormatUnixNanos(std::int64_t unix_nanos);
// A duration as Go prints it: "10m0s", "1h0m0s", "1.5s".
std::string FormatDuration(std::int64_t nanos);
// The inverse for positive durations: "60s", "10m", "1m30s", "1.5s", "500ms" -> nanoseconds
// (units h, m, s, ms). InvalidArgument saying what is wrong.
Result<std::int64_t> ParseDuration(std::string_view text);

struct BlockInfo {
  std::string chain_id;
  std::int64_t height = 0;
  std::int64_t time_unix_nanos = 0;  // the header time (CheckTx: the last committed block's)
  std::int64_t max_gas = -1;         // consensus param block.max_gas; <= 0: no limit
};

// The accounts the ante has read or written in this tx, decoded once. SetPubKey, SigGasConsume,
// SigVerification and IncrementSequence each read every signer, as the SDK's decorators do, and
// each read is charged as a store read; the memo answers the repeats without the store lookup
// and the decode, and charges exactly what the read would have (see ReadAccount in
// decorators.cc), so gas_used and the out-of-gas location do not depend on it.
struct AccountMemoEntry {
  std::string address;
  std::optional<Account> account;
  std::size_t stored_bytes = 0;  // what a store read of it is charged for: key plus value
};

// The memo itself, keyed by address. A tx has at most tx_sig_limit signers (ValidateBasic), but
// that limit is a genesis param without an upper bound: a lookup must not walk the entries, or
// the ante would be quadratic in the signers.
class AccountMemo {
 public:
  // The entry for `address`, or nullptr. Valid until the next Add or clear.
  AccountMemoEntry* Find(std::string_view address);
  // REQUIRES: no entry for entry.address yet. Valid until the next Add or clear.
  AccountMemoEntry& Add(AccountMemoEntry entry);
  std::size_t size() const { return entries_.size(); }
  void clear();

 private:
  // Up to this many entries are scanned: a tx usually has one or two signers, and a scan of a
  // few needs no hashing and no allocation. Past it, `index_` (absl's per-process seeded hash:
  // outsiders choose the addresses) maps each address to its entry.
  static constexpr std::size_t kScanned = 8;
  // Inline for the usual one or two signers: no allocation per tx.
  boost::container::small_vector<AccountMemoEntry, 2> entries_;
  struct AddressHash {
    using is_transparent = void;  // looked up by string_view, no copy
    std::size_t operator()(std::string_view a) const { return absl::Hash<std::string_view>{}(a); }
  };
  absl::flat_hash_map<std::string, std::size_t, AddressHash, std::equal_to<>> index_;
};

struct Context {
  ExecMode mode = ExecMode::kFinalize;
  BlockInfo block;
  // This node's fee policy, used in CheckTx only: the caller's, not a copy (null = none).
  const std::vector<GasPrice>* min_gas_prices = nullptr;
  GasMeter gas;
  // The meter's limit in simulate mode (the tx's own limit applies in the other modes): what a
  // simulation may cost the node that runs it.
  std::uint64_t simulate_gas_limit = GasMeter::kInfinite;
  KvGasConfig kv_gas;               // what `store` charges
  store::KvStore* store = nullptr;  // the gas-metered branch of this step
  // Valid for the ante's branch only: cleared when `store` moves to the messages' branch.
  AccountMemo accounts;
  std::vector<tendermint::abci::Event> events;
  FeePerGas priority = 0;  // set by DeductFee (FeePerGasQ64)

  void Emit(std::string type, std::vector<std::pair<std::string, std::string>> attributes);
  // Whether this mode's events reach anyone: FinalizeBlock's go into the block results (and
  // CometBFT's tx indexer), Simulate's to the client. CheckTx's are dropped by CometBFT's
  // mempool, and proposal checks return none, so those modes skip building them.
  bool records_events() const { return mode == ExecMode::kFinalize || mode == ExecMode::kSimulate; }
};

}  // namespace kairos::ante
