#include "ante/decorators.h"

#include <algorithm>
#include <limits>

#include "ante/sign_doc.h"
#include "crypto/base64.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/keys.h"
#include "store/big_endian.h"

namespace kairos::ante {

namespace {

std::string Bech32(std::string_view address) { return crypto::EncodeAccountAddress(address); }

// A signer's entry in the tx's account memo (Context::accounts), read from the store on first
// use. A repeat is charged as the store read it stands for (GasKv::Get: ReadFlat, then
// ReadPerByte over key and value). The pointer is valid until the next MemoEntry.
Result<AccountMemoEntry*> MemoEntry(Context& ctx, const AccountKeeper& ak,
                                    std::string_view address) {
  if (AccountMemoEntry* e = ctx.accounts.Find(address)) {
    ctx.gas.Consume(ctx.kv_gas.read_cost_flat, "ReadFlat");
    ctx.gas.Consume(ctx.kv_gas.read_cost_per_byte * e->stored_bytes, "ReadPerByte");
    return e;
  }
  AccountMemoEntry e;
  auto acc = ak.GetAccount(*ctx.store, address, &e.stored_bytes);
  if (!acc.ok()) return acc.status();
  e.address = std::string(address);
  e.account = std::move(*acc);
  return &ctx.accounts.Add(std::move(e));
}

// Code 14 when the tx carries more signatures than tx_sig_limit. No multisig keys: every signer
// info is one key.
TxStatus CheckSignatureCount(const Tx& tx, const AuthParams& params) {
  if (tx.signer_infos.size() > params.tx_sig_limit) {
    return TxStatus::Error(kTooManySignatures, "signatures: " +
                                                   std::to_string(tx.signer_infos.size()) +
                                                   ", limit: " +
                                                   std::to_string(params.tx_sig_limit));
  }
  return TxStatus::OK();
}

// A signer's account through the memo, read-only. Same validity as MemoEntry's.
Result<const std::optional<Account>*> ReadAccount(Context& ctx, const AccountKeeper& ak,
                                                  std::string_view address) {
  auto e = MemoEntry(ctx, ak, address);
  if (!e.ok()) return e.status();
  return &(*e)->account;
}

// Writes a memo entry's account, which the caller changed in place, to the tx's branch (no copy
// of the account). If the write fails the memo is ahead of the branch, but the tx fails with
// it and both are dropped.
Status StoreAccount(Context& ctx, const AccountKeeper& ak, AccountMemoEntry& e) {
  return ak.SetAccount(*ctx.store, *e.account, &e.stored_bytes);
}

// The public key that signs for signer `i`: the one in the tx, else the account's; nullptr
// if neither. Points into `tx` or `acc`.
const PubKey* SignerKey(const Tx& tx, std::size_t i, const std::optional<Account>& acc) {
  if (i < tx.signer_infos.size() && tx.signer_infos[i].public_key) {
    return &*tx.signer_infos[i].public_key;
  }
  if (acc && acc->pub_key) return &*acc->pub_key;
  return nullptr;
}

}  // namespace

TxStatus Next::operator()(Context& ctx, const Tx& tx) const {
  if (index_ >= pipeline_->decorators_.size()) return TxStatus::OK();
  return pipeline_->decorators_[index_]->Handle(ctx, tx, Next(pipeline_, index_ + 1));
}

// --- signature cache ---------------------------------------------------------------------

namespace {

// secp256k1 signs SHA-256(sign bytes): its cache key covers that digest, which the verify
// needs anyway, instead of hashing the sign bytes a second time.
SignatureCache::Key Secp256k1KeyOf(const PubKey& key, std::string_view digest,
                                   std::string_view signature) {
  // The digest is always 32 bytes: the split with the signature is unambiguous.
  return crypto::Sha256Concat({"S", key.key, digest, signature});
}

}  // namespace

SignatureCache::Key SignatureCache::KeyOf(const PubKey& key, std::string_view sign_bytes,
                                          std::string_view signature) {
  if (key.type == crypto::KeyType::kSecp256k1) {
    const crypto::Digest32 digest = crypto::Sha256Array(sign_bytes);
    return Secp256k1KeyOf(key, std::string_view(digest.data(), digest.size()), signature);
  }
  // Length-prefix the sign bytes so (sign bytes, signature) splits are unambiguous.
  const std::string length = EncodeBigEndian64(sign_bytes.size());
  return crypto::Sha256Concat({"e", key.key, length, sign_bytes, signature});
}

bool SignatureCache::Contains(const Key& key) const {
  std::lock_guard lock(mu_);
  return verified_.contains(key);
}

void SignatureCache::Add(const Key& key) {
  std::lock_guard lock(mu_);
  if (verified_.size() >= capacity_) verified_.clear();
  verified_.insert(key);
}

bool VerifyTxSignature(const PubKey& key, std::string_view sign_bytes,
                       std::string_view signature, SignatureCache* cache) {
  if (key.type == crypto::KeyType::kSecp256k1) {
    const crypto::Digest32 digest_bytes = crypto::Sha256Array(sign_bytes);
    const std::string_view digest(digest_bytes.data(), digest_bytes.size());
    SignatureCache::Key cache_key{};
    if (cache) {
      cache_key = Secp256k1KeyOf(key, digest, signature);
      if (cache->Contains(cache_key)) return true;
    }
    if (!crypto::VerifySecp256k1Digest(key.key, digest, signature)) return false;
    if (cache) cache->Add(cache_key);
    return true;
  }
  SignatureCache::Key cache_key{};
  if (cache) {
    cache_key = SignatureCache::KeyOf(key, sign_bytes, signature);
    if (cache->Contains(cache_key)) return true;
  }
  if (!crypto::VerifySignature(key.type, key.key, sign_bytes, signature)) return false;
  if (cache) cache->Add(cache_key);
  return true;
}

// --- 1. SetUpContext ---------------------------------------------------------------------

TxStatus SetUpContextDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (ctx.mode == ExecMode::kSimulate) {
    ctx.gas.set_limit(ctx.simulate_gas_limit);
  } else {
    ctx.gas.set_limit(tx.gas_limit);
  }
  if (ctx.block.max_gas > 0 && tx.gas_limit > static_cast<std::uint64_t>(ctx.block.max_gas)) {
    return TxStatus::Error(kInvalidGasLimit, "tx gas limit " + std::to_string(tx.gas_limit) +
                                                 " exceeds block max gas " +
                                                 std::to_string(ctx.block.max_gas));
  }
  TxStatus s = next(ctx, tx);
  if (ctx.gas.exhausted()) {
    return TxStatus::Error(kOutOfGas, "out of gas in location: " + ctx.gas.exhausted_at() +
                                          "; gasWanted: " + std::to_string(tx.gas_limit) +
                                          ", gasUsed: " + std::to_string(ctx.gas.consumed()));
  }
  return s;
}

