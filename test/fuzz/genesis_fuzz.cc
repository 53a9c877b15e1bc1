// libFuzzer target for the genesis app_state: app::ParseGenesis, then InitChain of a real
// KairosApp (in-memory store) with the same text, as CometBFT hands genesis.json's app_state to
// a new chain. The input is the JSON text (seeds: the app_states of the unit tests;
// genesis_fuzz.dict lists the format's keys).
//
// Checked properties, beyond "no crash, no sanitizer report":
// - parsing is deterministic (the same text gives the same answer twice);
// - a refusal names where: its message starts with "genesis app_state";
// - whatever ParseGenesis accepts, InitChain either accepts or stops with a std::runtime_error
//   naming the genesis (it never crashes or throws anything else), and what ParseGenesis
//   refuses, InitChain refuses too;
// - an accepted genesis is deterministic and durable: two nodes compute the same genesis app
//   hash, and after an empty block 1, Commit and a restart, Info reports block 1's app hash.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "app/genesis.h"
#include "fuzz_chain.h"

namespace {

using namespace kairos::fuzz;

// InitChain's app hash, or nullopt with the message when it refuses the genesis.
std::optional<std::string> TryInitChain(Node& node, const std::string& app_state,
                                        std::string* refusal) {
  try {
    return node.abci().InitChain(GenesisRequest(app_state)).app_hash();
  } catch (const std::runtime_error& e) {
    *refusal = e.what();
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 1 << 16) return 0;  // a genesis this large is not what this target is about
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto parsed = kairos::app::ParseGenesis(text);
  const auto again = kairos::app::ParseGenesis(text);
  Check(parsed.ok() == again.ok() && parsed.status().message() == again.status().message(),
        "ParseGenesis answered the same text differently");
  if (!parsed.ok()) {
    const std::string& why = parsed.status().message();
    Check(why.rfind("genesis app_state", 0) == 0, "a refusal that names no JSON path: " + why);
  }

  Node a;
  std::string refusal;
  const std::optional<std::string> hash = TryInitChain(a, text, &refusal);
  if (!parsed.ok()) {
    Check(!hash, "InitChain accepted a genesis that ParseGenesis refuses");
    return 0;
  }
  if (!hash) {
    Check(!refusal.empty(), "InitChain refused a genesis without saying why");
    return 0;
  }
  Node b;
  Check(TryInitChain(b, text, &refusal) == hash, "two nodes disagree on the genesis app hash");

  pb::RequestFinalizeBlock block;
  block.set_height(1);
  SetTime(block.mutable_time(), kT0);
  const std::string app_hash = a.abci().FinalizeBlock(block).app_hash();
  Check(app_hash == *hash, "an empty block 1 changed the genesis state");
  a.abci().Commit({});
  a.Reopen();
  const pb::ResponseInfo info = a.abci().Info({});
  Check(info.last_block_height() == 1 && info.last_block_app_hash() == app_hash,
        "after a restart Info does not report block 1");
  return 0;
}
