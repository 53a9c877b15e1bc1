// Unit tests for app/client/keyring: the "abandon ... about" address CosmJS and Cosmos wallets
// derive, encryption round trips, wrong passphrases and tampering rejected, the file format
// (scrypt parameters stored, no secret in the clear, mode 0600), names, duplicates, deletion.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/client/file_util.h"
#include "app/client/keyring.h"
#include "app/hex.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"
#include "crypto/keys.h"
#include "temp_dir.h"

using kairos::Status;
using kairos::client::DeriveFromMnemonic;
using kairos::client::KdfParams;
using kairos::client::KeyInfo;
using kairos::client::Keyring;
using kairos::client::KeySecret;
using kairos::client::NormalizeMnemonic;
using kairos::client::ReadWholeFile;
using kairos::client::ValidateKeyName;
using kairos::crypto::KeyType;
using kairos::test::TempDir;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

const std::string kAbandon =
    "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
    "about";
// A second valid mnemonic (the BIP-39 vector for entropy 0x7f * 16).
const std::string kLegal =
    "legal winner thank year wave sausage worth useful legal winner thank yellow";
const std::string kPass = "correct horse battery";

// Cheap scrypt for the tests (the parameters are stored, so they are exercised all the same).
constexpr KdfParams kFastKdf{1u << 10, 8, 1};

std::string FileText(const std::string& path) {
  auto text = ReadWholeFile(path);
  REQUIRE(text.ok());
  return *text;
}

}  // namespace

TEST_CASE("abandon...about gives the address Cosmos wallets give, with prefix kairos",
          "[keyring]") {
  // CosmJS / Keplr / gaiad: m/44'/118'/0'/0/0 of this mnemonic.
  auto cosmos = kairos::crypto::Bech32Decode("cosmos19rl4cm2hmr8afy4kldpxz3fka4jguq0auqdal4");
  REQUIRE(cosmos.ok());
  const std::string expected = kairos::crypto::EncodeAccountAddress(cosmos->bytes);
  CHECK(expected.rfind("kairos1", 0) == 0);

  TempDir dir;
  Keyring keyring(dir / "keyring.json", kFastKdf);
  auto key = keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass);
  REQUIRE(key.ok());
  CHECK(key->address == expected);
  CHECK(key->pub_key.size() == 33);
  CHECK(key->derivation == "bip44 m/44'/118'/0'/0/0");
  // Extra whitespace and capitals in the typed mnemonic change nothing.
  auto again = DeriveFromMnemonic(
      KeyType::kSecp256k1,
      "  Abandon abandon\tabandon abandon abandon abandon abandon abandon abandon abandon abandon "
      "ABOUT\n");
  REQUIRE(again.ok());
  const auto pub = kairos::crypto::Secp256k1PublicKey(again->private_key);
  REQUIRE(pub.has_value());
  CHECK(kairos::crypto::EncodeAccountAddress(
            kairos::crypto::AddressOf(KeyType::kSecp256k1, *pub)) == expected);
  CHECK(again->mnemonic == kAbandon);
}

TEST_CASE("ed25519 keys are SHA-256 of the first 32 seed bytes, and deterministic", "[keyring]") {
  auto a = DeriveFromMnemonic(KeyType::kEd25519, kAbandon);
  REQUIRE(a.ok());
  const std::string seed = kairos::crypto::MnemonicToSeed(kAbandon, "");
  CHECK(a->private_key == kairos::crypto::Sha256(seed.substr(0, 32)));
  auto secp = DeriveFromMnemonic(KeyType::kSecp256k1, kAbandon);
  REQUIRE(secp.ok());
  CHECK(a->private_key != secp->private_key);

  TempDir dir;
  Keyring keyring(dir / "keyring.json", kFastKdf);
  auto key = keyring.Add("ed", KeyType::kEd25519, kAbandon, kPass);
  REQUIRE(key.ok());
  CHECK(key->type == KeyType::kEd25519);
  CHECK(key->pub_key == kairos::crypto::Ed25519PublicKey(a->private_key));
  CHECK(key->address == kairos::crypto::EncodeAccountAddress(kairos::crypto::AddressOf(
                            KeyType::kEd25519, key->pub_key)));
  auto secret = keyring.Unlock("ed", kPass);
  REQUIRE(secret.ok());
  CHECK(secret->private_key == a->private_key);
}

