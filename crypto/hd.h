// BIP-39 mnemonics and BIP-32/BIP-44 key derivation for secp256k1, as Cosmos wallets and CosmJS
// do them: the default path is m/44'/118'/0'/0/0. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "store/status.h"

namespace kairos::crypto {

inline constexpr char kCosmosHdPath[] = "m/44'/118'/0'/0/0";

// A new mnemonic of `words` words (12, 15, 18, 21 or 24) from `entropy`
// (REQUIRES: words * 4 / 3 bytes of entropy: 16..32 bytes).
std::string MnemonicFromEntropy(std::string_view entropy);
// A new random 24-word mnemonic (OpenSSL RAND_bytes).
std::string GenerateMnemonic();
// Checks the words (English list), count, and checksum. InvalidArgument naming the bad word or
// "invalid mnemonic checksum".
Status ValidateMnemonic(std::string_view mnemonic);
// The 64-byte BIP-39 seed: PBKDF2-HMAC-SHA512(NFKD(mnemonic), "mnemonic" + passphrase, 2048).
// (Only ASCII input is supported: the English word list is ASCII.)
std::string MnemonicToSeed(std::string_view mnemonic, std::string_view passphrase);

struct ExtendedKey {
  std::string private_key;  // 32 bytes
  std::string chain_code;   // 32 bytes
};
ExtendedKey MasterKeyFromSeed(std::string_view seed);
// Derives along a path such as "m/44'/118'/0'/0/0". InvalidArgument for a malformed path.
Result<ExtendedKey> DerivePath(const ExtendedKey& master, std::string_view path);
// The BIP-32 serialization "xprv..." of a key at a depth (for the published test vectors).
std::string SerializeXprv(const ExtendedKey& key, int depth, std::uint32_t parent_fingerprint,
                          std::uint32_t child_number);

}  // namespace kairos::crypto
