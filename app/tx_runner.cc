#include "app/tx_runner.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace kairos::app {

namespace {

ante::TxStatus OutOfGas(const ante::Context& ctx, const ante::Tx& tx) {
  return ante::TxStatus::Error(
      ante::kOutOfGas, "out of gas in location: " + ctx.gas.exhausted_at() + "; gasWanted: " +
                           std::to_string(tx.gas_limit) +
                           ", gasUsed: " + std::to_string(ctx.gas.consumed()));
}

const ante::AccountKeeper& AccountsOf(const ModuleList& modules) {
  const auto* k = modules.services().Find<ante::AccountKeeper>();
  if (k == nullptr) throw std::logic_error("no module of the chain provides ante::AccountKeeper");
  return *k;
}

const ante::BankKeeper& BankOf(const ModuleList& modules) {
  const auto* k = modules.services().Find<ante::BankKeeper>();
  if (k == nullptr) throw std::logic_error("no module of the chain provides ante::BankKeeper");
  return *k;
}

}  // namespace

TxRunner::TxRunner(const ModuleList& modules, ante::SignatureCache* cache)
    : modules_(modules), pipeline_(AccountsOf(modules), BankOf(modules), cache) {}

const Module& TxRunner::ModuleOf(const ante::Msg& msg) const {
  const Module* m = modules_.ForMsg(msg.type_url());
  // The decoder resolved every type URL through the same list.
  if (m == nullptr) throw std::logic_error("no module for " + std::string(msg.type_url()));
  return *m;
}

ante::TxStatus TxRunner::RunMsgs(ante::Context& ctx, const ante::Tx& tx) const {
  for (std::size_t i = 0; i < tx.msgs.size(); ++i) {
    ante::TxStatus s = ModuleOf(tx.msgs[i]).Handle(ctx, tx.msgs[i], i);
    if (!s.ok()) {
      if (s.store_failure()) return s;
      return s.Wrapped("failed to execute message; message index: " + std::to_string(i) + ": ");
    }
    if (ctx.gas.exhausted()) return OutOfGas(ctx, tx);
  }
  return ante::TxStatus::OK();
}

TxOutcome TxRunner::Run(ante::ExecMode mode, const ante::Tx& tx, store::Branch& state,
                        const ante::BlockInfo& block,
                        const std::vector<ante::GasPrice>& min_gas_prices,
                        AnteWrites ante_writes, std::uint64_t simulate_gas_limit) const {
  TxOutcome out;
  out.gas_wanted = tx.gas_limit;
  for (const ante::Msg& msg : tx.msgs) {
    ante::TxStatus s = ModuleOf(msg).ValidateBasic(msg);
    if (!s.ok()) {
      out.status = s;
      return out;
    }
  }

  ante::Context ctx;
  ctx.mode = mode;
  ctx.block = block;
  ctx.min_gas_prices = &min_gas_prices;
  ctx.simulate_gas_limit = simulate_gas_limit;

  // A journal instead of a child branch per step: the writes land in `state` once, and only a
  // failure pays (the rollback); see store::Branch::BeginJournal.
  std::optional<store::BranchJournal> ante_journal;
  if (ante_writes == AnteWrites::kUndoOnFailure) ante_journal.emplace(state);
  ante::GasKv ante_kv(state, ctx.gas, ctx.kv_gas);
  ctx.store = &ante_kv;
  ante::TxStatus s = pipeline_.Run(ctx, tx);
  out.gas_used = ctx.gas.consumed();
  out.priority = ctx.priority;
  if (!s.ok()) {
    out.status = s;
    return out;  // the journal rolls the ante's writes back
  }
  // The ante's writes stand from here on, whatever the messages do.
  if (ante_journal) ante_journal->Commit();
  out.ante_passed = true;
  out.events = std::move(ctx.events);
  ctx.events.clear();
  if (!RunsMessages(mode)) return out;

  store::BranchJournal msg_journal(state);
  ante::GasKv msg_kv(state, ctx.gas, ctx.kv_gas);
  ctx.store = &msg_kv;
  ctx.accounts.clear();
  s = RunMsgs(ctx, tx);
  out.gas_used = ctx.gas.consumed();
  if (!s.ok()) {
    out.status = s;
    return out;  // ante events only, as the SDK reports a failed tx; the messages' writes go
  }
  msg_journal.Commit();
  for (auto& e : ctx.events) out.events.push_back(std::move(e));
  return out;
}

}  // namespace kairos::app
