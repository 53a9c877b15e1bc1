// Unit tests for app/tx_codec and ante/sign_doc: canonical decoding (every non-canonical form is
// refused with its code and a log naming the message and field), build -> decode round trips,
// signers, and CosmJS's published SIGN_MODE_DIRECT test vectors.
#include <catch2/catch.hpp>

#include <string>
#include <variant>
#include <vector>

#include "ante/sign_doc.h"
#include "app/hex.h"
#include "app/tx_codec.h"
#include "crypto/bech32.h"
#include "crypto/hash.h"
#include "crypto/hd.h"
#include "crypto/keys.h"
#include "app/bank/msgs.h"

using kairos::ante::Coins;
using kairos::app::bank::MsgSend;
using kairos::ante::Tx;
using kairos::app::DecodeTx;
using kairos::app::TxError;
using kairos::app::TxSpec;
using kairos::app::SignerKey;
namespace crypto = kairos::crypto;

namespace {

// --- A tiny protobuf wire writer, so tests can write any encoding, canonical or not. --------

std::string V(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Tag(std::uint32_t n, int wt) { return V((std::uint64_t{n} << 3) | wt); }
std::string F(std::uint32_t n, std::uint64_t v) { return Tag(n, 0) + V(v); }     // varint field
std::string L(std::uint32_t n, std::string_view b) {                             // LEN field
  return Tag(n, 2) + V(b.size()) + std::string(b);
}

std::string Hex(std::string_view hex) {
  std::string out;
  REQUIRE(kairos::app::HexDecode(hex, &out));
  return out;
}

const std::string kFrom(20, '\x11');
const std::string kTo(20, '\x22');
const std::string kThird(20, '\x33');
const std::string kSecpKey = "\x02" + std::string(32, '\x44');  // the decoder does not check points
const std::string kSig(64, '\x55');

std::string Addr(const std::string& raw) { return crypto::EncodeAccountAddress(raw); }
std::string CoinPb(std::string_view denom, std::string_view amount) {
  return L(1, denom) + L(2, amount);
}
std::string MsgSendPb(const std::string& from = kFrom, const std::string& extra = {}) {
  return L(1, Addr(from)) + L(2, Addr(kTo)) + L(3, CoinPb("stake", "10")) + extra;
}
std::string AnyPb(std::string_view url, std::string_view value) {
  return L(1, url) + (value.empty() ? std::string() : L(2, value));
}
std::string MsgAny(const std::string& msg = MsgSendPb()) {
  return L(1, AnyPb("/cosmos.bank.v1beta1.MsgSend", msg));
}
std::string SecpPubKeyAny(std::string_view key = kSecpKey) {
  return AnyPb("/cosmos.crypto.secp256k1.PubKey", L(1, key));
}
std::string ModeDirect() { return L(1, F(1, 1)); }  // ModeInfo{single{mode: DIRECT}}
std::string SignerInfoPb(std::uint64_t seq = 3) {
  return L(1, SecpPubKeyAny()) + L(2, ModeDirect()) + (seq ? F(3, seq) : std::string());
}
std::string FeePb() { return L(1, CoinPb("stake", "100")) + F(2, 200000); }
std::string DefaultBody() { return MsgAny() + L(2, "hello"); }
std::string DefaultAuth() { return L(1, SignerInfoPb()) + L(2, FeePb()); }
std::string RawPb(const std::string& body, const std::string& auth,
                  const std::vector<std::string>& sigs = {kSig}) {
  std::string out;
  if (!body.empty()) out += L(1, body);
  if (!auth.empty()) out += L(2, auth);
  for (const auto& s : sigs) out += L(3, s);
  return out;
}
std::string WithBody(const std::string& body) { return RawPb(body, DefaultAuth()); }
std::string WithAuth(const std::string& auth) { return RawPb(DefaultBody(), auth); }
std::string WithMsg(const std::string& msg) { return WithBody(MsgAny(msg)); }
std::string WithSignerInfo(const std::string& info) {
  return WithAuth(L(1, info) + L(2, FeePb()));
}
std::string WithTimestamp(const std::string& ts) { return WithBody(MsgAny() + L(5, ts)); }
// A MsgSend from kFrom to kTo with the given Coin messages.
std::string WithCoins(const std::string& coins) {
  return WithMsg(L(1, Addr(kFrom)) + L(2, Addr(kTo)) + coins);
}

Tx Accept(std::string_view raw) {
  auto r = DecodeTx(raw);
  if (auto* e = std::get_if<TxError>(&r)) FAIL("rejected: code " << e->code << ": " << e->log);
  return std::get<Tx>(std::move(r));
}

TxError Reject(std::string_view raw) {
  auto r = DecodeTx(raw);
  REQUIRE(std::holds_alternative<TxError>(r));
  return std::get<TxError>(r);
}

struct RejectCase {
  std::string name;
  std::string raw;
  std::uint32_t code;
  std::string log;  // expected substring
};

void CheckAll(const std::vector<RejectCase>& cases) {
  for (const RejectCase& c : cases) {
    INFO(c.name);
    TxError e = Reject(c.raw);
    INFO("log: " << e.log);
    CHECK(e.code == c.code);
    CHECK_THAT(e.log, Catch::Contains(c.log));
    if (c.code == 2) CHECK_THAT(e.log, Catch::EndsWith(": tx parse error"));
  }
}

std::string PrivKey(char fill) { return std::string(32, fill); }

MsgSend Send(const std::string& from, const std::string& to, std::string_view coins) {
  MsgSend m;
  m.from = from;
  m.to = to;
  m.amount = *Coins::Parse(coins);
  return m;
}

}  // namespace

TEST_CASE("the hand-written canonical tx decodes, and the builder writes the same bytes",
          "[tx_codec]") {
  const std::string raw = WithBody(DefaultBody() + F(3, 77) + F(4, 1));
  Tx tx = Accept(raw);
  REQUIRE(tx.msgs.size() == 1);
  const auto& send = tx.msgs[0].Get<MsgSend>();
  CHECK(send.from == kFrom);
  CHECK(send.to == kTo);
  CHECK(send.from_address == Addr(kFrom));
  CHECK(send.amount.ToString() == "10stake");
  CHECK(tx.msg_type_urls == std::vector<std::string>{"/cosmos.bank.v1beta1.MsgSend"});
  CHECK(tx.memo == "hello");
  CHECK(tx.timeout_height == 77);
  CHECK(tx.unordered);
  CHECK_FALSE(tx.timeout_unix_nanos.has_value());
  REQUIRE(tx.signer_infos.size() == 1);
  REQUIRE(tx.signer_infos[0].public_key.has_value());
  CHECK(tx.signer_infos[0].public_key->type == crypto::KeyType::kSecp256k1);
  CHECK(tx.signer_infos[0].public_key->key == kSecpKey);
  CHECK(tx.signer_infos[0].sequence == 3);
  CHECK(tx.fee.ToString() == "100stake");
  CHECK(tx.gas_limit == 200000);
  CHECK(tx.fee_payer.empty());
  CHECK(tx.signatures == std::vector<std::string>{kSig});
  CHECK(tx.signers == std::vector<std::string>{kFrom});
  CHECK(tx.FeePayer() == kFrom);
  CHECK(tx.raw_size == raw.size());
  CHECK(tx.hash == crypto::Sha256(raw));
  CHECK(tx.body_bytes == DefaultBody() + F(3, 77) + F(4, 1));
  CHECK(tx.auth_info_bytes == DefaultAuth());

  TxSpec spec;
  spec.msgs.push_back(Send(kFrom, kTo, "10stake"));
  spec.memo = "hello";
  spec.timeout_height = 77;
  spec.unordered = true;
  CHECK(kairos::app::EncodeTxBody(spec) == tx.body_bytes);
}

TEST_CASE("BuildSignedTx round-trips through DecodeTx with verifiable signatures", "[tx_codec]") {
  TxSpec spec;
  spec.msgs.push_back(Send(kFrom, kTo, "5atom,10stake"));
  spec.msgs.push_back(Send(kThird, kTo, "1stake"));
  spec.memo = "m\xc3\xa9mo";
  spec.timeout_height = 9;
  spec.unordered = true;
  spec.timeout_unix_nanos = 1'700'000'000'123'456'789;
  spec.fee = *Coins::Parse("250stake");
  spec.gas_limit = 123456;
  spec.fee_payer = std::string(20, '\x66');
  spec.fee_granter = std::string(32, '\x77');

  SignerKey secp{crypto::KeyType::kSecp256k1, PrivKey('\x01'), 7, 0, true};
  SignerKey ed{crypto::KeyType::kEd25519, PrivKey('\x02'), 8, 0, true};
  SignerKey no_pub{crypto::KeyType::kSecp256k1, PrivKey('\x03'), 9, 4, false};
  const std::vector<SignerKey> keys = {secp, ed, no_pub};
  const std::string raw = kairos::app::BuildSignedTx(spec, keys, "kairos-test");

  Tx tx = Accept(raw);
  REQUIRE(tx.msgs.size() == 2);
  CHECK(tx.msgs[0].Get<MsgSend>().amount.ToString() == "5atom,10stake");
  CHECK(tx.msgs[1].Get<MsgSend>().from == kThird);
  CHECK(tx.memo == spec.memo);
  CHECK(tx.timeout_height == 9);
  CHECK(tx.unordered);
  CHECK(tx.timeout_unix_nanos == spec.timeout_unix_nanos);
  CHECK(tx.fee.ToString() == "250stake");
  CHECK(tx.gas_limit == 123456);
  CHECK(tx.fee_payer == spec.fee_payer);
  CHECK(tx.fee_granter == spec.fee_granter);
  CHECK(tx.signers == std::vector<std::string>{kFrom, kThird, spec.fee_payer});
  CHECK(tx.FeePayer() == spec.fee_payer);
  CHECK(tx.body_bytes == kairos::app::EncodeTxBody(spec));
  CHECK(tx.auth_info_bytes == kairos::app::EncodeAuthInfo(spec, keys));

  REQUIRE(tx.signer_infos.size() == 3);
  REQUIRE(tx.signatures.size() == 3);
  CHECK(tx.signer_infos[0].public_key->type == crypto::KeyType::kSecp256k1);
  CHECK(tx.signer_infos[0].public_key->key == *crypto::Secp256k1PublicKey(secp.private_key));
  CHECK(tx.signer_infos[1].public_key->type == crypto::KeyType::kEd25519);
  CHECK(tx.signer_infos[1].public_key->key == crypto::Ed25519PublicKey(ed.private_key));
  CHECK_FALSE(tx.signer_infos[2].public_key.has_value());
  CHECK(tx.signer_infos[2].sequence == 4);
  const std::string pubs[] = {*crypto::Secp256k1PublicKey(secp.private_key),
                              crypto::Ed25519PublicKey(ed.private_key),
                              *crypto::Secp256k1PublicKey(no_pub.private_key)};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("signer " << i);
    const std::string doc = kairos::ante::SignDocBytes(tx.body_bytes, tx.auth_info_bytes,
                                                       "kairos-test", keys[i].account_number);
    CHECK(crypto::VerifySignature(keys[i].type, pubs[i], doc, tx.signatures[i]));
    // Bound to the chain id and the account number.
    CHECK_FALSE(crypto::VerifySignature(
        keys[i].type, pubs[i],
        kairos::ante::SignDocBytes(tx.body_bytes, tx.auth_info_bytes, "other-chain",
                                   keys[i].account_number),
        tx.signatures[i]));
    CHECK_FALSE(crypto::VerifySignature(
        keys[i].type, pubs[i],
        kairos::ante::SignDocBytes(tx.body_bytes, tx.auth_info_bytes, "kairos-test",
                                   keys[i].account_number + 1),
        tx.signatures[i]));
  }
  // Deterministic: the same spec and keys give the same bytes.
  CHECK(kairos::app::BuildSignedTx(spec, keys, "kairos-test") == raw);
}

