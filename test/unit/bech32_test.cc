// Unit tests for crypto/bech32: the BIP-173 test vectors (valid and invalid strings, segwit
// addresses for the padding rules) and Kairos account addresses.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "app/hex.h"
#include "crypto/bech32.h"

using kairos::app::HexEncode;
using kairos::crypto::Bech32BytesToWords;
using kairos::crypto::Bech32Decode;
using kairos::crypto::Bech32DecodeWords;
using kairos::crypto::Bech32Encode;
using kairos::crypto::Bech32EncodeWords;
using kairos::crypto::Bech32WordsToBytes;
using kairos::crypto::DecodeAccountAddress;
using kairos::crypto::EncodeAccountAddress;
using Catch::Matchers::Contains;

namespace {

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// A segwit address per BIP-173: the first word is the witness version, the rest regroups to the
// program. Returns the scriptPubKey in hex, or the error message.
std::string SegwitScript(const std::string& address) {
  auto words = Bech32DecodeWords(address);
  if (!words.ok()) return words.status().message();
  if (words->words.empty()) return "empty data section";
  const std::vector<std::uint8_t> program_words(words->words.begin() + 1, words->words.end());
  auto program = Bech32WordsToBytes(program_words);
  if (!program.ok()) return program.status().message();
  const int version = words->words[0];
  std::string script;
  script.push_back(static_cast<char>(version == 0 ? 0 : 0x50 + version));
  script.push_back(static_cast<char>(program->size()));
  return HexEncode(script + *program);
}

}  // namespace

TEST_CASE("bech32 decodes the BIP-173 valid strings and encodes them back", "[bech32]") {
  const std::vector<std::string> valid = {
      "A12UEL5L",
      "a12uel5l",
      "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
      "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
      "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
      "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
      "?1ezyfcl",
  };
  for (const std::string& s : valid) {
    INFO(s);
    auto words = Bech32DecodeWords(s);
    REQUIRE(words.ok());
    CHECK(words->hrp == Lower(s.substr(0, s.rfind('1'))));
    CHECK(Bech32EncodeWords(words->hrp, words->words) == Lower(s));
    // Each of these also regroups to whole bytes, so the byte-level API takes them too.
    auto data = Bech32Decode(s);
    REQUIRE(data.ok());
    CHECK(Bech32Encode(data->hrp, data->bytes) == Lower(s));
  }
  auto abcdef = Bech32DecodeWords("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw");
  REQUIRE(abcdef.ok());
  std::vector<std::uint8_t> all_words;
  for (std::uint8_t i = 0; i < 32; ++i) all_words.push_back(i);
  CHECK(abcdef->words == all_words);
}

TEST_CASE("bech32 rejects the BIP-173 invalid strings with the reason", "[bech32]") {
  const std::vector<std::pair<std::string, std::string>> invalid = {
      {std::string("\x20") + "1nwldj5", "out of range"},
      {std::string("\x7f") + "1axkwrx", "out of range"},
      {std::string("\x80") + "1eym55h", "out of range"},
      {"an84characterslonghumanreadablepartthatcontainsthenumber1"
       "andtheexcludedcharactersbio1569pvx",
       "more than 90"},
      {"pzry9x0s0muk", "no separator"},
      {"1pzry9x0s0muk", "empty human-readable part"},
      {"x1b4n0q5v", "invalid data character 'b'"},
      {"li1dgmt3", "shorter than the 6-character checksum"},
      {std::string("de1lg7wt") + "\xff", "out of range"},
      {"A1G7SGD8", "invalid checksum"},
      {"10a06t8", "empty human-readable part"},
      {"1qzzfhee", "empty human-readable part"},
      // From the segwit list: mixed case and a bad checksum.
      {"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7", "mixes upper and lower"},
      {"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", "invalid checksum"},
  };
  for (const auto& [text, reason] : invalid) {
    INFO(text);
    auto r = Bech32Decode(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == kairos::Status::Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Contains(reason));
  }
}

TEST_CASE("bech32 names a bech32m checksum as such", "[bech32]") {
  // Valid under BIP-350 (bech32m), so not bech32.
  auto r = Bech32Decode("a1lqfn3a");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Contains("bech32m"));
}

TEST_CASE("bech32 decodes the BIP-173 segwit addresses and applies the padding rules",
          "[bech32]") {
  CHECK(SegwitScript("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4") ==
        "0014751e76e8199196d454941c45d1b3a323f1433bd6");
  CHECK(SegwitScript("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7") ==
        "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262");
  CHECK(SegwitScript(
            "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx") ==
        "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6");
  CHECK(SegwitScript("BC1SW50QA3JX3S") == "6002751e");
  CHECK(SegwitScript("bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj") ==
        "5210751e76e8199196d454941c45d1b3a323");
  CHECK(SegwitScript("tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy") ==
        "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433");

  CHECK_THAT(SegwitScript("bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du"),
             Contains("more than 4 bits of padding"));
  CHECK_THAT(SegwitScript("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv"),
             Contains("non-zero padding"));
  CHECK(SegwitScript("bc1gmk9yu") == "empty data section");
}

