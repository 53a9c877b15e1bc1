// Unit tests for crypto/hash and crypto/keys: published answers for the hashes, secp256k1 (RFC 6979
// signing, low-S only verification, invalid keys) and ed25519 (RFC 8032), and the addresses.
#include <secp256k1.h>

#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "app/hex.h"
#include "crypto/hash.h"
#include "crypto/keys.h"

using kairos::app::HexEncode;
using kairos::crypto::AddressOf;
using kairos::crypto::Ed25519PublicKey;
using kairos::crypto::Ed25519Sign;
using kairos::crypto::HmacSha512;
using kairos::crypto::KeyType;
using kairos::crypto::Pbkdf2Sha512;
using kairos::crypto::Ripemd160;
using kairos::crypto::Secp256k1PublicKey;
using kairos::crypto::Secp256k1Sign;
using kairos::crypto::Sha256;
using kairos::crypto::VerifySignature;

namespace {

std::string Unhex(std::string_view hex) {
  std::string out;
  REQUIRE(kairos::app::HexDecode(hex, &out));
  return out;
}

// The order n of the secp256k1 group, big-endian.
std::string OrderN() {
  return Unhex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141");
}
// The order L of the ed25519 group, little-endian (as S is encoded).
std::string OrderL() {
  return Unhex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");
}

// a - b for 32-byte big-endian numbers. REQUIRES: a >= b.
std::string SubBe(const std::string& a, const std::string& b) {
  std::string out(32, '\0');
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = static_cast<unsigned char>(a[i]) - static_cast<unsigned char>(b[i]) - borrow;
    borrow = d < 0;
    out[i] = static_cast<char>(d + (borrow ? 256 : 0));
  }
  return out;
}

// a + b for 32-byte little-endian numbers (no overflow in the uses below).
std::string AddLe(const std::string& a, const std::string& b) {
  std::string out(32, '\0');
  int carry = 0;
  for (int i = 0; i < 32; ++i) {
    int d = static_cast<unsigned char>(a[i]) + static_cast<unsigned char>(b[i]) + carry;
    carry = d >> 8;
    out[i] = static_cast<char>(d & 0xff);
  }
  return out;
}

// A secp256k1 key made from a label, and its signature over `msg`.
struct Signed {
  std::string pub, msg, sig;
};
Signed SignWithKey(const std::string& label, const std::string& msg) {
  const std::string priv = Sha256(label);
  return {*Secp256k1PublicKey(priv), msg, Secp256k1Sign(priv, msg)};
}

std::string PrivKey(int last_byte) {
  std::string k(32, '\0');
  k[31] = static_cast<char>(last_byte);
  return k;
}

}  // namespace