TEST_CASE("an empty fee and default spec fields are omitted, not written", "[tx_codec]") {
  TxSpec spec;
  spec.msgs.push_back(Send(kFrom, kTo, "1stake"));
  spec.gas_limit = 0;
  const std::string auth = kairos::app::EncodeAuthInfo(spec, {});
  CHECK(auth == L(2, ""));  // the fee is present (as the Go SDK writes it) but empty
  CHECK(kairos::app::EncodeTxBody(spec) == MsgAny(L(1, Addr(kFrom)) + L(2, Addr(kTo)) +
                                                  L(3, CoinPb("stake", "1"))));
  Tx tx = Accept(RawPb(kairos::app::EncodeTxBody(spec), auth, {}));
  CHECK(tx.fee.empty());
  CHECK(tx.gas_limit == 0);
  CHECK(tx.signatures.empty());
}

TEST_CASE("signers: unique message signers in order, then the fee payer", "[tx_codec]") {
  const std::string body = MsgAny(MsgSendPb(kFrom)) + MsgAny(MsgSendPb(kThird)) +
                           MsgAny(MsgSendPb(kFrom));
  auto fee_with_payer = [](const std::string& payer) {
    return L(2, L(1, CoinPb("stake", "100")) + F(2, 200000) + L(3, Addr(payer)));
  };
  Tx no_payer = Accept(WithBody(body));
  CHECK(no_payer.signers == std::vector<std::string>{kFrom, kThird});
  CHECK(no_payer.FeePayer() == kFrom);

  const std::string payer(20, '\x99');
  Tx other = Accept(RawPb(body, L(1, SignerInfoPb()) + fee_with_payer(payer)));
  CHECK(other.signers == std::vector<std::string>{kFrom, kThird, payer});
  CHECK(other.FeePayer() == payer);

  Tx among = Accept(RawPb(body, L(1, SignerInfoPb()) + fee_with_payer(kThird)));
  CHECK(among.signers == std::vector<std::string>{kFrom, kThird});
  CHECK(among.FeePayer() == kThird);
}

