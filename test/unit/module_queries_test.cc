// The auth and bank queries the SDK's gRPC services have beyond Account, Balance, AllBalances
// and Params (app/auth/module.cc, app/bank/module.cc), on a real chain (test_chain.h), through
// KairosApp::Query as the gRPC and REST servers call them: Accounts, AccountInfo,
// SpendableBalances, SpendableBalanceByDenom, TotalSupply, SupplyOf, DenomMetadata and
// DenomsMetadata. Each answer is checked against the state (the /store query of its keys), every
// paginated one page by page (each key once, next_key empty at the end), with the caps, and
// each refusal with its code and message. Also the shared pagination (app/pagination.h): what a
// page costs, counted on the store's iterator; and bank's genesis denom_metadata: each
// violation of the SDK's Metadata.Validate named by its field, and a chain without any keeps
// its keys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/auth/keeper.h"
#include "app/bank/keeper.h"
#include "app/bank/module.h"
#include "app/hex.h"
#include "app/module_list.h"
#include "app/pagination.h"
#include "cosmos/auth/v1beta1/auth.pb.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "empty_reader.h"
#include "store/branch.h"
#include "test_chain.h"

namespace kairos::test {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;
namespace apb = cosmos::auth::v1beta1;
namespace bpb = cosmos::bank::v1beta1;
using PageRequest = cosmos::base::query::v1beta1::PageRequest;

constexpr int kAccounts = 130;  // more than one capped page (100)

// `kAccounts` keys; key 0 holds seven denoms, the others stake only.
std::vector<std::pair<TestKey, std::string>> Funded() {
  std::vector<std::pair<TestKey, std::string>> out;
  for (int i = 0; i < kAccounts; ++i) {
    out.emplace_back(MakeKey("queries " + std::to_string(i)),
                     i == 0 ? "1aaa,2bbb,3ccc,4ddd,1000000stake,5uatom,7zzz"
                            : std::to_string(1000 + i) + "stake");
  }
  return out;
}

// app_state.bank.denom_metadata: three denoms, listed out of order.
constexpr char kMetadata[] = R"(,"denom_metadata":[
  {"description":"the staking coin","base":"stake","display":"STAKE","name":"Stake",
   "symbol":"STK","denom_units":[{"denom":"stake","exponent":0,"aliases":["ustake"]},
                                  {"denom":"STAKE","exponent":6}]},
  {"base":"aaa","display":"aaa","name":"A","symbol":"A","denom_units":[{"denom":"aaa"}]},
  {"base":"uatom","display":"atom","name":"Atom","symbol":"ATOM","uri":"https://x.org/a.svg",
   "uri_hash":"00","denom_units":[{"denom":"uatom"},{"denom":"matom","exponent":3},
                                   {"denom":"atom","exponent":6,"aliases":["ATOM"]}]}])";

struct Chain {
  explicit Chain(const std::string& more_bank = kMetadata)
      : funded(Funded()), chain(funded, "", {}, "", more_bank) {
    chain.Block({}, kT0 + kSecond);  // commits the genesis writes at height 1
    SendOptions o;
    o.account_number = 1;
    o.fee = "200stake";
    // Height 2: a fee and a transfer.
    const auto res = chain.Block({chain.Send(funded[1].first, funded[2].first, "1stake", o)},
                                 kT0 + 2 * kSecond);
    REQUIRE(res.tx_results_size() == 1);
    REQUIRE(res.tx_results(0).code() == 0);
  }

  abci_pb::ResponseQuery Ask(const std::string& method, const google::protobuf::MessageLite& q,
                             std::int64_t height = 0, bool prove = false) {
    abci_pb::RequestQuery req;
    req.set_path(method);
    req.set_data(q.SerializeAsString());
    req.set_height(height);
    req.set_prove(prove);
    return chain.app().Query(req);
  }

  // The committed value of `key` ("" when absent), through the /store query.
  std::string Stored(const std::string& key) {
    abci_pb::RequestQuery req;
    req.set_path("/store/" + app::HexEncode(key));
    const abci_pb::ResponseQuery res = chain.app().Query(req);
    REQUIRE(res.code() == 0);
    return res.value();
  }

  std::vector<std::pair<TestKey, std::string>> funded;
  TestChain chain;
};

template <class Response>
Response Parsed(const abci_pb::ResponseQuery& res) {
  INFO(res.log());
  REQUIRE(res.code() == 0);
  Response r;
  REQUIRE(r.ParseFromString(res.value()));
  return r;
}

void CheckError(const abci_pb::ResponseQuery& res, std::uint32_t code, const std::string& log) {
  CHECK(res.code() == code);
  CHECK(res.codespace() == "sdk");
  CHECK_THAT(res.log(), Contains(log));
  CHECK(res.value().empty());
}

