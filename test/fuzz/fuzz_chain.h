// Shared by the fuzz targets that drive a whole KairosApp (block_fuzz, query_fuzz, genesis_fuzz):
// a node over a MerkleStore on LevelDB's in-memory Env (no disk, no fsync, so Commit and a
// restart cost microseconds and every input can start a chain of its own), a fixed set of test
// keys, the genesis that funds some of them, and signed txs whose fields the input chooses.
//
// Inputs are read front to back by ByteReader: a byte string is a sequence of choices, each of
// which reads as its smallest value (usually the valid, common case) once the input runs out.
// So short inputs are valid txs, and the seed files scripts/fuzz.sh writes are readable.
//
// Thread-safety: one libFuzzer thread; nothing here is shared between threads.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <leveldb/env.h>
#include <leveldb/helpers/memenv.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/kairos_app.h"
#include "app/logging.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "store/merkle_store.h"
#include "app/bank/msgs.h"
#include "app/locks/msgs.h"

namespace kairos::fuzz {

namespace pb = ::tendermint::abci;

inline constexpr char kChainId[] = "fuzz-chain";
inline constexpr std::int64_t kSecond = 1'000'000'000;
inline constexpr std::int64_t kT0 = 1767225600LL * kSecond;  // 2026-01-01T00:00:00Z
inline constexpr std::int64_t kMaxGas = 10'000'000;

// Stops the fuzzer with a message: libFuzzer saves the input that got here.
[[noreturn]] inline void Violated(const std::string& what) {
  std::fprintf(stderr, "property violated: %s\n", what.c_str());
  std::abort();
}
inline void Check(bool ok, const std::string& what) {
  if (!ok) Violated(what);
}

// Reads choices from the front of the input; each reads as 0 (its range's minimum) once the
// input is exhausted.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  // A value in [lo, hi] from one byte (two when the range is wider than 256).
  std::uint64_t Range(std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t v = Byte();
    if (hi - lo > 255) v = (v << 8) | Byte();
    return lo + v % (hi - lo + 1);
  }
  std::uint64_t U64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  // A string of the next Range(0, max_len) bytes.
  std::string Bytes(std::size_t max_len) {
    const std::size_t n = std::min<std::size_t>(Range(0, max_len), size_ - pos_);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t left() const { return size_ - pos_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

struct Key {
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string priv, pub, address, bech32;
  std::uint64_t account_number = 0;  // in the genesis (for the unfunded ones: a guess)
};

// Keys 0..3 are funded in Genesis() (accounts 0..3; key 2 is ed25519), 4 and 5 are not.
inline const std::vector<Key>& Keys() {
  static const std::vector<Key>* keys = [] {
    auto* out = new std::vector<Key>;
    for (int i = 0; i < 6; ++i) {
      Key k;
      k.type = i == 2 ? crypto::KeyType::kEd25519 : crypto::KeyType::kSecp256k1;
      k.priv = crypto::Sha256("fuzz-key-" + std::to_string(i));
      k.pub = k.type == crypto::KeyType::kSecp256k1 ? *crypto::Secp256k1PublicKey(k.priv)
                                                     : crypto::Ed25519PublicKey(k.priv);
      k.address = crypto::AddressOf(k.type, k.pub);
      k.bech32 = crypto::EncodeAccountAddress(k.address);
      k.account_number = static_cast<std::uint64_t>(i);
      out->push_back(std::move(k));
    }
    return out;
  }();
  return *keys;
}

// The genesis app_state: keys 0..3 funded with stake and atom, the locks module with a small
// whitelist fee and deposit so that its messages can succeed.
inline std::string GenesisAppState() {
  std::string balances;
  for (int i = 0; i < 4; ++i) {
    balances += std::string(i ? "," : "") + R"({"address":")" + Keys()[i].bech32 +
                R"(","coins":[{"denom":"atom","amount":"1000"},{"denom":"stake","amount":"10000000"}]})";
  }
  return R"({"bank":{"denom":"stake","balances":[)" + balances +
         R"(]},"locks":{"params":{"base_deposit":"100","whitelist_fee":"50"}}})";
}

inline pb::RequestInitChain GenesisRequest(const std::string& app_state = GenesisAppState()) {
  pb::RequestInitChain req;
  req.set_chain_id(kChainId);
  req.set_initial_height(1);
  req.set_app_state_bytes(app_state);
  req.mutable_consensus_params()->mutable_block()->set_max_gas(kMaxGas);
  return req;
}

inline void SetTime(google::protobuf::Timestamp* t, std::int64_t unix_nanos) {
  t->set_seconds(unix_nanos / kSecond);
  t->set_nanos(static_cast<std::int32_t>(unix_nanos % kSecond));
}