// --- 2. ExtensionOptions -----------------------------------------------------------------

TxStatus ExtensionOptionsDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (tx.extension_options > 0) {
    return TxStatus::Error(kUnknownExtensionOptions, "unknown extension options");
  }
  return next(ctx, tx);
}

// --- 3. ValidateBasic --------------------------------------------------------------------

TxStatus ValidateBasicDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (ctx.mode == ExecMode::kReCheck) return next(ctx, tx);
  if (tx.msgs.empty()) {
    return TxStatus::Error(kInvalidRequest, "must contain at least one message");
  }
  constexpr auto kMaxGasWanted = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (tx.gas_limit > kMaxGasWanted) {
    return TxStatus::Error(kInvalidRequest, "invalid gas supplied; " +
                                                std::to_string(tx.gas_limit) + " > " +
                                                std::to_string(kMaxGasWanted));
  }
  if (tx.signatures.empty()) return TxStatus::Error(kNoSignatures, "no signatures supplied");
  if (tx.signatures.size() != tx.signers.size()) {
    return TxStatus::Error(kUnauthorized, "wrong number of signers; expected " +
                                              std::to_string(tx.signers.size()) + ", got " +
                                              std::to_string(tx.signatures.size()));
  }
  if (tx.signer_infos.size() != tx.signatures.size()) {
    return TxStatus::Error(kUnauthorized, "the number of signatures " +
                                              std::to_string(tx.signatures.size()) +
                                              " doesn't match the number of signer infos " +
                                              std::to_string(tx.signer_infos.size()));
  }
  // The signature limit, before any decorator reads state: from DeductFee on, each signer costs
  // account reads and writes (SetPubKey, the memo), which would all be done before
  // ValidateSigCount refused the tx, and undone with its fee.
  if (TxStatus s = CheckSignatureCount(tx, ak_.params()); !s.ok()) return s;
  return next(ctx, tx);
}

