// Unit tests for crypto/hd: the BIP-39 word list and the Trezor vectors (entropy, mnemonic, seed,
// master xprv), mnemonic validation, the BIP-32 test vectors 1 and 2, HD path parsing, and the
// Cosmos address that CosmJS derives from the "abandon ... about" mnemonic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "app/hex.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"
#include "crypto/keys.h"

using kairos::app::HexEncode;
using kairos::crypto::AddressOf;
using kairos::crypto::Bech32Encode;
using kairos::crypto::DecodeAccountAddress;
using kairos::crypto::DerivePath;
using kairos::crypto::EncodeAccountAddress;
using kairos::crypto::ExtendedKey;
using kairos::crypto::Fingerprint;
using kairos::crypto::GenerateMnemonic;
using kairos::crypto::kBip39EnglishWords;
using kairos::crypto::kCosmosHdPath;
using kairos::crypto::kHardenedBit;
using kairos::crypto::KeyType;
using kairos::crypto::MasterKeyFromSeed;
using kairos::crypto::MnemonicFromEntropy;
using kairos::crypto::MnemonicToEntropy;
using kairos::crypto::MnemonicToSeed;
using kairos::crypto::ParseHdPath;
using kairos::crypto::Secp256k1PublicKey;
using kairos::crypto::Secp256k1Sign;
using kairos::crypto::SerializeXprv;
using kairos::crypto::ValidateMnemonic;
using kairos::crypto::VerifySignature;
using Catch::Matchers::Contains;

namespace {

std::string Unhex(std::string_view hex) {
  std::string out;
  REQUIRE(kairos::app::HexDecode(hex, &out));
  return out;
}

constexpr char kAbandonAbout[] =
    "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";

// One chain step of a BIP-32 test vector: the path and its published xprv.
struct Chain {
  const char* path;
  const char* xprv;
};

// Derives each path from the seed and serializes it with its depth, parent fingerprint and child
// number, as the BIP-32 vectors do.
void CheckBip32Vector(const std::string& seed, const std::vector<Chain>& chains) {
  const ExtendedKey master = MasterKeyFromSeed(seed);
  for (const Chain& c : chains) {
    INFO(c.path);
    auto indexes = ParseHdPath(c.path);
    REQUIRE(indexes.ok());
    auto key = DerivePath(master, c.path);
    REQUIRE(key.ok());
    std::uint32_t parent_fp = 0, child_number = 0;
    if (!indexes->empty()) {
      const std::string path(c.path);
      auto parent = DerivePath(master, path.substr(0, path.rfind('/')));
      REQUIRE(parent.ok());
      parent_fp = Fingerprint(*parent);
      child_number = indexes->back();
    }
    CHECK(SerializeXprv(*key, static_cast<int>(indexes->size()), parent_fp, child_number) ==
          c.xprv);
  }
}

}  // namespace

TEST_CASE("the BIP-39 English list is the published one", "[hd][bip39]") {
  CHECK(kBip39EnglishWords.size() == 2048);
  std::string file;
  for (std::string_view w : kBip39EnglishWords) {
    CHECK_FALSE(w.empty());
    file.append(w);
    file.push_back('\n');
  }
  // The SHA-256 of bitcoin/bips bip-0039/english.txt.
  CHECK(HexEncode(kairos::crypto::Sha256(file)) ==
        "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda");
  // Word lookup is a binary search: the list must be strictly ascending.
  CHECK(std::adjacent_find(kBip39EnglishWords.begin(), kBip39EnglishWords.end(),
                           [](std::string_view a, std::string_view b) { return a >= b; }) ==
        kBip39EnglishWords.end());
}