const std::string kAuth = "/cosmos.auth.v1beta1.Query/";
const std::string kBank = "/cosmos.bank.v1beta1.Query/";

// Every page of a paginated method, by next_key: `request` with its pagination set, `page`
// returns the response's (items, next_key, total). Checks that a page has at most `limit` items
// and returns every item in order.
template <class Request, class Response, class Items>
std::vector<std::string> AllPages(Chain& c, const std::string& path, Request request,
                                  std::uint64_t limit, Items items) {
  std::vector<std::string> out;
  request.mutable_pagination()->set_limit(limit);
  for (int page = 0; page < 1000; ++page) {
    const auto r = Parsed<Response>(c.Ask(path, request));
    const std::vector<std::string> got = items(r);
    CHECK(got.size() <= limit);
    out.insert(out.end(), got.begin(), got.end());
    if (r.pagination().next_key().empty()) return out;
    CHECK(got.size() == limit);  // only the last page is short
    request.mutable_pagination()->set_key(r.pagination().next_key());
  }
  FAIL("next_key never ran out");
  return out;
}

// The bad pages every paginated method refuses (code 18), and a past height (code 26).
template <class Request>
void CheckBadPages(Chain& c, const std::string& path, Request request) {
  INFO(path);
  request.mutable_pagination()->set_reverse(true);
  CheckError(c.Ask(path, request), ante::kInvalidRequest,
             "invalid request: " + path +
                 ": pagination.reverse is not supported (the store iterates forward only)");
  request.mutable_pagination()->set_reverse(false);
  request.mutable_pagination()->set_key("aaa");
  request.mutable_pagination()->set_offset(1);
  CheckError(c.Ask(path, request), ante::kInvalidRequest,
             "pagination: either offset or key is expected, got both");
  request.clear_pagination();
  const std::string method = path.substr(path.rfind('/') + 1);
  CheckError(c.Ask(path, request, 1), ante::kInvalidHeight,
             "invalid height: " + method +
                 " is answered at the latest height (2) only; got height 1");
  CheckError(c.Ask(path, request, 9), ante::kInvalidHeight, "not committed yet");
  abci_pb::RequestQuery garbage;
  garbage.set_path(path);
  garbage.set_data("\x0a\x05" "ab");
  const abci_pb::ResponseQuery g = c.chain.app().Query(garbage);
  CHECK(g.code() == ante::kInvalidRequest);
  CHECK_THAT(g.log(), Contains("data is not a Query"));
}

TEST_CASE("Accounts: every account once, in address order, page by page, capped at 100",
          "[module_queries]") {
  Chain c;
  std::vector<std::string> addresses;
  for (const auto& [key, coins] : c.funded) addresses.push_back(key.address);
  std::sort(addresses.begin(), addresses.end());
  const std::string path = kAuth + "Accounts";

  // By key, pages of 40: each account once, in order, each as the state holds it.
  const auto items = [&](const apb::QueryAccountsResponse& r) {
    std::vector<std::string> out;
    for (const auto& any : r.accounts()) {
      CHECK(any.type_url() == "/cosmos.auth.v1beta1.BaseAccount");
      apb::BaseAccount a;
      REQUIRE(a.ParseFromString(any.value()));
      auto raw = crypto::DecodeAccountAddress(a.address());
      REQUIRE(raw.ok());
      CHECK(any.value() == c.Stored(app::auth::AuthKeeper::AccountKey(*raw)));
      out.push_back(*raw);
    }
    return out;
  };
  CHECK(AllPages<apb::QueryAccountsRequest, apb::QueryAccountsResponse>(
            c, path, {}, 40, items) == addresses);
  CHECK(AllPages<apb::QueryAccountsRequest, apb::QueryAccountsResponse>(
            c, path, {}, 1, items) == addresses);

  // Limit 0: the default 100, with the total (the SDK counts it then); the next key is the
  // 101st address. Above the cap: 100.
  apb::QueryAccountsRequest q;
  auto r = Parsed<apb::QueryAccountsResponse>(c.Ask(path, q));
  CHECK(r.accounts_size() == 100);
  CHECK(r.pagination().total() == kAccounts);
  CHECK(r.pagination().next_key() == addresses[100]);
  q.mutable_pagination()->set_limit(1'000'000);
  r = Parsed<apb::QueryAccountsResponse>(c.Ask(path, q));
  CHECK(r.accounts_size() == 100);
  CHECK(r.pagination().total() == 0);  // a limit given and count_total not asked
  q.mutable_pagination()->set_count_total(true);
  CHECK(Parsed<apb::QueryAccountsResponse>(c.Ask(path, q)).pagination().total() == kAccounts);

  // By offset: the last 5, the end.
  q.mutable_pagination()->set_offset(kAccounts - 5);
  r = Parsed<apb::QueryAccountsResponse>(c.Ask(path, q));
  CHECK(items(r) == std::vector<std::string>(addresses.end() - 5, addresses.end()));
  CHECK(r.pagination().next_key().empty());
  CHECK(r.pagination().total() == kAccounts);
  // A key with count_total: no total (the SDK ignores it with a key).
  q.mutable_pagination()->set_offset(0);
  q.mutable_pagination()->set_key(addresses[3]);
  q.mutable_pagination()->set_limit(2);
  r = Parsed<apb::QueryAccountsResponse>(c.Ask(path, q));
  CHECK(items(r) == std::vector<std::string>{addresses[3], addresses[4]});
  CHECK(r.pagination().next_key() == addresses[5]);
  CHECK(r.pagination().total() == 0);

  // prove=true: every account of the page proven.
  const abci_pb::ResponseQuery proved = c.Ask(path, q, 0, /*prove=*/true);
  REQUIRE(proved.proof_ops().ops_size() == 2);
  CHECK(proved.proof_ops().ops(0).key() == app::auth::AuthKeeper::AccountKey(addresses[3]));
  CHECK(proved.proof_ops().ops(1).key() == app::auth::AuthKeeper::AccountKey(addresses[4]));
  CHECK(proved.proof_ops().ops(0).type() == "ics23:smt");

  CheckBadPages(c, path, apb::QueryAccountsRequest{});
}

