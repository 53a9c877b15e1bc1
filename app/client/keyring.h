// Keyring: the account keys of `kairosd keys`, in one JSON file (default <home>/keyring.json,
// mode 0600). Each key's secret (its mnemonic and private key) is encrypted on its own with a
// passphrase: scrypt (random 16-byte salt; N, r, p stored with the entry) derives a 256-bit key
// for AES-256-GCM (random 12-byte nonce, 16-byte tag; the key type and address are the
// associated data, so an entry cannot be moved under another address). Names, types, addresses
// and public keys are in the clear, so `keys list` and `keys show` need no passphrase.
//
//   {"version": 1, "keys": [{"name": "alice", "type": "secp256k1", "address": "kairos1...",
//     "pub_key": "<hex>", "derivation": "bip44 m/44'/118'/0'/0/0",
//     "crypto": {"cipher": "aes-256-gcm", "kdf": "scrypt",
//                "kdfparams": {"n": 32768, "r": 8, "p": 1, "dklen": 32, "salt": "<hex>"},
//                "nonce": "<hex>", "ciphertext": "<hex>", "tag": "<hex>"}}]}
//   plaintext = {"mnemonic": "...", "private_key": "<hex>"}
//
// Key derivation from a BIP-39 mnemonic (no BIP-39 passphrase):
//   secp256k1: BIP-32 along m/44'/118'/0'/0/0, as the Cosmos SDK, Keplr and CosmJS do, so the
//              same mnemonic gives the same address there.
//   ed25519:   there is no Cosmos standard (SDK keyrings hold secp256k1 account keys; ed25519 is
//              for validators). Kairos uses private seed = SHA-256(first 32 bytes of the BIP-39
//              seed). Other wallets will not derive the same key from the mnemonic.
//
// Thread-compatible. A Keyring object holds only the path: every call re-reads the file, and Add
// and Delete rewrite it atomically (temp file, fsync, rename) under an flock on <path>.lock, so
// two processes adding keys at once do not lose one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/keys.h"
#include "store/status.h"

namespace kairos::client {

inline constexpr char kKeyringFileName[] = "keyring.json";
// The "test" keyring backend's file (client_config.h).
inline constexpr char kTestKeyringFileName[] = "keyring-test.json";
inline constexpr std::size_t kMinPassphraseLength = 8;

// scrypt cost. The defaults (N = 2^15, r = 8, p = 1: 32 MiB, ~0.1 s) are stored with each entry;
// tests may lower N.
struct KdfParams {
  std::uint64_t n = 1u << 15;
  std::uint32_t r = 8;
  std::uint32_t p = 1;
};

struct KeyInfo {
  std::string name;
  crypto::KeyType type = crypto::KeyType::kSecp256k1;
  std::string address;  // bech32, "kairos1..."
  std::string pub_key;  // raw: 33 bytes (secp256k1, compressed) or 32 (ed25519)
  std::string derivation;
};

// A decrypted secret. Wiped (OPENSSL_cleanse) when destroyed.
struct KeySecret {
  std::string private_key;  // 32 bytes
  std::string mnemonic;     // empty if the key was not made from one
  KeySecret() = default;
  KeySecret(const KeySecret&) = default;
  KeySecret& operator=(const KeySecret&) = default;
  ~KeySecret();
};

std::string_view KeyTypeName(crypto::KeyType type);  // "secp256k1" / "ed25519"
Result<crypto::KeyType> ParseKeyType(std::string_view name);
// The protobuf type URL of a public key of this type ("/cosmos.crypto.secp256k1.PubKey").
std::string_view PubKeyTypeUrl(crypto::KeyType type);

// The private key a mnemonic gives (see the file comment). InvalidArgument for a mnemonic that
// fails BIP-39 validation (bad word, count or checksum).
Result<KeySecret> DeriveFromMnemonic(crypto::KeyType type, std::string_view mnemonic);
// Lower-cases and collapses whitespace ("  Abandon\tabandon ..." -> "abandon abandon ...").
std::string NormalizeMnemonic(std::string_view mnemonic);

// 1..64 characters of [A-Za-z0-9._-], starting with a letter or digit, and not itself a valid
// account address (so a name never shadows an address).
Status ValidateKeyName(std::string_view name);

class Keyring {
 public:
  explicit Keyring(std::string path, KdfParams kdf = {});

  const std::string& path() const { return path_; }

  // All keys in file order. An absent file is an empty keyring; an unreadable or malformed one
  // is Corruption/IOError naming the file.
  Result<std::vector<KeyInfo>> List() const;
  // By name, or by bech32 address. NotFound: "key 'x' not found in <path>".
  Result<KeyInfo> Find(std::string_view name_or_address) const;
  // Derives the key from `mnemonic` and stores it encrypted under `passphrase`.
  // InvalidArgument for a bad name, mnemonic or a passphrase shorter than kMinPassphraseLength;
  // InvalidArgument if the name or the address is already in the keyring.
  Result<KeyInfo> Add(std::string_view name, crypto::KeyType type, std::string_view mnemonic,
                      std::string_view passphrase) const;
  // NotFound if there is no such key.
  Status Delete(std::string_view name_or_address) const;
  // Decrypts a key's secret. InvalidArgument "wrong passphrase for key 'x'" when the AES-GCM tag
  // does not verify; Corruption if the decrypted key does not match the stored public key.
  Result<KeySecret> Unlock(std::string_view name_or_address, std::string_view passphrase) const;

 private:
  std::string path_;
  KdfParams kdf_;
};

}  // namespace kairos::client