TEST_CASE("bech32 byte regrouping checks the padding", "[bech32]") {
  const std::vector<std::uint8_t> five_bits = {31};
  const std::vector<std::uint8_t> dirty = {31, 31};  // 8 bits, then 2 padding bits of 1
  const std::vector<std::uint8_t> clean = {31, 28};  // 8 bits, then 2 padding bits of 0
  CHECK_THAT(Bech32WordsToBytes(five_bits).status().message(), Contains("more than 4 bits"));
  CHECK_THAT(Bech32WordsToBytes(dirty).status().message(), Contains("non-zero padding"));
  REQUIRE(Bech32WordsToBytes(clean).ok());
  CHECK(*Bech32WordsToBytes(clean) == "\xff");
  const std::vector<std::uint8_t> too_big = {32, 0};
  CHECK_FALSE(Bech32WordsToBytes(too_big).ok());
  // The same rules through the byte-level decoder.
  CHECK_THAT(Bech32Decode(Bech32EncodeWords("kairos", dirty)).status().message(),
             Contains("non-zero padding"));
  auto decoded_clean = Bech32Decode(Bech32EncodeWords("kairos", clean));
  REQUIRE(decoded_clean.ok());
  CHECK(decoded_clean->bytes == "\xff");

  for (std::size_t n = 0; n <= 40; ++n) {
    std::string bytes;
    for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(i * 37 + 11));
    const auto words = Bech32BytesToWords(bytes);
    CHECK(words.size() == (n * 8 + 4) / 5);
    auto back = Bech32WordsToBytes(words);
    REQUIRE(back.ok());
    CHECK(*back == bytes);
  }
}

TEST_CASE("account addresses use the kairos prefix and 20 or 32 bytes", "[bech32]") {
  const std::string addr20(20, '\x42'), addr32(32, '\x07');
  const std::string text = EncodeAccountAddress(addr20);
  CHECK(text.rfind("kairos1", 0) == 0);
  CHECK(text.size() == 6 + 1 + 32 + 6);
  REQUIRE(DecodeAccountAddress(text).ok());
  CHECK(*DecodeAccountAddress(text) == addr20);
  REQUIRE(DecodeAccountAddress(EncodeAccountAddress(addr32)).ok());
  CHECK(*DecodeAccountAddress(EncodeAccountAddress(addr32)) == addr32);

  std::string upper = text;
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  REQUIRE(DecodeAccountAddress(upper).ok());
  CHECK(*DecodeAccountAddress(upper) == addr20);

  auto empty = DecodeAccountAddress("");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Contains("empty address"));
  auto cosmos = DecodeAccountAddress(Bech32Encode("cosmos", addr20));
  REQUIRE_FALSE(cosmos.ok());
  CHECK(cosmos.status().message() == "invalid Bech32 prefix; expected kairos, got cosmos");
  for (std::size_t n : {0, 19, 21, 31, 33}) {
    auto r = DecodeAccountAddress(EncodeAccountAddress(std::string(n, '\x01')));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "address length must be 20 or 32 bytes, got " + std::to_string(n));
  }
  std::string typo = text;
  typo[10] = typo[10] == 'q' ? 'p' : 'q';
  auto bad = DecodeAccountAddress(typo);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Contains("invalid checksum"));
}

// DecodeAccountAddress decodes the common form (20 bytes, "kairos1", lower case) on a one-pass
// path of its own; it must agree with the general decoder on every input, valid or not.
TEST_CASE("account address decoding agrees with the general bech32 decoder", "[bech32]") {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7lQPZRY1bio";
  for (int round = 0; round < 2000; ++round) {
    std::string address(20, '\0');
    for (char& c : address) c = static_cast<char>(next());
    std::string text = EncodeAccountAddress(address);
    if (round % 2 == 1) {  // one character changed: almost always a checksum failure
      const std::size_t at = 7 + next() % (text.size() - 7);
      text[at] = charset[next() % charset.size()];
    }
    auto general = Bech32Decode(text);
    const bool general_ok = general.ok() && general->hrp == "kairos" && general->bytes.size() == 20;
    auto fast = DecodeAccountAddress(text);
    INFO(text);
    REQUIRE(fast.ok() == general_ok);
    if (general_ok) CHECK(*fast == general->bytes);
    if (round % 2 == 0) CHECK(*fast == address);
  }
}