TEST_CASE("AccountInfo: the BaseAccount itself, the errors of Account", "[module_queries]") {
  Chain c;
  const TestKey& sender = c.funded[1].first;  // sent at height 2: sequence 1, a public key
  apb::QueryAccountInfoRequest q;
  q.set_address(sender.bech32);
  const abci_pb::ResponseQuery res = c.Ask(kAuth + "AccountInfo", q, 0, /*prove=*/true);
  const auto info = Parsed<apb::QueryAccountInfoResponse>(res);
  CHECK(info.info().address() == sender.bech32);
  CHECK(info.info().account_number() == 1);
  CHECK(info.info().sequence() == 1);
  CHECK(info.info().pub_key().type_url() == "/cosmos.crypto.secp256k1.PubKey");
  CHECK(info.info().SerializeAsString() ==
        c.Stored(app::auth::AuthKeeper::AccountKey(sender.address)));
  REQUIRE(res.proof_ops().ops_size() == 1);
  CHECK(res.proof_ops().ops(0).key() == app::auth::AuthKeeper::AccountKey(sender.address));
  // The same account as Account answers, at a past height too.
  apb::QueryAccountRequest account;
  account.set_address(sender.bech32);
  const auto any = Parsed<apb::QueryAccountResponse>(c.Ask(kAuth + "Account", account, 1));
  const auto past = Parsed<apb::QueryAccountInfoResponse>(c.Ask(kAuth + "AccountInfo", q, 1));
  CHECK(past.info().SerializeAsString() == any.account().value());
  CHECK(past.info().sequence() == 0);

  const TestKey nobody = MakeKey("queries nobody");
  q.set_address(nobody.bech32);
  const abci_pb::ResponseQuery missing = c.Ask(kAuth + "AccountInfo", q, 0, /*prove=*/true);
  CheckError(missing, ante::kKeyNotFound,
             "rpc error: code = NotFound desc = account " + nobody.bech32 +
                 " not found: key not found");
  REQUIRE(missing.proof_ops().ops_size() == 1);  // of its absence
  CHECK(missing.proof_ops().ops(0).key() == app::auth::AuthKeeper::AccountKey(nobody.address));
  q.set_address("cosmos1qqqq");
  CheckError(c.Ask(kAuth + "AccountInfo", q), ante::kInvalidRequest,
             "invalid request: /cosmos.auth.v1beta1.Query/AccountInfo: invalid address "
             "\"cosmos1qqqq\"");
  abci_pb::RequestQuery garbage;
  garbage.set_path(kAuth + "AccountInfo");
  garbage.set_data("\x0a\x05" "ab");
  CheckError(c.chain.app().Query(garbage), ante::kInvalidRequest,
             "data is not a QueryAccountInfoRequest");
}

