#include "crypto/hd.h"

#include <openssl/rand.h>

#include <algorithm>
#include <stdexcept>

#include "crypto/hash.h"
#include "crypto/internal.h"
#include "crypto/keys.h"

namespace kairos::crypto {

namespace {

using internal::Secp256k1Context;
using internal::Uchars;

constexpr int kPbkdf2Iterations = 2048;
constexpr std::size_t kSeedBytes = 64;
constexpr std::size_t kMaxDepth = 255;  // BIP-32 serializes the depth in one byte

bool ValidSecretKey(std::string_view key) {
  return key.size() == kSecp256k1PrivKeyBytes &&
         secp256k1_ec_seckey_verify(Secp256k1Context(), Uchars(key)) == 1;
}

void AppendBe32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

std::string Base58(std::string_view bytes) {
  static constexpr char kAlphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  // Little-endian base-58 digits of the big-endian number `bytes`.
  std::vector<std::uint8_t> digits;
  for (unsigned char b : bytes) {
    int carry = b;
    for (std::uint8_t& d : digits) {
      carry += d << 8;
      d = static_cast<std::uint8_t>(carry % 58);
      carry /= 58;
    }
    while (carry > 0) {
      digits.push_back(static_cast<std::uint8_t>(carry % 58));
      carry /= 58;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && bytes[i] == '\0'; ++i) out.push_back('1');
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) out.push_back(kAlphabet[*it]);
  return out;
}

Status PathError(std::string_view path, const std::string& what) {
  return Status::InvalidArgument("invalid HD path \"" + std::string(path) + "\": " + what);
}

// CKDpriv of BIP-32. REQUIRES: a valid parent key.
Result<ExtendedKey> DeriveChild(const ExtendedKey& parent, std::uint32_t index) {
  std::string data;
  if (index & kHardenedBit) {
    data.push_back('\0');
    data += parent.private_key;
  } else {
    data = *Secp256k1PublicKey(parent.private_key);
  }
  AppendBe32(data, index);
  const std::string i = HmacSha512(parent.chain_code, data);
  ExtendedKey child{parent.private_key, i.substr(32)};
  const std::string tweak = i.substr(0, 32);
  // child = parse256(IL) + parent (mod n); fails when IL >= n or the sum is zero, the cases
  // where BIP-32 says to skip to the next index (probability about 2^-127).
  if (secp256k1_ec_seckey_tweak_add(Secp256k1Context(), Uchars(child.private_key),
                                    Uchars(tweak)) != 1) {
    return Status::InvalidArgument("BIP-32 child " + std::to_string(index) +
                                   " is not a valid key; use the next index");
  }
  return child;
}

}  // namespace

std::string MnemonicFromEntropy(std::string_view entropy) {
  if (entropy.size() < 16 || entropy.size() > 32 || entropy.size() % 4 != 0) {
    throw std::invalid_argument("BIP-39 entropy must be 16, 20, 24, 28 or 32 bytes");
  }
  const std::size_t checksum_bits = entropy.size() / 4;
  const std::string bits_source = std::string(entropy) + Sha256(entropy).substr(0, 1);
  auto bit = [&](std::size_t n) {
    return (static_cast<unsigned char>(bits_source[n / 8]) >> (7 - n % 8)) & 1;
  };
  const std::size_t words = (entropy.size() * 8 + checksum_bits) / 11;
  std::string out;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint32_t index = 0;
    for (std::size_t b = 0; b < 11; ++b) index = (index << 1) | bit(w * 11 + b);
    if (w > 0) out.push_back(' ');
    out += kBip39EnglishWords[index];
  }
  return out;
}

std::string GenerateMnemonic() {
  std::string entropy(32, '\0');
  if (RAND_bytes(Uchars(entropy), static_cast<int>(entropy.size())) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  return MnemonicFromEntropy(entropy);
}

Result<std::string> MnemonicToEntropy(std::string_view mnemonic) {
  std::vector<std::uint32_t> indexes;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(mnemonic.find(' ', start), mnemonic.size());
    const std::string_view word = mnemonic.substr(start, end - start);
    if (word.empty()) {
      return Status::InvalidArgument(
          "mnemonic has an empty word: words must be separated by single spaces");
    }
    const auto it = std::lower_bound(kBip39EnglishWords.begin(), kBip39EnglishWords.end(), word);
    if (it == kBip39EnglishWords.end() || *it != word) {
      return Status::InvalidArgument("mnemonic word " + std::to_string(indexes.size() + 1) +
                                     " \"" + std::string(word) +
                                     "\" is not in the BIP-39 English word list");
    }
    indexes.push_back(static_cast<std::uint32_t>(it - kBip39EnglishWords.begin()));
    if (end == mnemonic.size()) break;
    start = end + 1;
  }
  const std::size_t n = indexes.size();
  if (n < 12 || n > 24 || n % 3 != 0) {
    return Status::InvalidArgument("mnemonic has " + std::to_string(n) +
                                   " words; want 12, 15, 18, 21 or 24");
  }
  const std::size_t total_bits = n * 11;
  const std::size_t checksum_bits = total_bits / 33;
  const std::size_t entropy_bytes = (total_bits - checksum_bits) / 8;
  auto bit = [&](std::size_t pos) { return (indexes[pos / 11] >> (10 - pos % 11)) & 1; };
  std::string entropy(entropy_bytes, '\0');
  for (std::size_t pos = 0; pos < entropy_bytes * 8; ++pos) {
    entropy[pos / 8] = static_cast<char>(entropy[pos / 8] | (bit(pos) << (7 - pos % 8)));
  }
  const auto hash_first = static_cast<unsigned char>(Sha256(entropy)[0]);
  std::uint32_t want = 0, got = 0;
  for (std::size_t b = 0; b < checksum_bits; ++b) {
    want = (want << 1) | ((hash_first >> (7 - b)) & 1);
    got = (got << 1) | bit(entropy_bytes * 8 + b);
  }
  if (want != got) return Status::InvalidArgument("invalid mnemonic checksum");
  return entropy;
}

