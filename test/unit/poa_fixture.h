// A poa module over an in-memory state, for the poa unit tests: genesis from JSON, messages
// run as txs (all on one branch that is kept only when every message succeeds, as the tx runner
// does), EndBlock, and the keys under poa/.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/poa/genesis.h"
#include "app/poa/module.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "ante/gas.h"
#include "crypto/keys.h"
#include "empty_reader.h"
#include "store/branch.h"

namespace kairos::test::poa {

using nlohmann::json;
namespace poa = app::poa;

// An account: raw 20 bytes and bech32.
struct Account {
  std::string raw;
  std::string bech32;
};
inline Account MakeAccount(const std::string& name) {
  Account a;
  a.raw = crypto::Sha256("account " + name).substr(0, 20);
  a.bech32 = crypto::EncodeAccountAddress(a.raw);
  return a;
}

inline poa::ConsensusKey EdKey(const std::string& name) {
  return {crypto::KeyType::kEd25519, crypto::Ed25519PublicKey(crypto::Sha256("ed " + name))};
}
inline poa::ConsensusKey SecpKey(const std::string& name) {
  return {crypto::KeyType::kSecp256k1,
          *crypto::Secp256k1PublicKey(crypto::Sha256("secp " + name))};
}

inline json PubKeyJson(const poa::ConsensusKey& k) {
  return {{"@type", std::string(poa::KeyTypeUrl(k.type))}, {"key", crypto::Base64Encode(k.bytes)}};
}

inline json ValidatorJson(const poa::ConsensusKey& k, std::int64_t power,
                          const std::string& moniker = "") {
  json v = {{"pub_key", PubKeyJson(k)}, {"power", std::to_string(power)}};
  if (!moniker.empty()) v["moniker"] = moniker;
  return v;
}

inline const Account kAuthority = MakeAccount("authority");
inline const Account kStranger = MakeAccount("stranger");

// app_state.poa with the authority and validators v0..v(n-1), ed25519, of the given powers.
inline json GenesisJson(const std::vector<std::int64_t>& powers) {
  json vals = json::array();
  for (std::size_t i = 0; i < powers.size(); ++i) {
    vals.push_back(ValidatorJson(EdKey("v" + std::to_string(i)), powers[i],
                                 "v" + std::to_string(i)));
  }
  return {{"authority", kAuthority.bech32}, {"validators", vals}};
}

inline tendermint::types::ConsensusParams AllowKeyTypes(std::vector<std::string> types) {
  tendermint::types::ConsensusParams p;
  for (const std::string& t : types) p.mutable_validator()->add_pub_key_types(t);
  return p;
}

struct PoaFixture {
  EmptyReader empty;
  store::Branch state{empty, store::KvLimits{}};
  poa::PoaModule module;
  google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate> comet_validators;
  google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate> validators_out;
  tendermint::types::ConsensusParams consensus_params = AllowKeyTypes({"ed25519"});
  std::vector<tendermint::abci::Event> events;  // of the last Run
  std::uint64_t gas_used = 0;                   // of the last Run

  // ParseGenesis + InitGenesis of `section` (null: absent).
  Status Init(const json* section) {
    auto g = module.ParseGenesis(section);
    if (!g.ok()) return g.status();
    app::GenesisContext ctx;
    ctx.chain_id = "poa-test";
    ctx.validators = &comet_validators;
    ctx.validators_out = &validators_out;
    ctx.consensus_params = &consensus_params;
    return module.InitGenesis(state, **g, ctx);
  }
  void InitOk(const json& section) {
    Status s = Init(&section);
    INFO(s.message());
    REQUIRE(s.ok());
  }

  // Runs the messages as one tx, as app/tx_runner.cc runs a tx's messages: ValidateBasic then
  // Handle each, through a gas-metered view of the state under a journal that is committed
  // only when all succeed (rolled back otherwise). The first failure is returned.
  ante::TxStatus Run(const std::vector<ante::Msg>& msgs) {
    ante::Context ctx;
    ctx.mode = ante::ExecMode::kFinalize;
    ctx.block.height = 5;
    store::BranchJournal journal(state);
    ante::GasKv metered(state, ctx.gas, ctx.kv_gas);
    ctx.store = &metered;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      if (ante::TxStatus s = module.ValidateBasic(msgs[i]); !s.ok()) return s;
      if (ante::TxStatus s = module.Handle(ctx, msgs[i], i); !s.ok()) return s;
    }
    journal.Commit();
    gas_used = ctx.gas.consumed();
    events = std::move(ctx.events);
    return ante::TxStatus::OK();
  }
  ante::TxStatus Run(const ante::Msg& msg) { return Run(std::vector<ante::Msg>{msg}); }
  void RunOk(const ante::Msg& msg) {
    ante::TxStatus s = Run(msg);
    INFO(s.log());
    REQUIRE(s.ok());
  }

  app::BlockHookResult EndBlock() {
    app::BlockHookResult out;
    ante::BlockInfo block;
    block.height = 5;
    REQUIRE(module.EndBlock(state, block, &out).ok());
    return out;
  }

  // Every key and value under poa/.
  std::map<std::string, std::string> PoaKeys() const {
    std::map<std::string, std::string> out;
    auto it = state.Iterate("poa/", store::PrefixEnd("poa/"));
    for (; it->Valid(); it->Next()) out.emplace(it->key(), it->value());
    return out;
  }
  std::int64_t PowerOf(const poa::ConsensusKey& k) const {
    auto v = module.keeper().GetValidator(state, poa::ConsensusAddress(k));
    REQUIRE(v.ok());
    return *v ? (*v)->power : 0;
  }
};

inline poa::MsgSetValidator SetValidator(const poa::ConsensusKey& k, std::int64_t power,
                                         const Account& from = kAuthority,
                                         const std::string& moniker = "") {
  poa::MsgSetValidator m;
  m.authority = from.raw;
  m.pub_key = k;
  m.power = power;
  m.moniker = moniker;
  return m;
}

}  // namespace kairos::test::poa