TEST_CASE("SpendableBalances and SpendableBalanceByDenom: the balances, paginated by denom",
          "[module_queries]") {
  Chain c;
  const TestKey& rich = c.funded[0].first;
  const std::vector<std::string> denoms = {"aaa", "bbb", "ccc", "ddd", "stake", "uatom", "zzz"};
  bpb::QuerySpendableBalancesRequest q;
  q.set_address(rich.bech32);
  const auto items = [&](const bpb::QuerySpendableBalancesResponse& r) {
    std::vector<std::string> out;
    for (const auto& coin : r.balances()) {
      CHECK(coin.amount() ==
            c.Stored(app::bank::BankKeeper::BalanceKey(rich.address, coin.denom())));
      out.push_back(coin.denom());
    }
    return out;
  };
  for (std::uint64_t limit : {1, 3, 7, 100}) {
    INFO("limit " << limit);
    CHECK(AllPages<bpb::QuerySpendableBalancesRequest, bpb::QuerySpendableBalancesResponse>(
              c, kBank + "SpendableBalances", q, limit, items) == denoms);
  }
  // Whole, it is AllBalances' answer (the same bytes: the same fields).
  bpb::QueryAllBalancesRequest all;
  all.set_address(rich.bech32);
  const abci_pb::ResponseQuery spendable = c.Ask(kBank + "SpendableBalances", q);
  CHECK(spendable.value() == c.Ask(kBank + "AllBalances", all).value());
  const auto whole = Parsed<bpb::QuerySpendableBalancesResponse>(spendable);
  CHECK(whole.pagination().total() == 7);
  CHECK(whole.balances(4).amount() == "1000000");
  // AllBalances pages the same way now.
  all.mutable_pagination()->set_limit(2);
  all.mutable_pagination()->set_offset(5);
  const auto tail = Parsed<bpb::QueryAllBalancesResponse>(c.Ask(kBank + "AllBalances", all));
  REQUIRE(tail.balances_size() == 2);
  CHECK(tail.balances(0).denom() == "uatom");
  CHECK(tail.pagination().next_key().empty());
  // Nobody's: none.
  q.set_address(MakeKey("queries nobody").bech32);
  CHECK(Parsed<bpb::QuerySpendableBalancesResponse>(c.Ask(kBank + "SpendableBalances", q))
            .balances_size() == 0);
  q.set_address(rich.bech32);
  CheckBadPages(c, kBank + "SpendableBalances", q);
  q.set_address("kairos1zzzz");
  CheckError(c.Ask(kBank + "SpendableBalances", q), ante::kInvalidRequest,
             "invalid request: /cosmos.bank.v1beta1.Query/SpendableBalances: invalid address "
             "\"kairos1zzzz\"");

  // By denom: the Balance answer, at past heights too, proven.
  const TestKey& sender = c.funded[1].first;
  bpb::QuerySpendableBalanceByDenomRequest one;
  one.set_address(sender.bech32);
  one.set_denom("stake");
  bpb::QueryBalanceRequest balance;
  balance.set_address(sender.bech32);
  balance.set_denom("stake");
  for (std::int64_t h : {1, 2}) {
    INFO("height " << h);
    const abci_pb::ResponseQuery res = c.Ask(kBank + "SpendableBalanceByDenom", one, h, true);
    const auto r = Parsed<bpb::QuerySpendableBalanceByDenomResponse>(res);
    CHECK(r.balance().amount() == (h == 1 ? "1001" : "800"));
    CHECK(res.value() == c.Ask(kBank + "Balance", balance, h).value());
    REQUIRE(res.proof_ops().ops_size() == 1);
    CHECK(res.proof_ops().ops(0).key() ==
          app::bank::BankKeeper::BalanceKey(sender.address, "stake"));
  }
  one.set_denom("uatom");  // none: 0
  CHECK(Parsed<bpb::QuerySpendableBalanceByDenomResponse>(
            c.Ask(kBank + "SpendableBalanceByDenom", one))
            .balance()
            .amount() == "0");
  one.set_denom("x");
  CheckError(c.Ask(kBank + "SpendableBalanceByDenom", one), ante::kInvalidRequest,
             "invalid request: /cosmos.bank.v1beta1.Query/SpendableBalanceByDenom: invalid "
             "denom \"x\"");
  one.set_denom("stake");
  one.set_address("nope");
  CheckError(c.Ask(kBank + "SpendableBalanceByDenom", one), ante::kInvalidRequest,
             "invalid address \"nope\"");
}

