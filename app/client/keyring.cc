#include "app/client/keyring.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/client/file_util.h"
#include "app/hex.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"

namespace kairos::client {

namespace {

using json = nlohmann::ordered_json;

constexpr int kFormatVersion = 1;
constexpr std::size_t kSaltBytes = 16;
constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;
constexpr std::size_t kKeyBytes = 32;
constexpr char kSecpDerivation[] = "bip44 m/44'/118'/0'/0/0";
constexpr char kEdDerivation[] = "kairos-ed25519 sha256(bip39_seed[0:32])";
// Bounds on the stored scrypt parameters (the file is the user's own, but a corrupt one must not
// make us allocate gigabytes).
constexpr std::uint64_t kMaxScryptN = 1u << 20;
constexpr std::uint64_t kScryptMaxMem = 1ull << 30;

struct Entry {
  KeyInfo info;
  json crypto;  // the "crypto" object as stored
};

unsigned char* U(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }
const unsigned char* U(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string RandomBytes(std::size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(U(out), static_cast<int>(n)) != 1) throw std::runtime_error("RAND_bytes failed");
  return out;
}

// scrypt(passphrase, salt) -> 32 bytes. Throws on an OpenSSL failure (parameters are checked
// before).
std::string Scrypt(std::string_view passphrase, std::string_view salt, KdfParams p) {
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "SCRYPT", nullptr),
                                                        &EVP_KDF_free);
  if (!kdf) throw std::runtime_error("OpenSSL has no SCRYPT");
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(EVP_KDF_CTX_new(kdf.get()),
                                                                &EVP_KDF_CTX_free);
  std::uint64_t n = p.n, maxmem = kScryptMaxMem;
  std::uint32_t r = p.r, par = p.p;
  std::string pass(passphrase), s(salt);  // OSSL_PARAM wants non-const pointers
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, pass.data(), pass.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, s.data(), s.size()),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r),
      OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &par),
      OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
      OSSL_PARAM_construct_end()};
  std::string key(kKeyBytes, '\0');
  const int ok = ctx ? EVP_KDF_derive(ctx.get(), U(key), key.size(), params) : 0;
  OPENSSL_cleanse(pass.data(), pass.size());
  if (ok != 1) throw std::runtime_error("scrypt failed");
  return key;
}

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx NewCipher() {
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  if (!ctx) throw std::runtime_error("EVP_CIPHER_CTX_new failed");
  return ctx;
}

struct Sealed {
  std::string ciphertext;
  std::string tag;
};

Sealed Seal(std::string_view key, std::string_view nonce, std::string_view aad,
            std::string_view plaintext) {
  CipherCtx ctx = NewCipher();
  Sealed out;
  out.ciphertext.resize(plaintext.size());
  out.tag.resize(kTagBytes);
  int len = 0, fin = 0;
  if (EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, U(key), U(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), U(out.ciphertext), &len, U(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), U(out.ciphertext) + len, &fin) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, U(out.tag)) != 1) {
    throw std::runtime_error("AES-256-GCM encryption failed");
  }
  return out;
}

// nullopt when the tag does not verify (wrong key or tampered data).
std::optional<std::string> Open(std::string_view key, std::string_view nonce,
                                std::string_view aad, std::string_view ciphertext,
                                std::string tag) {
  CipherCtx ctx = NewCipher();
  std::string plain(ciphertext.size(), '\0');
  int len = 0, fin = 0;
  if (EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, U(key), U(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, U(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), U(plain), &len, U(ciphertext),
                        static_cast<int>(ciphertext.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, U(tag)) != 1) {
    throw std::runtime_error("AES-256-GCM decryption setup failed");
  }
  if (EVP_DecryptFinal_ex(ctx.get(), U(plain) + len, &fin) != 1) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return std::nullopt;
  }
  return plain;
}

std::string Aad(const KeyInfo& info) {
  return "kairos-keyring-v1\n" + std::string(KeyTypeName(info.type)) + "\n" + info.address;
}

std::string Hex(std::string_view bytes) { return app::HexEncode(bytes); }

// ---- file format -------------------------------------------------------------------------

Status Malformed(const std::string& path, const std::string& why) {
  return Status::Corruption("keyring " + path + " is malformed: " + why);
}

Result<std::string> HexField(const json& obj, const char* field, const std::string& path,
                             std::size_t want_size = 0) {
  std::string out;
  if (!obj.contains(field) || !obj[field].is_string() ||
      !app::HexDecode(obj[field].get<std::string>(), &out) ||
      (want_size != 0 && out.size() != want_size)) {
    return Malformed(path, std::string("bad or missing hex field \"") + field + "\"");
  }
  return out;
}

