// libFuzzer target for signed txs through the whole state machine, with differential checks.
// The input chooses the fields of up to 8 txs (fuzz_chain.h BuildTx: messages, signers,
// sequences, fees, gas, unordered timeouts, payer and granter, a byte edit of the signed
// bytes), and this harness signs them, so they get past the signature check unless the input
// asks otherwise.
//
// Each input runs two fresh nodes, A and B, from the same genesis (in-memory stores):
//   1. both InitChain: the same genesis app hash;
//   2. A takes every tx through CheckTx, then builds block 1 with PrepareProposal; both A and B
//      must ACCEPT that proposal in ProcessProposal (a node accepts the blocks it builds);
//   3. A finalizes block 1 twice before Commit, B once: the three responses are identical, byte
//      for byte (the same block applied twice gives the same results and app hash, and A's
//      mempool, check state and signature cache change nothing);
//   4. both commit; A restarts (its store closed and reopened): Info reports the height and
//      app hash it committed;
//   5. block 2 holds every tx the input built (those the proposal left out, and the included
//      ones again, now replays) plus a few more; the restarted A and B finalize it: identical
//      responses; both commit and agree in Info.
// A FinalizeBlock that throws (a broken store, a wrong height) is a finding too.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/proto_util.h"
#include "fuzz_chain.h"

namespace {

using namespace kairos::fuzz;
using kairos::app::SerializeDeterministic;

pb::ResponseFinalizeBlock Finalize(Node& node, std::int64_t height, std::int64_t time,
                                   const std::vector<std::string>& txs) {
  pb::RequestFinalizeBlock req;
  req.set_height(height);
  SetTime(req.mutable_time(), time);
  for (const std::string& tx : txs) req.add_txs(tx);
  try {
    return node.abci().FinalizeBlock(req);
  } catch (const std::exception& e) {
    Violated(std::string("FinalizeBlock threw: ") + e.what());
  }
}

void Commit(Node& node) { node.abci().Commit({}); }

std::string InfoHash(Node& node, std::int64_t height) {
  const pb::ResponseInfo info = node.abci().Info({});
  Check(info.last_block_height() == height, "Info reports height " +
                                                std::to_string(info.last_block_height()) +
                                                ", committed " + std::to_string(height));
  return info.last_block_app_hash();
}

void CheckSame(const pb::ResponseFinalizeBlock& a, const pb::ResponseFinalizeBlock& b,
               const std::string& what) {
  if (SerializeDeterministic(a) == SerializeDeterministic(b)) return;
  std::string detail;
  for (int i = 0; i < a.tx_results_size() && i < b.tx_results_size(); ++i) {
    if (a.tx_results(i).code() != b.tx_results(i).code() ||
        a.tx_results(i).log() != b.tx_results(i).log()) {
      detail = "; tx " + std::to_string(i) + ": code " + std::to_string(a.tx_results(i).code()) +
               " (" + a.tx_results(i).log() + ") against code " +
               std::to_string(b.tx_results(i).code()) + " (" + b.tx_results(i).log() + ")";
      break;
    }
  }
  Violated(what + detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  Node a, b;
  const pb::ResponseInitChain init_a = a.abci().InitChain(GenesisRequest());
  const pb::ResponseInitChain init_b = b.abci().InitChain(GenesisRequest());
  Check(init_a.app_hash() == init_b.app_hash(), "two nodes disagree on the genesis app hash");

  TxModel model;
  const std::int64_t t1 = kT0 + kSecond;
  model.block_time = t1;
  std::vector<std::string> txs;
  const std::uint64_t n = in.Range(1, 8);
  for (std::uint64_t i = 0; i < n; ++i) txs.push_back(BuildTx(in, model));

  // 2. Through the mempool into a proposal, which both nodes accept.
  for (const std::string& tx : txs) {
    pb::RequestCheckTx req;
    req.set_tx(tx);
    a.abci().CheckTx(req);
  }
  pb::RequestPrepareProposal prepare;
  prepare.set_height(1);
  SetTime(prepare.mutable_time(), t1);
  prepare.set_max_tx_bytes(1 << 20);
  const pb::ResponsePrepareProposal proposal = a.abci().PrepareProposal(prepare);
  pb::RequestProcessProposal process;
  process.set_height(1);
  SetTime(process.mutable_time(), t1);
  *process.mutable_txs() = proposal.txs();
  Check(a.abci().ProcessProposal(process).status() == pb::ResponseProcessProposal::ACCEPT,
        "the proposer rejects its own proposal");
  Check(b.abci().ProcessProposal(process).status() == pb::ResponseProcessProposal::ACCEPT,
        "a validator rejects the proposer's proposal");

  // 3. The same block twice, and on the other node.
  const std::vector<std::string> block1(proposal.txs().begin(), proposal.txs().end());
  const pb::ResponseFinalizeBlock first = Finalize(a, 1, t1, block1);
  CheckSame(first, Finalize(a, 1, t1, block1), "block 1 finalized twice gives two answers");
  CheckSame(first, Finalize(b, 1, t1, block1), "two nodes finalize block 1 differently");

  // 4. Commit, restart A.
  Commit(a);
  Commit(b);
  a.Reopen();
  Check(InfoHash(a, 1) == first.app_hash(), "after a restart Info reports another app hash");
  Check(InfoHash(b, 1) == first.app_hash(), "Info differs from FinalizeBlock's app hash");

  // 5. Every tx again, and more, on the restarted node and on the other one.
  const std::int64_t t2 = t1 + static_cast<std::int64_t>(in.Range(1, 900)) * kSecond;
  model.block_time = t2;
  const std::uint64_t more = in.Range(0, 4);
  for (std::uint64_t i = 0; i < more; ++i) txs.push_back(BuildTx(in, model));
  const pb::ResponseFinalizeBlock second = Finalize(a, 2, t2, txs);
  CheckSame(second, Finalize(b, 2, t2, txs),
            "a restarted node finalizes block 2 differently from one that did not restart");
  Commit(a);
  Commit(b);
  Check(InfoHash(a, 2) == second.app_hash(), "Info differs from FinalizeBlock's app hash");
  Check(InfoHash(b, 2) == second.app_hash(), "Info differs from FinalizeBlock's app hash");
  return 0;
}
