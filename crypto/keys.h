// Account keys: secp256k1 (libsecp256k1) and ed25519 (OpenSSL), and the Cosmos address of each.
//
// Cosmos SIGN_MODE_DIRECT signatures:
//   secp256k1: 64 bytes r||s over SHA-256(sign bytes); only low-S signatures verify.
//   ed25519:   64 bytes (RFC 8032) over the sign bytes themselves.
// Addresses: secp256k1 = RIPEMD160(SHA256(33-byte compressed key)); ed25519 = SHA256(key)[:20].
//
// Thread-safe: the libsecp256k1 context is created once and only read afterwards. Verification
// never throws for untrusted input (wrong sizes, bytes that are not a key): it answers false.
// A broken precondition of a signing function throws std::invalid_argument.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kairos::crypto {

enum class KeyType { kSecp256k1, kEd25519 };

inline constexpr std::size_t kSecp256k1PubKeyBytes = 33;   // compressed
inline constexpr std::size_t kSecp256k1PrivKeyBytes = 32;
inline constexpr std::size_t kEd25519PubKeyBytes = 32;
inline constexpr std::size_t kEd25519PrivKeyBytes = 32;    // the RFC 8032 seed
inline constexpr std::size_t kSignatureBytes = 64;
inline constexpr std::size_t kAddressBytes = 20;

// The 20-byte address of a public key. REQUIRES: `pubkey` has the size of its type (the hash is
// taken of whatever bytes are given).
std::string AddressOf(KeyType type, std::string_view pubkey);

// True only for a valid public key of that type and a valid signature by it over `msg` (the sign
// bytes; secp256k1 hashes them with SHA-256 first). A high-S secp256k1 signature is false, and so
// is a 65-byte uncompressed secp256k1 key, r or s >= the group order, and an ed25519 S >= L.
bool VerifySignature(KeyType type, std::string_view pubkey, std::string_view msg,
                     std::string_view signature);
// The secp256k1 case of VerifySignature given SHA-256(msg) (32 bytes) instead of msg, for a
// caller that needs the digest anyway.
bool VerifySecp256k1Digest(std::string_view pubkey, std::string_view digest,
                           std::string_view signature);

// A compressed secp256k1 public key from a 32-byte private key; nullopt if the key is not a
// valid scalar.
std::optional<std::string> Secp256k1PublicKey(std::string_view privkey);
// A low-S 64-byte signature over SHA-256(msg) (RFC 6979 nonces: deterministic).
// REQUIRES: `privkey` is a valid secp256k1 private key.
std::string Secp256k1Sign(std::string_view privkey, std::string_view msg);

std::string Ed25519PublicKey(std::string_view seed);  // REQUIRES: 32-byte seed
std::string Ed25519Sign(std::string_view seed, std::string_view msg);

}  // namespace kairos::crypto