Status ValidateMnemonic(std::string_view mnemonic) {
  Result<std::string> entropy = MnemonicToEntropy(mnemonic);
  return entropy.ok() ? Status::OK() : entropy.status();
}

std::string MnemonicToSeed(std::string_view mnemonic, std::string_view passphrase) {
  return Pbkdf2Sha512(mnemonic, "mnemonic" + std::string(passphrase), kPbkdf2Iterations,
                      kSeedBytes);
}

ExtendedKey MasterKeyFromSeed(std::string_view seed) {
  const std::string i = HmacSha512("Bitcoin seed", seed);
  return ExtendedKey{i.substr(0, 32), i.substr(32)};
}

Result<std::vector<std::uint32_t>> ParseHdPath(std::string_view path) {
  if (path.empty()) return PathError(path, "empty");
  if (path[0] != 'm') return PathError(path, "must start with \"m\"");
  std::vector<std::uint32_t> out;
  std::size_t pos = 1;
  while (pos < path.size()) {
    if (path[pos] != '/') return PathError(path, "expected '/' after \"m\"");
    const std::size_t start = pos + 1;
    const std::size_t end = std::min(path.find('/', start), path.size());
    std::string_view c = path.substr(start, end - start);
    const std::string which = "component " + std::to_string(out.size() + 1);
    if (c.empty()) return PathError(path, which + " is empty");
    bool hardened = false;
    if (c.back() == '\'' || c.back() == 'h' || c.back() == 'H') {
      hardened = true;
      c.remove_suffix(1);
    }
    auto is_digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    if (c.empty() || !std::all_of(c.begin(), c.end(), is_digit)) {
      return PathError(path, which + " \"" + std::string(path.substr(start, end - start)) +
                                 "\" is not a number with an optional ' h or H");
    }
    std::uint64_t value = 0;
    for (char ch : c) {
      value = value * 10 + static_cast<std::uint64_t>(ch - '0');
      if (value >= kHardenedBit) return PathError(path, which + " is not below 2^31");
    }
    if (out.size() == kMaxDepth) return PathError(path, "deeper than 255");
    out.push_back(static_cast<std::uint32_t>(value) | (hardened ? kHardenedBit : 0));
    pos = end;
  }
  return out;
}

Result<ExtendedKey> DerivePath(const ExtendedKey& master, std::string_view path) {
  Result<std::vector<std::uint32_t>> indexes = ParseHdPath(path);
  if (!indexes.ok()) return indexes.status();
  if (!ValidSecretKey(master.private_key) || master.chain_code.size() != 32) {
    return Status::InvalidArgument("invalid BIP-32 master key");
  }
  ExtendedKey key = master;
  for (std::uint32_t index : *indexes) {
    Result<ExtendedKey> child = DeriveChild(key, index);
    if (!child.ok()) return child.status();
    key = std::move(*child);
  }
  return key;
}

std::uint32_t Fingerprint(const ExtendedKey& key) {
  const std::optional<std::string> pubkey = Secp256k1PublicKey(key.private_key);
  if (!pubkey) throw std::invalid_argument("Fingerprint of an invalid private key");
  const std::string id = AddressOf(KeyType::kSecp256k1, *pubkey);  // RIPEMD160(SHA256(pubkey))
  std::uint32_t fp = 0;
  for (int i = 0; i < 4; ++i) fp = (fp << 8) | static_cast<unsigned char>(id[i]);
  return fp;
}

std::string SerializeXprv(const ExtendedKey& key, int depth, std::uint32_t parent_fingerprint,
                          std::uint32_t child_number) {
  std::string payload;
  AppendBe32(payload, 0x0488ADE4);  // mainnet private
  payload.push_back(static_cast<char>(depth));
  AppendBe32(payload, parent_fingerprint);
  AppendBe32(payload, child_number);
  payload += key.chain_code;
  payload.push_back('\0');
  payload += key.private_key;
  payload += Sha256(Sha256(payload)).substr(0, 4);
  return Base58(payload);
}

}  // namespace kairos::crypto
