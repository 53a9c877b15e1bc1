#include "crypto/keys.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

#include "crypto/hash.h"
#include "crypto/internal.h"

namespace kairos::crypto {

namespace {

using internal::Secp256k1Context;
using internal::Uchars;

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

Pkey Ed25519PrivateKey(std::string_view seed) {
  if (seed.size() != kEd25519PrivKeyBytes) {
    throw std::invalid_argument("ed25519 private key must be 32 bytes");
  }
  Pkey key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, Uchars(seed), seed.size()));
  if (!key) throw std::runtime_error("EVP_PKEY_new_raw_private_key(ED25519) failed");
  return key;
}

MdCtx NewMdCtx() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) throw std::runtime_error("EVP_MD_CTX_new failed");
  return ctx;
}

bool VerifySecp256k1(std::string_view pubkey, std::string_view msg, std::string_view signature) {
  return VerifySecp256k1Digest(pubkey, Sha256(msg), signature);
}

}  // namespace

bool VerifySecp256k1Digest(std::string_view pubkey, std::string_view digest,
                           std::string_view signature) {
  // Only the 33-byte compressed form: secp256k1_ec_pubkey_parse would also take 65 bytes.
  if (pubkey.size() != kSecp256k1PubKeyBytes || digest.size() != 32) return false;
  if (signature.size() != kSignatureBytes) return false;
  const secp256k1_context* ctx = Secp256k1Context();
  secp256k1_pubkey pk;
  if (secp256k1_ec_pubkey_parse(ctx, &pk, Uchars(pubkey), pubkey.size()) != 1) return false;
  secp256k1_ecdsa_signature sig;
  // Fails for r or s >= the group order.
  if (secp256k1_ecdsa_signature_parse_compact(ctx, &sig, Uchars(signature)) != 1) return false;
  // secp256k1_ecdsa_verify accepts only lower-S signatures: a high-S one is false, which
  // is what the Cosmos SDK requires (no signature malleability).
  return secp256k1_ecdsa_verify(ctx, &sig, Uchars(digest), &pk) == 1;
}

namespace {

bool VerifyEd25519(std::string_view pubkey, std::string_view msg, std::string_view signature) {
  if (pubkey.size() != kEd25519PubKeyBytes) return false;
  // OpenSSL takes any 32 bytes here; a point that does not decode fails the verification.
  Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, Uchars(pubkey), pubkey.size()));
  if (!key) return false;
  MdCtx ctx = NewMdCtx();
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), Uchars(signature), signature.size(), Uchars(msg),
                          msg.size()) == 1;
}

}  // namespace

namespace internal {

const secp256k1_context* Secp256k1Context() {
  static const secp256k1_context* ctx = [] {
    secp256k1_context* c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    if (c == nullptr) throw std::runtime_error("secp256k1_context_create failed");
    // Randomization blinds the signing and key-generation arithmetic against side channels.
    unsigned char seed[32];
    if (RAND_bytes(seed, sizeof seed) != 1 || secp256k1_context_randomize(c, seed) != 1) {
      throw std::runtime_error("secp256k1 context randomization failed");
    }
    return c;
  }();
  return ctx;
}

}  // namespace internal

std::string AddressOf(KeyType type, std::string_view pubkey) {
  switch (type) {
    case KeyType::kSecp256k1:
    {
      const Digest32 sha = Sha256Array(pubkey);
      return Ripemd160(std::string_view(sha.data(), sha.size()));
    }
    case KeyType::kEd25519:
      return Sha256(pubkey).substr(0, kAddressBytes);
  }
  throw std::invalid_argument("unknown key type");
}

bool VerifySignature(KeyType type, std::string_view pubkey, std::string_view msg,
                     std::string_view signature) {
  if (signature.size() != kSignatureBytes) return false;
  switch (type) {
    case KeyType::kSecp256k1:
      return VerifySecp256k1(pubkey, msg, signature);
    case KeyType::kEd25519:
      return VerifyEd25519(pubkey, msg, signature);
  }
  return false;
}

std::optional<std::string> Secp256k1PublicKey(std::string_view privkey) {
  if (privkey.size() != kSecp256k1PrivKeyBytes) return std::nullopt;
  const secp256k1_context* ctx = Secp256k1Context();
  secp256k1_pubkey pk;
  if (secp256k1_ec_pubkey_create(ctx, &pk, Uchars(privkey)) != 1) return std::nullopt;
  std::string out(kSecp256k1PubKeyBytes, '\0');
  std::size_t len = out.size();
  secp256k1_ec_pubkey_serialize(ctx, Uchars(out), &len, &pk, SECP256K1_EC_COMPRESSED);
  return out;
}

std::string Secp256k1Sign(std::string_view privkey, std::string_view msg) {
  if (privkey.size() != kSecp256k1PrivKeyBytes) {
    throw std::invalid_argument("secp256k1 private key must be 32 bytes");
  }
  const secp256k1_context* ctx = Secp256k1Context();
  const std::string digest = Sha256(msg);
  secp256k1_ecdsa_signature sig;
  // A null nonce function means RFC 6979; the library always produces lower-S signatures.
  if (secp256k1_ecdsa_sign(ctx, &sig, Uchars(digest), Uchars(privkey), nullptr, nullptr) != 1) {
    throw std::invalid_argument("invalid secp256k1 private key");
  }
  std::string out(kSignatureBytes, '\0');
  secp256k1_ecdsa_signature_serialize_compact(ctx, Uchars(out), &sig);
  return out;
}

std::string Ed25519PublicKey(std::string_view seed) {
  Pkey key = Ed25519PrivateKey(seed);
  std::string out(kEd25519PubKeyBytes, '\0');
  std::size_t len = out.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), Uchars(out), &len) != 1 || len != out.size()) {
    throw std::runtime_error("EVP_PKEY_get_raw_public_key failed");
  }
  return out;
}

std::string Ed25519Sign(std::string_view seed, std::string_view msg) {
  Pkey key = Ed25519PrivateKey(seed);
  MdCtx ctx = NewMdCtx();
  std::string out(kSignatureBytes, '\0');
  std::size_t len = out.size();
  if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), Uchars(out), &len, Uchars(msg), msg.size()) != 1 ||
      len != out.size()) {
    throw std::runtime_error("ed25519 signing failed");
  }
  return out;
}

}  // namespace kairos::crypto