TEST_CASE("TotalSupply and SupplyOf: every denom's supply, paginated; 0 of an unknown denom",
          "[module_queries]") {
  Chain c;
  const std::vector<std::string> denoms = {"aaa", "bbb", "ccc", "ddd", "stake", "uatom", "zzz"};
  const auto items = [&](const bpb::QueryTotalSupplyResponse& r) {
    std::vector<std::string> out;
    for (const auto& coin : r.supply()) {
      CHECK(coin.amount() == c.Stored(app::bank::BankKeeper::SupplyKey(coin.denom())));
      out.push_back(coin.denom());
    }
    return out;
  };
  for (std::uint64_t limit : {1, 2, 7}) {
    INFO("limit " << limit);
    CHECK(AllPages<bpb::QueryTotalSupplyRequest, bpb::QueryTotalSupplyResponse>(
              c, kBank + "TotalSupply", {}, limit, items) == denoms);
  }
  bpb::QueryTotalSupplyRequest q;
  const abci_pb::ResponseQuery whole = c.Ask(kBank + "TotalSupply", q, 0, /*prove=*/true);
  const auto r = Parsed<bpb::QueryTotalSupplyResponse>(whole);
  REQUIRE(r.supply_size() == 7);
  CHECK(r.pagination().total() == 7);
  // The genesis stake: 1000000 + (1001 + ... + 1129); fees and sends move it, never change it.
  std::uint64_t stake = 1000000;
  for (int i = 1; i < kAccounts; ++i) stake += 1000 + static_cast<std::uint64_t>(i);
  CHECK(r.supply(4).denom() == "stake");
  CHECK(r.supply(4).amount() == std::to_string(stake));
  REQUIRE(whole.proof_ops().ops_size() == 7);
  CHECK(whole.proof_ops().ops(6).key() == app::bank::BankKeeper::SupplyKey("zzz"));
  q.mutable_pagination()->set_limit(500);
  CHECK(Parsed<bpb::QueryTotalSupplyResponse>(c.Ask(kBank + "TotalSupply", q)).supply_size() ==
        7);
  CheckBadPages(c, kBank + "TotalSupply", bpb::QueryTotalSupplyRequest{});

  bpb::QuerySupplyOfRequest of;
  of.set_denom("stake");
  const abci_pb::ResponseQuery stake_res = c.Ask(kBank + "SupplyOf", of, 1, /*prove=*/true);
  auto s = Parsed<bpb::QuerySupplyOfResponse>(stake_res);
  CHECK(s.amount().denom() == "stake");
  CHECK(s.amount().amount() == std::to_string(stake));  // a past height too
  REQUIRE(stake_res.proof_ops().ops_size() == 1);
  of.set_denom("unknown");  // the SDK's answer: 0 of it, proven absent
  const abci_pb::ResponseQuery none = c.Ask(kBank + "SupplyOf", of, 0, /*prove=*/true);
  s = Parsed<bpb::QuerySupplyOfResponse>(none);
  CHECK(s.amount().denom() == "unknown");
  CHECK(s.amount().amount() == "0");
  REQUIRE(none.proof_ops().ops_size() == 1);
  CHECK(none.proof_ops().ops(0).key() == app::bank::BankKeeper::SupplyKey("unknown"));
  of.set_denom("1x");
  CheckError(c.Ask(kBank + "SupplyOf", of), ante::kInvalidRequest,
             "invalid request: /cosmos.bank.v1beta1.Query/SupplyOf: invalid denom \"1x\"");
}

TEST_CASE("DenomMetadata and DenomsMetadata: genesis denom_metadata, in base denom order",
          "[module_queries]") {
  Chain c;
  bpb::QueryDenomMetadataRequest q;
  q.set_denom("uatom");
  const abci_pb::ResponseQuery res = c.Ask(kBank + "DenomMetadata", q, 1, /*prove=*/true);
  const auto m = Parsed<bpb::QueryDenomMetadataResponse>(res).metadata();
  CHECK(m.base() == "uatom");
  CHECK(m.display() == "atom");
  CHECK(m.name() == "Atom");
  CHECK(m.symbol() == "ATOM");
  CHECK(m.uri() == "https://x.org/a.svg");
  CHECK(m.uri_hash() == "00");
  REQUIRE(m.denom_units_size() == 3);
  CHECK(m.denom_units(1).denom() == "matom");
  CHECK(m.denom_units(1).exponent() == 3);
  CHECK(m.denom_units(2).aliases_size() == 1);
  CHECK(m.denom_units(2).aliases(0) == "ATOM");
  CHECK(m.SerializeAsString() == c.Stored(app::bank::BankKeeper::MetadataKey("uatom")));
  REQUIRE(res.proof_ops().ops_size() == 1);
  CHECK(res.proof_ops().ops(0).key() == "bank/metadata/uatom");

  q.set_denom("bbb");  // the chain holds it, but has no metadata for it
  const abci_pb::ResponseQuery missing = c.Ask(kBank + "DenomMetadata", q, 0, /*prove=*/true);
  CheckError(missing, ante::kKeyNotFound,
             "rpc error: code = NotFound desc = client metadata for denom bbb");
  CHECK(missing.height() == 2);
  REQUIRE(missing.proof_ops().ops_size() == 1);  // of its absence
  q.set_denom("");
  CheckError(c.Ask(kBank + "DenomMetadata", q), ante::kInvalidRequest,
             "invalid request: /cosmos.bank.v1beta1.Query/DenomMetadata: invalid denom \"\"");

  const auto items = [&](const bpb::QueryDenomsMetadataResponse& r) {
    std::vector<std::string> out;
    for (const auto& meta : r.metadatas()) {
      CHECK(meta.SerializeAsString() ==
            c.Stored(app::bank::BankKeeper::MetadataKey(meta.base())));
      out.push_back(meta.base());
    }
    return out;
  };
  const std::vector<std::string> bases = {"aaa", "stake", "uatom"};
  for (std::uint64_t limit : {1, 2, 3}) {
    CHECK(AllPages<bpb::QueryDenomsMetadataRequest, bpb::QueryDenomsMetadataResponse>(
              c, kBank + "DenomsMetadata", {}, limit, items) == bases);
  }
  const auto all = Parsed<bpb::QueryDenomsMetadataResponse>(
      c.Ask(kBank + "DenomsMetadata", bpb::QueryDenomsMetadataRequest{}));
  CHECK(all.pagination().total() == 3);
  CHECK(all.metadatas(1).denom_units(0).aliases(0) == "ustake");
  CheckBadPages(c, kBank + "DenomsMetadata", bpb::QueryDenomsMetadataRequest{});

  // A chain without denom_metadata: none, and no bank/metadata/ key at all.
  Chain bare("");
  CHECK(Parsed<bpb::QueryDenomsMetadataResponse>(
            bare.Ask(kBank + "DenomsMetadata", bpb::QueryDenomsMetadataRequest{}))
            .metadatas_size() == 0);
  q.set_denom("stake");
  CheckError(bare.Ask(kBank + "DenomMetadata", q), ante::kKeyNotFound,
             "client metadata for denom stake");
}