// --- 4. TxTimeoutHeight ------------------------------------------------------------------

TxStatus TxTimeoutHeightDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (tx.timeout_height > 0 && ctx.block.height > 0 &&
      static_cast<std::uint64_t>(ctx.block.height) > tx.timeout_height) {
    return TxStatus::Error(kTxTimeoutHeight, "block height: " + std::to_string(ctx.block.height) +
                                                 ", timeout height: " +
                                                 std::to_string(tx.timeout_height));
  }
  if (tx.timeout_unix_nanos && *tx.timeout_unix_nanos != 0 &&
      *tx.timeout_unix_nanos < ctx.block.time_unix_nanos) {
    return TxStatus::Error(kTxTimeout, "block time: " + FormatUnixNanos(ctx.block.time_unix_nanos) +
                                           ", timeout timestamp: " +
                                           FormatUnixNanos(*tx.timeout_unix_nanos));
  }
  return next(ctx, tx);
}

// --- 5. ValidateMemo ---------------------------------------------------------------------

TxStatus ValidateMemoDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  const std::uint64_t max = ak_.params().max_memo_characters;
  if (tx.memo.size() > max) {
    return TxStatus::Error(kMemoTooLarge, "maximum number of characters is " +
                                              std::to_string(max) + " but received " +
                                              std::to_string(tx.memo.size()) + " characters");
  }
  return next(ctx, tx);
}

// --- 6. ConsumeTxSizeGas -----------------------------------------------------------------

TxStatus ConsumeTxSizeGasDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  const std::uint64_t per_byte = ak_.params().tx_size_cost_per_byte;
  ctx.gas.Consume(per_byte * tx.raw_size, "txSize");
  if (ctx.mode == ExecMode::kSimulate) {
    // A simulated tx may carry empty signatures: charge for the bytes a real one would add
    // (64-byte signature plus its length prefix), as the SDK adds placeholder signatures.
    for (const std::string& sig : tx.signatures) {
      if (sig.empty()) ctx.gas.Consume(per_byte * (crypto::kSignatureBytes + 1), "txSize");
    }
  }
  if (ctx.gas.exhausted()) return TxStatus::OK();  // SetUpContext reports it
  return next(ctx, tx);
}

// --- 7. DeductFee ------------------------------------------------------------------------

