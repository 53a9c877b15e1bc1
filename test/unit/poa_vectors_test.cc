// Our ValidatorUpdate bytes against CometBFT's own Go encoding, byte for byte, for v0.38.25
// and v0.40.0 (the two CometBFT versions Kairos runs with). Both put the key in
// `tendermint.crypto.PublicKey pub_key = 1` (ed25519 = 1, secp256k1 = 2) and `int64 power = 2`;
// pub_key_bytes/pub_key_type came with CometBFT v1.x. The vectors were printed by test/go/vu
// (abci.UpdateValidator(...).Marshal(), built once per version); regenerate them with
// test/go/gen_vectors.sh.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "app/hex.h"
#include "app/poa/consensus_key.h"
#include "app/proto_util.h"

namespace kairos::test::poa {
namespace {

struct Vector {
  const char* comet_version;
  const char* key_type;
  const char* pub_key_hex;
  long long power;
  const char* bytes_hex;
};

constexpr Vector kVectors[] = {
#include "poa_validator_update_vectors.inc"
};

TEST_CASE("poa: validator updates encode as CometBFT v0.38.25 and v0.40.0 do", "[poa]") {
  std::set<std::string> versions;
  int checked = 0;
  for (const Vector& v : kVectors) {
    INFO(v.comet_version << " " << v.key_type << " power " << v.power);
    app::poa::ConsensusKey key;
    key.type = std::string(v.key_type) == "ed25519" ? crypto::KeyType::kEd25519
                                                    : crypto::KeyType::kSecp256k1;
    REQUIRE(std::string_view(v.key_type) == app::poa::KeyTypeName(key.type));
    REQUIRE(app::HexDecode(v.pub_key_hex, &key.bytes));
    const auto update = app::poa::ToValidatorUpdate(key, v.power);
    CHECK(app::HexEncode(app::SerializeDeterministic(update)) == v.bytes_hex);
    // And CometBFT's bytes read back as the same update.
    std::string bytes;
    REQUIRE(app::HexDecode(v.bytes_hex, &bytes));
    tendermint::abci::ValidatorUpdate parsed;
    REQUIRE(parsed.ParseFromString(bytes));
    CHECK(parsed.power() == v.power);
    auto back = app::poa::FromCometKey(parsed.pub_key());
    REQUIRE(back.ok());
    CHECK(*back == key);
    versions.insert(v.comet_version);
    ++checked;
  }
  CHECK(versions == std::set<std::string>{"v0.38.25", "v0.40.0"});
  CHECK(checked == 16);
}

}  // namespace
}  // namespace kairos::test::poa
