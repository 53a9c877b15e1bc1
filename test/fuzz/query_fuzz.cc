// libFuzzer target for queries over a committed store, through abci::Application::Query (the
// interface CometBFT's query connection reaches): KairosApp's QueryRouter, which answers each
// query from a store view of the height it asks for (the latest tree, a recent one kept in
// memory, or a rebuild from a checkpoint), as kairosd's query threads do.
//
// Once per process: a node (in-memory store, every version kept, a checkpoint every 3 blocks so
// that proofs at past heights replay or undo changesets) runs a genesis and 7 blocks of real
// signed txs (sends between the test keys, an unordered send, locks registrations,
// acquisitions and writes), each committed; the app hash after each block is recorded.
//
// Each input is one query; its first byte picks the kind, and the rest its fields:
//   0 /store/<hex key>, 1 /store with the key in data (keys: the state's own, or the input's
//   bytes), 2 Account, 3 Balance, 4 AllBalances, 5 UnorderedNonce, 6 Simulate (a signed tx
//   built from the input as block_fuzz builds them, or raw tx bytes), 7 the locks queries,
//   8 /app/version, /app/height and the mempool stats, 9 any path and data;
// then the height (latest, a kept one, past the latest, or any int64) and prove.
//
// Checked properties, beyond "no crash, no sanitizer report":
// - the same query twice gives the same answer, byte for byte, and leaves the committed height
//   and app hash as they were (a query never changes state);
// - an error has a codespace and a log;
// - every proof verifies: each ProofOp is an ics23:smt CommitmentProof for the op's key whose
//   existence proof (or both neighbours of an absence proof) hashes to the app hash of the
//   answer's height, as recorded when that block was committed; a /store existence proof proves
//   the very value the answer carries;
// - Simulate stays within its limits: a tx over simulate_max_tx_bytes gets code 21 before it
//   is decoded, and an answered simulation used no more than simulate_max_gas.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/hex.h"
#include "app/proto_util.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/ics23/v1/proofs.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "fuzz_chain.h"
#include "kairos/auth/v1/query.pb.h"
#include "kairos/locks/v1/query.pb.h"
#include "store/sha256.h"
#include "app/bank/msgs.h"
#include "app/locks/msgs.h"