TEST_CASE("SHA-256 and RIPEMD-160 give the published digests", "[crypto][hash]") {
  CHECK(HexEncode(Sha256("")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(HexEncode(Sha256("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(HexEncode(Ripemd160("")) == "9c1185a5c5e9fc54612808977ee8f548b2258d31");
  CHECK(HexEncode(Ripemd160("abc")) == "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc");
}

TEST_CASE("HMAC-SHA512 gives the RFC 4231 answers", "[crypto][hash]") {
  CHECK(HexEncode(HmacSha512(std::string(20, '\x0b'), "Hi There")) ==
        "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
        "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854");
  CHECK(HexEncode(HmacSha512("Jefe", "what do ya want for nothing?")) ==
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
        "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
}

TEST_CASE("PBKDF2-HMAC-SHA512 gives the published answer and honours the length",
          "[crypto][hash]") {
  CHECK(HexEncode(Pbkdf2Sha512("password", "salt", 1, 64)) ==
        "867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252"
        "c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce");
  CHECK(Pbkdf2Sha512("password", "salt", 1, 20) ==
        Pbkdf2Sha512("password", "salt", 1, 64).substr(0, 20));
  CHECK(Pbkdf2Sha512("password", "salt", 2, 64) != Pbkdf2Sha512("password", "salt", 1, 64));
}

TEST_CASE("secp256k1 public keys are compressed and checked", "[crypto][secp256k1]") {
  // 1*G and (n-1)*G = -G: the same x, even and odd y.
  CHECK(HexEncode(*Secp256k1PublicKey(PrivKey(1))) ==
        "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798");
  CHECK(HexEncode(*Secp256k1PublicKey(SubBe(OrderN(), PrivKey(1)))) ==
        "0379be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798");
  CHECK_FALSE(Secp256k1PublicKey(PrivKey(0)).has_value());
  CHECK_FALSE(Secp256k1PublicKey(OrderN()).has_value());
  CHECK_FALSE(Secp256k1PublicKey(std::string(31, '\x01')).has_value());
  CHECK_FALSE(Secp256k1PublicKey(std::string(33, '\x01')).has_value());
}

TEST_CASE("a secp256k1 address is RIPEMD160(SHA256(compressed key))", "[crypto][secp256k1]") {
  // The HASH160 of 1*G, as in BIP-173's first segwit address.
  const std::string address = AddressOf(KeyType::kSecp256k1, *Secp256k1PublicKey(PrivKey(1)));
  CHECK(HexEncode(address) == "751e76e8199196d454941c45d1b3a323f1433bd6");
}

TEST_CASE("secp256k1 signing is RFC 6979 over SHA-256 of the message, low-S",
          "[crypto][secp256k1]") {
  // The widely published RFC 6979 answers for private key 1 (r || s, s already lower).
  CHECK(HexEncode(Secp256k1Sign(PrivKey(1), "Satoshi Nakamoto")) ==
        "934b1ea10a4b3c1757e2b0c017d0b6143ce3c9a7e6a4a49860d7a6ab210ee3d8"
        "2442ce9d2b916064108014783e923ec36b49743e2ffa1c4496f01a512aafd9e5");
  // Here the raw RFC 6979 s is high (ab8019bb...): the library returns n - s.
  const std::string roy =
      "All those moments will be lost in time, like tears in rain. Time to die...";
  CHECK(HexEncode(Secp256k1Sign(PrivKey(1), roy)) ==
        "8600dbd41e348fe5c9465ab92d23e3db8b98b873beecd930736488696438cb6b"
        "547fe64427496db33bf66019dacbf0039c04199abb0122918601db38a72cfc21");
  CHECK(Secp256k1Sign(PrivKey(7), "msg") == Secp256k1Sign(PrivKey(7), "msg"));
  CHECK_THROWS_AS(Secp256k1Sign(PrivKey(0), "msg"), std::invalid_argument);
  CHECK_THROWS_AS(Secp256k1Sign("short", "msg"), std::invalid_argument);
}

TEST_CASE("secp256k1 signatures verify only for the right key and message",
          "[crypto][secp256k1]") {
  const auto [pub, msg, sig] = SignWithKey("a test key", "sign bytes");
  CHECK(VerifySignature(KeyType::kSecp256k1, pub, msg, sig));
  CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, pub, msg + "z", sig));
  CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, *Secp256k1PublicKey(PrivKey(2)), msg, sig));
  std::string flipped = sig;
  flipped[10] ^= 0x01;
  CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, pub, msg, flipped));
  // The same key and signature under the other key type.
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub, msg, sig));
}

TEST_CASE("a high-S secp256k1 signature is rejected", "[crypto][secp256k1]") {
  const auto [pub, msg, sig] = SignWithKey("high-S key", "sign bytes");
  REQUIRE(VerifySignature(KeyType::kSecp256k1, pub, msg, sig));
  const std::string high = sig.substr(0, 32) + SubBe(OrderN(), sig.substr(32));
  REQUIRE(high != sig);
  CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, pub, msg, high));

  // The rejection is for the form only: (r, n - s) is the same signature, and normalizing it
  // gives back the accepted one.
  const secp256k1_context* ctx = secp256k1_context_static;
  secp256k1_ecdsa_signature parsed, normalized;
  REQUIRE(secp256k1_ecdsa_signature_parse_compact(
              ctx, &parsed, reinterpret_cast<const unsigned char*>(high.data())) == 1);
  CHECK(secp256k1_ecdsa_signature_normalize(ctx, &normalized, &parsed) == 1);  // it was high
  std::string back(64, '\0');
  secp256k1_ecdsa_signature_serialize_compact(ctx, reinterpret_cast<unsigned char*>(back.data()),
                                              &normalized);
  CHECK(back == sig);
}