TEST_CASE("BIP-39 matches the Trezor vectors (passphrase TREZOR)", "[hd][bip39]") {
  struct Vector {
    const char* entropy;
    const char* mnemonic;
    const char* seed;
    const char* master_xprv;
  };
  // trezor/python-mnemonic vectors.json, "english".
  const Vector vectors[] = {
      {"00000000000000000000000000000000", kAbandonAbout,
       "c55257c360c07c72029aebc1b53c05ed0362ada38ead3e3e9efa3708e53495531f09a6987599d18264c1e1c92f2"
       "cf141630c7a3c4ab7c81b2f001698e7463b04",
       "xprv9s21ZrQH143K3h3fDYiay8mocZ3afhfULfb5GX8kCBdno77K4HiA15Tg23wpbeF1pLfs1c5SPmYHrEpTuuRhxMw"
       "vKDwqdKiGJS9XFKzUsAF"},
      {"7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f",
       "legal winner thank year wave sausage worth useful legal winner thank yellow",
       "2e8905819b8723fe2c1d161860e5ee1830318dbf49a83bd451cfb8440c28bd6fa457fe1296106559a3c80937a1c"
       "1069be3a3a5bd381ee6260e8d9739fce1f607",
       "xprv9s21ZrQH143K2gA81bYFHqU68xz1cX2APaSq5tt6MFSLeXnCKV1RVUJt9FWNTbrrryem4ZckN8k4Ls1H6nwdvDT"
       "vnV7zEXs2HgPezuVccsq"},
      {"ffffffffffffffffffffffffffffffff", "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong",
       "ac27495480225222079d7be181583751e86f571027b0497b5b5d11218e0a8a13332572917f0f8e5a589620c6f15"
       "b11c61dee327651a14c34e18231052e48c069",
       "xprv9s21ZrQH143K2V4oox4M8Zmhi2Fjx5XK4Lf7GKRvPSgydU3mjZuKGCTg7UPiBUD7ydVPvSLtg9hjp7MQTYsW67r"
       "ZHAXeccqYqrsx8LcXnyd"},
      {"808080808080808080808080808080808080808080808080",
       "letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount "
       "doctor acoustic avoid letter always",
       "107d7c02a5aa6f38c58083ff74f04c607c2d2c0ecc55501dadd72d025b751bc27fe913ffb796f841c49b1d33b61"
       "0cf0e91d3aa239027f5e99fe4ce9e5088cd65",
       "xprv9s21ZrQH143K3VPCbxbUtpkh9pRG371UCLDz3BjceqP1jz7XZsQ5EnNkYAEkfeZp62cDNj13ZTEVG1TEro9sZ9g"
       "rfRmcYWLBhCocViKEJae"},
      {"0000000000000000000000000000000000000000000000000000000000000000",
       "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
       "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
       "abandon art",
       "bda85446c68413707090a52022edd26a1c9462295029f2e60cd7c4f2bbd3097170af7a4d73245cafa9c3cca8d56"
       "1a7c3de6f5d4a10be8ed2a5e608d68f92fcc8",
       "xprv9s21ZrQH143K32qBagUJAMU2LsHg3ka7jqMcV98Y7gVeVyNStwYS3U7yVVoDZ4btbRNf4h6ibWpY22iRmXq35qg"
       "Ls79f312g2kj5539ebPM"},
      {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
       "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo "
       "zoo "
       "vote",
       "dd48c104698c30cfe2b6142103248622fb7bb0ff692eebb00089b32d22484e1613912f0a5b694407be899ffd31e"
       "d3992c456cdf60f5d4564b8ba3f05a69890ad",
       "xprv9s21ZrQH143K2WFF16X85T2QCpndrGwx6GueB72Zf3AHwHJaknRXNF37ZmDrtHrrLSHvbuRejXcnYxoZKvRquTP"
       "yp2JiNG3XcjQyzSEgqCB"},
      {"9e885d952ad362caeb4efe34a8e91bd2",
       "ozone drill grab fiber curtain grace pudding thank cruise elder eight picnic",
       "274ddc525802f7c828d8ef7ddbcdc5304e87ac3535913611fbbfa986d0c9e5476c91689f9c8a54fd55bd38606aa"
       "6a8595ad213d4c9c9f9aca3fb217069a41028",
       "xprv9s21ZrQH143K2oZ9stBYpoaZ2ktHj7jLz7iMqpgg1En8kKFTXJHsjxry1JbKH19YrDTicVwKPehFKTbmaxgVEc5"
       "TpHdS1aYhB2s9aFJBeJH"},
      {"68a79eaca2324873eacc50cb9c6eca8cc68ea5d936f98787c60c7ebc74e6ce7c",
       "hamster diagram private dutch cause delay private meat slide toddler razor book happy "
       "fancy gospel tennis maple dilemma loan word shrug inflict delay length",
       "64c87cde7e12ecf6704ab95bb1408bef047c22db4cc7491c4271d170a1b213d20b385bc1588d9c7b38f1b39d415"
       "665b8a9030c9ec653d75e65f847d8fc1fc440",
       "xprv9s21ZrQH143K2XTAhys3pMNcGn261Fi5Ta2Pw8PwaVPhg3D8DWkzWQwjTJfskj8ofb81i9NP2cUNKxwjueJHHMQ"
       "AnxtivTA75uUFqPFeWzk"},
      {"f585c11aec520db57dd353c69554b21a89b20fb0650966fa0a9d6f74fd989d8f",
       "void come effort suffer camp survey warrior heavy shoot primary clutch crush open amazing "
       "screen patrol group space point ten exist slush involve unfold",
       "01f5bced59dec48e362f2c45b5de68b9fd6c92c6634f44d6d40aab69056506f0e35524a518034ddc1192e1dacd3"
       "2c1ed3eaa3c3b131c88ed8e7e54c49a5d0998",
       "xprv9s21ZrQH143K39rnQJknpH1WEPFJrzmAqqasiDcVrNuk926oizzJDDQkdiTvNPr2FYDYzWgiMiC63YmfPAa2oPy"
       "NB23r2g7d1yiK6WpqaQS"},
  };
  for (const Vector& v : vectors) {
    INFO(v.mnemonic);
    const std::string entropy = Unhex(v.entropy);
    CHECK(MnemonicFromEntropy(entropy) == v.mnemonic);
    CHECK(ValidateMnemonic(v.mnemonic).ok());
    auto back = MnemonicToEntropy(v.mnemonic);
    REQUIRE(back.ok());
    CHECK(*back == entropy);
    const std::string seed = MnemonicToSeed(v.mnemonic, "TREZOR");
    CHECK(HexEncode(seed) == v.seed);
    CHECK(SerializeXprv(MasterKeyFromSeed(seed), 0, 0, 0) == v.master_xprv);
  }
}