TEST_CASE("the query router names the new paths", "[module_queries]") {
  Chain c("");
  abci_pb::RequestQuery req;
  req.set_path("/nowhere");
  const abci_pb::ResponseQuery res = c.chain.app().Query(req);
  CHECK(res.code() == ante::kUnknownRequest);
  CHECK_THAT(res.log(), Contains("/cosmos.auth.v1beta1.Query/{Account,Accounts,AccountInfo,"
                                 "Params}") &&
                            Contains("SpendableBalances,SpendableBalanceByDenom,TotalSupply,"
                                     "SupplyOf,Params,DenomMetadata,DenomsMetadata}") &&
                            Contains("/kairos.poa.v1.Query/"));
}

// ---- the pagination itself --------------------------------------------------------------

// A reader that counts what its iterators do: steps over the key index and value loads.
class CountingReader final : public store::KvReader {
 public:
  explicit CountingReader(const store::KvReader& base) : base_(base) {}
  Status Get(std::string_view key, std::string* value) const override {
    ++gets;
    return base_.Get(key, value);
  }
  std::unique_ptr<store::KvIterator> Iterate(std::string_view start,
                                             std::string_view end) const override {
    struct Counted final : store::KvIterator {
      Counted(std::unique_ptr<store::KvIterator> it, const CountingReader& r)
          : it(std::move(it)), r(r) {}
      bool Valid() const override { return it->Valid(); }
      std::string_view key() const override { return it->key(); }
      std::string_view value() const override {
        ++r.values;
        return it->value();
      }
      void Next() override {
        ++r.steps;
        it->Next();
      }
      Status status() const override { return it->status(); }
      std::unique_ptr<store::KvIterator> it;
      const CountingReader& r;
    };
    ++seeks;
    return std::make_unique<Counted>(base_.Iterate(start, end), *this);
  }
  mutable int gets = 0, seeks = 0, steps = 0, values = 0;

 private:
  const store::KvReader& base_;
};

