// The hand-written BaseAccount codec of app/auth.cc against libprotobuf's deterministic
// serialization of cosmos.auth.v1beta1.BaseAccount: the same bytes, and a round trip.
#include <catch2/catch.hpp>

#include "app/auth/keeper.h"
#include "app/proto_util.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/crypto/ed25519/keys.pb.h"
#include "cosmos/crypto/secp256k1/keys.pb.h"
#include "crypto/bech32.h"

namespace {

using kairos::app::auth::AuthKeeper;
using kairos::app::SerializeDeterministic;
namespace crypto = kairos::crypto;

std::string ReferenceEncoding(const kairos::ante::Account& a) {
  cosmos::auth::v1beta1::BaseAccount pb;
  pb.set_address(crypto::EncodeAccountAddress(a.address));
  if (a.pub_key) {
    auto* any = pb.mutable_pub_key();
    if (a.pub_key->type == crypto::KeyType::kSecp256k1) {
      cosmos::crypto::secp256k1::PubKey k;
      k.set_key(a.pub_key->key);
      any->set_type_url("/cosmos.crypto.secp256k1.PubKey");
      any->set_value(SerializeDeterministic(k));
    } else {
      cosmos::crypto::ed25519::PubKey k;
      k.set_key(a.pub_key->key);
      any->set_type_url("/cosmos.crypto.ed25519.PubKey");
      any->set_value(SerializeDeterministic(k));
    }
  }
  pb.set_account_number(a.account_number);
  pb.set_sequence(a.sequence);
  return SerializeDeterministic(pb);
}

}  // namespace

TEST_CASE("BaseAccount codec matches libprotobuf's deterministic bytes and round-trips",
          "[auth]") {
  const std::string addr20(20, '\x07');
  std::vector<kairos::ante::Account> cases;
  cases.push_back({addr20, std::nullopt, 0, 0, ""});
  cases.push_back({addr20, std::nullopt, 5, 0, ""});
  cases.push_back({addr20, std::nullopt, 0, 300, ""});
  cases.push_back({std::string(32, '\xfe'), kairos::ante::PubKey{crypto::KeyType::kSecp256k1,
                                                                 std::string(33, '\x02')},
                   1ull << 40, ~0ull, ""});
  cases.push_back({addr20, kairos::ante::PubKey{crypto::KeyType::kEd25519, std::string(32, 'k')},
                   127, 128, ""});
  for (const auto& a : cases) {
    const std::string mine = AuthKeeper::EncodeAccount(a);
    CHECK(mine == ReferenceEncoding(a));
    auto back = AuthKeeper::DecodeAccount(mine, a.address);
    REQUIRE(back.ok());
    CHECK(back->address == a.address);
    CHECK(back->address_bech32 == crypto::EncodeAccountAddress(a.address));
    CHECK(back->account_number == a.account_number);
    CHECK(back->sequence == a.sequence);
    REQUIRE(back->pub_key.has_value() == a.pub_key.has_value());
    if (a.pub_key) {
      CHECK(back->pub_key->type == a.pub_key->type);
      CHECK(back->pub_key->key == a.pub_key->key);
    }
    // The cached bech32 text is what a re-encode uses: same bytes again.
    CHECK(AuthKeeper::EncodeAccount(*back) == mine);
  }
}

TEST_CASE("BaseAccount decoding reports corrupt state", "[auth]") {
  const std::string addr(20, '\x01');
  // Truncated length prefix, a fixed64 field, an unknown key type.
  CHECK(AuthKeeper::DecodeAccount(std::string("\x0a\x05" "ab", 4), addr).status().code() ==
        kairos::Status::Code::kCorruption);
  CHECK(AuthKeeper::DecodeAccount(std::string("\x19", 1) + std::string(8, '\0'), addr)
            .status()
            .code() == kairos::Status::Code::kCorruption);
  std::string any = std::string("\x0a\x08/foo.Bar", 10);
  std::string bad_key = "\x12" + std::string(1, static_cast<char>(any.size())) + any;
  auto r = AuthKeeper::DecodeAccount(bad_key, addr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().ToString().find("unknown key type /foo.Bar") != std::string::npos);
}