TEST_CASE("timeout_timestamp converts to Unix nanoseconds, with range checks", "[tx_codec]") {
  CHECK(Accept(WithTimestamp(F(1, 1'700'000'000) + F(2, 5))).timeout_unix_nanos ==
        1'700'000'000'000'000'005);
  CHECK(Accept(WithTimestamp("")).timeout_unix_nanos == 0);  // present but zero
  // -1 ns: seconds -1 (a 10-byte varint), nanos 999999999.
  CHECK(Accept(WithTimestamp(F(1, static_cast<std::uint64_t>(-1)) + F(2, 999'999'999)))
            .timeout_unix_nanos == -1);
  // The last representable instant: 2262-04-11T23:47:16.854775807Z.
  CHECK(Accept(WithTimestamp(F(1, 9'223'372'036) + F(2, 854'775'807))).timeout_unix_nanos ==
        INT64_MAX);

  TxSpec spec;
  spec.msgs.push_back(Send(kFrom, kTo, "1stake"));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{-1'000'000'000},
                         std::int64_t{-1'500'000'000}, INT64_MIN, INT64_MAX}) {
    INFO(n);
    spec.timeout_unix_nanos = n;
    CHECK(Accept(RawPb(kairos::app::EncodeTxBody(spec), DefaultAuth())).timeout_unix_nanos == n);
  }

  CheckAll({
      {"nanos = 1e9", WithTimestamp(F(1, 1) + F(2, 1'000'000'000)), 2,
       "tx.body.timeout_timestamp: Timestamp.nanos 1000000000 is outside [0, 1e9)"},
      {"negative nanos", WithTimestamp(F(1, 1) + F(2, static_cast<std::uint64_t>(-1))), 2,
       "Timestamp.nanos -1 is outside [0, 1e9)"},
      {"int32 not sign-extended", WithTimestamp(F(1, 1) + F(2, 0xFFFFFFFFu)), 2,
       "Timestamp.nanos (#2): int32 value is not a sign-extended 32-bit value"},
      {"after year 9999", WithTimestamp(F(1, 253'402'300'800)), 2,
       "Timestamp.seconds 253402300800 is outside 0001-01-01..9999-12-31"},
      {"before year 1", WithTimestamp(F(1, static_cast<std::uint64_t>(-62'135'596'801))), 2,
       "is outside 0001-01-01..9999-12-31"},
      {"after 2262 (int64 nanos overflow)", WithTimestamp(F(1, 9'223'372'037)), 2,
       "outside the int64 Unix-nanosecond range"},
      {"just past INT64_MAX ns", WithTimestamp(F(1, 9'223'372'036) + F(2, 854'775'808)), 2,
       "outside the int64 Unix-nanosecond range"},
      {"seconds 0 written", WithTimestamp(F(1, 0) + F(2, 5)), 2,
       "Timestamp.seconds (#1): default value (0) written explicitly"},
      {"unknown critical field", WithTimestamp(F(1, 5) + F(3, 1)), 2,
       "tx.body.timeout_timestamp: Timestamp field (#3): unknown field"},
  });
}

TEST_CASE("order, duplicates, varints, wire types and trailing bytes", "[tx_codec]") {
  const std::string good = WithBody(DefaultBody());
  CheckAll({
      {"empty tx", "", 2, "tx bytes are empty"},
      {"TxRaw fields out of order", L(2, DefaultAuth()) + L(1, DefaultBody()) + L(3, kSig), 2,
       "tx: TxRaw.body_bytes (#1): fields out of order (after #2)"},
      {"TxRaw duplicate body", L(1, DefaultBody()) + L(1, DefaultBody()) + L(2, DefaultAuth()), 2,
       "tx: TxRaw.body_bytes (#1): duplicate field"},
      {"TxRaw empty body written", L(1, "") + L(2, DefaultAuth()), 2,
       "TxRaw.body_bytes (#1): default value (empty) written explicitly"},
      {"TxRaw unknown field", good + F(4, 1), 2, "tx: TxRaw field (#4): unknown field"},
      {"TxRaw non-critical unknown field", good + F(1025, 1), 2,
       "tx: TxRaw field (#1025): unknown non-critical field (only allowed in the tx body)"},
      {"trailing zero byte", good + std::string(1, '\0'), 2, "tx: TxRaw: invalid field number 0"},
      {"trailing truncated tag", good + "\x80", 2, "tx: TxRaw: tag: truncated varint"},
      {"trailing truncated length", good + "\x1a", 2,
       "TxRaw.signatures (#3): length: truncated varint"},
      {"length past the end", good + "\x1a\x05" + "ab", 2,
       "TxRaw.signatures (#3): length past the end"},
      {"truncated varint value", WithBody(DefaultBody() + Tag(3, 0) + "\x80"), 2,
       "TxBody.timeout_height (#3): truncated varint"},
      {"non-minimal tag", WithBody(MsgAny() + std::string("\x92\x00", 2) + V(1) + "m"), 2,
       "tx.body: TxBody: tag: non-minimal varint"},
      {"non-minimal length", WithBody(MsgAny() + Tag(2, 2) + std::string("\x81\x00", 2) + "m"), 2,
       "TxBody.memo (#2): length: non-minimal varint"},
      {"non-minimal varint value", WithBody(DefaultBody() + Tag(3, 0) + std::string("\x81\x00", 2)),
       2,
       "TxBody.timeout_height (#3): non-minimal varint"},
      {"varint over 64 bits", WithBody(DefaultBody() + Tag(3, 0) + std::string(9, '\xff') + "\x02"),
       2, "TxBody.timeout_height (#3): varint overflows 64 bits"},
      {"11-byte varint", WithBody(DefaultBody() + Tag(3, 0) + std::string(10, '\x80') + "\x01"), 2,
       "varint overflows 64 bits"},
      {"field number too large", WithBody(DefaultBody() + V((std::uint64_t{1} << 32) | 2)), 2,
       "invalid field number"},
      {"body fields out of order", WithBody(L(2, "m") + MsgAny()), 2,
       "tx.body: TxBody.messages (#1): fields out of order (after #2)"},
      {"repeated field split", WithBody(MsgAny() + L(2, "m") + MsgAny()), 2,
       "TxBody.messages (#1): fields out of order (after #2)"},
      {"duplicate memo", WithBody(MsgAny() + L(2, "a") + L(2, "b")), 2,
       "TxBody.memo (#2): duplicate field"},
      {"memo as a varint", WithBody(MsgAny() + F(2, 5)), 2,
       "TxBody.memo (#2): wrong wire type 0 (varint), want 2 (length-delimited)"},
      {"timeout_height as fixed64", WithBody(DefaultBody() + Tag(3, 1) + std::string(8, '\1')), 2,
       "TxBody.timeout_height (#3): wrong wire type 1 (fixed64), want 0 (varint)"},
      {"timeout_height as bytes", WithBody(DefaultBody() + L(3, "\x01")), 2,
       "TxBody.timeout_height (#3): wrong wire type 2 (length-delimited), want 0 (varint)"},
      {"messages as fixed32", WithBody(Tag(1, 5) + std::string(4, '\1')), 2,
       "TxBody.messages (#1): wrong wire type 5 (fixed32), want 2 (length-delimited)"},
      {"group", WithBody(DefaultBody() + Tag(3, 3)), 2,
       "TxBody.timeout_height (#3): wire type 3 (start-group) is not allowed"},
      {"wire type 7", WithBody(DefaultBody() + Tag(3, 7)), 2, "wire type 7 (invalid)"},
      {"truncated fixed64 in unknown field", WithBody(DefaultBody() + Tag(1025, 1) + "abc"), 2,
       "truncated fixed-size value"},
  });
}

TEST_CASE("default values written explicitly are refused", "[tx_codec]") {
  CheckAll({
      {"memo \"\"", WithBody(MsgAny() + L(2, "")), 2,
       "tx.body: TxBody.memo (#2): default value (empty) written explicitly"},
      {"timeout_height 0", WithBody(DefaultBody() + F(3, 0)), 2,
       "TxBody.timeout_height (#3): default value (0) written explicitly"},
      {"unordered false", WithBody(DefaultBody() + F(4, 0)), 2,
       "TxBody.unordered (#4): default value (false) written explicitly"},
      {"unordered = 2", WithBody(DefaultBody() + F(4, 2)), 2,
       "TxBody.unordered (#4): bool encoded as a value other than 1"},
      {"Any.type_url \"\"", WithBody(L(1, L(1, "") + L(2, MsgSendPb()))), 2,
       "tx.body.messages[0]: Any.type_url (#1): default value (empty) written explicitly"},
      {"Any.value \"\"", WithBody(L(1, L(1, "/cosmos.bank.v1beta1.MsgSend") + L(2, ""))), 2,
       "Any.value (#2): default value (empty) written explicitly"},
      {"Coin.amount \"\"", WithCoins(L(3, L(1, "stake") + L(2, ""))),
       2, "tx.body.messages[0].amount[0]: Coin.amount (#2): default value (empty)"},
      {"SignerInfo.sequence 0", WithSignerInfo(SignerInfoPb(0) + F(3, 0)), 2,
       "tx.auth_info.signer_infos[0]: SignerInfo.sequence (#3): default value (0) written"},
      {"Fee.gas_limit 0", WithAuth(L(1, SignerInfoPb()) + L(2, F(2, 0))), 2,
       "tx.auth_info.fee: Fee.gas_limit (#2): default value (0) written explicitly"},
      {"Fee.payer \"\"", WithAuth(L(1, SignerInfoPb()) + L(2, FeePb() + L(3, ""))), 2,
       "Fee.payer (#3): default value (empty) written explicitly"},
      {"ModeInfo.Single.mode 0", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, F(1, 0)))), 2,
       "ModeInfo.Single.mode (#1): default value (0) written explicitly"},
      {"PubKey.key \"\"", WithSignerInfo(L(1, AnyPb("/cosmos.crypto.secp256k1.PubKey", L(1, ""))) +
                                         L(2, ModeDirect())),
       2, "tx.auth_info.signer_infos[0].public_key: PubKey.key (#1): default value (empty)"},
  });
}

TEST_CASE("strings must be valid UTF-8", "[tx_codec]") {
  CHECK(Accept(WithBody(MsgAny() + L(2, "\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9"))).memo ==
        "\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9");
  CheckAll({
      {"0xff", WithBody(MsgAny() + L(2, "a\xff")), 2,
       "TxBody.memo (#2): string is not valid UTF-8"},
      {"overlong NUL", WithBody(MsgAny() + L(2, "\xc0\x80")), 2, "not valid UTF-8"},
      {"overlong 3-byte", WithBody(MsgAny() + L(2, "\xe0\x80\xaf")), 2, "not valid UTF-8"},
      {"surrogate", WithBody(MsgAny() + L(2, "\xed\xa0\x80")), 2, "not valid UTF-8"},
      {"above U+10FFFF", WithBody(MsgAny() + L(2, "\xf4\x90\x80\x80")), 2, "not valid UTF-8"},
      {"truncated sequence", WithBody(MsgAny() + L(2, "\xe2\x82")), 2, "not valid UTF-8"},
      {"lone continuation", WithBody(MsgAny() + L(2, "\x80")), 2, "not valid UTF-8"},
      {"type_url", WithBody(L(1, AnyPb("/cosmos\xff", MsgSendPb()))), 2,
       "Any.type_url (#1): string is not valid UTF-8"},
      {"address", WithMsg(L(1, "kairos\xff") + L(2, Addr(kTo))), 2,
       "MsgSend.from_address (#1): string is not valid UTF-8"},
      {"denom", WithCoins(L(3, CoinPb("st\xffke", "1"))), 2,
       "Coin.denom (#1): string is not valid UTF-8"},
  });
}

TEST_CASE("unknown fields: non-critical ones only inside the body", "[tx_codec]") {
  // Bit 11 (1024) marks a field non-critical, as in the SDK's RejectUnknownFields.
  Tx tx = Accept(WithBody(DefaultBody() + F(1025, 7)));
  CHECK(tx.memo == "hello");
  Accept(WithBody(DefaultBody() + L(1500, "anything")));
  Accept(WithMsg(MsgSendPb(kFrom, F(1030, 1))));  // inside a message carried by the body
  Accept(WithTimestamp(F(1, 5) + F(1024, 1)));
  // Order still applies to them: 1025 after 2047 is out of order.
  CHECK_THAT(Reject(WithBody(DefaultBody() + L(2047, AnyPb("/x.Y", "")) + F(1025, 1))).log,
             Catch::Contains("TxBody field (#1025): fields out of order (after #2047)"));
  CheckAll({
      {"critical in TxBody", WithBody(DefaultBody() + F(6, 1)), 2,
       "tx.body: TxBody field (#6): unknown field"},
      {"critical field below 1024", WithBody(DefaultBody() + F(1000, 1)), 2,
       "TxBody field (#1000): unknown field"},
      {"critical in MsgSend", WithMsg(MsgSendPb(kFrom, F(4, 1))), 2,
       "tx.body.messages[0]: MsgSend field (#4): unknown field"},
      {"critical in Coin", WithCoins(L(3, CoinPb("stake", "1") + F(3, 1))), 2,
       "tx.body.messages[0].amount[0]: Coin field (#3): unknown field"},
      {"critical in Any",
       WithBody(L(1, AnyPb("/cosmos.bank.v1beta1.MsgSend", MsgSendPb()) + F(3, 1))), 2,
       "tx.body.messages[0]: Any field (#3): unknown field"},
      {"non-critical in AuthInfo", WithAuth(DefaultAuth() + F(1025, 1)), 2,
       "tx.auth_info: AuthInfo field (#1025): unknown non-critical field"},
      {"non-critical in SignerInfo", WithSignerInfo(SignerInfoPb() + F(1025, 1)), 2,
       "tx.auth_info.signer_infos[0]: SignerInfo field (#1025): unknown non-critical field"},
      {"critical in Fee", WithAuth(L(1, SignerInfoPb()) + L(2, FeePb() + F(5, 1))), 2,
       "tx.auth_info.fee: Fee field (#5): unknown field"},
      {"critical in PubKey",
       WithSignerInfo(L(1, AnyPb("/cosmos.crypto.secp256k1.PubKey", L(1, kSecpKey) + F(2, 1))) +
                      L(2, ModeDirect())),
       2, "public_key: PubKey field (#2): unknown field"},
  });
}

TEST_CASE("messages, public keys and sign modes that Kairos does not know", "[tx_codec]") {
  CheckAll({
      {"unknown message type", WithBody(L(1, AnyPb("/cosmos.bank.v1beta1.MsgMultiSend", "x"))), 2,
       "unable to resolve type URL /cosmos.bank.v1beta1.MsgMultiSend in tx.body.messages[0]"},
      {"second message unknown", WithBody(MsgAny() + L(1, AnyPb("/evil\n", ""))), 2,
       "unable to resolve type URL /evil\\x0a in tx.body.messages[1]"},
      {"unknown pubkey type",
       WithSignerInfo(L(1, AnyPb("/cosmos.crypto.multisig.LegacyAminoPubKey", L(1, kSecpKey))) +
                      L(2, ModeDirect())),
       2, "unable to resolve type URL /cosmos.crypto.multisig.LegacyAminoPubKey in "
          "tx.auth_info.signer_infos[0].public_key"},
      {"secp256k1 key of 32 bytes", WithSignerInfo(L(1, SecpPubKeyAny(std::string(32, '\2'))) +
                                                   L(2, ModeDirect())),
       8, "/cosmos.crypto.secp256k1.PubKey key is 32 bytes, want 33: invalid pubkey"},
      {"secp256k1 uncompressed",
       WithSignerInfo(L(1, SecpPubKeyAny("\x04" + std::string(64, '\2'))) + L(2, ModeDirect())), 8,
       "key is 65 bytes, want 33"},
      {"ed25519 key of 33 bytes",
       WithSignerInfo(L(1, AnyPb("/cosmos.crypto.ed25519.PubKey", L(1, kSecpKey))) +
                      L(2, ModeDirect())),
       8, "/cosmos.crypto.ed25519.PubKey key is 33 bytes, want 32"},
      {"pubkey Any without value",
       WithSignerInfo(L(1, AnyPb("/cosmos.crypto.secp256k1.PubKey", "")) + L(2, ModeDirect())), 8,
       "key is 0 bytes, want 33"},
      {"SIGN_MODE_TEXTUAL", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, F(1, 2)))), 37,
       "tx.auth_info.signer_infos[0].mode_info.single: sign mode SIGN_MODE_TEXTUAL is not "
       "supported (only SIGN_MODE_DIRECT): feature not supported"},
      {"SIGN_MODE_LEGACY_AMINO_JSON", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, F(1, 127)))),
       37, "sign mode SIGN_MODE_LEGACY_AMINO_JSON is not supported"},
      {"unnamed sign mode", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, F(1, 5)))), 37,
       "sign mode 5 is not supported"},
      {"negative sign mode",
       WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, F(1, static_cast<std::uint64_t>(-1))))), 37,
       "sign mode -1 is not supported"},
      {"multisig", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(2, ""))), 37,
       "tx.auth_info.signer_infos[0].mode_info: multisig signers are not supported"},
      {"single and multi", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, ModeDirect() + L(2, ""))), 2,
       "ModeInfo: more than one member of oneof sum"},
      {"empty ModeInfo", WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, "")), 2,
       "ModeInfo has no sum (single or multi)"},
      {"missing mode_info", WithSignerInfo(L(1, SecpPubKeyAny()) + F(3, 1)), 2,
       "tx.auth_info.signer_infos[0]: SignerInfo.mode_info (#2) is missing"},
      {"tip", WithAuth(DefaultAuth() + L(3, L(2, Addr(kFrom)))), 2,
       "tx.auth_info: AuthInfo.tip (#3): tips are not supported"},
  });
  // SIGN_MODE_UNSPECIFIED (an empty Single) decodes, as CosmJS simulates with it; the ante
  // refuses it wherever a signature is verified.
  Tx unspecified = Accept(WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, L(1, ""))));
  CHECK_FALSE(unspecified.signer_infos[0].sign_mode_direct);
  CHECK(Accept(WithSignerInfo(L(1, SecpPubKeyAny()) + L(2, ModeDirect()))).signer_infos[0]
            .sign_mode_direct);
  // A signer without a public key (an account with a key in state) is fine.
  Tx tx = Accept(WithSignerInfo(L(2, ModeDirect()) + F(3, 2)));
  CHECK_FALSE(tx.signer_infos[0].public_key.has_value());
  CHECK(tx.signer_infos[0].sequence == 2);
}