TEST_CASE("pagination: a page costs its own size, not the prefix's", "[module_queries]") {
  EmptyReader empty;
  store::Branch state(empty, {});
  for (int i = 0; i < 1000; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "p/%04d", i);
    REQUIRE(state.Set(key, "v").ok());
  }
  REQUIRE(state.Set("o/before", "v").ok());
  REQUIRE(state.Set("q/after", "v").ok());
  const auto page = [&](PageRequest req, CountingReader& counted,
                        std::optional<std::uint64_t> known_total = std::nullopt) {
    auto spec = app::ReadPageRequest("/x", req);
    REQUIRE(std::holds_alternative<app::PageSpec>(spec));
    cosmos::base::query::v1beta1::PageResponse out;
    std::vector<std::string> keys;
    REQUIRE(app::Paginate(
                counted, "p/", std::get<app::PageSpec>(spec),
                [&](std::string_view k, std::string_view) {
                  keys.emplace_back(k);
                  return Status::OK();
                },
                &out, known_total)
                .ok());
    return std::make_pair(keys, out);
  };
  {
    // By key, 10 from the middle: one seek, 10 values, 10 steps (the 11th key is next_key).
    CountingReader counted(state);
    PageRequest req;
    req.set_key("0500");
    req.set_limit(10);
    req.set_count_total(true);  // ignored with a key
    auto [keys, out] = page(req, counted);
    REQUIRE(keys.size() == 10);
    CHECK(keys.front() == "0500");
    CHECK(keys.back() == "0509");
    CHECK(out.next_key() == "0510");
    CHECK(out.total() == 0);
    CHECK(counted.seeks == 1);
    CHECK(counted.values == 10);
    CHECK(counted.steps == 10);
    CHECK(counted.gets == 0);
  }
  {
    // By offset: the skipped keys are stepped over, their values never loaded.
    CountingReader counted(state);
    PageRequest req;
    req.set_offset(990);
    req.set_limit(5);
    auto [keys, out] = page(req, counted);
    CHECK(keys.front() == "0990");
    CHECK(out.next_key() == "0995");
    CHECK(counted.values == 5);
    CHECK(counted.steps == 995);
  }
  {
    // count_total (or limit 0) counts the rest of the prefix, keys only, and nothing past it.
    CountingReader counted(state);
    PageRequest req;
    auto [keys, out] = page(req, counted);
    CHECK(keys.size() == 100);
    CHECK(out.total() == 1000);
    CHECK(out.next_key() == "0100");
    CHECK(counted.values == 100);
    CHECK(counted.steps == 1000);
  }
  {
    // The last page: next_key empty, and the total with an offset.
    CountingReader counted(state);
    PageRequest req;
    req.set_offset(998);
    req.set_limit(50);
    req.set_count_total(true);
    auto [keys, out] = page(req, counted);
    CHECK(keys == std::vector<std::string>{"0998", "0999"});
    CHECK(out.next_key().empty());
    CHECK(out.total() == 1000);
  }
  // A total the caller knows (poa's record) is not counted.
  {
    CountingReader counted(state);
    auto [keys, out] = page(PageRequest{}, counted, 7);
    CHECK(keys.size() == 100);
    CHECK(out.total() == 7);
    CHECK(counted.steps == 100);
  }
  // A visitor's failure stops the page and is returned.
  {
    auto spec = app::ReadPageRequest("/x", PageRequest{});
    cosmos::base::query::v1beta1::PageResponse out;
    int calls = 0;
    const Status s = app::Paginate(
        state, "p/", std::get<app::PageSpec>(spec),
        [&](std::string_view, std::string_view) {
          return ++calls == 3 ? Status::Corruption("bad record") : Status::OK();
        },
        &out);
    CHECK(s.code() == Status::Code::kCorruption);
    CHECK(calls == 3);
  }
}

// ---- genesis denom_metadata -----------------------------------------------------------------

