// KairosApp::InitChain: the genesis app_state through the chain's modules (kairos_app.h).
#include "app/kairos_app.h"

#include "app/chain_meta.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "ante/errors.h"
#include "ante/sign_doc.h"
#include "app/genesis.h"
#include "app/header_time.h"
#include "app/hex.h"
#include "app/auth/module.h"
#include "app/bank/genesis.h"
#include "app/proto_util.h"
#include "app/tx_codec.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "kairos/auth/v1/query.pb.h"
#include "kairos/mempool/v1/query.pb.h"
#include "app/logging.h"
#include "app/proofs.h"
#include "app/version.h"
#include "store/big_endian.h"
#include "store/sha256.h"

namespace kairos::app {

namespace pb = ::tendermint::abci;

pb::ResponseInitChain KairosApp::InitChain(const pb::RequestInitChain& req) {
  if (store_->version() != 0) {
    throw std::runtime_error("InitChain at height " + std::to_string(store_->version()) +
                             ": the chain was initialised already (reset CometBFT and kairosd "
                             "data together)");
  }
  auto genesis = ParseGenesis(req.app_state_bytes());
  if (!genesis.ok()) throw std::runtime_error(genesis.status().message());
  chain_id_ = req.chain_id();
  initial_height_ = req.initial_height() > 0 ? req.initial_height() : 1;
  max_block_gas_ = req.has_consensus_params() && req.consensus_params().has_block()
                       ? req.consensus_params().block().max_gas()
                       : -1;
  limits_ = genesis->kv_limits;

  store::Branch state(*store_, limits_);
  const auto put = [&](std::string_view key, std::string_view value) {
    if (Status s = state.Set(key, value); !s.ok()) {
      throw std::runtime_error("writing the genesis state: " + s.ToString());
    }
  };
  if (!chain_id_.empty()) put(kKeyChainId, chain_id_);
  put(kKeyInitialHeight, EncodeInt64(initial_height_));
  // The chain's limits, from genesis: every node reads them back from the state at start.
  put(kKeyMaxKeyBytes, EncodeInt64(static_cast<std::int64_t>(limits_.max_key_bytes)));
  put(kKeyMaxValueBytes, EncodeInt64(static_cast<std::int64_t>(limits_.max_value_bytes)));
  put(kKeyMaxBlockGas, EncodeInt64(max_block_gas_));
  // Each module's genesis, in the list's order (auth's accounts before bank's balances).
  GenesisContext ctx;
  ctx.chain_id = chain_id_;
  ctx.initial_height = initial_height_;
  ctx.validators = &req.validators();
  pb::ResponseInitChain res;
  *res.mutable_validators() = req.validators();
  ctx.validators_out = res.mutable_validators();
  if (req.has_consensus_params()) ctx.consensus_params = &req.consensus_params();
  const auto& modules = modules_->modules();
  for (std::size_t i = 0; i < modules.size(); ++i) {
    if (Status s = modules[i]->InitGenesis(state, *genesis->modules[i], ctx); !s.ok()) {
      throw std::runtime_error(s.message());
    }
    if (Status s = modules[i]->LoadState(state); !s.ok()) {
      throw std::runtime_error("loading the " + std::string(modules[i]->name()) +
                               " module's genesis state: " + s.ToString());
    }
  }
  auto accounts = auth_.AccountCount(state);
  if (!accounts.ok()) throw std::runtime_error("genesis: " + accounts.status().ToString());
  genesis_ = state.changes();
  // CheckTx sees the genesis accounts before block 1 commits them.
  pool_.Reset(*store_, limits_, &genesis_);
  PublishChainFacts();
  // The genesis root, computed now and committed with the first block.
  auto root = store_->Stage(initial_height_, genesis_);
  if (!root.ok()) throw std::runtime_error("staging the genesis state: " + root.status().ToString());
  Log()->info("InitChain: chain {} initial height {} with {} validator(s), {} account(s), denom "
              "{}, genesis app hash {}",
              Printable(chain_id_), initial_height_, req.validators_size(),
              *accounts, genesis->Of<bank::GenesisState>().denom,
              HexEncode(store::ToBytes(*root), true));
  res.set_app_hash(store::ToBytes(*root));
  return res;
}

}  // namespace kairos::app