TxStatus DeductFeeDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (ctx.mode != ExecMode::kSimulate && tx.gas_limit == 0) {
    return TxStatus::Error(kInvalidGasLimit, "must provide positive gas");
  }
  // Min gas prices are the validator's own policy: CheckTx only, never consensus.
  if (IsCheck(ctx.mode) && ctx.min_gas_prices != nullptr && !ctx.min_gas_prices->empty()) {
    static const Uint256 kAtto("1000000000000000000");
    std::vector<Coin> required;
    bool enough = false;
    for (const GasPrice& p : *ctx.min_gas_prices) {
      // ceil(price x gas), in whole units of the denom.
      Uint256 amount = (p.atto_per_gas * tx.gas_limit + kAtto - 1) / kAtto;
      if (amount == 0) continue;
      if (tx.fee.AmountOf(p.denom) >= amount) enough = true;
      required.push_back({p.denom, amount});
    }
    if (!required.empty() && !enough) {
      std::sort(required.begin(), required.end(),
                [](const Coin& a, const Coin& b) { return a.denom < b.denom; });
      std::string req;
      for (const Coin& c : required) req += (req.empty() ? "" : ",") + ToString(c.amount) + c.denom;
      return TxStatus::Error(kInsufficientFee, "insufficient fees; got: " + tx.fee.ToString() +
                                                   " required: " + req);
    }
  }
  ctx.priority = FeePerGasQ64(tx.fee, tx.gas_limit);
  if (tx.FeePayer().empty()) {  // only reachable on recheck, which skips ValidateBasic
    return TxStatus::Error(kInvalidRequest, "the tx has no signer to pay its fee");
  }
  // No x/feegrant: a granter would be ignored and the payer charged instead. The SDK without
  // a feegrant keeper refuses it the same way (x/auth/ante/fee.go checkDeductFee).
  if (!tx.fee_granter.empty()) {
    return TxStatus::Error(kInvalidRequest, "fee grants are not enabled");
  }
  if (!tx.fee.empty()) {
    // The payer's account first (read through the memo: SetPubKey reads it next).
    auto payer = ReadAccount(ctx, ak_, tx.FeePayer());
    if (!payer.ok()) return TxStatus::FromStore(payer.status());
    if (!**payer) {
      return TxStatus::Error(kUnknownAddress,
                             "fee payer address: " + Bech32(tx.FeePayer()) + " does not exist");
    }
    TxStatus s = bank_.DeductFee(*ctx.store, tx.FeePayer(), tx.fee);
    if (!s.ok()) return s;
  } else if (ctx.mode == ExecMode::kSimulate) {
    // Clients simulate with an empty fee and then pay one (CosmJS's "auto" multiplies the
    // estimate by 1.4): charge what paying it will cost, or the estimate falls short by the
    // fee's own gas. The payer's account read, two balance reads and two balance writes at the
    // SDK's KV costs, plus ~15 fee bytes at 10 gas per byte: about 11,000 gas.
    ctx.gas.Consume(kSimulatedFeeGas, "simulated fee deduction");
  }
  if (ctx.records_events()) {
    ctx.Emit("tx", {{"fee", tx.fee.ToString()}, {"fee_payer", Bech32(tx.FeePayer())}});
  }
  if (ctx.gas.exhausted()) return TxStatus::OK();
  return next(ctx, tx);
}

// --- 8. SetPubKey ------------------------------------------------------------------------

TxStatus SetPubKeyDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  const bool simulate = ctx.mode == ExecMode::kSimulate;
  for (std::size_t i = 0; i < tx.signers.size() && i < tx.signer_infos.size(); ++i) {
    const std::optional<PubKey>& pk = tx.signer_infos[i].public_key;
    if (!pk) continue;
    if (!simulate && crypto::AddressOf(pk->type, pk->key) != tx.signers[i]) {
      return TxStatus::Error(kInvalidPubKey, "pubKey does not match signer address " +
                                                 Bech32(tx.signers[i]) + " with signer index: " +
                                                 std::to_string(i));
    }
    auto entry = MemoEntry(ctx, ak_, tx.signers[i]);
    if (!entry.ok()) return TxStatus::FromStore(entry.status());
    std::optional<Account>& acc = (*entry)->account;
    if (!acc) {
      return TxStatus::Error(kUnknownAddress,
                             "account " + Bech32(tx.signers[i]) + " does not exist");
    }
    if (!acc->pub_key) {
      acc->pub_key = *pk;
      if (Status s = StoreAccount(ctx, ak_, **entry); !s.ok()) return TxStatus::FromStore(s);
    }
  }
  for (std::size_t i = 0; ctx.records_events() && i < tx.signers.size() &&
                          i < tx.signer_infos.size();
       ++i) {
    if (!tx.unordered) {
      ctx.Emit("tx", {{"acc_seq", Bech32(tx.signers[i]) + "/" +
                                      std::to_string(tx.signer_infos[i].sequence)}});
    }
  }
  for (const std::string& sig : tx.signatures) {
    if (ctx.records_events()) ctx.Emit("tx", {{"signature", crypto::Base64Encode(sig)}});
  }
  if (ctx.gas.exhausted()) return TxStatus::OK();
  return next(ctx, tx);
}

// --- 9. ValidateSigCount -----------------------------------------------------------------

