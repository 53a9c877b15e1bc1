// The poa messages on the wire (app/poa/msgs.h): Encode then DecodeMsg gives the message back;
// a pub_key that is not a consensus key is code 8, a second encoding of a value is code 2, each
// with the field path.
#include <catch2/catch.hpp>

#include "app/poa/msgs.h"
#include "app/proto_util.h"
#include "kairos/poa/v1/tx.pb.h"
#include "poa_fixture.h"

namespace kairos::test::poa {
namespace {

using Catch::Matchers::Contains;

// Decodes `bytes` as `type_url`; the reader's error when it fails.
std::optional<app::TxError> Decode(std::string_view type_url, const std::string& bytes,
                                   ante::Msg* out) {
  app::ProtoReader reader;
  const app::ProtoPath path{nullptr, "tx.body.messages", 0};
  if (app::poa::DecodeMsg(reader, type_url, bytes, path, out)) return std::nullopt;
  REQUIRE(reader.error.has_value());
  return reader.error;
}

TEST_CASE("poa msgs: encode and decode round trip", "[poa]") {
  poa::MsgSetValidator set = SetValidator(SecpKey("a"), 300, kAuthority, "alpha");
  set.operator_address = kStranger.raw;
  ante::Msg out;
  REQUIRE_FALSE(Decode(set.kTypeUrl, set.Encode(), &out));
  const auto& got = out.Get<poa::MsgSetValidator>();
  CHECK(got.authority == kAuthority.raw);
  CHECK(got.authority_address == kAuthority.bech32);
  CHECK(got.pub_key == SecpKey("a"));
  CHECK(got.power == 300);
  CHECK(got.moniker == "alpha");
  CHECK(got.operator_address == kStranger.raw);
  CHECK(got.Encode() == set.Encode());
  CHECK(out.signer() == kAuthority.raw);

  poa::MsgUpdateAuthority ua{{}, kAuthority.raw, {}, kStranger.raw};
  REQUIRE_FALSE(Decode(ua.kTypeUrl, ua.Encode(), &out));
  CHECK(out.Get<poa::MsgUpdateAuthority>().new_authority == kStranger.raw);

  poa::MsgUpdateParams up{{}, kAuthority.raw, poa::Params{42}};
  REQUIRE_FALSE(Decode(up.kTypeUrl, up.Encode(), &out));
  CHECK(out.Get<poa::MsgUpdateParams>().params.max_validators == 42);
}

TEST_CASE("poa msgs: bad encodings and keys", "[poa]") {
  ante::Msg out;
  kairos::poa::v1::MsgSetValidator pb;
  pb.set_authority(kAuthority.bech32);
  pb.mutable_pub_key()->set_type_url("/cosmos.crypto.bn254.PubKey");
  pb.mutable_pub_key()->set_value(std::string("\x0a\x01\x01", 3));
  pb.set_power(1);
  auto err = Decode(poa::MsgSetValidator::kTypeUrl, app::SerializeDeterministic(pb), &out);
  REQUIRE(err);
  CHECK(err->code == ante::kInvalidPubKey);
  CHECK_THAT(err->log, Contains("tx.body.messages[0].pub_key: type URL "
                                "\"/cosmos.crypto.bn254.PubKey\" is not a consensus key type"));

  *pb.mutable_pub_key() = poa::ToAny(poa::ConsensusKey{crypto::KeyType::kSecp256k1,
                                                       std::string(33, '\x05')});
  err = Decode(poa::MsgSetValidator::kTypeUrl, app::SerializeDeterministic(pb), &out);
  REQUIRE(err);
  CHECK(err->code == ante::kInvalidPubKey);
  CHECK_THAT(err->log, Contains("secp256k1 key is not compressed"));

  // power 0 written explicitly: a second encoding of the default.
  *pb.mutable_pub_key() = poa::ToAny(EdKey("a"));
  pb.clear_power();
  std::string bytes = app::SerializeDeterministic(pb);
  const std::string with_zero_power = bytes + std::string("\x18\x00", 2);
  err = Decode(poa::MsgSetValidator::kTypeUrl, with_zero_power, &out);
  REQUIRE(err);
  CHECK(err->code == ante::kTxDecode);
  CHECK_THAT(err->log,
             Contains("MsgSetValidator.power (#3): default value (0) written explicitly"));

  // max_validators past uint32.
  std::string params_bytes = std::string("\x08\x80\x80\x80\x80\x10", 6);  // 2^32
  kairos::poa::v1::MsgUpdateParams up;
  up.set_authority(kAuthority.bech32);
  std::string up_bytes = app::SerializeDeterministic(up) + "\x12" +
                         std::string(1, static_cast<char>(params_bytes.size())) + params_bytes;
  err = Decode(poa::MsgUpdateParams::kTypeUrl, up_bytes, &out);
  REQUIRE(err);
  CHECK(err->code == ante::kTxDecode);
  CHECK_THAT(err->log, Contains("tx.body.messages[0].params: Params.max_validators (#1): not a "
                                "uint32: 4294967296"));

  err = Decode("/kairos.poa.v1.MsgNope", "", &out);
  REQUIRE(err);
  CHECK(err->code == ante::kTxDecode);
  CHECK_THAT(err->log, Contains("unable to resolve type URL /kairos.poa.v1.MsgNope"));

  kairos::poa::v1::MsgUpdateAuthority ua;
  ua.set_authority(kAuthority.bech32);
  ua.set_new_authority("kairos1notanaddress");
  err = Decode(poa::MsgUpdateAuthority::kTypeUrl, app::SerializeDeterministic(ua), &out);
  REQUIRE(err);
  CHECK(err->code == ante::kTxDecode);
  CHECK_THAT(err->log, Contains("invalid new authority address \"kairos1notanaddress\""));
}

}  // namespace
}  // namespace kairos::test::poa