// How a fuzz Node keeps its versions and what the app's queries may cost.
struct NodeSetup {
  std::int64_t keep_recent = 100;
  std::int64_t checkpoint_interval = 50;
  // The store's in-memory trees below the latest and its cache of past-tree rebuilds
  // (StoreOptions): small values make queries at past heights rebuild.
  std::int64_t recent_versions = 4;
  std::size_t rebuild_cache = 4;
  app::QueryLimits query;
};

// A KairosApp over a store in its own in-memory Env. Reopen() is a restart: the app and the
// store are closed and opened again on what the Env holds.
class Node {
 public:
  explicit Node(const NodeSetup& setup = {})
      : env_(leveldb::NewMemEnv(leveldb::Env::Default())) {
    options_.dir = Dir();
    options_.env = env_.get();
    options_.keep_recent = setup.keep_recent;
    options_.checkpoint_interval = setup.checkpoint_interval;
    options_.recent_versions = setup.recent_versions;
    options_.rebuild_cache = setup.rebuild_cache;
    options_.verify_on_open = false;  // it reads table files by path, from the real disk
    options_.table_bytes_per_sync = 0;
    options_.page_cache_pages = 1 << 12;
    options_.block_cache_bytes = 1u << 20;
    options_.value_cache_bytes = 1u << 20;
    options_.write_buffer_bytes = 1u << 20;
    app_options_.query = setup.query;
    Reopen();
  }
  ~Node() { app_.reset(); }

  app::KairosApp& app() { return *app_; }
  // The ABCI interface, as CometBFT's requests reach the app.
  abci::Application& abci() { return *app_; }

  void Reopen() {
    app_.reset();  // closes the store first, as a process exit would
    auto store = store::MerkleStore::Open(options_);
    Check(store.ok(), "cannot open the store: " + store.status().ToString());
    auto app = app::KairosApp::Open(std::move(*store), app_options_);
    Check(app.ok(), "cannot open KairosApp: " + app.status().ToString());
    app_ = std::move(*app);
  }

 private:
  // MerkleStore::Open creates the directory on the real disk (empty: LevelDB's files live in the
  // Env); one per process, removed at exit.
  static const std::string& Dir() {
    static const std::string* dir = [] {
      app::SetupLogging("off", "plain");
      std::string pattern = (std::filesystem::temp_directory_path() / "kairos-fuzz.XXXXXX").string();
      Check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
      auto* d = new std::string(pattern + "/data");
      std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(std::filesystem::path(Dir()).parent_path(), ec);
      });
      return d;
    }();
    return *dir;
  }

  std::unique_ptr<leveldb::Env> env_;
  store::StoreOptions options_;
  app::AppOptions app_options_;
  std::unique_ptr<app::KairosApp> app_;
};

// What the tx builder assumes about the chain: each key's next sequence, bumped for every
// ordered tx it builds (a tx that fails leaves the model ahead, which the fuzzer may undo with
// a sequence offset), and the time of the block the txs go into.
struct TxModel {
  std::vector<std::uint64_t> sequences = std::vector<std::uint64_t>(Keys().size(), 0);
  std::int64_t block_time = kT0;
};