namespace {

using namespace kairos::fuzz;
namespace ics23 = cosmos::ics23::v1;
using kairos::app::SerializeDeterministic;

constexpr int kBlocks = 7;

// Every version kept, a checkpoint every 3 blocks, one in-memory tree below the latest and two
// cached rebuilds: a query at heights 1..5 rebuilds (replaying or undoing changesets), and
// alternating heights evict each other's rebuilds. Simulate's limits are small enough that
// inputs reach each (tx bytes, messages, gas).
NodeSetup QuerySetup() {
  NodeSetup s;
  s.keep_recent = 0;
  s.checkpoint_interval = 3;
  s.recent_versions = 1;
  s.rebuild_cache = 2;
  s.query.simulate_max_tx_bytes = 1024;
  s.query.simulate_max_msgs = 3;
  s.query.simulate_max_gas = 150'000;
  return s;
}

struct Chain {
  Node node{QuerySetup()};
  std::map<std::int64_t, std::string> app_hash;  // height -> app hash after that block
  std::vector<std::string> keys;                 // store keys the blocks wrote
  TxModel model;
};

kairos::app::SignerKey SignerOf(const Key& k, std::uint64_t sequence) {
  kairos::app::SignerKey s;
  s.type = k.type;
  s.private_key = k.priv;
  s.account_number = k.account_number;
  s.sequence = sequence;
  return s;
}

Chain& TheChain() {
  static Chain* chain = [] {
    auto* c = new Chain;
    kairos::abci::Application& app = c->node.abci();
    app.InitChain(GenesisRequest());
    const std::vector<Key>& keys = Keys();
    for (int h = 1; h <= kBlocks; ++h) {
      const std::int64_t time = kT0 + h * kSecond;
      std::vector<std::string> txs;
      auto sign = [&](const Key& from, kairos::app::TxSpec spec) {
        spec.fee = *kairos::ante::Coins::Parse("100stake");
        const std::size_t index = static_cast<std::size_t>(&from - keys.data());
        txs.push_back(kairos::app::BuildSignedTx(
            spec, {SignerOf(from, spec.unordered ? 0 : c->model.sequences[index]++)}, kChainId));
      };
      for (int i = 0; i < 4; ++i) {
        const Key& from = keys[(i + h) % 4];
        kairos::app::TxSpec spec;
        kairos::app::bank::MsgSend send;
        send.from = from.address;
        send.to = keys[(i + h + 1) % 6].address;
        send.amount = *kairos::ante::Coins::Parse(std::to_string(h * 10 + i) + "stake");
        spec.msgs.push_back(send);
        if (h == 4 && i == 1) {
          spec.unordered = true;
          spec.timeout_unix_nanos = time + 300 * kSecond;
        }
        sign(from, std::move(spec));
      }
      // Key 0 registers, then holds one slot and writes its variable in every later block.
      if (h == 2) {
        kairos::app::TxSpec spec;
        kairos::app::locks::MsgRegister r;
        r.sender = keys[0].address;
        spec.msgs.push_back(r);
        sign(keys[0], std::move(spec));
      }
      if (h >= 3) {
        kairos::app::TxSpec spec;
        kairos::app::locks::MsgWrite w;
        w.sender = keys[0].address;
        w.slot = {"fuzz", keys[1].bech32};
        w.op = kairos::app::locks::LockWriteOp::kAdd;
        w.value = h;
        w.max_deposit = 100000;
        spec.msgs.push_back(w);
        sign(keys[0], std::move(spec));
      }
      pb::RequestFinalizeBlock req;
      req.set_height(h);
      SetTime(req.mutable_time(), time);
      for (const std::string& tx : txs) req.add_txs(tx);
      const pb::ResponseFinalizeBlock res = app.FinalizeBlock(req);
      for (const auto& r : res.tx_results()) {
        Check(r.code() == 0, "a setup tx failed at height " + std::to_string(h) + ": " + r.log());
      }
      app.Commit({});
      c->app_hash[h] = res.app_hash();
    }
    c->model.block_time = kT0 + kBlocks * kSecond;
    // Keys the state holds (and some it does not), for /store queries.
    for (const Key& k : keys) {
      c->keys.push_back("auth/acc/" + k.address);
      c->keys.push_back("bank/bal/" + std::string(1, '\x14') + k.address + "stake");
      c->keys.push_back("locks/session/" + k.address);
      c->keys.push_back("locks/reg/" + k.address);
    }
    for (const char* k : {"meta/chain_id", "meta/initial_height", "meta/max_key_bytes",
                          "auth/params", "bank/denom", "bank/supply/stake", "locks/params"}) {
      c->keys.push_back(k);
    }
    return c;
  }();
  return *chain;
}

// The root an ICS-23 existence proof for SmtSpec commits to.
std::string RootOf(const ics23::ExistenceProof& p) {
  using kairos::store::Sha256Of;
  using kairos::store::ToBytes;
  std::string h = ToBytes(Sha256Of(std::string(1, '\0') + ToBytes(Sha256Of(p.key())) +
                                   ToBytes(Sha256Of(p.value()))));
  for (const auto& op : p.path()) h = ToBytes(Sha256Of(op.prefix() + h + op.suffix()));
  return h;
}

void CheckProofs(const pb::ResponseQuery& res, const Chain& chain, bool store_query) {
  const auto it = chain.app_hash.find(res.height());
  Check(it != chain.app_hash.end(),
        "a proof at height " + std::to_string(res.height()) + ", which was never committed");
  const std::string& root = it->second;
  for (const auto& op : res.proof_ops().ops()) {
    Check(op.type() == "ics23:smt", "a proof op of type " + op.type());
    ics23::CommitmentProof proof;
    Check(proof.ParseFromString(op.data()), "a proof op does not parse");
    if (proof.has_exist()) {
      Check(proof.exist().key() == op.key(), "an existence proof for another key");
      Check(RootOf(proof.exist()) == root, "an existence proof does not reach the app hash");
      if (store_query) {
        Check(proof.exist().value() == res.value(), "the proof proves another value");
      }
    } else {
      Check(proof.has_nonexist(), "a proof is neither existence nor absence");
      const auto& n = proof.nonexist();
      Check(n.key() == op.key(), "an absence proof for another key");
      Check(n.has_left() || n.has_right(), "an absence proof without neighbours");
      if (n.has_left()) Check(RootOf(n.left()) == root, "an absence proof's left neighbour");
      if (n.has_right()) Check(RootOf(n.right()) == root, "an absence proof's right neighbour");
      if (store_query) Check(res.value().empty(), "an absent key with a value");
    }
  }
}

std::string AddressText(ByteReader& in) {
  const std::uint64_t pick = in.Range(0, 7);
  if (pick < Keys().size()) return Keys()[pick].bech32;
  return in.Bytes(60);  // anything
}

pb::RequestQuery BuildQuery(ByteReader& in, Chain& chain, bool* store_query) {
  pb::RequestQuery req;
  const std::uint8_t kind = in.Byte() % 10;
  auto store_key = [&]() -> std::string {
    const std::uint64_t pick = in.Range(0, chain.keys.size() + 1);
    if (pick < chain.keys.size()) return chain.keys[pick];
    return in.Bytes(80);
  };
  *store_query = kind <= 1;
  switch (kind) {
    case 0:
      req.set_path("/store/" + kairos::app::HexEncode(store_key()));
      break;
    case 1:
      req.set_path("/store");
      req.set_data(store_key());
      break;
    case 2: {
      cosmos::auth::v1beta1::QueryAccountRequest q;
      q.set_address(AddressText(in));
      req.set_path("/cosmos.auth.v1beta1.Query/Account");
      req.set_data(q.SerializeAsString());
      break;
    }
    case 3:
    case 4: {
      if (kind == 3) {
        cosmos::bank::v1beta1::QueryBalanceRequest q;
        q.set_address(AddressText(in));
        q.set_denom(in.Bool() ? in.Bytes(20) : "stake");
        req.set_path("/cosmos.bank.v1beta1.Query/Balance");
        req.set_data(q.SerializeAsString());
      } else {
        cosmos::bank::v1beta1::QueryAllBalancesRequest q;
        q.set_address(AddressText(in));
        req.set_path("/cosmos.bank.v1beta1.Query/AllBalances");
        req.set_data(q.SerializeAsString());
      }
      break;
    }
    case 5: {
      kairos::auth::v1::QueryUnorderedNonceRequest q;
      q.set_signer(AddressText(in));
      q.set_timeout_unix_nanos(in.Bool() ? static_cast<std::int64_t>(in.U64())
                                         : kT0 + 4 * kSecond + 300 * kSecond);
      req.set_path("/kairos.auth.v1.Query/UnorderedNonce");
      req.set_data(q.SerializeAsString());
      break;
    }
    case 6: {
      cosmos::tx::v1beta1::SimulateRequest q;
      TxModel model = chain.model;  // the committed sequences
      q.set_tx_bytes(in.Bool() ? in.Bytes(400) : BuildTx(in, model));
      req.set_path("/cosmos.tx.v1beta1.Service/Simulate");
      req.set_data(q.SerializeAsString());
      break;
    }
    case 7: {
      static const char* const kPaths[] = {"Holder", "Session", "DepositQuote",
                                           "Registration", "Params", "Var"};
      const std::uint64_t which = in.Range(0, 5);
      req.set_path(std::string("/kairos.locks.v1.Query/") + kPaths[which]);
      if (in.Bool()) {
        req.set_data(in.Bytes(100));
      } else if (which == 0 || which == 5) {
        kairos::locks::v1::QueryVarRequest q;  // Holder's request has the same fields
        q.set_resource(in.Bool() ? in.Bytes(10) : "fuzz");
        q.set_key(in.Bool() ? AddressText(in) : Keys()[1].bech32);
        req.set_data(q.SerializeAsString());
      } else if (which != 4) {
        kairos::locks::v1::QuerySessionRequest q;  // the others take one address
        q.set_address(AddressText(in));
        req.set_data(q.SerializeAsString());
      }
      break;
    }
    case 8: {
      static const char* const kPaths[] = {"/app/version", "/app/height",
                                           "/kairos.mempool.v1.Query/Stats"};
      req.set_path(kPaths[in.Range(0, 2)]);
      break;
    }
    default:
      req.set_path(in.Bytes(60));
      req.set_data(in.Bytes(200));
      break;
  }
  switch (in.Byte() % 4) {
    case 0: req.set_height(0); break;
    case 1: req.set_height(static_cast<std::int64_t>(in.Range(1, kBlocks))); break;
    case 2: req.set_height(kBlocks + static_cast<std::int64_t>(in.Range(1, 3))); break;
    default: req.set_height(static_cast<std::int64_t>(in.U64())); break;
  }
  req.set_prove(in.Bool());
  return req;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Chain& chain = TheChain();
  ByteReader in(data, size);
  bool store_query = false;
  const pb::RequestQuery req = BuildQuery(in, chain, &store_query);
  kairos::abci::Application& app = chain.node.abci();
  const pb::ResponseQuery res = app.Query(req);
  Check(SerializeDeterministic(res) == SerializeDeterministic(app.Query(req)),
        "the same query answered twice differently");
  const pb::ResponseInfo info = app.Info({});
  Check(info.last_block_height() == kBlocks && info.last_block_app_hash() == chain.app_hash[kBlocks],
        "a query changed the committed state");
  if (res.code() != 0) {
    Check(!res.codespace().empty(), "an error without a codespace");
    Check(!res.log().empty(), "an error without a log");
    Check(res.proof_ops().ops_size() == 0 || req.prove(), "a proof nobody asked for");
  }
  if (req.path() == "/cosmos.tx.v1beta1.Service/Simulate") {
    cosmos::tx::v1beta1::SimulateRequest q;
    const NodeSetup setup = QuerySetup();
    if (q.ParseFromString(req.data()) && q.tx_bytes().size() > setup.query.simulate_max_tx_bytes) {
      Check(res.code() == 21, "a Simulate over the tx size limit answered code " +
                                  std::to_string(res.code()) + ": " + res.log());
    }
    cosmos::tx::v1beta1::SimulateResponse answer;
    if (res.code() == 0) {
      Check(answer.ParseFromString(res.value()), "a Simulate answer that does not parse");
      Check(answer.gas_info().gas_used() <= setup.query.simulate_max_gas,
            "a simulation used " + std::to_string(answer.gas_info().gas_used()) +
                " gas, over simulate_max_gas");
    }
  }
  if (res.proof_ops().ops_size() > 0) {
    Check(req.prove(), "a proof nobody asked for");
    CheckProofs(res, chain, store_query && res.code() == 0);
  }
  return 0;
}