TEST_CASE("a key round-trips through the encrypted file", "[keyring]") {
  TempDir dir;
  const std::string path = dir / "keyring.json";
  Keyring keyring(path, kFastKdf);
  auto added = keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass);
  REQUIRE(added.ok());
  auto bob = keyring.Add("bob", KeyType::kSecp256k1, kLegal, kPass);
  REQUIRE(bob.ok());

  // A new object (a new process) reads the same keys, by name and by address.
  Keyring reopened(path);
  auto list = reopened.List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "alice");
  CHECK((*list)[1].name == "bob");
  auto by_address = reopened.Find(bob->address);
  REQUIRE(by_address.ok());
  CHECK(by_address->name == "bob");

  auto secret = reopened.Unlock("alice", kPass);
  REQUIRE(secret.ok());
  CHECK(secret->mnemonic == kAbandon);
  auto expected = DeriveFromMnemonic(KeyType::kSecp256k1, kAbandon);
  REQUIRE(expected.ok());
  CHECK(secret->private_key == expected->private_key);
  auto bob_secret = reopened.Unlock(bob->address, kPass);
  REQUIRE(bob_secret.ok());
  CHECK(bob_secret->mnemonic == kLegal);
}

TEST_CASE("a wrong passphrase is rejected with a clear message", "[keyring]") {
  TempDir dir;
  Keyring keyring(dir / "keyring.json", kFastKdf);
  REQUIRE(keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass).ok());
  auto secret = keyring.Unlock("alice", "correct horse battery!");
  REQUIRE_FALSE(secret.ok());
  CHECK(secret.status().message() == "wrong passphrase for key 'alice'");
  auto empty = keyring.Unlock("alice", "");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Contains("wrong passphrase"));
  auto unknown = keyring.Unlock("carol", kPass);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().IsNotFound());
  CHECK_THAT(unknown.status().message(), Contains("key 'carol' not found"));
}

TEST_CASE("the keyring file is 0600, stores its scrypt parameters and no secret in the clear",
          "[keyring]") {
  TempDir dir;
  const std::string path = dir / "sub/keyring.json";  // the directory is created
  const mode_t old_umask = ::umask(0);                      // even a permissive umask...
  Keyring keyring(path, kFastKdf);
  auto a = keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass);
  auto b = keyring.Add("bob", KeyType::kSecp256k1, kLegal, kPass);
  ::umask(old_umask);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);  // ...gives an owner-only file

  const std::string text = FileText(path);
  CHECK(text.find("abandon") == std::string::npos);
  CHECK(text.find("legal") == std::string::npos);
  auto secret = keyring.Unlock("alice", kPass);
  REQUIRE(secret.ok());
  CHECK(text.find(kairos::app::HexEncode(secret->private_key)) == std::string::npos);

  const json root = json::parse(text);
  CHECK(root["version"] == 1);
  const json& c0 = root["keys"][0]["crypto"];
  const json& c1 = root["keys"][1]["crypto"];
  CHECK(c0["kdf"] == "scrypt");
  CHECK(c0["cipher"] == "aes-256-gcm");
  CHECK(c0["kdfparams"]["n"] == 1024);
  CHECK(c0["kdfparams"]["r"] == 8);
  CHECK(c0["kdfparams"]["p"] == 1);
  CHECK(c0["kdfparams"]["salt"].get<std::string>().size() == 32);  // 16 bytes
  CHECK(c0["nonce"].get<std::string>().size() == 24);              // 12 bytes
  CHECK(c0["tag"].get<std::string>().size() == 32);                // 16 bytes
  // Same passphrase, fresh randomness per key.
  CHECK(c0["kdfparams"]["salt"] != c1["kdfparams"]["salt"]);
  CHECK(c0["nonce"] != c1["nonce"]);
  CHECK(root["keys"][0]["address"] == a->address);

  // The stored parameters, not the reader's defaults, are used to decrypt.
  Keyring default_params(path);
  CHECK(default_params.Unlock("bob", kPass).ok());
}