TEST_CASE("mnemonic validation names what is wrong", "[hd][bip39]") {
  auto message = [](std::string_view m) { return ValidateMnemonic(m).message(); };
  const std::string twelve_abandon =
      "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
      "abandon";
  CHECK(message(twelve_abandon) == "invalid mnemonic checksum");
  // One word swapped for another valid word breaks the checksum too.
  CHECK(message("legal winner thank year wave sausage worth useful legal winner thank year") ==
        "invalid mnemonic checksum");
  CHECK(message("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
                "abandonx about") ==
        "mnemonic word 11 \"abandonx\" is not in the BIP-39 English word list");
  CHECK_THAT(message("Abandon abandon abandon abandon abandon abandon abandon abandon abandon "
                     "abandon abandon about"),
             Contains("\"Abandon\" is not in the BIP-39 English word list"));
  CHECK(message("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
                "about") == "mnemonic has 11 words; want 12, 15, 18, 21 or 24");
  CHECK(message(std::string(kAbandonAbout) + " abandon abandon abandon abandon") ==
        "mnemonic has 16 words; want 12, 15, 18, 21 or 24");
  for (const std::string& spaced :
       {std::string(kAbandonAbout) + " ", " " + std::string(kAbandonAbout),
        std::string("abandon  abandon abandon abandon abandon abandon abandon abandon abandon "
                    "abandon abandon about"),
        std::string()}) {
    CHECK_THAT(message(spaced), Contains("single spaces"));
  }
  CHECK(ValidateMnemonic(kAbandonAbout).ok());
  CHECK(ValidateMnemonic(kAbandonAbout).code() == kairos::Status::Code::kOk);
  CHECK(ValidateMnemonic(twelve_abandon).code() == kairos::Status::Code::kInvalidArgument);
}