TxStatus ValidateSigCountDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  // ValidateBasic checked this already, except on recheck, which skips ValidateBasic.
  if (TxStatus s = CheckSignatureCount(tx, ak_.params()); !s.ok()) return s;
  return next(ctx, tx);
}

// --- 10. SigGasConsume -------------------------------------------------------------------

TxStatus SigGasConsumeDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  const AuthParams& p = ak_.params();
  for (std::size_t i = 0; i < tx.signers.size(); ++i) {
    auto acc = ReadAccount(ctx, ak_, tx.signers[i]);
    if (!acc.ok()) return TxStatus::FromStore(acc.status());
    const PubKey* key = SignerKey(tx, i, **acc);
    if (!key) {
      if (ctx.mode != ExecMode::kSimulate) {
        return TxStatus::Error(kInvalidPubKey, "pubkey on account is not set");
      }
      ctx.gas.Consume(p.sig_verify_cost_secp256k1, "ante verify: secp256k1");  // placeholder
      continue;
    }
    if (key->type == crypto::KeyType::kSecp256k1) {
      ctx.gas.Consume(p.sig_verify_cost_secp256k1, "ante verify: secp256k1");
    } else {
      ctx.gas.Consume(p.sig_verify_cost_ed25519, "ante verify: ed25519");
    }
  }
  if (ctx.gas.exhausted()) return TxStatus::OK();
  return next(ctx, tx);
}

// --- 11. SigVerification -----------------------------------------------------------------

TxStatus SigVerificationDecorator::CheckUnordered(Context& ctx, const Tx& tx) const {
  const AuthParams& p = ak_.params();
  const std::int64_t block_time = ctx.block.time_unix_nanos;
  if (!tx.timeout_unix_nanos || *tx.timeout_unix_nanos == 0) {
    return TxStatus::Error(kInvalidRequest, "unordered transaction must have timeout_timestamp set");
  }
  const std::int64_t timeout = *tx.timeout_unix_nanos;
  // Strictly later: a nonce whose timeout equals the block time is purged by this block's
  // PreBlock, so accepting it would let the same tx in twice.
  if (timeout <= block_time) {
    return TxStatus::Error(kInvalidRequest,
                           "unordered transaction has a timeout_timestamp that has already "
                           "passed or equals the block time (" +
                               FormatUnixNanos(timeout) + " <= " + FormatUnixNanos(block_time) +
                               ")");
  }
  if (timeout - block_time > p.unordered_max_timeout_nanos) {
    return TxStatus::Error(kInvalidRequest,
                           "unordered tx ttl exceeds " + FormatDuration(p.unordered_max_timeout_nanos));
  }
  ctx.gas.Consume(p.unordered_gas_cost, "unordered tx");
  if (ctx.mode == ExecMode::kSimulate) return TxStatus::OK();
  for (const std::string& signer : tx.signers) {
    auto added = ak_.TryAddUnorderedNonce(*ctx.store, signer, timeout);
    if (!added.ok()) return TxStatus::FromStore(added.status());
    if (!*added) {
      return TxStatus::Error(kInvalidRequest, "failed to add unordered nonce: sender " +
                                                  Bech32(signer) + " has already used timeout " +
                                                  std::to_string(timeout));
    }
  }
  return TxStatus::OK();
}