Result<std::vector<Entry>> LoadEntries(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return std::vector<Entry>{};
    return text.status();
  }
  json root;
  try {
    root = json::parse(*text);
  } catch (const json::exception& e) {
    return Malformed(path, std::string("not JSON: ") + e.what());
  }
  if (!root.is_object() || !root.contains("version") || !root["version"].is_number_integer()) {
    return Malformed(path, "no \"version\"");
  }
  if (root["version"].get<int>() != kFormatVersion) {
    return Malformed(path, "unsupported version " + root["version"].dump());
  }
  if (!root.contains("keys") || !root["keys"].is_array()) return Malformed(path, "no \"keys\"");
  std::vector<Entry> entries;
  for (const json& k : root["keys"]) {
    if (!k.is_object()) return Malformed(path, "a key entry is not an object");
    for (const char* field : {"name", "type", "address", "derivation"}) {
      if (!k.contains(field) || !k[field].is_string()) {
        return Malformed(path, std::string("a key entry has no \"") + field + "\"");
      }
    }
    Entry e;
    e.info.name = k["name"].get<std::string>();
    Result<crypto::KeyType> type = ParseKeyType(k["type"].get<std::string>());
    if (!type.ok()) return Malformed(path, "key '" + e.info.name + "': " + type.status().message());
    e.info.type = *type;
    e.info.address = k["address"].get<std::string>();
    e.info.derivation = k["derivation"].get<std::string>();
    Result<std::string> pub = HexField(k, "pub_key", path);
    if (!pub.ok()) return pub.status();
    e.info.pub_key = *pub;
    if (!k.contains("crypto") || !k["crypto"].is_object()) {
      return Malformed(path, "key '" + e.info.name + "' has no \"crypto\"");
    }
    e.crypto = k["crypto"];
    entries.push_back(std::move(e));
  }
  return entries;
}

Status SaveEntries(const std::string& path, const std::vector<Entry>& entries) {
  json keys = json::array();
  for (const Entry& e : entries) {
    keys.push_back({{"name", e.info.name},
                    {"type", KeyTypeName(e.info.type)},
                    {"address", e.info.address},
                    {"pub_key", Hex(e.info.pub_key)},
                    {"derivation", e.info.derivation},
                    {"crypto", e.crypto}});
  }
  json root = {{"version", kFormatVersion}, {"keys", std::move(keys)}};
  return WriteFileAtomically(path, root.dump(2) + "\n", 0600);
}

bool Matches(const KeyInfo& info, std::string_view name_or_address) {
  return info.name == name_or_address || info.address == name_or_address;
}

std::string NotFoundMessage(std::string_view name, const std::string& path) {
  return "key '" + std::string(name) + "' not found in " + path;
}

json Encrypt(const KeyInfo& info, const KeySecret& secret, std::string_view passphrase,
             KdfParams kdf) {
  const std::string salt = RandomBytes(kSaltBytes);
  const std::string nonce = RandomBytes(kNonceBytes);
  std::string key = Scrypt(passphrase, salt, kdf);
  std::string plain = json{{"mnemonic", secret.mnemonic}, {"private_key", Hex(secret.private_key)}}
                          .dump();
  Sealed sealed = Seal(key, nonce, Aad(info), plain);
  OPENSSL_cleanse(key.data(), key.size());
  OPENSSL_cleanse(plain.data(), plain.size());
  return {{"cipher", "aes-256-gcm"},
          {"kdf", "scrypt"},
          {"kdfparams",
           {{"n", kdf.n}, {"r", kdf.r}, {"p", kdf.p}, {"dklen", kKeyBytes}, {"salt", Hex(salt)}}},
          {"nonce", Hex(nonce)},
          {"ciphertext", Hex(sealed.ciphertext)},
          {"tag", Hex(sealed.tag)}};
}

Result<KdfParams> ReadKdfParams(const json& c, const std::string& path) {
  if (!c.contains("kdf") || c["kdf"] != "scrypt" || !c.contains("cipher") ||
      c["cipher"] != "aes-256-gcm") {
    return Malformed(path, "unsupported kdf or cipher (this version reads scrypt + aes-256-gcm)");
  }
  if (!c.contains("kdfparams") || !c["kdfparams"].is_object()) {
    return Malformed(path, "no \"kdfparams\"");
  }
  const json& p = c["kdfparams"];
  for (const char* field : {"n", "r", "p", "dklen"}) {
    if (!p.contains(field) || !p[field].is_number_unsigned()) {
      return Malformed(path, std::string("kdfparams has no \"") + field + "\"");
    }
  }
  KdfParams out;
  out.n = p["n"].get<std::uint64_t>();
  const std::uint64_t r = p["r"].get<std::uint64_t>(), par = p["p"].get<std::uint64_t>();
  if (out.n < 2 || (out.n & (out.n - 1)) != 0 || out.n > kMaxScryptN || r == 0 || r > 32 ||
      par == 0 || par > 16 || p["dklen"].get<std::uint64_t>() != kKeyBytes) {
    return Malformed(path, "kdfparams out of range");
  }
  out.r = static_cast<std::uint32_t>(r);
  out.p = static_cast<std::uint32_t>(par);
  return out;
}

}  // namespace