TEST_CASE("malformed secp256k1 keys and signatures are false, never a crash",
          "[crypto][secp256k1]") {
  const auto [pub, msg, sig] = SignWithKey("malformed", "m");
  REQUIRE(VerifySignature(KeyType::kSecp256k1, pub, msg, sig));

  SECTION("public keys") {
    std::string bad_prefix = pub;
    bad_prefix[0] = 0x05;
    // x = p, the field size: not a field element.
    const std::string x_is_p =
        Unhex("02fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f");
    // The same key uncompressed (65 bytes) is valid secp256k1, but not the Cosmos form.
    secp256k1_pubkey pk;
    std::string uncompressed(65, '\0');
    std::size_t len = uncompressed.size();
    REQUIRE(secp256k1_ec_pubkey_parse(secp256k1_context_static, &pk,
                                      reinterpret_cast<const unsigned char*>(pub.data()),
                                      pub.size()) == 1);
    secp256k1_ec_pubkey_serialize(secp256k1_context_static,
                                  reinterpret_cast<unsigned char*>(uncompressed.data()), &len, &pk,
                                  SECP256K1_EC_UNCOMPRESSED);
    for (const std::string& key :
         {bad_prefix, x_is_p, uncompressed, std::string(), pub.substr(0, 32), pub + '\0',
          std::string(33, '\0'), std::string(33, '\xff')}) {
      CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, key, msg, sig));
    }
  }
  SECTION("signatures") {
    const std::string r = sig.substr(0, 32), s = sig.substr(32);
    for (const std::string& bad :
         {std::string(), sig.substr(0, 63), sig + '\0', std::string(64, '\0'),
          std::string(32, '\0') + s, r + std::string(32, '\0'), OrderN() + s, r + OrderN(),
          std::string(64, '\xff')}) {
      CHECK_FALSE(VerifySignature(KeyType::kSecp256k1, pub, msg, bad));
    }
  }
}

TEST_CASE("secp256k1 verification is safe from many threads at once", "[crypto][secp256k1]") {
  std::vector<Signed> cases;
  for (int i = 0; i < 16; ++i) {
    cases.push_back(SignWithKey("thread key " + std::to_string(i), "message " + std::to_string(i)));
  }
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 25; ++round) {
        for (const Signed& c : cases) {
          ok[t] += VerifySignature(KeyType::kSecp256k1, c.pub, c.msg, c.sig);
          ok[t] += !VerifySignature(KeyType::kSecp256k1, c.pub, c.msg + "x", c.sig);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int count : ok) CHECK(count == 25 * 16 * 2);
}

TEST_CASE("ed25519 keys and signatures match RFC 8032", "[crypto][ed25519]") {
  struct Vector {
    const char* secret;
    const char* pub;
    const char* msg;
    const char* sig;
  };
  const Vector vectors[] = {
      {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
       "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
       "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
       "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
      {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
       "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
       "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
       "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
      {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
       "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
       "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
       "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
  };
  for (const Vector& v : vectors) {
    const std::string secret = Unhex(v.secret), msg = Unhex(v.msg);
    CHECK(HexEncode(Ed25519PublicKey(secret)) == v.pub);
    CHECK(HexEncode(Ed25519Sign(secret, msg)) == v.sig);
    CHECK(VerifySignature(KeyType::kEd25519, Unhex(v.pub), msg, Unhex(v.sig)));
  }
}

TEST_CASE("ed25519 rejects other messages, tampering, non-canonical S and bad keys",
          "[crypto][ed25519]") {
  const std::string secret = Sha256("ed25519 key");
  const std::string pub = Ed25519PublicKey(secret);
  const std::string sig = Ed25519Sign(secret, "sign bytes");
  REQUIRE(VerifySignature(KeyType::kEd25519, pub, "sign bytes", sig));
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub, "sign bytez", sig));
  std::string flipped = sig;
  flipped[40] ^= 0x20;
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub, "sign bytes", flipped));
  // S + L is congruent to S: only the canonical S < L may verify (RFC 8032 5.1.7).
  const std::string s_plus_l = sig.substr(0, 32) + AddLe(sig.substr(32), OrderL());
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub, "sign bytes", s_plus_l));
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub, "sign bytes", sig.substr(0, 63)));
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub.substr(0, 31), "sign bytes", sig));
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, pub + '\0', "sign bytes", sig));
  // 32 bytes that are not this key (some do not even decode to a point).
  for (int i = 0; i < 32; ++i) {
    CHECK_FALSE(VerifySignature(KeyType::kEd25519, Sha256("not a key " + std::to_string(i)),
                                "sign bytes", sig));
  }
  CHECK_FALSE(VerifySignature(KeyType::kEd25519, std::string(32, '\xff'), "sign bytes", sig));
  CHECK_THROWS_AS(Ed25519PublicKey("short"), std::invalid_argument);
  CHECK_THROWS_AS(Ed25519Sign(std::string(33, 'k'), "m"), std::invalid_argument);
}

TEST_CASE("an ed25519 address is SHA256(key)[:20]", "[crypto][ed25519]") {
  const std::string pub =
      Unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const std::string address = AddressOf(KeyType::kEd25519, pub);
  CHECK(address.size() == 20);
  CHECK(address == Sha256(pub).substr(0, 20));
  CHECK(address != AddressOf(KeyType::kSecp256k1, pub));
}