TEST_CASE("genesis denom_metadata: the SDK's Metadata.Validate, each violation named by field",
          "[module_queries][genesis]") {
  auto modules = app::ModuleList::Chain();
  const app::Module* bank = modules->Find("bank");
  const auto parse_error = [&](const std::string& metadata) {
    const json section = json::parse(R"({"denom":"stake","denom_metadata":)" + metadata + "}");
    auto g = bank->ParseGenesis(&section);
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().code() == Status::Code::kInvalidArgument);
    return g.status().message();
  };
  const auto one = [](const std::string& fields) {
    return R"([{"name":"N","symbol":"S","base":"ustake","display":"stake",)" + fields + "}]";
  };
  const std::string good_units =
      R"("denom_units":[{"denom":"ustake","exponent":0},{"denom":"stake","exponent":6}])";
  const std::string at = "genesis app_state.bank.denom_metadata[0]";
  CHECK_THAT(parse_error("{}"),
             Contains("genesis app_state.bank.denom_metadata: must be an array of Metadata"));
  CHECK_THAT(parse_error(R"([{"base":"ustake","symbol":"S","display":"ustake"}])"),
             Contains(at + ".name: name field cannot be blank"));
  CHECK_THAT(parse_error(R"([{"name":"N","symbol":"  ","base":"ustake","display":"ustake"}])"),
             Contains(at + ".symbol: symbol field cannot be blank"));
  CHECK_THAT(parse_error(R"([{"name":"N","symbol":"S","display":"ustake"}])"),
             Contains(at + ".base: invalid metadata denom \"\""));
  CHECK_THAT(parse_error(R"([{"name":"N","symbol":"S","base":"ustake","display":"1x"}])"),
             Contains(at + ".display: invalid metadata denom \"1x\""));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"stake","exponent":0}])")),
             Contains(at + ".denom_units[0].denom: metadata's first denomination unit must be "
                           "the one with base denom 'ustake', got 'stake'"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake","exponent":1}])")),
             Contains(at + ".denom_units[0].exponent: the exponent for base denomination unit "
                           "ustake must be 0, got 1"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake"},{"denom":"stake","exponent":6},
                                               {"denom":"mstake","exponent":3}])")),
             Contains(at + ".denom_units[2].exponent: denom units should be sorted asc by "
                           "exponent: 3 is not above the previous unit's 6"));
  CHECK_THAT(parse_error(one(
                 R"("denom_units":[{"denom":"ustake"},{"denom":"ustake","exponent":6}])")),
             Contains(at + ".denom_units[1].denom: duplicate denomination unit ustake"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake"}])")),
             Contains(at + ".display: metadata must contain a denomination unit with display "
                           "denom 'stake'"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake","aliases":["a","a"]},
                                               {"denom":"stake","exponent":6}])")),
             Contains(at + ".denom_units[0].aliases[1]: duplicate denomination unit alias a"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake","aliases":[" "]},
                                               {"denom":"stake","exponent":6}])")),
             Contains(at + ".denom_units[0].aliases[0]: alias for denom unit ustake cannot be "
                           "blank"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake","exponent":-1}])")),
             Contains(at + ".denom_units[0].exponent"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"ustake","exponent":4294967296}])")),
             Contains(at + ".denom_units[0].exponent: must fit in 32 bits"));
  CHECK_THAT(parse_error(one(R"("denom_units":[{"denom":"u"}])")),
             Contains(at + ".denom_units[0].denom: missing or not a valid denom"));
  CHECK_THAT(parse_error(one(good_units + R"(,"logo":"x")")),
             Contains(at + ".logo: unknown field"));
  CHECK_THAT(parse_error(one(good_units + R"(,"uri":7)")), Contains(at + ".uri: must be a string"));
  CHECK_THAT(parse_error("[" + one(good_units).substr(1, one(good_units).size() - 2) + "," +
                         one(good_units).substr(1)),
             Contains("genesis app_state.bank.denom_metadata[1].base: duplicate client metadata "
                      "for denom ustake"));
  // A valid one parses, whatever denoms the chain holds (as the SDK).
  const json ok = json::parse(R"({"denom":"stake","denom_metadata":)" + one(good_units) + "}");
  CHECK(bank->ParseGenesis(&ok).ok());
}

TEST_CASE("genesis denom_metadata: none writes no key and exports none; some round-trip",
          "[module_queries][genesis]") {
  auto modules = app::ModuleList::Chain();
  const app::Module* bank = modules->Find("bank");
  EmptyReader empty;
  const auto init = [&](store::Branch& state, const json& section) {
    auto g = bank->ParseGenesis(&section);
    REQUIRE(g.ok());
    REQUIRE(bank->InitGenesis(state, **g, {}).ok());
    auto exported = bank->ExportGenesis(state);
    REQUIRE(exported.ok());
    REQUIRE(exported->has_value());
    return **exported;
  };
  const auto keys = [](const store::Branch& state) {
    std::map<std::string, std::string> out;
    auto it = state.Iterate("", "");
    for (; it->Valid(); it->Next()) out.emplace(it->key(), it->value());
    REQUIRE(it->status().ok());
    return out;
  };
  {
    // Without denom_metadata (and with an empty list): exactly the keys bank wrote before.
    store::Branch state(empty, {}), listed(empty, {});
    const json out = init(state, json::parse(R"({"denom":"stake"})"));
    CHECK_FALSE(out.contains("denom_metadata"));
    init(listed, json::parse(R"({"denom":"stake","denom_metadata":[]})"));
    CHECK(keys(state) == std::map<std::string, std::string>{{"bank/denom", "stake"}});
    CHECK(keys(listed) == keys(state));
  }
  {
    const json section = json::parse(R"({"denom":"stake","denom_metadata":[
        {"name":"Z","symbol":"Z","base":"zzz","display":"zzz","denom_units":[{"denom":"zzz"}]},
        {"name":"A","symbol":"A","base":"aaa","display":"AAA","description":"d",
         "denom_units":[{"denom":"aaa","aliases":["x","y"]},{"denom":"AAA","exponent":"18"}]}]})");
    store::Branch state(empty, {});
    const json out = init(state, section);
    REQUIRE(out["denom_metadata"].size() == 2);
    CHECK(out["denom_metadata"][0]["base"] == "aaa");  // base denom order
    CHECK(out["denom_metadata"][0]["denom_units"][1]["exponent"] == 18);
    CHECK(out["denom_metadata"][1]["uri_hash"] == "");
    store::Branch again(empty, {});
    CHECK(init(again, out) == out);
    CHECK(keys(again) == keys(state));
    CHECK(keys(state).count("bank/metadata/aaa") == 1);
    CHECK(keys(state).count("bank/metadata/zzz") == 1);
  }
}

}  // namespace
}  // namespace kairos::test