KeySecret::~KeySecret() {
  OPENSSL_cleanse(private_key.data(), private_key.size());
  OPENSSL_cleanse(mnemonic.data(), mnemonic.size());
}

std::string_view KeyTypeName(crypto::KeyType type) {
  return type == crypto::KeyType::kEd25519 ? "ed25519" : "secp256k1";
}

Result<crypto::KeyType> ParseKeyType(std::string_view name) {
  if (name == "secp256k1") return crypto::KeyType::kSecp256k1;
  if (name == "ed25519") return crypto::KeyType::kEd25519;
  return Status::InvalidArgument("unknown key type '" + std::string(name) +
                                 "' (use secp256k1 or ed25519)");
}

std::string_view PubKeyTypeUrl(crypto::KeyType type) {
  return type == crypto::KeyType::kEd25519 ? "/cosmos.crypto.ed25519.PubKey"
                                           : "/cosmos.crypto.secp256k1.PubKey";
}

std::string NormalizeMnemonic(std::string_view mnemonic) {
  std::string out;
  bool space = false;
  for (char c : mnemonic) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

Result<KeySecret> DeriveFromMnemonic(crypto::KeyType type, std::string_view mnemonic_text) {
  KeySecret secret;
  secret.mnemonic = NormalizeMnemonic(mnemonic_text);
  if (Status s = crypto::ValidateMnemonic(secret.mnemonic); !s.ok()) {
    return Status::InvalidArgument("invalid mnemonic: " + s.message());
  }
  std::string seed = crypto::MnemonicToSeed(secret.mnemonic, "");
  if (type == crypto::KeyType::kEd25519) {
    secret.private_key = crypto::Sha256(std::string_view(seed).substr(0, 32));
  } else {
    Result<crypto::ExtendedKey> key =
        crypto::DerivePath(crypto::MasterKeyFromSeed(seed), crypto::kCosmosHdPath);
    if (!key.ok()) return key.status();
    secret.private_key = key->private_key;
    OPENSSL_cleanse(key->private_key.data(), key->private_key.size());
  }
  OPENSSL_cleanse(seed.data(), seed.size());
  return secret;
}

Status ValidateKeyName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return Status::InvalidArgument("a key name has 1 to 64 characters");
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool ok = std::isalnum(c) || (i > 0 && (c == '.' || c == '_' || c == '-'));
    if (!ok) {
      return Status::InvalidArgument("invalid key name '" + std::string(name) +
                                     "': use letters, digits, '.', '_' and '-', starting with a "
                                     "letter or digit");
    }
  }
  if (crypto::DecodeAccountAddress(name).ok()) {
    return Status::InvalidArgument("a key name cannot be an address: '" + std::string(name) + "'");
  }
  return Status::OK();
}

Keyring::Keyring(std::string path, KdfParams kdf) : path_(std::move(path)), kdf_(kdf) {}

Result<std::vector<KeyInfo>> Keyring::List() const {
  Result<std::vector<Entry>> entries = LoadEntries(path_);
  if (!entries.ok()) return entries.status();
  std::vector<KeyInfo> out;
  for (Entry& e : *entries) out.push_back(std::move(e.info));
  return out;
}

Result<KeyInfo> Keyring::Find(std::string_view name_or_address) const {
  Result<std::vector<KeyInfo>> keys = List();
  if (!keys.ok()) return keys.status();
  for (KeyInfo& k : *keys) {
    if (Matches(k, name_or_address)) return std::move(k);
  }
  return Status::NotFound(NotFoundMessage(name_or_address, path_));
}