TEST_CASE("entropy sizes and random mnemonics", "[hd][bip39]") {
  for (std::size_t bytes : {16, 20, 24, 28, 32}) {
    const std::string entropy(bytes, '\x5a');
    const std::string m = MnemonicFromEntropy(entropy);
    CHECK(std::count(m.begin(), m.end(), ' ') + 1 == static_cast<long>(bytes * 3 / 4));
    REQUIRE(MnemonicToEntropy(m).ok());
    CHECK(*MnemonicToEntropy(m) == entropy);
  }
  for (std::size_t bytes : {0, 12, 15, 17, 33, 36}) {
    CHECK_THROWS_AS(MnemonicFromEntropy(std::string(bytes, '\x01')), std::invalid_argument);
  }
  const std::string a = GenerateMnemonic(), b = GenerateMnemonic();
  CHECK(std::count(a.begin(), a.end(), ' ') == 23);
  CHECK(ValidateMnemonic(a).ok());
  CHECK(ValidateMnemonic(b).ok());
  CHECK(a != b);
}

TEST_CASE("BIP-32 test vector 1", "[hd][bip32]") {
  CheckBip32Vector(
      Unhex("000102030405060708090a0b0c0d0e0f"),
      {
          {"m",
           "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiC"
           "hkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"},
          {"m/0'",
           "xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4c"
           "V1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7"},
          {"m/0'/1",
           "xprv9wTYmMFdV23N2TdNG573QoEsfRrWKQgWeibmLntzniatZvR9BmLnvSxq"
           "u53Kw1UmYPxLgboyZQaXwTCg8MSY3H2EU4pWcQDnRnrVA1xe8fs"},
          {"m/0'/1/2'",
           "xprv9z4pot5VBttmtdRTWfWQmoH1taj2axGVzFqSb8C9xaxKymcFzXBDptWm"
           "T7FwuEzG3ryjH4ktypQSAewRiNMjANTtpgP4mLTj34bhnZX7UiM"},
          {"m/0'/1/2'/2",
           "xprvA2JDeKCSNNZky6uBCviVfJSKyQ1mDYahRjijr5idH2WwLsEd4Hsb2Tyh"
           "8RfQMuPh7f7RtyzTtdrbdqqsunu5Mm3wDvUAKRHSC34sJ7in334"},
          {"m/0'/1/2'/2/1000000000",
           "xprvA41z7zogVVwxVSgdKUHDy1SKmdb533PjDz7J6N6mV6uS3ze1ai8FHa8k"
           "mHScGpWmj4WggLyQjgPie1rFSruoUihUZREPSL39UNdE3BBDu76"},
      });
}

TEST_CASE("BIP-32 test vector 2", "[hd][bip32]") {
  CheckBip32Vector(
      Unhex("fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784"
            "817e7b7875726f6c696663605d5a5754514e4b484542"),
      {
          {"m",
           "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso"
           "3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U"},
          {"m/0",
           "xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3"
           "dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt"},
          {"m/0/2147483647'",
           "xprv9wSp6B7kry3Vj9m1zSnLvN3xH8RdsPP1Mh7fAaR7aRLcQMKTR2vidYEe"
           "Eg2mUCTAwCd6vnxVrcjfy2kRgVsFawNzmjuHc2YmYRmagcEPdU9"},
          {"m/0/2147483647'/1",
           "xprv9zFnWC6h2cLgpmSA46vutJzBcfJ8yaJGg8cX1e5StJh45BBciYTRXSd2"
           "5UEPVuesF9yog62tGAQtHjXajPPdbRCHuWS6T8XA2ECKADdw4Ef"},
          {"m/0/2147483647'/1/2147483646'", "xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpD"
                                            "PS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2Vb"
                                            "FWc"},
          {"m/0/2147483647'/1/2147483646'/2", "xprvA2nrNbFZABcdryreWet9Ea4LvTJcGsqrMzxHx98MMrotbir7"
                                              "yrKCEXw7nadnHM8Dq38EGfSh6dqA9QWTyefMLEcBYJUuekgW4BYP"
                                              "Jcr9E7j"},
      });
}

