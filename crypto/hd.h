// BIP-39 mnemonics and BIP-32/BIP-44 key derivation for secp256k1, as Cosmos wallets and CosmJS
// do them: the default path is m/44'/118'/0'/0/0. Pure functions, thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/status.h"

namespace kairos::crypto {

inline constexpr char kCosmosHdPath[] = "m/44'/118'/0'/0/0";
inline constexpr std::uint32_t kHardenedBit = 0x80000000u;

// The BIP-39 English word list, in its published order (bip39_english.cc).
extern const std::array<std::string_view, 2048> kBip39EnglishWords;

// A new mnemonic of 12, 15, 18, 21 or 24 words from `entropy`.
// REQUIRES: 16, 20, 24, 28 or 32 bytes of entropy (else std::invalid_argument).
std::string MnemonicFromEntropy(std::string_view entropy);
// A new random 24-word mnemonic (OpenSSL RAND_bytes).
std::string GenerateMnemonic();
// The entropy a mnemonic encodes, after the checks of ValidateMnemonic.
Result<std::string> MnemonicToEntropy(std::string_view mnemonic);
// Checks the words (English list, lower case, separated by single spaces), count, and checksum.
// InvalidArgument naming the bad word or "invalid mnemonic checksum".
Status ValidateMnemonic(std::string_view mnemonic);
// The 64-byte BIP-39 seed: PBKDF2-HMAC-SHA512(NFKD(mnemonic), "mnemonic" + passphrase, 2048).
// (Only ASCII input is supported: the English word list is ASCII. NFKD is not applied, so a
// non-ASCII passphrase gives a seed other wallets would not.) Does not validate the mnemonic.
std::string MnemonicToSeed(std::string_view mnemonic, std::string_view passphrase);

struct ExtendedKey {
  std::string private_key;  // 32 bytes
  std::string chain_code;   // 32 bytes
};
// The BIP-32 master key: HMAC-SHA512(key "Bitcoin seed", seed). (For about one seed in 2^127 the
// key is not a valid scalar; DerivePath then answers InvalidArgument.)
ExtendedKey MasterKeyFromSeed(std::string_view seed);
// The child indexes of a path such as "m/44'/118'/0'/0/0" (' h or H marks a hardened index,
// which has kHardenedBit set). "m" alone is the empty path. InvalidArgument for a malformed path,
// saying which component is wrong.
Result<std::vector<std::uint32_t>> ParseHdPath(std::string_view path);
// Derives along a path such as "m/44'/118'/0'/0/0" (private derivation, CKDpriv).
// InvalidArgument for a malformed path or an invalid key.
Result<ExtendedKey> DerivePath(const ExtendedKey& master, std::string_view path);
// The first 4 bytes of RIPEMD160(SHA256(compressed public key)), big-endian: the parent
// fingerprint of the key's children. REQUIRES: a valid private key.
std::uint32_t Fingerprint(const ExtendedKey& key);
// The BIP-32 serialization "xprv..." of a key at a depth (for the published test vectors).
std::string SerializeXprv(const ExtendedKey& key, int depth, std::uint32_t parent_fingerprint,
                          std::uint32_t child_number);

}  // namespace kairos::crypto