Result<KeyInfo> Keyring::Add(std::string_view name, crypto::KeyType type,
                             std::string_view mnemonic, std::string_view passphrase) const {
  if (Status s = ValidateKeyName(name); !s.ok()) return s;
  if (passphrase.size() < kMinPassphraseLength) {
    return Status::InvalidArgument("the passphrase must have at least " +
                                   std::to_string(kMinPassphraseLength) + " characters");
  }
  Result<KeySecret> secret = DeriveFromMnemonic(type, mnemonic);
  if (!secret.ok()) return secret.status();

  Entry entry;
  entry.info.name = std::string(name);
  entry.info.type = type;
  if (type == crypto::KeyType::kEd25519) {
    entry.info.pub_key = crypto::Ed25519PublicKey(secret->private_key);
    entry.info.derivation = kEdDerivation;
  } else {
    std::optional<std::string> pub = crypto::Secp256k1PublicKey(secret->private_key);
    if (!pub) return Status::InvalidArgument("the mnemonic derives an invalid secp256k1 key");
    entry.info.pub_key = *pub;
    entry.info.derivation = kSecpDerivation;
  }
  entry.info.address =
      crypto::EncodeAccountAddress(crypto::AddressOf(type, entry.info.pub_key));

  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  Result<FileLock> lock = FileLock::Acquire(path_ + ".lock");
  if (!lock.ok()) return lock.status();
  Result<std::vector<Entry>> entries = LoadEntries(path_);
  if (!entries.ok()) return entries.status();
  for (const Entry& e : *entries) {
    if (e.info.name == name) {
      return Status::InvalidArgument("key '" + entry.info.name + "' already exists in " + path_);
    }
    if (e.info.address == entry.info.address) {
      return Status::InvalidArgument("the address " + entry.info.address +
                                     " is already in the keyring as key '" + e.info.name + "'");
    }
  }
  entry.crypto = Encrypt(entry.info, *secret, passphrase, kdf_);
  entries->push_back(entry);
  if (Status s = SaveEntries(path_, *entries); !s.ok()) return s;
  return entry.info;
}

Status Keyring::Delete(std::string_view name_or_address) const {
  Result<FileLock> lock = FileLock::Acquire(path_ + ".lock");
  if (!lock.ok()) return lock.status();
  Result<std::vector<Entry>> entries = LoadEntries(path_);
  if (!entries.ok()) return entries.status();
  for (auto it = entries->begin(); it != entries->end(); ++it) {
    if (Matches(it->info, name_or_address)) {
      entries->erase(it);
      return SaveEntries(path_, *entries);
    }
  }
  return Status::NotFound(NotFoundMessage(name_or_address, path_));
}

Result<KeySecret> Keyring::Unlock(std::string_view name_or_address,
                                  std::string_view passphrase) const {
  Result<std::vector<Entry>> entries = LoadEntries(path_);
  if (!entries.ok()) return entries.status();
  const Entry* entry = nullptr;
  for (const Entry& e : *entries) {
    if (Matches(e.info, name_or_address)) entry = &e;
  }
  if (entry == nullptr) return Status::NotFound(NotFoundMessage(name_or_address, path_));
  const json& c = entry->crypto;
  Result<KdfParams> kdf = ReadKdfParams(c, path_);
  if (!kdf.ok()) return kdf.status();
  Result<std::string> salt = HexField(c["kdfparams"], "salt", path_);
  Result<std::string> nonce = HexField(c, "nonce", path_, kNonceBytes);
  Result<std::string> ciphertext = HexField(c, "ciphertext", path_);
  Result<std::string> tag = HexField(c, "tag", path_, kTagBytes);
  for (const Status* s : {&salt.status(), &nonce.status(), &ciphertext.status(), &tag.status()}) {
    if (!s->ok()) return *s;
  }
  std::string key = Scrypt(passphrase, *salt, *kdf);
  std::optional<std::string> plain = Open(key, *nonce, Aad(entry->info), *ciphertext, *tag);
  OPENSSL_cleanse(key.data(), key.size());
  if (!plain) {
    return Status::InvalidArgument("wrong passphrase for key '" + entry->info.name + "'");
  }
  KeySecret secret;
  bool readable = false;
  try {
    json p = json::parse(*plain);
    secret.mnemonic = p.at("mnemonic").get<std::string>();
    std::string& hex = p.at("private_key").get_ref<std::string&>();
    readable = app::HexDecode(hex, &secret.private_key) && secret.private_key.size() == 32;
    OPENSSL_cleanse(hex.data(), hex.size());
    std::string& words = p.at("mnemonic").get_ref<std::string&>();
    OPENSSL_cleanse(words.data(), words.size());
  } catch (const json::exception&) {
    readable = false;
  }
  OPENSSL_cleanse(plain->data(), plain->size());
  if (!readable) {
    return Malformed(path_, "key '" + entry->info.name + "' decrypts to unreadable data");
  }
  const std::string pub = entry->info.type == crypto::KeyType::kEd25519
                              ? crypto::Ed25519PublicKey(secret.private_key)
                              : crypto::Secp256k1PublicKey(secret.private_key).value_or("");
  if (pub != entry->info.pub_key ||
      crypto::EncodeAccountAddress(crypto::AddressOf(entry->info.type, pub)) !=
          entry->info.address) {
    return Status::Corruption("keyring " + path_ + ": key '" + entry->info.name +
                              "' does not match its stored public key or address");
  }
  return secret;
}

}  // namespace kairos::client