TEST_CASE("HD paths parse, with clear errors", "[hd][bip32]") {
  auto cosmos = ParseHdPath(kCosmosHdPath);
  REQUIRE(cosmos.ok());
  CHECK(*cosmos == std::vector<std::uint32_t>{44 | kHardenedBit, 118 | kHardenedBit,
                                              0 | kHardenedBit, 0, 0});
  CHECK(ParseHdPath("m")->empty());
  CHECK(*ParseHdPath("m/1h/2H/3/2147483647'") ==
        std::vector<std::uint32_t>{1 | kHardenedBit, 2 | kHardenedBit, 3, 0xffffffffu});

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "invalid HD path \"\": empty"},
      {"44'/118'/0'/0/0", "invalid HD path \"44'/118'/0'/0/0\": must start with \"m\""},
      {"M/0", "must start with \"m\""},
      {"m0", "expected '/' after \"m\""},
      {"m/", "component 1 is empty"},
      {"m//0", "component 1 is empty"},
      {"m/44'/", "component 2 is empty"},
      {"m/44'/x", "component 2 \"x\" is not a number with an optional ' h or H"},
      {"m/-1", "component 1 \"-1\" is not a number"},
      {"m/1''", "component 1 \"1''\" is not a number"},
      {"m/'", "component 1 \"'\" is not a number"},
      {"m/ 1", "is not a number"},
      {"m/2147483648", "component 1 is not below 2^31"},
      {"m/99999999999999999999'", "component 1 is not below 2^31"},
  };
  for (const auto& [path, reason] : bad) {
    INFO(path);
    auto r = ParseHdPath(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == kairos::Status::Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Contains(reason));
    // DerivePath gives the same answer.
    auto d = DerivePath(MasterKeyFromSeed("seed"), path);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message() == r.status().message());
  }
  std::string deep = "m";
  for (int i = 0; i < 256; ++i) deep += "/0";
  CHECK_THAT(ParseHdPath(deep).status().message(), Contains("deeper than 255"));
}

TEST_CASE("DerivePath refuses an invalid master key", "[hd][bip32]") {
  const ExtendedKey zero{std::string(32, '\0'), std::string(32, '\x01')};
  CHECK(DerivePath(zero, "m/0").status().message() == "invalid BIP-32 master key");
  const ExtendedKey short_chain{std::string(31, '\x01') + '\x02', "abc"};
  CHECK(DerivePath(short_chain, "m").status().message() == "invalid BIP-32 master key");
}

TEST_CASE("the abandon..about mnemonic gives the CosmJS address at m/44'/118'/0'/0/0",
          "[hd][cosmos]") {
  const ExtendedKey master = MasterKeyFromSeed(MnemonicToSeed(kAbandonAbout, ""));
  auto key = DerivePath(master, kCosmosHdPath);
  REQUIRE(key.ok());
  const auto pubkey = Secp256k1PublicKey(key->private_key);
  REQUIRE(pubkey.has_value());
  CHECK(pubkey->size() == 33);
  const std::string address = AddressOf(KeyType::kSecp256k1, *pubkey);
  // The address CosmJS, Keplr and the Cosmos SDK give for this mnemonic.
  CHECK(Bech32Encode("cosmos", address) == "cosmos19rl4cm2hmr8afy4kldpxz3fka4jguq0auqdal4");
  const std::string kairos_address = EncodeAccountAddress(address);
  CHECK(kairos_address.rfind("kairos19rl4cm2hmr8afy4kldpxz3fka4jguq0a", 0) == 0);
  REQUIRE(DecodeAccountAddress(kairos_address).ok());
  CHECK(*DecodeAccountAddress(kairos_address) == address);
  // The derived key signs what its public key verifies.
  const std::string sig = Secp256k1Sign(key->private_key, "sign bytes");
  CHECK(VerifySignature(KeyType::kSecp256k1, *pubkey, "sign bytes", sig));
  // Another account index is another key.
  auto other = DerivePath(master, "m/44'/118'/0'/0/1");
  REQUIRE(other.ok());
  CHECK(other->private_key != key->private_key);
}