TxStatus SigVerificationDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (tx.unordered && !ak_.params().unordered_enabled) {
    return TxStatus::Error(kNotSupported, "unordered transactions are not enabled");
  }
  if (tx.signatures.size() != tx.signers.size()) {
    return TxStatus::Error(kUnauthorized, "invalid number of signer;  expected: " +
                                              std::to_string(tx.signers.size()) + ", got: " +
                                              std::to_string(tx.signatures.size()));
  }
  if (tx.unordered) {
    TxStatus s = CheckUnordered(ctx, tx);
    if (!s.ok()) return s;
  }
  const bool verify = ctx.mode != ExecMode::kSimulate && ctx.mode != ExecMode::kReCheck;
  for (std::size_t i = 0; i < tx.signers.size(); ++i) {
    const std::uint64_t seq = i < tx.signer_infos.size() ? tx.signer_infos[i].sequence : 0;
    if (tx.unordered && seq > 0) {
      return TxStatus::Error(kInvalidRequest, "sequence is not allowed for unordered transactions");
    }
    auto acc = ReadAccount(ctx, ak_, tx.signers[i]);
    if (!acc.ok()) return TxStatus::FromStore(acc.status());
    if (!**acc) {
      return TxStatus::Error(kUnknownAddress,
                             "account " + Bech32(tx.signers[i]) + " does not exist");
    }
    const Account& account = ***acc;
    if (!account.pub_key && ctx.mode != ExecMode::kSimulate) {
      return TxStatus::Error(kInvalidPubKey, "pubkey on account is not set");
    }
    if (!tx.unordered && seq != account.sequence) {
      return TxStatus::Error(kWrongSequence, "account sequence mismatch, expected " +
                                                 std::to_string(account.sequence) + ", got " +
                                                 std::to_string(seq));
    }
    if (!verify) continue;
    if (i < tx.signer_infos.size() && !tx.signer_infos[i].sign_mode_direct) {
      return TxStatus::Error(kNotSupported, "signer " + std::to_string(i) +
                                                ": sign mode SIGN_MODE_UNSPECIFIED is not "
                                                "supported (only SIGN_MODE_DIRECT)");
    }
    thread_local std::string sign_bytes;  // capacity kept between txs
    sign_bytes.clear();
    AppendSignDocBytes(tx.body_bytes, tx.auth_info_bytes, ctx.block.chain_id,
                       account.account_number, &sign_bytes);
    if (!VerifyTxSignature(*account.pub_key, sign_bytes, tx.signatures[i], cache_)) {
      return TxStatus::Error(kUnauthorized,
                             "signature verification failed; please verify account number (" +
                                 std::to_string(account.account_number) + ") and chain-id (" +
                                 ctx.block.chain_id + ")");
    }
  }
  if (ctx.gas.exhausted()) return TxStatus::OK();
  return next(ctx, tx);
}

// --- 12. IncrementSequence ---------------------------------------------------------------

TxStatus IncrementSequenceDecorator::Handle(Context& ctx, const Tx& tx, const Next& next) const {
  if (tx.unordered) {
    if (!ak_.params().unordered_enabled) {
      return TxStatus::Error(kNotSupported, "unordered transactions are disabled");
    }
    return next(ctx, tx);
  }
  for (const std::string& signer : tx.signers) {
    auto entry = MemoEntry(ctx, ak_, signer);
    if (!entry.ok()) return TxStatus::FromStore(entry.status());
    std::optional<Account>& acc = (*entry)->account;
    if (!acc) {
      return TxStatus::Error(kUnknownAddress, "account " + Bech32(signer) + " does not exist");
    }
    ++acc->sequence;
    if (Status s = StoreAccount(ctx, ak_, **entry); !s.ok()) return TxStatus::FromStore(s);
  }
  return next(ctx, tx);
}

// --- the pipeline ------------------------------------------------------------------------

AntePipeline::AntePipeline(const AccountKeeper& ak, const BankKeeper& bank,
                           SignatureCache* cache) {
  decorators_.push_back(std::make_unique<SetUpContextDecorator>());
  decorators_.push_back(std::make_unique<ExtensionOptionsDecorator>());
  decorators_.push_back(std::make_unique<ValidateBasicDecorator>(ak));
  decorators_.push_back(std::make_unique<TxTimeoutHeightDecorator>());
  decorators_.push_back(std::make_unique<ValidateMemoDecorator>(ak));
  decorators_.push_back(std::make_unique<ConsumeTxSizeGasDecorator>(ak));
  decorators_.push_back(std::make_unique<DeductFeeDecorator>(ak, bank));
  decorators_.push_back(std::make_unique<SetPubKeyDecorator>(ak));
  decorators_.push_back(std::make_unique<ValidateSigCountDecorator>(ak));
  decorators_.push_back(std::make_unique<SigGasConsumeDecorator>(ak));
  decorators_.push_back(std::make_unique<SigVerificationDecorator>(ak, cache));
  decorators_.push_back(std::make_unique<IncrementSequenceDecorator>(ak));
}

}  // namespace kairos::ante