TEST_CASE("addresses and coins", "[tx_codec]") {
  const std::string cosmos_addr = crypto::Bech32Encode("cosmos", kFrom);
  CheckAll({
      {"from: wrong prefix", WithMsg(L(1, cosmos_addr) + L(2, Addr(kTo))), 2,
       "invalid from address \"" + cosmos_addr +
           "\" in tx.body.messages[0]: invalid Bech32 prefix; expected kairos, got cosmos"},
      {"from: missing", WithMsg(L(2, Addr(kTo)) + L(3, CoinPb("stake", "1"))), 2,
       "invalid from address \"\" in tx.body.messages[0]: empty address string is not allowed"},
      {"to: bad checksum", WithMsg(L(1, Addr(kFrom)) + L(2, Addr(kTo).substr(0, 38) + "qqqq")), 2,
       "invalid to address"},
      {"to: 10-byte address", WithMsg(L(1, Addr(kFrom)) + L(2, Addr(std::string(10, '\1')))), 2,
       "invalid to address"},
      {"fee payer", WithAuth(L(1, SignerInfoPb()) + L(2, FeePb() + L(3, "kairos1xyz"))), 2,
       "invalid fee payer address \"kairos1xyz\" in tx.auth_info.fee"},
      {"fee granter", WithAuth(L(1, SignerInfoPb()) + L(2, FeePb() + L(4, cosmos_addr))), 2,
       "invalid fee granter address"},
      {"amount not a number", WithCoins(L(3, CoinPb("stake", "12a"))),
       2, "tx.body.messages[0].amount[0]: Coin.amount \"12a\": invalid amount: 12a"},
      {"amount with leading zero", WithCoins(L(3, CoinPb("stake", "012"))),
       2, "amount has leading zeros: 012"},
      {"negative amount", WithCoins(L(3, CoinPb("stake", "-1"))),
       2, "Coin.amount \"-1\""},
      {"amount >= 2^256",
       WithAuth(L(1, SignerInfoPb()) + L(2, L(1, CoinPb("stake", std::string(78, '9'))))), 2,
       "tx.auth_info.fee.amount[0]: Coin.amount"},
      {"unsorted coins",
       WithCoins(L(3, CoinPb("stake", "1")) + L(3, CoinPb("atom", "1"))),
       10, "tx.body.messages[0].amount: denomination atom is not sorted: invalid coins"},
      {"duplicate denom in fee",
       WithAuth(L(1, SignerInfoPb()) + L(2, L(1, CoinPb("atom", "1")) + L(1, CoinPb("atom", "2")))),
       10, "tx.auth_info.fee.amount: duplicate denomination atom: invalid coins"},
      {"zero amount", WithCoins(L(3, CoinPb("stake", "0"))), 10,
       "coin 0stake amount is not positive"},
      {"amount omitted (zero)", WithCoins(L(3, L(1, "stake"))),
       10, "coin 0stake amount is not positive"},
      {"bad denom", WithCoins(L(3, CoinPb("x", "1"))), 10,
       "invalid denom: x"},
  });
  // 32-byte (module-style) addresses are accepted, as in the SDK.
  const std::string module(32, '\x5a');
  Tx tx = Accept(WithMsg(L(1, Addr(kFrom)) + L(2, Addr(module))));
  CHECK(tx.msgs[0].Get<MsgSend>().to == module);
  CHECK(tx.msgs[0].Get<MsgSend>().amount.empty());  // left to the bank handler
}