TEST_CASE("a tampered or swapped entry does not decrypt", "[keyring]") {
  TempDir dir;
  const std::string path = dir / "keyring.json";
  Keyring keyring(path, kFastKdf);
  REQUIRE(keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass).ok());
  REQUIRE(keyring.Add("bob", KeyType::kSecp256k1, kLegal, kPass).ok());
  const json original = json::parse(FileText(path));
  auto write = [&](const json& j) {
    REQUIRE(kairos::client::WriteFileAtomically(path, j.dump(), 0600).ok());
  };

  SECTION("a flipped ciphertext bit") {
    json j = original;
    std::string ct = j["keys"][0]["crypto"]["ciphertext"];
    ct[0] = ct[0] == '0' ? '1' : '0';
    j["keys"][0]["crypto"]["ciphertext"] = ct;
    write(j);
    auto s = keyring.Unlock("alice", kPass);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Contains("wrong passphrase"));
    CHECK(keyring.Unlock("bob", kPass).ok());  // the other key is untouched
  }
  SECTION("bob's secret moved under alice's address") {
    json j = original;
    j["keys"][0]["crypto"] = original["keys"][1]["crypto"];
    write(j);
    // The address is authenticated data: AES-GCM itself refuses, before any key comparison.
    auto s = keyring.Unlock("alice", kPass);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(s.status().message(), Contains("wrong passphrase"));
  }
  SECTION("bob's public key and address copied into alice's entry with bob's secret") {
    json j = original;
    j["keys"][0]["crypto"] = original["keys"][1]["crypto"];
    j["keys"][0]["address"] = original["keys"][1]["address"];
    write(j);
    // It decrypts (the associated data matches), but the key is not the stored public key.
    auto s = keyring.Unlock("alice", kPass);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Status::Code::kCorruption);
  }
  SECTION("scrypt parameters out of range") {
    json j = original;
    j["keys"][0]["crypto"]["kdfparams"]["n"] = 1u << 30;
    write(j);
    auto s = keyring.Unlock("alice", kPass);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Contains("kdfparams out of range"));
  }
  SECTION("not JSON") {
    std::ofstream(path, std::ios::trunc) << "{not json";
    auto s = keyring.List();
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Status::Code::kCorruption);
    CHECK_THAT(s.status().message(), Contains(path));
  }
}

TEST_CASE("names, duplicates, short passphrases and bad mnemonics are refused", "[keyring]") {
  TempDir dir;
  Keyring keyring(dir / "keyring.json", kFastKdf);
  REQUIRE(keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass).ok());

  auto same_name = keyring.Add("alice", KeyType::kSecp256k1, kLegal, kPass);
  REQUIRE_FALSE(same_name.ok());
  CHECK_THAT(same_name.status().message(), Contains("key 'alice' already exists"));
  auto same_address = keyring.Add("alice2", KeyType::kSecp256k1, kAbandon, kPass);
  REQUIRE_FALSE(same_address.ok());
  CHECK_THAT(same_address.status().message(), Contains("already in the keyring as key 'alice'"));
  // The same mnemonic as ed25519 is another address: allowed.
  CHECK(keyring.Add("alice-ed", KeyType::kEd25519, kAbandon, kPass).ok());

  auto short_pass = keyring.Add("carol", KeyType::kSecp256k1, kLegal, "1234567");
  REQUIRE_FALSE(short_pass.ok());
  CHECK_THAT(short_pass.status().message(), Contains("at least 8 characters"));
  auto bad_words = keyring.Add("carol", KeyType::kSecp256k1,
                               "abandon abandon abandon abandon abandon abandon abandon abandon "
                               "abandon abandon abandon abandon",
                               kPass);
  REQUIRE_FALSE(bad_words.ok());
  CHECK_THAT(bad_words.status().message(), Contains("invalid mnemonic"));

  CHECK(ValidateKeyName("a.b_c-1").ok());
  CHECK_FALSE(ValidateKeyName("").ok());
  CHECK_FALSE(ValidateKeyName("-x").ok());
  CHECK_FALSE(ValidateKeyName("a b").ok());
  CHECK_FALSE(ValidateKeyName("a/b").ok());
  CHECK_FALSE(ValidateKeyName(std::string(65, 'a')).ok());
  auto list = keyring.List();
  REQUIRE(list.ok());
  CHECK_FALSE(ValidateKeyName((*list)[0].address).ok());  // a name that is an address
  CHECK(list->size() == 2);                                // nothing refused was written
}

TEST_CASE("delete removes one key, by name or address", "[keyring]") {
  TempDir dir;
  Keyring keyring(dir / "keyring.json", kFastKdf);
  REQUIRE(keyring.Add("alice", KeyType::kSecp256k1, kAbandon, kPass).ok());
  auto bob = keyring.Add("bob", KeyType::kSecp256k1, kLegal, kPass);
  REQUIRE(bob.ok());
  REQUIRE(keyring.Delete(bob->address).ok());
  auto list = keyring.List();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 1);
  CHECK((*list)[0].name == "alice");
  CHECK(keyring.Find("bob").status().IsNotFound());
  CHECK(keyring.Delete("bob").IsNotFound());
  REQUIRE(keyring.Delete("alice").ok());
  auto empty = keyring.List();
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("an absent keyring file is an empty keyring", "[keyring]") {
  TempDir dir;
  Keyring keyring(dir / "nothing/keyring.json");
  auto list = keyring.List();
  REQUIRE(list.ok());
  CHECK(list->empty());
  CHECK(keyring.Find("x").status().IsNotFound());
  CHECK(NormalizeMnemonic(" A  b\n") == "a b");
}
