// The keepers' inverse operations, which the mempool (app/tx_pool.cc) uses to take a pooled tx's
// effects back out of its check state: bank's ReturnFee undoes DeductFee, auth's
// DecrementSequence undoes the ante's increment, SetSequence returns what it replaced, and
// RemoveUnorderedNonce undoes TryAddUnorderedNonce. Each is checked against the whole state: the
// inverse leaves exactly the keys and values that were there before.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "ante/coins.h"
#include "app/auth/keeper.h"
#include "app/bank/keeper.h"
#include "empty_reader.h"
#include "store/branch.h"

namespace kairos::test {
namespace {

const std::string kAlice(20, 'a');
const std::string kBob(20, 'b');
const std::string kNobody(20, 'n');
constexpr std::int64_t kTimeout = 1'700'000'000'000'000'000;

// Every key and value of `kv`, in key order.
std::map<std::string, std::string> Contents(const store::KvReader& kv) {
  std::map<std::string, std::string> out;
  auto it = kv.Iterate("", "");
  for (; it->Valid(); it->Next()) out.emplace(it->key(), it->value());
  REQUIRE(it->status().ok());
  return out;
}

struct Keepers {
  EmptyReader empty;
  store::Branch state{empty, store::KvLimits{}};
  app::auth::AuthKeeper auth;
  app::bank::BankKeeper bank{auth};

  Keepers() {
    REQUIRE(auth.NewAccount(state, kAlice).ok());
    REQUIRE(auth.NewAccount(state, kBob).ok());
    REQUIRE(bank.Mint(state, kAlice, *ante::Coins::Parse("50atom,1000stake")).ok());
  }
  ante::Uint256 Balance(const std::string& address, const std::string& denom) const {
    auto b = bank.GetBalance(state, address, denom);
    REQUIRE(b.ok());
    return *b;
  }
  std::uint64_t Sequence(const std::string& address) const {
    auto s = auth.ReadSequence(state, address);
    REQUIRE(s.ok());
    return *s;
  }
};

}  // namespace

TEST_CASE("bank ReturnFee is the inverse of DeductFee", "[keepers]") {
  Keepers k;
  const auto before = Contents(k.state);
  const ante::Coins fee = *ante::Coins::Parse("7atom,400stake");
  REQUIRE(k.bank.DeductFee(k.state, kAlice, fee).ok());
  CHECK(k.Balance(kAlice, "stake") == 600);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "atom") == 7);

  REQUIRE(k.bank.ReturnFee(k.state, kAlice, fee).ok());
  CHECK(k.Balance(kAlice, "stake") == 1000);
  CHECK(k.Balance(kAlice, "atom") == 50);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "stake") == 0);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "atom") == 0);
  CHECK(Contents(k.state) == before);  // the collector's zero balances are deleted, not "0"
}

TEST_CASE("bank ReturnFee skips a coin the fee collector holds less of", "[keepers]") {
  Keepers k;
  REQUIRE(k.bank.DeductFee(k.state, kAlice, *ante::Coins::Parse("7atom,400stake")).ok());
  // More stake than was collected: that coin is left alone; the atom still goes back.
  REQUIRE(k.bank.ReturnFee(k.state, kAlice, *ante::Coins::Parse("7atom,401stake")).ok());
  CHECK(k.Balance(kAlice, "stake") == 600);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "stake") == 400);
  CHECK(k.Balance(kAlice, "atom") == 50);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "atom") == 0);
  // A payer with no balance (and no account) gets the fee back all the same.
  REQUIRE(k.bank.ReturnFee(k.state, kNobody, *ante::Coins::Parse("400stake")).ok());
  CHECK(k.Balance(kNobody, "stake") == 400);
  CHECK(k.Balance(app::bank::FeeCollectorAddress(), "stake") == 0);
}

TEST_CASE("auth SetSequence returns the previous sequence; none without an account",
          "[keepers]") {
  Keepers k;
  auto was = k.auth.SetSequence(k.state, kAlice, 5);
  REQUIRE(was.ok());
  REQUIRE(was->has_value());
  CHECK(**was == 0);
  CHECK(k.Sequence(kAlice) == 5);
  was = k.auth.SetSequence(k.state, kAlice, 2);
  REQUIRE(was.ok());
  CHECK(was->value() == 5);
  CHECK(k.Sequence(kAlice) == 2);
  CHECK(k.Sequence(kBob) == 0);  // only the named account

  const auto before = Contents(k.state);
  was = k.auth.SetSequence(k.state, kNobody, 3);
  REQUIRE(was.ok());
  CHECK(!was->has_value());
  CHECK(Contents(k.state) == before);  // no account created
}

TEST_CASE("auth DecrementSequence undoes the ante's increment; nothing to undo at 0",
          "[keepers]") {
  Keepers k;
  const auto at_zero = Contents(k.state);
  REQUIRE(k.auth.SetSequence(k.state, kAlice, 1).ok());  // what IncrementSequence writes
  REQUIRE(k.auth.DecrementSequence(k.state, kAlice).ok());
  CHECK(k.Sequence(kAlice) == 0);
  CHECK(Contents(k.state) == at_zero);

  REQUIRE(k.auth.DecrementSequence(k.state, kAlice).ok());  // at 0: stays
  CHECK(k.Sequence(kAlice) == 0);
  REQUIRE(k.auth.DecrementSequence(k.state, kNobody).ok());  // no account: none created
  CHECK(Contents(k.state) == at_zero);

  REQUIRE(k.auth.SetSequence(k.state, kBob, 9).ok());
  REQUIRE(k.auth.DecrementSequence(k.state, kBob).ok());
  CHECK(k.Sequence(kBob) == 8);
  CHECK(k.Sequence(kAlice) == 0);
}

TEST_CASE("auth RemoveUnorderedNonce undoes TryAddUnorderedNonce, and only that nonce",
          "[keepers]") {
  Keepers k;
  REQUIRE(*k.auth.TryAddUnorderedNonce(k.state, kBob, kTimeout));        // same timeout
  REQUIRE(*k.auth.TryAddUnorderedNonce(k.state, kAlice, kTimeout + 1));  // same signer
  const auto before = Contents(k.state);
  REQUIRE(*k.auth.TryAddUnorderedNonce(k.state, kAlice, kTimeout));

  REQUIRE(k.auth.RemoveUnorderedNonce(k.state, kAlice, kTimeout).ok());
  CHECK(!*k.auth.HasUnorderedNonce(k.state, kAlice, kTimeout));
  CHECK(*k.auth.HasUnorderedNonce(k.state, kBob, kTimeout));
  CHECK(*k.auth.HasUnorderedNonce(k.state, kAlice, kTimeout + 1));
  CHECK(Contents(k.state) == before);

  REQUIRE(k.auth.RemoveUnorderedNonce(k.state, kAlice, kTimeout).ok());  // absent: OK
  CHECK(Contents(k.state) == before);
  CHECK(*k.auth.TryAddUnorderedNonce(k.state, kAlice, kTimeout));  // the tx may come again
}

}  // namespace kairos::test