TEST_CASE("extension options are counted, their Any wrappers checked", "[tx_codec]") {
  Tx tx = Accept(WithBody(DefaultBody() + L(1023, AnyPb("/a.B", "x")) + L(1023, AnyPb("/a.C", "")) +
                          L(2047, AnyPb("/d.E", "\x01\x02"))));
  CHECK(tx.extension_options == 2);
  CHECK(tx.non_critical_extension_options == 1);
  CheckAll({
      {"bad UTF-8 in an extension type URL", WithBody(DefaultBody() + L(1023, AnyPb("/a\xff", ""))),
       2, "tx.body.extension_options[0]: Any.type_url (#1): string is not valid UTF-8"},
      {"unknown field in a non-critical option's Any",
       WithBody(DefaultBody() + L(2047, AnyPb("/a.B", "") + F(3, 1))), 2,
       "tx.body.non_critical_extension_options[0]: Any field (#3): unknown field"},
  });
}

// CosmJS packages/proto-signing/src/testutils.spec.ts (cosmos/cosmjs, "See TEST_VECTORS.md"):
// a MsgSend of 1234567ucosm, fee 2000ucosm, gas 200000, account 1, chain "simd-testing",
// signed by the faucet key (mnemonic below) at sequences 0, 1, 2.
TEST_CASE("CosmJS SIGN_MODE_DIRECT test vectors: sign bytes, signatures, builder, decoder",
          "[tx_codec]") {
  const std::string mnemonic =
      "economy stock theory fatal elder harbor betray wasp final emotion task crumble siren "
      "bottom lizard educate guess current outdoor pair theory focus wife stone";
  const std::string body = Hex(
      "0a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f733170"
      "6b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f736d6f73"
      "31717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a057563"
      "6f736d120731323334353637");
  struct Vector {
    std::uint64_t sequence;
    const char* auth_info;
    const char* signature;
  };
  const Vector vectors[] = {
      {0,
       "0a4e0a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f0418"
       "1eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a02080112130a0d0a0575636f73"
       "6d12043230303010c09a0c",
       "c9dd20e07464d3a688ff4b710b1fbc027e495e797cfa0b4804da2ed117959227772de059808f765aa29b8f92edf"
       "30f4c2c5a438e30d3fe6897daa7141e3ce6f9"},
      {1,
       "0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f0418"
       "1eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180112130a0d0a057563"
       "6f736d12043230303010c09a0c",
       "525adc7e61565a509c60497b798c549fbf217bb5cd31b24cc9b419d098cc95330c99ecc4bc72448f85c365a4e3f"
       "91299a3d40412fb3751bab82f1940a83a0a4c"},
      {2,
       "0a500a460a1f2f636f736d6f732e63727970746f2e736563703235366b312e5075624b657912230a21034f0418"
       "1eeba35391b858633a765c4a0c189697b40d216354d50890d350c7029012040a020801180212130a0d0a057563"
       "6f736d12043230303010c09a0c",
       "f3f2ca73806f2abbf6e0fe85f9b8af66f0e9f7f79051fdb8abe5bb8633b17da132e82d577b9d5f7a6dae57a144e"
       "fc9ccc6eef15167b44b3b22a57240109762af"},
  };
  // Sign bytes of vector 0 as published.
  const std::string sign_bytes0 = Hex(
      "0a93010a90010a1c2f636f736d6f732e62616e6b2e763162657461312e4d736753656e6412700a2d636f736d6f"
      "7331706b707472653766646b6c366766727a6c65736a6a766878686c63337234676d6d6b38727336122d636f73"
      "6d6f7331717970717870713971637273737a673270767871367273307a716733797963356c7a763778751a100a"
      "0575636f736d12073132333435363712650a4e0a460a1f2f636f736d6f732e63727970746f2e73656370323536"
      "6b312e5075624b657912230a21034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c702"
      "9012040a02080112130a0d0a0575636f736d12043230303010c09a0c1a0c73696d642d74657374696e672001");
  CHECK(kairos::ante::SignDocBytes(body, Hex(vectors[0].auth_info), "simd-testing", 1) ==
        sign_bytes0);

  // The faucet key: m/44'/118'/0'/0/0 of the mnemonic.
  auto key = crypto::DerivePath(crypto::MasterKeyFromSeed(crypto::MnemonicToSeed(mnemonic, "")),
                                crypto::kCosmosHdPath);
  REQUIRE(key.ok());
  const std::string pub = *crypto::Secp256k1PublicKey(key->private_key);
  CHECK(kairos::app::HexEncode(pub) ==
        "034f04181eeba35391b858633a765c4a0c189697b40d216354d50890d350c70290");

  // The same tx through our builder, with the vector's bech32 strings ("cosmos" prefix).
  auto from = crypto::Bech32Decode("cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6");
  auto to = crypto::Bech32Decode("cosmos1qypqxpq9qcrsszg2pvxq6rs0zqg3yyc5lzv7xu");
  REQUIRE(from.ok());
  REQUIRE(to.ok());
  TxSpec spec;
  MsgSend send = Send(from->bytes, to->bytes, "1234567ucosm");
  send.from_address = "cosmos1pkptre7fdkl6gfrzlesjjvhxhlc3r4gmmk8rs6";
  send.to_address = "cosmos1qypqxpq9qcrsszg2pvxq6rs0zqg3yyc5lzv7xu";
  spec.msgs.push_back(send);
  spec.fee = *Coins::Parse("2000ucosm");
  spec.gas_limit = 200000;
  CHECK(kairos::app::EncodeTxBody(spec) == body);

  for (const Vector& v : vectors) {
    INFO("sequence " << v.sequence);
    const std::string auth = Hex(v.auth_info);
    const std::string sig = Hex(v.signature);
    const std::string doc = kairos::ante::SignDocBytes(body, auth, "simd-testing", 1);
    CHECK(crypto::VerifySignature(crypto::KeyType::kSecp256k1, pub, doc, sig));

    SignerKey signer{crypto::KeyType::kSecp256k1, key->private_key, 1, v.sequence, true};
    CHECK(kairos::app::EncodeAuthInfo(spec, {signer}) == auth);
    const std::string signed_tx = RawPb(body, auth, {sig});
    // RFC 6979 signatures: our builder reproduces CosmJS's signed tx byte for byte.
    CHECK(kairos::app::BuildSignedTx(spec, {signer}, "simd-testing") == signed_tx);

    // As published the addresses carry the "cosmos" prefix, which Kairos refuses...
    TxError e = Reject(signed_tx);
    CHECK(e.code == 2);
    CHECK_THAT(e.log, Catch::Contains("invalid from address \"cosmos1pkptre7"));
    // ...everything else is canonical: with "kairos" (same length) the bytes decode.
    std::string kairos_tx = signed_tx;
    for (const auto* addr : {&*from, &*to}) {
      const std::string c = crypto::Bech32Encode("cosmos", addr->bytes);
      const std::string k = crypto::EncodeAccountAddress(addr->bytes);
      REQUIRE(c.size() == k.size());
      kairos_tx.replace(kairos_tx.find(c), c.size(), k);
    }
    Tx tx = Accept(kairos_tx);
    CHECK(tx.msgs[0].Get<MsgSend>().from == from->bytes);
    CHECK(tx.msgs[0].Get<MsgSend>().to == to->bytes);
    CHECK(tx.msgs[0].Get<MsgSend>().amount.ToString() == "1234567ucosm");
    CHECK(tx.fee.ToString() == "2000ucosm");
    CHECK(tx.gas_limit == 200000);
    CHECK(tx.signer_infos[0].sequence == v.sequence);
    CHECK(tx.signer_infos[0].public_key->key == pub);
    CHECK(tx.signatures == std::vector<std::string>{sig});
    CHECK(tx.signers == std::vector<std::string>{from->bytes});
    CHECK(tx.auth_info_bytes == auth);
  }
}

// Older CosmJS (protobufjs, before cosmjs-types) wrote proto3 defaults: memo "" and
// timeout_height 0 in the body, sequence 0 and empty payer/granter in AuthInfo. The SDK accepts
// such bytes (it checks canonical order and varints in TxRaw only); Kairos, enforcing ADR-027
// throughout, refuses them.
TEST_CASE("bodies with explicit defaults, as old CosmJS wrote them, are refused", "[tx_codec]") {
  const std::string legacy_body = DefaultBody().substr(0, MsgAny().size()) + L(2, "") + F(3, 0);
  TxError e = Reject(WithBody(legacy_body));
  CHECK(e.code == 2);
  CHECK(e.log == "tx.body: TxBody.memo (#2): default value (empty) written explicitly: tx parse "
                 "error");
}
