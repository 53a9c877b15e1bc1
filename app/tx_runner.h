// TxRunner: runs one decoded tx the way the Cosmos SDK's baseapp.runTx does, in a given exec
// mode, over a state branch:
//   1. the messages' stateless checks (ValidateBasic);
//   2. the ante pipeline on a branch of its own; on failure nothing it wrote is kept;
//   3. CheckTx, ReCheck and ProcessProposal stop there (ante writes kept: sequences, fees and
//      unordered nonces, so a second copy is refused);
//   4. FinalizeBlock, Simulate and PrepareProposal then write the ante branch and run the
//      messages on another branch, kept only if every message succeeds. A failed message keeps
//      its fee and nonce. PrepareProposal runs them so that its scratch branch is exactly what
//      FinalizeBlock will compute: a tx whose fee an earlier tx's send spent fails its ante
//      there, and is left out of the block.
// Gas is one meter across ante and messages; gas_used is deterministic.
// The router: MsgSend to bank, the kairos.locks.v1 messages to the locks msg server.
//
// Thread-compatible: Run may be called from one thread at a time per state branch; the runner
// itself is immutable.
#pragma once

#include <vector>

#include "ante/context.h"
#include "ante/decorators.h"
#include "app/module_list.h"
#include "store/branch.h"

namespace kairos::app {

// Whether Run executes the messages in `mode` (after the ante), or stops after the ante.
inline bool RunsMessages(ante::ExecMode mode) {
  return mode == ante::ExecMode::kFinalize || mode == ante::ExecMode::kSimulate ||
         mode == ante::ExecMode::kPrepareProposal;
}

struct TxOutcome {
  ante::TxStatus status;
  // The ante passed (its writes stand): when `status` fails too, a message failed, and the tx
  // still pays its fee and sequence.
  bool ante_passed = false;
  std::uint64_t gas_wanted = 0;
  std::uint64_t gas_used = 0;
  ante::FeePerGas priority = 0;  // the fee per gas, Q64.64 (ante::FeePerGasQ64)
  std::vector<tendermint::abci::Event> events;
};

class TxRunner {
 public:
  // REQUIRES: the keepers and the cache (may be null) outlive the runner.
  // The ante runs against the keepers `modules` provide (ante::AccountKeeper and
  // ante::BankKeeper); each message goes to the module of its type URL.
  // REQUIRES: `modules` outlives the runner and provides both keepers.
  TxRunner(const ModuleList& modules, ante::SignatureCache* cache);

  // How the ante's writes reach `state`:
  //   kUndoOnFailure: straight into `state` under a journal (store::BranchJournal), rolled
  //     back if the ante fails, so they stay only if it passes (the messages' writes are
  //     handled the same way, after it). REQUIRES: no journal open on `state`;
  //   kDirect: straight into `state`, kept whatever happens. Only for a caller that drops or
  //     rolls back `state` itself when the tx fails (the mempool: a child branch, or its own
  //     journal on the check state).
  enum class AnteWrites { kUndoOnFailure, kDirect };

  // `state` receives the writes that the mode keeps. For Simulate pass a throwaway branch;
  // `simulate_gas_limit` stops a simulation that uses more (out of gas, code 11).
  TxOutcome Run(ante::ExecMode mode, const ante::Tx& tx, store::Branch& state,
                const ante::BlockInfo& block,
                const std::vector<ante::GasPrice>& min_gas_prices = {},
                AnteWrites ante_writes = AnteWrites::kUndoOnFailure,
                std::uint64_t simulate_gas_limit = ante::GasMeter::kInfinite) const;

 private:
  ante::TxStatus RunMsgs(ante::Context& ctx, const ante::Tx& tx) const;
  // The module of each message of `tx` (parallel to tx.msgs); the decoder resolved them all.
  const Module& ModuleOf(const ante::Msg& msg) const;

  const ModuleList& modules_;
  ante::AntePipeline pipeline_;
};

}  // namespace kairos::app
