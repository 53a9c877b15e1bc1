// The ante pipeline: one small class per decorator, each with one Handle(ctx, tx, next), run in
// the Cosmos SDK v0.53 order (x/auth/ante/ante.go NewAnteHandler):
//   1 SetUpContext        gas meter; gas limit <= block max gas (41); out of gas -> 11
//   2 ExtensionOptions    any extension option -> 31
//   3 ValidateBasic       signatures present (15), matching signers (4), at most tx_sig_limit
//                         (14), before any state is read; skipped on recheck
//   4 TxTimeoutHeight     timeout_height (30) and timeout_timestamp (42), every tx
//   5 ValidateMemo        memo length (12)
//   6 ConsumeTxSizeGas    size x cost per byte
//   7 DeductFee           min gas prices in CheckTx (13); fee to the fee collector (5, 9); priority
//   8 SetPubKey           pubkey matches signer (8); stored on first use; acc_seq/signature events
//   9 ValidateSigCount    signatures <= limit (14): on recheck (ValidateBasic checked the rest)
//  10 SigGasConsume       per-key verification cost
//  11 SigVerification    ADR-070 unordered rules (18, 37), sequences (32), signatures (4)
//  12 IncrementSequence   ordered txs only
//
// Unordered txs (ADR-070, final form): the timeout must be strictly later than the block time
// (the SDK's `timeout == block time` replay window is not copied), at most block time + the max
// timeout; sequences 0; one nonce per signer, written in the same branch as the fee, so a tx the
// ante rejects leaves no nonce behind. Simulate reads and writes no nonce.
//
// Thread-safety: a pipeline is immutable after construction and may be shared; each Run works
// on its own Context. The signature cache is internally synchronised.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "ante/context.h"
#include "ante/errors.h"
#include "ante/keepers.h"
#include "ante/tx.h"
#include "store/seeded_hash.h"

namespace kairos::ante {

class AntePipeline;

// Calls the rest of the pipeline.
class Next {
 public:
  Next(const AntePipeline* pipeline, std::size_t index) : pipeline_(pipeline), index_(index) {}
  TxStatus operator()(Context& ctx, const Tx& tx) const;

 private:
  const AntePipeline* pipeline_;
  std::size_t index_;
};

class Decorator {
 public:
  virtual ~Decorator() = default;
  virtual TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const = 0;
};

// Signatures already verified (by CheckTx, or by the parallel pre-check of a block), keyed by
// SHA-256(key type || pubkey || sign bytes || signature), with SHA-256(sign bytes) in place of
// the sign bytes for secp256k1 (what it signs). A hit skips the verification; a
// verification result is a pure function of the key, so using the cache cannot change an outcome.
// Bounded: cleared when full. Thread-safe.
class SignatureCache {
 public:
  using Key = std::array<char, 32>;  // a SHA-256 digest
  // The table is sized for `capacity` at once (it fills up on a running node anyway): no
  // rehash of the whole set while CheckTx is adding to it.
  explicit SignatureCache(std::size_t capacity = 1 << 16) : capacity_(capacity) {
    verified_.reserve(capacity);
  }
  static Key KeyOf(const PubKey& key, std::string_view sign_bytes, std::string_view signature);
  bool Contains(const Key& key) const;
  void Add(const Key& key);

 private:
  std::size_t capacity_;
  mutable std::mutex mu_;
  // Seeded (store/seeded_hash.h): the key is a digest of bytes the sender chooses (sign bytes,
  // signature), so its first 8 bytes can be ground for collisions in the bits a table uses.
  std::unordered_set<Key, store::SeededHash> verified_;
};

// Verifies one signature, through the cache when there is one.
bool VerifyTxSignature(const PubKey& key, std::string_view sign_bytes,
                       std::string_view signature, SignatureCache* cache);

class SetUpContextDecorator final : public Decorator {
 public:
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;
};

class ExtensionOptionsDecorator final : public Decorator {
 public:
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;
};

class ValidateBasicDecorator final : public Decorator {
 public:
  explicit ValidateBasicDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;  // for tx_sig_limit (a param: no state read)
};

class TxTimeoutHeightDecorator final : public Decorator {
 public:
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;
};

class ValidateMemoDecorator final : public Decorator {
 public:
  explicit ValidateMemoDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class ConsumeTxSizeGasDecorator final : public Decorator {
 public:
  explicit ConsumeTxSizeGasDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class DeductFeeDecorator final : public Decorator {
 public:
  // Gas a simulation with an empty fee is charged for the fee it will pay (see the .cc).
  static constexpr std::uint64_t kSimulatedFeeGas = 11000;
  DeductFeeDecorator(const AccountKeeper& ak, const BankKeeper& bank) : ak_(ak), bank_(bank) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
  const BankKeeper& bank_;
};

class SetPubKeyDecorator final : public Decorator {
 public:
  explicit SetPubKeyDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class ValidateSigCountDecorator final : public Decorator {
 public:
  explicit ValidateSigCountDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class SigGasConsumeDecorator final : public Decorator {
 public:
  explicit SigGasConsumeDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class SigVerificationDecorator final : public Decorator {
 public:
  SigVerificationDecorator(const AccountKeeper& ak, SignatureCache* cache)
      : ak_(ak), cache_(cache) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  TxStatus CheckUnordered(Context& ctx, const Tx& tx) const;
  const AccountKeeper& ak_;
  SignatureCache* cache_;
};

class IncrementSequenceDecorator final : public Decorator {
 public:
  explicit IncrementSequenceDecorator(const AccountKeeper& ak) : ak_(ak) {}
  TxStatus Handle(Context& ctx, const Tx& tx, const Next& next) const override;

 private:
  const AccountKeeper& ak_;
};

class AntePipeline {
 public:
  // The default 12 decorators. REQUIRES: the keepers (and the cache, if any) outlive it.
  AntePipeline(const AccountKeeper& ak, const BankKeeper& bank, SignatureCache* cache);
  // For tests: any list of decorators.
  explicit AntePipeline(std::vector<std::unique_ptr<Decorator>> decorators)
      : decorators_(std::move(decorators)) {}

  // REQUIRES: ctx.store is set (the gas-metered ante branch).
  TxStatus Run(Context& ctx, const Tx& tx) const { return Next(this, 0)(ctx, tx); }

 private:
  friend class Next;
  std::vector<std::unique_ptr<Decorator>> decorators_;
};

}  // namespace kairos::ante