// One signed tx whose fields come from `in` (a first byte of 0 and the rest 0: a valid MsgSend
// of 1stake from key 0 to key 1 at the model's sequence). Byte by byte:
//   messages (1..4), then per message: kind (MsgSend, or a kairos.locks.v1 message), signer,
//   and its fields; then: unordered, timeout offset, sequence offset, fee, gas, memo length,
//   public keys left out, fee payer, fee granter, timeout height, wrong chain id or account
//   number, and finally a byte edit of the signed bytes.
inline std::string BuildTx(ByteReader& in, TxModel& model) {
  const std::vector<Key>& keys = Keys();
  auto key_at = [&](std::uint64_t i) -> const Key& { return keys[i % keys.size()]; };
  app::TxSpec spec;
  std::vector<const Key*> signers;  // GetSigners' order: unique message signers, then the payer
  auto add_signer = [&](const Key& k) {
    if (std::find(signers.begin(), signers.end(), &k) == signers.end()) signers.push_back(&k);
  };
  const Key& first = key_at(in.Range(0, 5));
  const std::uint64_t n_msgs = in.Range(1, 4);
  for (std::uint64_t m = 0; m < n_msgs; ++m) {
    const std::uint8_t kind = in.Byte() % 8;
    const Key& sender = m == 0 ? first : (in.Bool() ? key_at(in.Range(0, 5)) : first);
    add_signer(sender);
    auto slot = [&] {
      app::locks::LockSlot s;
      s.resource = std::string(1, static_cast<char>('a' + in.Range(0, 2)));
      if (in.Bool()) s.key = key_at(in.Range(0, 5)).bech32;
      return s;
    };
    auto amount = [&](std::uint64_t max) {
      const std::uint64_t v = in.Range(0, max);
      return v == 0 ? ante::Uint256(0) : ante::Uint256(v);
    };
    switch (kind) {
      case 4: {
        app::locks::MsgRegister r;
        r.sender = sender.address;
        spec.msgs.push_back(r);
        break;
      }
      case 5: {
        app::locks::MsgAcquire a;
        a.sender = sender.address;
        const std::uint64_t n = in.Range(1, 3);
        for (std::uint64_t i = 0; i < n; ++i) a.slots.push_back(slot());
        a.max_deposit = amount(1000);
        spec.msgs.push_back(a);
        break;
      }
      case 6: {
        app::locks::MsgWrite w;
        w.sender = sender.address;
        w.slot = slot();
        w.op = in.Bool() ? app::locks::LockWriteOp::kAdd : app::locks::LockWriteOp::kSet;
        w.value = static_cast<std::int64_t>(in.Range(0, 200)) - 100;
        w.max_deposit = amount(1000);
        spec.msgs.push_back(w);
        break;
      }
      case 7: {
        if (in.Bool()) {
          app::locks::MsgRelease r;
          r.sender = sender.address;
          r.holder = key_at(in.Range(0, 5)).address;
          spec.msgs.push_back(r);
        } else {
          app::locks::MsgRefundRegistration r;
          r.sender = sender.address;
          r.address = key_at(in.Range(0, 5)).address;
          spec.msgs.push_back(r);
        }
        break;
      }
      default: {  // 0..3: the common message
        app::bank::MsgSend s;
        s.from = sender.address;
        const std::uint64_t to = in.Range(0, 6);
        s.to = to == 6 ? crypto::Sha256("fuzz-to").substr(0, 20) : key_at(to + 1).address;
        const std::uint64_t coins = in.Range(0, 300);
        auto parsed = ante::Coins::Parse(std::to_string(coins % 100 + 1) +
                                         (coins < 200 ? "stake" : "atom"));
        if (coins < 290 && parsed.ok()) s.amount = *parsed;  // else empty: code 10 or 18
        spec.msgs.push_back(s);
        break;
      }
    }
  }
  spec.unordered = in.Bool();
  const std::int64_t timeout_s = 60 - static_cast<std::int64_t>(in.Range(0, 700));
  if (spec.unordered || in.Bool()) {
    spec.timeout_unix_nanos = model.block_time + timeout_s * kSecond + in.Range(0, 3);
  }
  const std::uint8_t sequence_offset = in.Byte() % 4;  // 0, +1, -1, +5
  const std::uint64_t fee = in.Range(0, 5000);
  if (fee > 0) spec.fee = *ante::Coins::Parse(std::to_string(fee) + (fee % 7 == 0 ? "atom" : "stake"));
  spec.gas_limit = 200000 - in.Range(0, 200000) + (in.Bool() ? kMaxGas : 0);
  spec.memo = std::string(in.Range(0, 300), 'm');
  const std::uint8_t no_pubkeys = in.Byte() % 4;  // bit 0: the first signer's, bit 1: the others'
  if (in.Bool()) {
    const Key& payer = key_at(in.Range(0, 5));
    spec.fee_payer = payer.address;
    add_signer(payer);
  }
  if (in.Bool()) spec.fee_granter = key_at(in.Range(0, 5)).address;
  if (in.Bool()) spec.timeout_height = in.Range(0, 4);
  const std::uint8_t wrong = in.Byte() % 8;  // 1: chain id, 2: account number, 3: a dropped signer

  std::vector<app::SignerKey> signer_keys;
  for (std::size_t i = 0; i < signers.size(); ++i) {
    const Key& k = *signers[i];
    const std::size_t index = static_cast<std::size_t>(&k - keys.data());
    std::uint64_t sequence = model.sequences[index];
    if (sequence_offset == 1) sequence += 1;
    if (sequence_offset == 2 && sequence > 0) sequence -= 1;
    if (sequence_offset == 3) sequence += 5;
    app::SignerKey s;
    s.type = k.type;
    s.private_key = k.priv;
    s.account_number = k.account_number + (wrong == 2 ? 1 : 0);
    s.sequence = spec.unordered ? 0 : sequence;
    s.include_pubkey = !((no_pubkeys & (i == 0 ? 1 : 2)) != 0);
    signer_keys.push_back(s);
    if (!spec.unordered) ++model.sequences[index];
  }
  if (wrong == 3 && signer_keys.size() > 1) signer_keys.pop_back();
  std::string tx = app::BuildSignedTx(spec, signer_keys, wrong == 1 ? "other-chain" : kChainId);
  // A byte edit: position (two bytes) and a value (0: no edit).
  const std::uint64_t at = in.Range(0, 65535);
  const std::uint8_t value = in.Byte();
  if (value != 0) tx[at % tx.size()] = static_cast<char>(tx[at % tx.size()] ^ value);
  return tx;
}

}  // namespace kairos::fuzz
