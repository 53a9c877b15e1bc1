// PriorityMempool: each rule of the pool (caps, eviction frontier, replacement bump, ready and
// parked txs, TTLs, reap order, Update, removal reasons) with its edge cases, and a reap running
// on one thread while another inserts and removes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "mempool/flat_index.h"
#include "mempool/indexed_heap.h"
#include "mempool/priority_mempool.h"

namespace kairos::mempool {
namespace {

// A distinct hash per call.
Hash NextHash() {
  static std::uint64_t counter = 0;
  Hash h{};
  const std::uint64_t v = ++counter * 0x9E3779B97F4A7C15ull;
  std::memcpy(h.data(), &v, sizeof v);
  std::memcpy(h.data() + 8, &counter, sizeof counter);
  return h;
}

// `per_gas` whole units of fee per gas.
Priority P(std::uint64_t per_gas) { return Priority::Whole(per_gas); }

TxInfo Tx(const std::string& sender, std::uint64_t nonce, Priority priority,
          std::size_t size = 100, std::uint64_t gas = 1000) {
  TxInfo t;
  t.bytes.assign(size, 'x');
  t.hash = NextHash();
  t.sender = sender;
  t.nonce = nonce;
  t.priority = priority;
  t.gas_wanted = gas;
  return t;
}
// A fee of `per_gas` whole units per gas.
TxInfo Tx(const std::string& sender, std::uint64_t nonce, std::uint64_t per_gas,
          std::size_t size = 100, std::uint64_t gas = 1000) {
  return Tx(sender, nonce, P(per_gas), size, gas);
}

TxInfo Unordered(const std::string& sender, std::uint64_t timeout, std::uint64_t per_gas,
                 std::size_t size = 100) {
  TxInfo t = Tx(sender, timeout, per_gas, size);
  t.unordered = true;
  return t;
}

// Inserts at height 1, time 1000; REQUIRE-s that it is accepted; returns the entry.
EntryPtr Add(PriorityMempool& pool, TxInfo tx, std::uint64_t base = 0) {
  const Hash h = tx.hash;
  const InsertResult r = pool.Insert(std::move(tx), base, 1, 1000);
  INFO(r.message);
  REQUIRE(r.ok);
  EntryPtr e = pool.Find(h);
  REQUIRE(e != nullptr);
  return e;
}

// "sender/nonce" (ordered) or "sender/u<timeout>" of each reaped tx, all taken.
std::vector<std::string> ReapAll(const PriorityMempool& pool) {
  std::vector<std::string> out;
  pool.Reap([&](const EntryPtr& e) {
    out.push_back(std::string(e->tx.sender()) + "/" + (e->tx.unordered ? "u" : "") +
                  std::to_string(e->tx.nonce));
    return Verdict::kTake;
  });
  return out;
}

std::vector<Hash> Hashes(const std::vector<EntryPtr>& v) {
  std::vector<Hash> out;
  for (const auto& e : v) out.push_back(e->tx.hash);
  return out;
}

Config Small(std::size_t max_txs) {
  Config c;
  c.max_txs = max_txs;
  return c;
}

TEST_CASE("mempool: reason names", "[mempool]") {
  CHECK(std::string(Name(RejectReason::kDuplicate)) == "duplicate");
  CHECK(std::string(Name(RejectReason::kFull)) == "full");
  CHECK(std::string(Name(RejectReason::kReplacementUnderpriced)) == "replacement_underpriced");
  CHECK(std::string(Name(RejectReason::kSenderCap)) == "sender_cap");
  CHECK(std::string(Name(RejectReason::kTooLarge)) == "too_large");
  CHECK(std::string(Name(RejectReason::kNonceTooLow)) == "nonce_too_low");
  CHECK(std::string(Name(RejectReason::kParkedCap)) == "parked_cap");
  CHECK(std::string(Name(RemoveReason::kIncluded)) == "included");
  CHECK(std::string(Name(RemoveReason::kEvicted)) == "evicted");
  CHECK(std::string(Name(RemoveReason::kReplaced)) == "replaced");
  CHECK(std::string(Name(RemoveReason::kExpiredBlocks)) == "expired_blocks");
  CHECK(std::string(Name(RemoveReason::kExpiredTime)) == "expired_time");
  CHECK(std::string(Name(RemoveReason::kRecheckFailed)) == "recheck_failed");
  CHECK(std::string(Name(RemoveReason::kStaleNonce)) == "stale_nonce");
  CHECK(std::string(Name(RemoveReason::kExpiredParked)) == "expired_parked");
}

TEST_CASE("mempool: insert, find, duplicate, too large, nonce too low", "[mempool]") {
  Config c;
  c.max_tx_bytes = 200;
  PriorityMempool pool(c);
  const EntryPtr a0 = Add(pool, Tx("alice", 5, 10, 150), 5);
  CHECK(a0->arrival == 1);
  CHECK(a0->arrival_height == 1);
  CHECK(a0->arrival_time == 1000);
  CHECK(pool.FindOrdered("alice", 5) == a0);
  CHECK(pool.FindOrdered("alice", 6) == nullptr);
  CHECK(pool.FindOrdered("bob", 5) == nullptr);

  TxInfo dup = a0->tx.info();
  InsertResult r = pool.Insert(dup, 5, 1, 1000);
  CHECK(!r.ok);
  CHECK(r.reject == RejectReason::kDuplicate);
  CHECK(r.message == "tx already in mempool");

  Add(pool, Tx("bob", 0, 1, 200));  // exactly max_tx_bytes
  r = pool.Insert(Tx("bob", 1, 1, 201), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kTooLarge);
  CHECK(r.message == "tx too large: 201 bytes, the mempool accepts at most 200");

  r = pool.Insert(Tx("alice", 4, 10), 5, 1, 1000);
  CHECK(r.reject == RejectReason::kNonceTooLow);
  CHECK(r.message == "sequence 4 is below the account's sequence 5");
  // The pool remembers the base: a stale caller passing a lower base is still refused.
  r = pool.Insert(Tx("alice", 4, 10), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kNonceTooLow);

  const Stats s = pool.stats();
  CHECK(s.size == 2);
  CHECK(s.bytes == 350);
  CHECK(s.senders == 2);
  CHECK(s.parked == 0);
  CHECK(s.rejected[static_cast<int>(RejectReason::kDuplicate)] == 1);
  CHECK(s.rejected[static_cast<int>(RejectReason::kTooLarge)] == 1);
  CHECK(s.rejected[static_cast<int>(RejectReason::kNonceTooLow)] == 2);
}

TEST_CASE("mempool: replacement at the bump threshold is accepted, below it is not",
          "[mempool]") {
  PriorityMempool pool(Config{});
  const EntryPtr old = Add(pool, Tx("alice", 7, 100));
  InsertResult r = pool.Insert(Tx("alice", 7, 109), 0, 1, 1000);
  CHECK(!r.ok);
  CHECK(r.reject == RejectReason::kReplacementUnderpriced);
  CHECK(r.needed_priority == P(110));
  CHECK(r.message == "replacement of sequence 7 needs a fee per gas of at least 110 (+10%), got 109");
  CHECK(pool.FindOrdered("alice", 7) == old);

  TxInfo next = Tx("alice", 7, 110, 300);
  const Hash h = next.hash;
  r = pool.Insert(std::move(next), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.replaced == old);
  CHECK(pool.Find(old->tx.hash) == nullptr);
  CHECK(pool.FindOrdered("alice", 7)->tx.hash == h);
  CHECK(pool.RemovalReasonOf(old->tx.hash) == RemoveReason::kReplaced);
  const Stats s = pool.stats();
  CHECK(s.size == 1);
  CHECK(s.bytes == 300);
  CHECK(s.removed[static_cast<int>(RemoveReason::kReplaced)] == 1);
  CHECK(s.rejected[static_cast<int>(RejectReason::kReplacementUnderpriced)] == 1);
}

TEST_CASE("mempool: the bump is exact in Q64.64, at least one unit, and does not overflow",
          "[mempool]") {
  Config c;
  SECTION("priority 0 needs the least priority above it") {
    PriorityMempool pool(c);
    Add(pool, Tx("a", 0, 0));
    CHECK(pool.Insert(Tx("a", 0, 0), 0, 1, 1).needed_priority == Priority::FromQ64(1));
    CHECK(pool.Insert(Tx("a", 0, Priority::FromQ64(1)), 0, 1, 1).ok);
  }
  SECTION("priority 5 needs 5.5, not 6") {
    PriorityMempool pool(c);
    Add(pool, Tx("a", 0, 5));
    const InsertResult r = pool.Insert(Tx("a", 0, 5), 0, 1, 1);
    CHECK(r.needed_priority == Priority::FromQ64((Uint128{11} << 64) / 2));
    CHECK(r.message == "replacement of sequence 0 needs a fee per gas of at least 5.5 (+10%), got 5");
  }
  SECTION("realistic gas prices: 0.025 per gas needs 0.0275, exactly as the fees say") {
    // 5000 for 200000 gas; +10% is 5500 for the same gas, and 5499 is not enough.
    PriorityMempool pool(c);
    Add(pool, Tx("a", 0, Priority::PerGas(5000, 200000)));
    InsertResult r = pool.Insert(Tx("a", 0, Priority::PerGas(5499, 200000)), 0, 1, 1);
    CHECK(r.reject == RejectReason::kReplacementUnderpriced);
    CHECK(r.needed_priority.MinFeeFor(200000) == 5500);
    CHECK(r.message == "replacement of sequence 0 needs a fee per gas of at least 0.0275 (+10%), "
                       "got 0.027495");
    // A different gas limit: what counts is the fee per gas (2750 for 100000 gas).
    CHECK(r.needed_priority.MinFeeFor(100000) == 2750);
    CHECK(!pool.Insert(Tx("a", 0, Priority::PerGas(2749, 100000)), 0, 1, 1).ok);
    CHECK(pool.Insert(Tx("a", 0, Priority::PerGas(5500, 200000)), 0, 1, 1).ok);
  }
  SECTION("bump 0 still needs one unit more") {
    c.replace_bump_percent = 0;
    PriorityMempool pool(c);
    Add(pool, Tx("a", 0, 1000));
    CHECK(pool.Insert(Tx("a", 0, 1000), 0, 1, 1).needed_priority == P(1000).Next());
  }
  SECTION("huge priorities") {
    c.replace_bump_percent = 100;
    PriorityMempool pool(c);
    const Uint128 max = Priority::Max().q64();
    Add(pool, Tx("a", 0, Priority::FromQ64(max / 2)));
    InsertResult r = pool.Insert(Tx("a", 0, Priority::FromQ64(max - 2)), 0, 1, 1);
    CHECK(r.needed_priority == Priority::FromQ64(max - 1));  // (max / 2) * 2
    CHECK(pool.Insert(Tx("a", 0, Priority::FromQ64(max - 1)), 0, 1, 1).ok);
    r = pool.Insert(Tx("a", 0, Priority::Max()), 0, 1, 1);  // (max - 1) * 2 overflows: impossible
    CHECK(r.reject == RejectReason::kReplacementUnderpriced);
    CHECK(r.needed_priority == Priority::Max());
    CHECK_THAT(r.message, Catch::Contains("cannot be replaced"));
  }
  SECTION("the most a bump can be") {
    c.replace_bump_percent = std::numeric_limits<std::uint32_t>::max();
    PriorityMempool pool(c);
    Add(pool, Tx("a", 0, Priority::PerGas(1, 3)));  // (2^64 / 3) * (2^32 + 99) / 100 fits
    const InsertResult r = pool.Insert(Tx("a", 0, 1), 0, 1, 1);
    const Uint128 old = Priority::PerGas(1, 3).q64();
    const Uint128 scaled = old * (Uint128{std::numeric_limits<std::uint32_t>::max()} + 100);
    CHECK(r.needed_priority == Priority::FromQ64(scaled / 100 + (scaled % 100 != 0)));
  }
}

TEST_CASE("mempool: per-sender cap counts ordered and unordered, not replacements",
          "[mempool]") {
  Config c;
  c.max_txs_per_sender = 3;
  PriorityMempool pool(c);
  Add(pool, Tx("a", 0, 1));
  Add(pool, Tx("a", 1, 1));
  Add(pool, Unordered("a", 99, 1));
  InsertResult r = pool.Insert(Tx("a", 2, 1), 0, 1, 1);
  CHECK(r.reject == RejectReason::kSenderCap);
  CHECK(r.message == "sender has 3 txs in the mempool, the limit is 3");
  CHECK(pool.Insert(Unordered("a", 100, 1), 0, 1, 1).reject == RejectReason::kSenderCap);
  CHECK(pool.Insert(Tx("a", 1, 2), 0, 1, 1).ok);  // a replacement
  CHECK(pool.Insert(Tx("b", 0, 1), 0, 1, 1).ok);
  CHECK(pool.stats().rejected[static_cast<int>(RejectReason::kSenderCap)] == 2);

  c.max_txs_per_sender = 0;
  PriorityMempool closed(c);
  CHECK(closed.Insert(Tx("a", 0, 1), 0, 1, 1).reject == RejectReason::kSenderCap);
}

TEST_CASE("mempool: a full pool of equal priorities rejects with needed = p + 1", "[mempool]") {
  PriorityMempool pool(Small(3));
  Add(pool, Tx("a", 0, 10));
  Add(pool, Tx("b", 0, 10));
  const EntryPtr c0 = Add(pool, Tx("c", 0, 10));
  InsertResult r = pool.Insert(Tx("d", 0, 10), 0, 1, 1);
  CHECK(!r.ok);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == P(10).Next());
  CHECK(r.message ==
        "mempool is full: 3 txs, 300 bytes; a tx needs a fee per gas above 10 to evict (this one "
        "offers 10)");
  CHECK(pool.stats().size == 3);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kEvicted)] == 0);

  // Just above 10 it evicts one of the tens: the newest.
  r = pool.Insert(Tx("d", 0, P(10).Next()), 0, 1, 1);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0] == c0);
  CHECK(pool.RemovalReasonOf(c0->tx.hash) == RemoveReason::kEvicted);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kEvicted)] == 1);
}

TEST_CASE("mempool: eviction takes a sender's highest nonce, never leaving a gap",
          "[mempool]") {
  PriorityMempool pool(Small(4));
  Add(pool, Tx("a", 0, 1));          // the cheapest, but it has successors
  Add(pool, Tx("a", 1, 2));
  const EntryPtr a2 = Add(pool, Tx("a", 2, 90));
  const EntryPtr b0 = Add(pool, Tx("b", 0, 50));
  // The frontier is {a/2 (90), b/0 (50)}: b/0 goes, not a/0.
  InsertResult r = pool.Insert(Tx("c", 0, 60), 0, 1, 1);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0] == b0);
  // Now the frontier is {a/2 (90), c/0 (60)}: a priority-70 tx can only take c/0.
  r = pool.Insert(Tx("d", 0, 70), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "c");
  r = pool.Insert(Tx("e", 0, 95), 0, 1, 1);  // takes d/0 (70), not a/2 (90)
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "d");
  r = pool.Insert(Tx("f", 0, 92), 0, 1, 1);  // frontier {a/2 (90), e/0 (95)}
  REQUIRE(r.ok);
  CHECK(r.evicted[0] == a2);
  // Now a/1 (2) is a's last: a priority-3 tx takes it, and a/0 (1) stays.
  r = pool.Insert(Tx("g", 0, 3), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "a");
  CHECK(r.evicted[0]->tx.nonce == 1);
  CHECK(pool.FindOrdered("a", 0) != nullptr);
  CHECK(pool.stats().parked == 0);
}

TEST_CASE("mempool: eviction by bytes follows the frontier as it moves", "[mempool]") {
  Config c;
  c.max_bytes = 300;
  PriorityMempool pool(c);
  const EntryPtr a0 = Add(pool, Tx("a", 0, 2, 100));
  const EntryPtr a1 = Add(pool, Tx("a", 1, 1, 100));
  Add(pool, Tx("b", 0, 3, 100));
  // 200 bytes must go: a/1 (1), then a/0 becomes a's last and (2) beats b/0 (3).
  InsertResult r = pool.Insert(Tx("c", 0, 10, 200), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(Hashes(r.evicted) == Hashes({a1, a0}));
  CHECK(pool.stats().bytes == 300);
}

TEST_CASE("mempool: a full pool decides before it evicts", "[mempool]") {
  Config c;
  c.max_bytes = 300;
  PriorityMempool pool(c);
  Add(pool, Tx("a", 0, 1, 100));
  Add(pool, Tx("b", 0, 20, 100));
  Add(pool, Tx("c", 0, 30, 100));
  // Needs 200 bytes: a/0 (1) could go, b/0 (20) could not: rejected, nothing evicted. The least
  // priority that would have done is just above 20 (a/0 and b/0 both strictly lower).
  InsertResult r = pool.Insert(Tx("d", 0, 15, 200), 0, 1, 1);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == P(20).Next());
  CHECK(r.evicted.empty());
  CHECK(pool.stats().size == 3);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kEvicted)] == 0);
  r = pool.Insert(Tx("d", 0, 21, 200), 0, 1, 1);
  CHECK(r.ok);
  CHECK(r.evicted.size() == 2);

  // A tx larger than the whole pool: no priority would do.
  r = pool.Insert(Tx("e", 0, 1000, 301), 0, 1, 1);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == Priority::Max());
  CHECK_THAT(r.message, Catch::Contains("no priority would make room for this tx (301 bytes)"));
}

TEST_CASE("mempool: never evicts a predecessor of the new tx", "[mempool]") {
  PriorityMempool pool(Small(2));
  const EntryPtr b0 = Add(pool, Tx("b", 0, 1));
  Add(pool, Tx("a", 0, 1));  // newer than b/0, so first in eviction order, but a/1's predecessor
  InsertResult r = pool.Insert(Tx("a", 1, 5), 0, 1, 1);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0] == b0);
  // Only the sender's own predecessors are left: nothing can make room.
  r = pool.Insert(Tx("a", 2, 100), 0, 1, 1);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == Priority::Max());
}

TEST_CASE("mempool: a tx filling a gap may evict its own successors", "[mempool]") {
  PriorityMempool pool(Small(2));
  Add(pool, Tx("a", 0, 1));
  const EntryPtr a2 = Add(pool, Tx("a", 2, 1));  // parked
  InsertResult r = pool.Insert(Tx("a", 1, 5), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(Hashes(r.evicted) == Hashes({a2}));
  CHECK(r.promoted.empty());
  CHECK(!r.parked);
  CHECK(pool.stats().parked == 0);
}

TEST_CASE("mempool: filling a gap promotes the parked successors", "[mempool]") {
  PriorityMempool pool(Config{});
  InsertResult r = pool.Insert(Tx("a", 3, 1), 0, 1, 1);
  CHECK(r.parked);
  const EntryPtr a3 = pool.FindOrdered("a", 3);
  r = pool.Insert(Tx("a", 1, 1), 0, 1, 1);
  CHECK(r.parked);
  const EntryPtr a1 = pool.FindOrdered("a", 1);
  CHECK(pool.stats().parked == 2);
  CHECK(pool.IsParked(a1->tx.hash));
  CHECK(ReapAll(pool).empty());
  CHECK(pool.ReapMax(0, 0).empty());

  r = pool.Insert(Tx("a", 0, 1), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(!r.parked);
  CHECK(Hashes(r.promoted) == Hashes({a1}));  // a/3 still waits for a/2
  CHECK(pool.stats().parked == 1);
  r = pool.Insert(Tx("a", 2, 1), 0, 1, 1);
  CHECK(Hashes(r.promoted) == Hashes({a3}));
  CHECK(pool.stats().parked == 0);
  CHECK(!pool.IsParked(a3->tx.hash));
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/0", "a/1", "a/2", "a/3"});
}

TEST_CASE("mempool: a parked tx says what it waits for, and SenderTxs lists the states",
          "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("a", 3, 1), 3);
  const InsertResult r = pool.Insert(Tx("a", 6, 1), 3, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.parked);
  CHECK(r.waiting_for == 4);
  Add(pool, Unordered("a", 77, 1));
  const SenderView v = pool.SenderTxs("a");
  CHECK(v.base == 3);
  CHECK(v.next_ready == 4);
  REQUIRE(v.txs.size() == 3);
  CHECK(v.txs[0].entry->tx.nonce == 3);
  CHECK(!v.txs[0].parked);
  CHECK(v.txs[1].entry->tx.nonce == 6);
  CHECK(v.txs[1].parked);
  CHECK(v.txs[2].entry->tx.unordered);
  CHECK(!v.txs[2].parked);
  // A lone sender, and none.
  Add(pool, Tx("b", 9, 1), 9);
  CHECK(pool.SenderTxs("b").base == 9);
  CHECK(pool.SenderTxs("b").next_ready == 10);
  CHECK(pool.SenderTxs("b").txs.size() == 1);
  CHECK(pool.SenderTxs("nobody").txs.empty());
}

TEST_CASE("mempool: parked txs are capped per sender (replacements aside)", "[mempool]") {
  Config c;
  c.max_parked_per_sender = 2;
  PriorityMempool pool(c);
  Add(pool, Tx("a", 0, 1));
  Add(pool, Tx("a", 2, 1));
  Add(pool, Tx("a", 3, 1));
  InsertResult r = pool.Insert(Tx("a", 5, 1), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kParkedCap);
  CHECK(r.message == "sender has 2 txs parked behind a sequence gap in the mempool, the limit is "
                     "2 (this tx waits for sequence 1)");
  CHECK(pool.Insert(Tx("a", 3, 2), 0, 1, 1000).ok);  // a replacement is no more parked txs
  CHECK(pool.Insert(Tx("b", 4, 1), 0, 1, 1000).ok);  // another sender's
  CHECK(pool.Insert(Tx("a", 1, 1), 0, 1, 1000).ok);  // a ready one: the gap fills
  CHECK(pool.stats().parked == 1);                   // b/4
  CHECK(pool.Insert(Tx("a", 5, 1), 0, 1, 1000).ok);  // a has none parked now
  CHECK(pool.stats().rejected[static_cast<int>(RejectReason::kParkedCap)] == 1);
  c.max_parked_per_sender = 0;
  PriorityMempool none(c);
  CHECK(none.Insert(Tx("a", 1, 1), 0, 1, 1000).reject == RejectReason::kParkedCap);
  CHECK(none.Insert(Tx("a", 0, 1), 0, 1, 1000).ok);
}

TEST_CASE("mempool: parked txs go first, and a parked tx never evicts a ready one",
          "[mempool]") {
  PriorityMempool pool(Small(3));
  Add(pool, Tx("a", 0, 1));
  Add(pool, Tx("b", 0, 2));
  const EntryPtr c5 = Add(pool, Tx("c", 5, 100));  // parked: it may never pay
  REQUIRE(pool.IsParked(c5->tx.hash));
  // A ready tx paying 0 evicts the parked one, whatever that one offers.
  InsertResult r = pool.Insert(Tx("d", 0, 0), 0, 1, 1000);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0] == c5);
  // A parked tx paying a lot finds only ready txs: refused, none would do.
  r = pool.Insert(Tx("e", 3, 1000), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == Priority::Max());
  CHECK(r.message == "mempool is full: 3 txs, 300 bytes; a tx behind a sequence gap evicts only "
                     "parked txs, and none would make room (this tx waits for sequence 0): send "
                     "that sequence first");
  // Among parked txs, a parked one evicts strictly cheaper ones only.
  PriorityMempool two(Small(2));
  Add(two, Tx("p", 1, 5));
  Add(two, Tx("q", 1, 7));
  r = two.Insert(Tx("r", 1, 5), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == P(5).Next());
  CHECK(r.message == "mempool is full: 2 txs, 200 bytes; a parked tx needs a fee per gas above 5 "
                     "to evict (this one offers 5) (this tx waits for sequence 0)");
  r = two.Insert(Tx("r", 1, 6), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "p");
}

TEST_CASE("mempool: max_parked caps the pool's parked txs", "[mempool]") {
  Config c;
  c.max_parked = 2;
  PriorityMempool pool(c);
  Add(pool, Tx("p", 1, 5));
  Add(pool, Tx("q", 1, 7));
  Add(pool, Tx("ready", 0, 1));
  // Room for txs, none for parked ones: a parked tx evicts a cheaper parked one...
  InsertResult r = pool.Insert(Tx("r", 1, 6), 0, 1, 1000);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0]->tx.sender() == "p");
  // ... or is refused, saying what would do.
  r = pool.Insert(Tx("s", 1, 6), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kParkedCap);
  CHECK(r.needed_priority == P(6).Next());
  CHECK(r.message == "mempool holds 2 txs parked behind sequence gaps, its limit "
                     "(mempool.max_parked); a parked tx needs a fee per gas above 6 to evict "
                     "(this one offers 6) (this tx waits for sequence 0)");
  // Ready txs are not limited by it.
  CHECK(pool.Insert(Tx("t", 0, 1), 0, 1, 1000).ok);
  CHECK(pool.stats().parked == 2);
  c.max_parked = 0;
  PriorityMempool none(c);
  r = none.Insert(Tx("a", 1, 1), 0, 1, 1000);
  CHECK(r.reject == RejectReason::kParkedCap);
  CHECK(r.needed_priority == Priority::Max());
}

TEST_CASE("mempool: a tx filling its gap counts the txs it promotes as ready", "[mempool]") {
  PriorityMempool pool(Small(4));
  Add(pool, Tx("b", 0, 1));
  Add(pool, Tx("a", 1, 100));
  const EntryPtr a2 = Add(pool, Tx("a", 2, 100));
  Add(pool, Tx("c", 7, 200));  // parked for good
  REQUIRE(pool.stats().parked == 3);
  // a/0 makes a/1 and a/2 ready: the eviction order sees a/2 so (not as parked, first, where it
  // is cheaper than c/7), and takes c/7.
  InsertResult r = pool.Insert(Tx("a", 0, 50), 0, 1, 1000);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0]->tx.sender() == "c");
  CHECK(r.promoted.size() == 2);
  CHECK(pool.stats().parked == 0);
  // Full of ready txs now: the cheapest tail goes each time; a/2 (100) after b/0, d/0, e/0.
  r = pool.Insert(Tx("d", 0, 2), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "b");
  r = pool.Insert(Tx("e", 0, 3), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "d");
  r = pool.Insert(Tx("f", 0, 101), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "e");
  r = pool.Insert(Tx("g", 0, 101), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.evicted[0] == a2);
}

TEST_CASE("mempool: a tail that a removal parks is evicted first from then on", "[mempool]") {
  PriorityMempool pool(Small(4));
  Add(pool, Tx("x", 0, 1));
  const EntryPtr x1 = Add(pool, Tx("x", 1, 1));
  const EntryPtr x2 = Add(pool, Tx("x", 2, 100));
  Add(pool, Tx("y", 0, 50));
  REQUIRE(pool.Remove(x1->tx.hash, RemoveReason::kRecheckFailed));
  REQUIRE(pool.IsParked(x2->tx.hash));
  Add(pool, Tx("w", 0, 60));
  // Full: a ready tx paying 0 takes the parked x/2, which pays the most.
  InsertResult r = pool.Insert(Tx("z", 0, 0), 0, 1, 1000);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0] == x2);
  // x/0 is x's tail again, ready: a tx at 0 finds nothing cheaper.
  CHECK(pool.Insert(Tx("v", 0, 0), 0, 1, 1000).reject == RejectReason::kFull);
}

TEST_CASE("mempool: removing a middle tx parks the later ones", "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("a", 0, 1));
  const EntryPtr a1 = Add(pool, Tx("a", 1, 1));
  const EntryPtr a2 = Add(pool, Tx("a", 2, 1));
  CHECK(pool.Remove(a1->tx.hash, RemoveReason::kRecheckFailed));
  CHECK(!pool.Remove(a1->tx.hash, RemoveReason::kRecheckFailed));
  CHECK(pool.IsParked(a2->tx.hash));
  CHECK(pool.stats().parked == 1);
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/0"});
  CHECK(pool.RemovalReasonOf(a1->tx.hash) == RemoveReason::kRecheckFailed);
  // Inserting a/1 again fills the gap.
  InsertResult r = pool.Insert(a1->tx.info(), 0, 1, 1);
  CHECK(Hashes(r.promoted) == Hashes({a2}));
  CHECK(!pool.RemovalReasonOf(a1->tx.hash));  // it is back: forgotten
}

TEST_CASE("mempool: gas prices below 1 per gas order and evict by the exact fee per gas",
          "[mempool]") {
  // Fees for 200000 gas (0.025 per gas is a usual Cosmos level) and one for 100000 gas at the
  // same rate: integer fee / gas made all of them 0.
  PriorityMempool pool(Small(4));
  Add(pool, Tx("low", 0, Priority::PerGas(4999, 200000)));
  Add(pool, Tx("same", 0, Priority::PerGas(2500, 100000)));
  Add(pool, Tx("base", 0, Priority::PerGas(5000, 200000)));
  Add(pool, Tx("high", 0, Priority::PerGas(5001, 200000)));
  CHECK(Priority::PerGas(2500, 100000) == Priority::PerGas(5000, 200000));
  CHECK(ReapAll(pool) == std::vector<std::string>{"high/0", "same/0", "base/0", "low/0"});
  // Full: a tx at 0.024995 evicts nothing; the least that evicts is just above 0.024995.
  InsertResult r = pool.Insert(Tx("new", 0, Priority::PerGas(4999, 200000)), 0, 1, 1);
  CHECK(r.reject == RejectReason::kFull);
  CHECK(r.needed_priority == Priority::PerGas(4999, 200000).Next());
  CHECK(r.needed_priority.MinFeeFor(200000) == 5000);
  CHECK(r.message == "mempool is full: 4 txs, 400 bytes; a tx needs a fee per gas above 0.024995 "
                     "to evict (this one offers 0.024995)");
  r = pool.Insert(Tx("new", 0, Priority::PerGas(5000, 200000)), 0, 1, 1);
  REQUIRE(r.ok);
  REQUIRE(r.evicted.size() == 1);
  CHECK(r.evicted[0]->tx.sender() == "low");
  // Now the cheapest are the three at 0.025: the newest of them ("new") goes first.
  r = pool.Insert(Tx("next", 0, Priority::PerGas(5001, 200000)), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.sender() == "new");
}

TEST_CASE("mempool: Priority arithmetic and printing", "[mempool]") {
  CHECK(Priority::PerGas(5000, 200000).q64() == (Uint128{1} << 64) / 40);
  CHECK(Priority::PerGas(7, 2) == Priority::FromQ64((Uint128{7} << 64) / 2));
  CHECK(Priority::PerGas(0, 0) == Priority());
  CHECK(Priority::PerGas(1, 0) == Priority::Max());
  CHECK(Priority::PerGas(~std::uint64_t{0}, 1) == Priority::Whole(~std::uint64_t{0}));
  CHECK(Priority::PerGas(5000, 200000).ToDecimal() == "0.025");
  CHECK(Priority::PerGas(5000, 200000).ToDecimal(Priority::Rounding::kUp) == "0.025");
  CHECK(Priority::PerGas(1, 3).ToDecimal() == "0.333333333333333333");
  CHECK(Priority::PerGas(2, 3).ToDecimal() == "0.666666666666666667");
  CHECK(Priority::PerGas(1, 3).ToDecimal(Priority::Rounding::kUp) == "0.333333333333333334");
  CHECK(Priority::Whole(12).ToDecimal() == "12");
  CHECK(Priority().ToDecimal() == "0");
  CHECK(Priority::FromQ64(1).ToDecimal() == "0");  // 2^-64 rounds to 0 at 18 digits...
  CHECK(Priority::FromQ64(1).ToDecimal(Priority::Rounding::kUp) == "0.000000000000000001");
  CHECK(Priority::Max().ToDecimal() == "18446744073709551616");  // rounds up to 2^64
  CHECK(Priority::Whole(3).Next().ToDecimal() == "3");
  // The least fee that reaches a priority for a gas limit, exactly.
  CHECK(Priority::PerGas(5000, 200000).MinFeeFor(200000) == 5000);
  CHECK(Priority::PerGas(5000, 200000).Next().MinFeeFor(200000) == 5001);
  CHECK(Priority::PerGas(1, 3).MinFeeFor(3) == 1);
  CHECK(Priority::PerGas(1, 3).MinFeeFor(6) == 2);
  CHECK(Priority::Whole(5).MinFeeFor(0) == 0);
  CHECK(Priority::Max().MinFeeFor(~std::uint64_t{0}) == (Priority::Max().q64() >> 64) *
                                                          ~std::uint64_t{0} + ~std::uint64_t{0});
  CHECK(DecimalString(~Uint128{0}) == "340282366920938463463374607431768211455");
  // Two rates a/b and c/d order exactly when b * d <= 2^64: here gas limits near 2^32.
  const std::uint64_t g1 = 4294967291, g2 = 4294967279;  // primes below 2^32
  CHECK(Priority::PerGas(g1 - 1, g1) > Priority::PerGas(g2 - 1, g2));  // 1 - 1/g1 > 1 - 1/g2
  CHECK(Priority::PerGas(g1 + 1, g1) < Priority::PerGas(g2 + 1, g2));
}

TEST_CASE("mempool: reap order is priority, arrival, nonce", "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("a", 0, 1));
  Add(pool, Tx("a", 1, 100));  // offered right after a/0 is taken
  Add(pool, Tx("b", 0, 50));
  Add(pool, Unordered("a", 77, 60));  // independent of a's sequence
  Add(pool, Tx("c", 0, 50));          // ties with b/0: later arrival
  Add(pool, Unordered("d", 5, 1));    // ties with a/0: later arrival
  CHECK(ReapAll(pool) ==
        std::vector<std::string>{"a/u77", "b/0", "c/0", "a/0", "a/1", "d/u5"});
}

TEST_CASE("mempool: kSkip drops the sender's later txs, kStop ends", "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("a", 0, 10));
  Add(pool, Tx("a", 1, 10));
  Add(pool, Tx("a", 2, 10));
  Add(pool, Unordered("a", 9, 5));
  Add(pool, Tx("b", 0, 8));
  Add(pool, Tx("b", 1, 8));
  std::vector<std::string> seen;
  pool.Reap([&](const EntryPtr& e) {
    seen.push_back(std::string(e->tx.sender()) + std::to_string(e->tx.nonce));
    return e->tx.sender() == "a" && e->tx.nonce == 1 ? Verdict::kSkip : Verdict::kTake;
  });
  CHECK(seen == std::vector<std::string>{"a0", "a1", "b0", "b1", "a9"});
  seen.clear();
  pool.Reap([&](const EntryPtr& e) {
    seen.push_back(std::string(e->tx.sender()) + std::to_string(e->tx.nonce));
    return seen.size() == 2 ? Verdict::kStop : Verdict::kTake;
  });
  CHECK(seen == std::vector<std::string>{"a0", "a1"});
  CHECK(pool.stats().size == 6);  // reaping removes nothing
}

TEST_CASE("mempool: ReapMax skips what does not fit and keeps filling", "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("a", 0, 100, 500, 10));
  Add(pool, Tx("a", 1, 100, 10, 10));  // dropped with a/0
  Add(pool, Tx("b", 0, 90, 300, 10));
  Add(pool, Tx("c", 0, 80, 300, 50));
  Add(pool, Tx("d", 0, 70, 100, 10));
  Add(pool, Tx("e", 2, 200, 10, 1));  // parked
  auto names = [](const std::vector<EntryPtr>& v) {
    std::string s;
    for (const auto& e : v) s += e->tx.sender();
    return s;
  };
  CHECK(names(pool.ReapMax(450, 0)) == "bd");
  CHECK(names(pool.ReapMax(0, 30)) == "aab");
  CHECK(names(pool.ReapMax(0, 0)) == "aabcd");
  CHECK(names(pool.ReapMax(1000, 60)) == "aabd");
}

TEST_CASE("mempool: ReapMax stops after kReapMaxSkips misses in a row", "[mempool]") {
  PriorityMempool pool(Config{});
  for (int i = 0; i < PriorityMempool::kReapMaxSkips + 10; ++i) {
    Add(pool, Tx("s" + std::to_string(i), 0, 2000 - i, 200));
  }
  Add(pool, Tx("small", 0, 0, 10));  // last in reap order
  CHECK(pool.ReapMax(100, 0).empty());
  // With one fitting tx before the run of misses ends, the count starts again.
  Add(pool, Tx("tiny", 0, 1995, 10));
  CHECK(pool.ReapMax(100, 0).size() == 1);
}

TEST_CASE("mempool: Update removes included txs, moves bases and re-derives ready",
          "[mempool]") {
  PriorityMempool pool(Config{});
  const EntryPtr a0 = Add(pool, Tx("a", 0, 1));
  const EntryPtr a1 = Add(pool, Tx("a", 1, 1));
  const EntryPtr a2 = Add(pool, Tx("a", 2, 1));
  const EntryPtr b0 = Add(pool, Tx("b", 0, 1));
  const EntryPtr b1 = Add(pool, Tx("b", 1, 1));
  const EntryPtr c5 = Add(pool, Tx("c", 5, 1));  // parked: c's base is 0
  const EntryPtr u = Add(pool, Unordered("d", 3, 1));
  CHECK(pool.stats().parked == 1);

  // Block: a/0, b/0 and the unordered tx were included; a's sequence is now 2 (a/1 went in
  // through another node's proposal, so it is stale here), b's 1, c's 5.
  const auto removed = pool.Update(2, 2000, {a0->tx.hash, b0->tx.hash, u->tx.hash},
                                   {{"a", 2}, {"b", 1}, {"c", 5}, {"nobody", 9}});
  REQUIRE(removed.size() == 4);
  CHECK(removed[0] == std::make_pair(a0, RemoveReason::kIncluded));
  CHECK(removed[1] == std::make_pair(b0, RemoveReason::kIncluded));
  CHECK(removed[2] == std::make_pair(u, RemoveReason::kIncluded));
  CHECK(removed[3] == std::make_pair(a1, RemoveReason::kStaleNonce));
  CHECK(pool.RemovalReasonOf(a1->tx.hash) == RemoveReason::kStaleNonce);
  CHECK(pool.RemovalReasonOf(a0->tx.hash) == RemoveReason::kIncluded);
  const Stats s = pool.stats();
  CHECK(s.size == 3);
  CHECK(s.parked == 0);
  CHECK(s.senders == 3);
  CHECK(s.removed[static_cast<int>(RemoveReason::kIncluded)] == 3);
  CHECK(s.removed[static_cast<int>(RemoveReason::kStaleNonce)] == 1);
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/2", "b/1", "c/5"});
  CHECK(!pool.IsParked(c5->tx.hash));

  // Without its new base, a sender whose first tx was included is parked until told.
  Add(pool, Tx("a", 3, 1), 2);
  pool.Update(3, 3000, {a2->tx.hash}, {});
  CHECK(pool.stats().parked == 1);
  CHECK(ReapAll(pool) == std::vector<std::string>{"b/1", "c/5"});
  pool.Update(4, 4000, {}, {{"a", 3}});
  CHECK(pool.stats().parked == 0);
  (void)b1;
}

TEST_CASE("mempool: Insert with a higher base removes stale txs and may promote", "[mempool]") {
  PriorityMempool pool(Config{});
  const EntryPtr a0 = Add(pool, Tx("a", 0, 1));
  const EntryPtr a3 = Add(pool, Tx("a", 3, 1));  // parked
  InsertResult r = pool.Insert(Tx("a", 4, 1), 3, 1, 1);  // the chain moved on to 3
  REQUIRE(r.ok);
  CHECK(Hashes(r.stale) == Hashes({a0}));
  CHECK(Hashes(r.promoted) == Hashes({a3}));
  CHECK(!r.parked);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kStaleNonce)] == 1);
  CHECK(pool.stats().parked == 0);
  // Even a rejected tx moves the base (the caller's committed state is a fact).
  r = pool.Insert(Tx("a", 4, 1), 5, 1, 1);
  CHECK(r.reject == RejectReason::kNonceTooLow);
  CHECK(r.stale.size() == 2);
  CHECK(pool.stats().size == 0);
  CHECK(pool.stats().senders == 0);
}

TEST_CASE("mempool: TTL by blocks and by time, at the boundaries", "[mempool]") {
  Config c;
  c.ttl_blocks = 2;
  c.ttl_nanos = 1000;
  PriorityMempool pool(c);
  TxInfo t = Tx("a", 0, 1);
  const Hash ha = t.hash;
  REQUIRE(pool.Insert(std::move(t), 0, 10, 5000).ok);
  t = Tx("b", 0, 1);
  const Hash hb = t.hash;
  REQUIRE(pool.Insert(std::move(t), 0, 11, 5500).ok);

  CHECK(pool.PurgeExpired(12, 6000).empty());  // exactly 2 blocks and 1000 ns: kept
  auto removed = pool.PurgeExpired(13, 6000);  // a: 3 blocks
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].first->tx.hash == ha);
  CHECK(removed[0].second == RemoveReason::kExpiredBlocks);
  CHECK(pool.PurgeExpired(13, 6500).empty());  // b: 2 blocks, 1000 ns
  removed = pool.PurgeExpired(13, 6501);
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].first->tx.hash == hb);
  CHECK(removed[0].second == RemoveReason::kExpiredTime);
  CHECK(pool.RemovalReasonOf(hb) == RemoveReason::kExpiredTime);

  // Both exceeded: blocks is reported. Update purges too.
  t = Tx("c", 0, 1);
  const Hash hc = t.hash;
  REQUIRE(pool.Insert(std::move(t), 0, 20, 10000).ok);
  removed = pool.Update(30, 99999, {}, {});
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].second == RemoveReason::kExpiredBlocks);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kExpiredBlocks)] == 2);
  CHECK(pool.stats().removed[static_cast<int>(RemoveReason::kExpiredTime)] == 1);
  (void)hc;
}

TEST_CASE("mempool: TTL off keeps everything; a clock going back is clamped", "[mempool]") {
  PriorityMempool pool(Config{});
  REQUIRE(pool.Insert(Tx("a", 0, 1), 0, 10, 5000).ok);
  REQUIRE(pool.Insert(Tx("b", 0, 1), 0, 9, 4000).ok);
  CHECK(pool.FindOrdered("b", 0)->arrival_height == 10);
  CHECK(pool.FindOrdered("b", 0)->arrival_time == 5000);
  CHECK(pool.PurgeExpired(1'000'000, 1'000'000'000).empty());
}

TEST_CASE("mempool: expiry follows arrival, not nonce", "[mempool]") {
  Config c;
  c.ttl_blocks = 1;
  PriorityMempool pool(c);
  REQUIRE(pool.Insert(Tx("a", 1, 1), 0, 1, 0).ok);  // arrives first, parked
  REQUIRE(pool.Insert(Tx("a", 0, 1), 0, 2, 0).ok);  // promotes a/1
  CHECK(pool.stats().parked == 0);
  const auto removed = pool.PurgeExpired(3, 0);  // a/1 is 2 blocks old
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].first->tx.nonce == 1);
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/0"});
}

// With a TTL, lone senders' txs sit in a linked list in arrival order and records in a heap; the
// expiries interleave them exactly by arrival, and a lone tx leaving from the list's middle, its
// end or its start (the next arrival then appends to the right end) leaves no trace.
TEST_CASE("mempool: TTL expiry interleaves lone senders and records by arrival", "[mempool]") {
  Config c;
  c.ttl_blocks = 1;  // expired at height h when h - arrival height > 1
  PriorityMempool pool(c);
  auto insert = [&](TxInfo t, std::int64_t height) {
    const Hash h = t.hash;
    REQUIRE(pool.Insert(std::move(t), 0, height, 0).ok);
    return h;
  };
  insert(Tx("l1", 0, 1), 1);
  insert(Tx("r", 0, 1), 2);  // lone until its second tx
  insert(Tx("l2", 0, 1), 3);
  const Hash l3 = insert(Tx("l3", 0, 1), 4);
  insert(Tx("r", 1, 1), 5);  // r gets a record; r/0 leaves the list for the heap
  insert(Tx("l4", 0, 1), 6);
  const Hash u5 = insert(Unordered("l5", 99, 1), 7);
  REQUIRE(pool.Remove(l3, RemoveReason::kRecheckFailed));  // the list's middle
  REQUIRE(pool.Remove(u5, RemoveReason::kIncluded));       // its end
  insert(Tx("l6", 0, 1), 8);
  auto expired = [&](std::int64_t height) {
    std::vector<std::string> out;
    for (const auto& [e, reason] : pool.PurgeExpired(height, 0)) {
      CHECK(reason == RemoveReason::kExpiredBlocks);
      out.push_back(std::string(e->tx.sender()) + "/" + std::to_string(e->tx.nonce));
    }
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(expired(3) == V{"l1/0"});  // the list's start
  CHECK(expired(4) == V{"r/0"});   // the heap's top
  CHECK(expired(5) == V{"l2/0"});
  CHECK(expired(6).empty());       // l3 was removed
  CHECK(expired(7) == V{"r/1"});
  CHECK(expired(8) == V{"l4/0"});
  CHECK(expired(9).empty());  // the unordered tx was removed
  CHECK(expired(10) == V{"l6/0"});
  CHECK(pool.stats().size == 0);
  // Empty again: a new lone tx is the list's only node.
  insert(Tx("l7", 0, 1), 10);
  insert(Tx("l8", 0, 1), 11);
  CHECK(expired(12) == V{"l7/0"});
  CHECK(expired(13) == V{"l8/0"});
  CHECK(pool.stats().senders == 0);
}

TEST_CASE("mempool: RemovalReasonOf remembers a bounded number of removals", "[mempool]") {
  Config c;
  c.recent_removals = 2;
  PriorityMempool pool(c);
  std::vector<EntryPtr> e;
  for (int i = 0; i < 3; ++i) e.push_back(Add(pool, Tx("s" + std::to_string(i), 0, 1)));
  CHECK(!pool.RemovalReasonOf(e[0]->tx.hash));
  pool.Remove(e[0]->tx.hash, RemoveReason::kRecheckFailed);
  pool.Remove(e[1]->tx.hash, RemoveReason::kIncluded);
  CHECK(pool.RemovalReasonOf(e[0]->tx.hash) == RemoveReason::kRecheckFailed);
  pool.Remove(e[2]->tx.hash, RemoveReason::kEvicted);
  CHECK(!pool.RemovalReasonOf(e[0]->tx.hash));  // the oldest is forgotten
  CHECK(pool.RemovalReasonOf(e[1]->tx.hash) == RemoveReason::kIncluded);
  CHECK(pool.RemovalReasonOf(e[2]->tx.hash) == RemoveReason::kEvicted);
  // The same tx removed twice: the latest reason, and its older record does not evict it.
  REQUIRE(pool.Insert(e[1]->tx.info(), 0, 1, 1).ok);
  pool.Remove(e[1]->tx.hash, RemoveReason::kRecheckFailed);
  CHECK(pool.RemovalReasonOf(e[1]->tx.hash) == RemoveReason::kRecheckFailed);
  CHECK(pool.RemovalReasonOf(e[2]->tx.hash) == RemoveReason::kEvicted);

  c.recent_removals = 0;
  PriorityMempool none(c);
  const EntryPtr x = Add(none, Tx("x", 0, 1));
  none.Remove(x->tx.hash, RemoveReason::kIncluded);
  CHECK(!none.RemovalReasonOf(x->tx.hash));
}

TEST_CASE("mempool: RecheckOrder groups by sender in order of oldest arrival", "[mempool]") {
  PriorityMempool pool(Config{});
  Add(pool, Tx("b", 1, 1));        // b is the oldest sender (parked tx included)
  Add(pool, Unordered("a", 9, 1));
  Add(pool, Tx("b", 0, 1));
  Add(pool, Tx("a", 0, 1));
  Add(pool, Unordered("b", 7, 1));
  Add(pool, Unordered("b", 3, 1));
  std::vector<std::string> got;
  for (const auto& e : pool.RecheckOrder()) {
    got.push_back(std::string(e->tx.sender()) + (e->tx.unordered ? "u" : "") +
                  std::to_string(e->tx.nonce));
  }
  CHECK(got == std::vector<std::string>{"b0", "b1", "bu7", "bu3", "a0", "au9"});
}

TEST_CASE("mempool: unordered txs are independent entries", "[mempool]") {
  PriorityMempool pool(Small(3));
  Add(pool, Unordered("a", 5, 10));
  Add(pool, Unordered("a", 5, 20));  // same timeout, different tx: both kept
  Add(pool, Tx("a", 0, 30));
  // An unordered tx is on the frontier by itself: the cheapest unordered one goes.
  InsertResult r = pool.Insert(Unordered("b", 1, 15), 0, 1, 1);
  REQUIRE(r.ok);
  CHECK(r.evicted[0]->tx.priority == P(10));
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/0", "a/u5", "b/u1"});
}

// A sender with one tx has no record: the tx's own allocation holds the address (the "lone"
// layout, priority_mempool.cc). A second tx gives it a record, which takes the first tx over (as
// a compact copy when nobody else holds it); the record stays until the sender's last tx goes.
// Each step must leave the sender, its txs, their order and their entries as before.
TEST_CASE("mempool: a sender going 1 -> 2 -> 1 -> 0 txs keeps its txs, order and entries",
          "[mempool]") {
  for (const bool hold : {false, true}) {
    INFO("first entry held across the second insert: " << hold);
    PriorityMempool pool(Config{});
    TxInfo first = Tx("alice", 4, 50, 77);
    const Hash h0 = first.hash;
    const std::string bytes0 = first.bytes;
    Add(pool, std::move(first), 4);  // at its base: ready, the sender is lone
    Add(pool, Tx("bob", 0, 60));
    EntryPtr held = hold ? pool.Find(h0) : nullptr;
    const Entry* before = pool.Find(h0).get();
    CHECK(pool.stats().senders == 2);
    CHECK(pool.FindOrdered("alice", 4)->tx.hash == h0);
    CHECK(pool.FindOrdered("alice", 5) == nullptr);
    CHECK(ReapAll(pool) == std::vector<std::string>{"bob/0", "alice/4"});

    // 1 -> 2: the second tx follows the first; both ready, in nonce order.
    TxInfo second = Tx("alice", 5, 90);
    const Hash h1 = second.hash;
    const InsertResult r = pool.Insert(std::move(second), 4, 1, 1000);
    REQUIRE(r.ok);
    CHECK_FALSE(r.parked);
    CHECK(pool.stats().senders == 2);
    CHECK(pool.stats().parked == 0);
    const EntryPtr e0 = pool.Find(h0);
    REQUIRE(e0 != nullptr);
    if (hold) CHECK(e0.get() == before);  // a held entry is never moved
    (void)before;
    CHECK(e0->tx.sender() == "alice");
    CHECK(e0->tx.bytes() == bytes0);
    CHECK(e0->tx.nonce == 4);
    CHECK(e0->tx.priority == P(50));
    CHECK(e0->arrival == 1);
    CHECK(e0->arrival_height == 1);
    CHECK(e0->arrival_time == 1000);
    CHECK_FALSE(pool.IsParked(h0));
    CHECK(pool.FindOrdered("alice", 4) == e0);
    CHECK(pool.FindOrdered("alice", 5)->tx.hash == h1);
    // alice/5 (90) comes only after alice/4 (50), which bob/0 (60) precedes.
    CHECK(ReapAll(pool) == std::vector<std::string>{"bob/0", "alice/4", "alice/5"});
    // Eviction still sees alice's tail (alice/5), never alice/4 before it.
    CHECK(pool.RecheckOrder().size() == 3);

    // 2 -> 1: the first is included; the record keeps the sender and the second is ready.
    auto out = pool.Update(2, 2000, {h0}, {{"alice", 5}});
    REQUIRE(out.size() == 1);
    CHECK(out[0].second == RemoveReason::kIncluded);
    CHECK(pool.stats().senders == 2);
    CHECK_FALSE(pool.IsParked(h1));
    CHECK(ReapAll(pool) == std::vector<std::string>{"alice/5", "bob/0"});
    // A lower base than the record knows does not move it back.
    const InsertResult low = pool.Insert(Tx("alice", 4, 500), 3, 2, 2000);
    CHECK(low.reject == RejectReason::kNonceTooLow);

    // 1 -> 0: the sender leaves; every entry handed out stays readable.
    const EntryPtr e1 = pool.Find(h1);
    CHECK(pool.Remove(h1, RemoveReason::kRecheckFailed));
    CHECK(pool.stats().senders == 1);
    CHECK(pool.FindOrdered("alice", 5) == nullptr);
    CHECK(e0->tx.sender() == "alice");
    CHECK(e0->tx.bytes() == bytes0);
    CHECK(e1->tx.sender() == "alice");
    CHECK(e1->tx.bytes().size() == 100);
    if (held) CHECK(held->tx.sender() == "alice");

    // 0 -> 1 again: a new lone sender, its base from this insert.
    Add(pool, Tx("alice", 9, 1), 9);
    CHECK(pool.stats().senders == 2);
    CHECK(ReapAll(pool) == std::vector<std::string>{"bob/0", "alice/9"});
  }
}

TEST_CASE("mempool: a lone sender's tx is replaced, evicted, expired and based like any other",
          "[mempool]") {
  SECTION("replacement keeps the sender; the new tx is its only one") {
    PriorityMempool pool(Config{});
    const EntryPtr old = Add(pool, Tx("a", 0, 10));
    const InsertResult r = pool.Insert(Tx("a", 0, 11), 0, 1, 1000);
    REQUIRE(r.ok);
    CHECK(r.replaced == old);
    CHECK(pool.stats().size == 1);
    CHECK(pool.stats().senders == 1);
    CHECK(pool.FindOrdered("a", 0)->tx.priority == P(11));
    CHECK(old->tx.sender() == "a");
    CHECK(pool.Insert(Tx("a", 0, 12), 0, 1, 1000).reject ==
          RejectReason::kReplacementUnderpriced);
  }
  SECTION("eviction takes the cheapest of lone txs, unordered txs and sender tails") {
    PriorityMempool pool(Small(5));
    Add(pool, Tx("a", 0, 5));          // lone
    Add(pool, Tx("b", 0, 1));          // b/0 is not evictable while b/1 is there
    Add(pool, Tx("b", 1, 9));          // b's tail
    Add(pool, Unordered("c", 7, 3));   // lone, unordered
    Add(pool, Unordered("b", 8, 4));   // b's unordered
    InsertResult r = pool.Insert(Tx("d", 0, 6), 0, 1, 1000);
    REQUIRE(r.ok);
    REQUIRE(r.evicted.size() == 1);
    CHECK(r.evicted[0]->tx.sender() == "c");
    r = pool.Insert(Tx("e", 0, 6), 0, 1, 1000);
    REQUIRE(r.ok);
    REQUIRE(r.evicted.size() == 1);
    CHECK(r.evicted[0]->tx.sender() == "b");
    CHECK(r.evicted[0]->tx.unordered);
    r = pool.Insert(Tx("f", 0, 6), 0, 1, 1000);
    REQUIRE(r.ok);
    REQUIRE(r.evicted.size() == 1);
    CHECK(r.evicted[0]->tx.sender() == "a");
    // Left: b/0 (1), b/1 (9), d/0, e/0, f/0 (6). The cheapest evictable is a 6, not b/0.
    r = pool.Insert(Tx("g", 0, 6), 0, 1, 1000);
    CHECK(r.reject == RejectReason::kFull);
    CHECK(r.needed_priority == P(6).Next());
    CHECK(pool.stats().senders == 4);
    // Its own lone predecessor is never evicted for a sender's next tx: e/1 evicts f/0 or d/0.
    r = pool.Insert(Tx("e", 1, 7), 0, 1, 1000);
    REQUIRE(r.ok);
    REQUIRE(r.evicted.size() == 1);
    CHECK(r.evicted[0]->tx.sender() == "f");  // newest first among equals
    CHECK(ReapAll(pool) == std::vector<std::string>{"d/0", "e/0", "e/1", "b/0", "b/1"});
  }
  SECTION("a base above a lone unordered tx's is remembered, one below a lone tx's is not used") {
    PriorityMempool pool(Config{});
    Add(pool, Unordered("a", 5, 1));
    CHECK(pool.Insert(Tx("a", 2, 1), 3, 1, 1000).reject == RejectReason::kNonceTooLow);
    CHECK(pool.Insert(Tx("a", 2, 1), 0, 1, 1000).reject == RejectReason::kNonceTooLow);
    Add(pool, Tx("a", 3, 1), 0);
    CHECK_FALSE(pool.IsParked(pool.FindOrdered("a", 3)->tx.hash));
    Add(pool, Tx("b", 7, 1), 7);
    CHECK(pool.Insert(Tx("b", 6, 1), 2, 1, 1000).reject == RejectReason::kNonceTooLow);
    pool.Update(1, 1000, {}, {{"b", 3}});  // below b/7: nothing changes
    CHECK(pool.FindOrdered("b", 7) != nullptr);
    auto out = pool.Update(1, 1000, {}, {{"b", 8}});  // above it: stale
    REQUIRE(out.size() == 1);
    CHECK(out[0].second == RemoveReason::kStaleNonce);
    CHECK(pool.stats().senders == 1);
    out = pool.Update(1, 1000, {}, {{"u", 4}});  // not in the pool
    CHECK(out.empty());
  }
  SECTION("TTL: a lone sender's tx expires, and its expiry moves to the record with it") {
    Config c;
    c.ttl_blocks = 2;
    PriorityMempool pool(c);
    REQUIRE(pool.Insert(Tx("a", 0, 1), 0, 1, 0).ok);
    REQUIRE(pool.Insert(Tx("b", 0, 1), 0, 2, 0).ok);
    REQUIRE(pool.Insert(Tx("a", 1, 1), 0, 2, 0).ok);  // a gets a record
    REQUIRE(pool.Insert(Unordered("c", 9, 1), 0, 3, 0).ok);
    auto out = pool.PurgeExpired(4, 0);
    REQUIRE(out.size() == 1);
    CHECK(out[0].first->tx.sender() == "a");
    CHECK(out[0].first->tx.nonce == 0);
    out = pool.PurgeExpired(5, 0);
    REQUIRE(out.size() == 2);
    CHECK(out[0].first->tx.sender() == "b");  // arrival order
    CHECK(out[1].first->tx.sender() == "a");
    CHECK(out[1].first->tx.nonce == 1);
    out = pool.PurgeExpired(6, 0);
    REQUIRE(out.size() == 1);
    CHECK(out[0].first->tx.sender() == "c");
    CHECK(pool.stats().senders == 0);
    CHECK(pool.stats().size == 0);
  }
  SECTION("an empty sender address works (it gets a record from the first tx)") {
    PriorityMempool pool(Config{});
    Add(pool, Tx("", 0, 1));
    Add(pool, Unordered("", 3, 2));
    CHECK(pool.FindOrdered("", 0)->tx.sender().empty());
    CHECK(pool.stats().senders == 1);
    CHECK(ReapAll(pool) == std::vector<std::string>{"/u3", "/0"});
  }
}

// A reap keeps its view of a sender by address: a lone sender's tx that leaves and comes back
// with the same nonce during the reap (behind the reap's position) is not offered again, and
// neither is a lower nonce after a sender got a record during the reap.
TEST_CASE("mempool: a reap offers a lone sender's nonce once, across changes during the reap",
          "[mempool]") {
  PriorityMempool pool(Config{});
  for (int i = 0; i < 40; ++i) Add(pool, Tx("s" + std::to_string(i), 0, 1000 - i));
  std::vector<std::string> offered;
  bool changed = false;
  pool.Reap([&](const EntryPtr& e) {
    offered.push_back(std::string(e->tx.sender()) + "/" + std::to_string(e->tx.nonce));
    if (!changed) {  // the first chunk is taken: the next ones see these changes
      changed = true;
      REQUIRE(pool.Remove(e->tx.hash, RemoveReason::kRecheckFailed));
      REQUIRE(pool.Insert(Tx("s0", 0, 1), 0, 1, 1000).ok);  // lone again, last in reap order
      REQUIRE(pool.Insert(Tx("s1", 1, 2), 0, 1, 1000).ok);  // s1 gets a record
    }
    return Verdict::kTake;
  });
  CHECK(offered.size() == 40);  // s0/0 once; s1/1 not (s1/0 was offered before it was ready)
  CHECK(std::count(offered.begin(), offered.end(), "s0/0") == 1);
  CHECK(std::count(offered.begin(), offered.end(), "s1/0") == 1);
  // A new reap sees the pool as it is.
  const std::vector<std::string> again = ReapAll(pool);
  REQUIRE(again.size() == 41);
  CHECK(again.back() == "s0/0");
}

TEST_CASE("mempool: entries outlive their removal", "[mempool]") {
  EntryPtr kept;
  {
    PriorityMempool pool(Config{});
    kept = Add(pool, Tx("a", 0, 1, 42));
    pool.Remove(kept->tx.hash, RemoveReason::kIncluded);
    Add(pool, Tx("b", 0, 1));  // still in the pool when the pool goes
  }
  CHECK(kept->tx.bytes().size() == 42);
}

// One thread inserts (with evictions, replacements and removals) while another reaps over and
// over with a mix of verdicts; each reap must offer a sender's ordered txs in increasing nonce
// order and never the same tx twice.
TEST_CASE("mempool: reaping while another thread inserts", "[mempool]") {
  Config c;
  c.max_txs = 400;
  c.max_txs_per_sender = 16;
  PriorityMempool pool(c);
  constexpr int kSenders = 60;
  std::atomic<bool> done{false};
  std::atomic<int> reaps{0};
  std::thread writer([&] {
    std::mt19937_64 rng(7);
    std::vector<std::uint64_t> next(kSenders, 0);
    for (int i = 0; i < 20000; ++i) {
      const int s = static_cast<int>(rng() % kSenders);
      const std::string sender = "s" + std::to_string(s);
      const auto op = rng() % 10;
      if (op < 6) {
        pool.Insert(Tx(sender, next[s]++, rng() % 1000, 50), 0, 1, 1);
      } else if (op < 7) {
        pool.Insert(Unordered(sender, rng(), rng() % 1000, 50), 0, 1, 1);
      } else if (op < 8 && next[s] > 0) {  // replace a recent nonce
        pool.Insert(Tx(sender, next[s] - 1, 2000, 50), 0, 1, 1);
      } else if (op < 9) {  // "include" the sender's first txs
        std::vector<Hash> included;
        if (EntryPtr e = pool.FindOrdered(sender, next[s] > 3 ? next[s] - 3 : 0)) {
          included.push_back(e->tx.hash);
        }
        pool.Update(1, 1, included, {{sender, next[s] > 3 ? next[s] - 2 : 0}});
      } else if (EntryPtr e = pool.FindOrdered(sender, next[s] > 0 ? next[s] - 1 : 0)) {
        pool.Remove(e->tx.hash, RemoveReason::kRecheckFailed);
      }
      if (i % 64 == 0) std::this_thread::yield();
    }
    done = true;
  });
  std::mt19937_64 rng(11);
  bool ok = true;
  while (!done || reaps < 3) {
    std::set<Hash> seen;
    std::map<std::string, std::uint64_t> last_nonce;
    std::size_t visited = 0;
    pool.Reap([&](const EntryPtr& e) {
      if (!seen.insert(e->tx.hash).second) ok = false;  // offered twice
      if (!e->tx.unordered) {
        auto it = last_nonce.find(std::string(e->tx.sender()));
        if (it != last_nonce.end() && e->tx.nonce <= it->second) ok = false;
      }
      if (++visited % 50 == 0) std::this_thread::yield();
      const auto v = rng() % 20;
      if (v == 0) return Verdict::kSkip;
      if (!e->tx.unordered) last_nonce[std::string(e->tx.sender())] = e->tx.nonce;
      return v == 1 && visited > 300 ? Verdict::kStop : Verdict::kTake;
    });
    ++reaps;
  }
  writer.join();
  CHECK(ok);
  CHECK(reaps >= 3);
  const Stats s = pool.stats();
  CHECK(s.size <= 400);
  std::size_t bytes = 0;
  for (const auto& e : pool.RecheckOrder()) bytes += e->tx.bytes().size();
  CHECK(bytes == s.bytes);
  CHECK(pool.RecheckOrder().size() == s.size);
}

TEST_CASE("mempool: a sender with many txs, ordered and unordered, grown and shrunk",
          "[mempool]") {
  // A sender's txs live in one array, four inline: this walks it past 4, 8 and 16 and back.
  Config c = Small(1000);
  c.max_txs_per_sender = 40;
  PriorityMempool pool(c);
  std::vector<EntryPtr> ordered, unordered;
  for (std::uint64_t n = 0; n < 20; ++n) {
    ordered.push_back(Add(pool, Tx("a", n, 100 - n)));
    if (n % 2 == 0) unordered.push_back(Add(pool, Unordered("a", 1000 + n, 1)));
  }
  CHECK(pool.stats().size == 30);
  CHECK(pool.stats().parked == 0);
  for (std::uint64_t n = 0; n < 20; ++n) {
    CHECK(pool.FindOrdered("a", n) == ordered[n]);
  }
  // Removing nonce 3 parks 4..19; its unordered txs stay ready.
  REQUIRE(pool.Remove(ordered[3]->tx.hash, RemoveReason::kRecheckFailed));
  CHECK(pool.stats().parked == 16);
  CHECK(pool.IsParked(ordered[4]->tx.hash));
  CHECK_FALSE(pool.IsParked(ordered[2]->tx.hash));
  // Unordered ones out of the middle and the ends.
  for (std::size_t i : {0u, 5u, 9u}) {
    REQUIRE(pool.Remove(unordered[i]->tx.hash, RemoveReason::kRecheckFailed));
  }
  std::vector<std::string> reaped = ReapAll(pool);
  std::vector<std::string> want = {"a/0", "a/1", "a/2"};
  for (std::size_t i : {1u, 2u, 3u, 4u, 6u, 7u, 8u}) {
    want.push_back("a/u" + std::to_string(unordered[i]->tx.nonce));
  }
  CHECK(reaped == want);
  // The recheck order: ordered by nonce (parked too), then unordered by arrival.
  std::vector<Hash> recheck = Hashes(pool.RecheckOrder());
  std::vector<Hash> want_recheck;
  for (std::size_t n = 0; n < 20; ++n) {
    if (n != 3) want_recheck.push_back(ordered[n]->tx.hash);
  }
  for (std::size_t i : {1u, 2u, 3u, 4u, 6u, 7u, 8u}) want_recheck.push_back(unordered[i]->tx.hash);
  CHECK(recheck == want_recheck);
  // Filling the gap makes them ready again; then remove down to nothing.
  const InsertResult r = pool.Insert(Tx("a", 3, 50), 0, 1, 1000);
  REQUIRE(r.ok);
  CHECK(r.promoted.size() == 16);
  CHECK(pool.stats().parked == 0);
  CHECK(ReapAll(pool).size() == 27);
  std::vector<std::pair<std::string, std::uint64_t>> bases = {{"a", 15}};
  const auto removed = pool.Update(2, 2000, {}, bases);
  CHECK(removed.size() == 15);
  CHECK(pool.stats().size == 12);
  CHECK(pool.FindOrdered("a", 15) == ordered[15]);
  for (std::size_t i : {1u, 2u, 3u, 4u, 6u, 7u, 8u}) {
    REQUIRE(pool.Remove(unordered[i]->tx.hash, RemoveReason::kRecheckFailed));
  }
  CHECK(ReapAll(pool) == std::vector<std::string>{"a/15", "a/16", "a/17", "a/18", "a/19"});
  for (std::uint64_t n = 15; n < 20; ++n) {
    REQUIRE(pool.Remove(ordered[n]->tx.hash, RemoveReason::kRecheckFailed));
  }
  CHECK(pool.stats().size == 0);
  CHECK(pool.stats().senders == 0);
  CHECK(ordered[19]->tx.sender() == "a");  // still readable: the entry is held
}

// --- the pool's building blocks ---

struct HeapOwner {
  int id = 0;
};
struct HeapKey {  // like the frontier's: a priority and a unique tie-breaker
  std::int64_t priority;
  std::uint64_t serial;
  friend bool operator<(const HeapKey& a, const HeapKey& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.serial < b.serial;
  }
  friend bool operator==(const HeapKey& a, const HeapKey& b) {
    return a.priority == b.priority && a.serial == b.serial;
  }
};
struct KeyLess {
  bool operator()(const HeapKey& a, const HeapKey& b) const { return a < b; }
};

// Random pushes, erases and re-keys against a std::map of handle -> key: after each operation
// the heap order holds, positions and handles agree, the first item is the least key and every
// handle keeps its owner and key.
template <std::size_t Arity>
void CheckHeapAgainstMap(std::uint64_t seed) {
  using Key = HeapKey;
  WorkCounters work;
  IndexedHeap<Key, HeapOwner, KeyLess, Arity> heap(&work);
  std::mt19937_64 rng(seed);
  std::vector<HeapOwner> owners(4000);
  for (std::size_t i = 0; i < owners.size(); ++i) owners[i].id = static_cast<int>(i);
  std::map<std::uint32_t, std::pair<Key, HeapOwner*>> want;
  std::uint64_t unique = 0;
  std::size_t largest = 0;
  // Each operation's checks are linear in the size, so the cost grows with ops x size: 10,000
  // operations up to about 1,000 items (asserted below) keep every check after every operation
  // on heaps as many levels deep as 2,000 items make at arity 4 and 8 (6 and 4), one fewer at
  // arity 2 (10), at a quarter of the cost of 20,000 up to 2,000 (59 s -> 14 s of CPU in the
  // sanitized test build).
  for (int op = 0; op < 10000; ++op) {
    INFO("arity " << Arity << " seed " << seed << " op " << op);
    const auto kind = rng() % 10;
    // Few distinct priorities, so that ties (broken by the second member) are common.
    const Key key{static_cast<std::int64_t>(rng() % 50), ++unique};
    // Grows to about 1,000 items, then shrinks to empty, then grows again.
    const bool grow = (op / 2500) % 2 == 0;
    if (want.empty() || kind < (grow ? 6u : 3u)) {
      HeapOwner* owner = &owners[rng() % owners.size()];
      const std::uint32_t h = heap.Push(owner, key);
      REQUIRE(want.count(h) == 0);
      want[h] = {key, owner};
    } else {
      auto it = want.begin();
      std::advance(it, static_cast<long>(rng() % want.size()));
      if (kind < 8) {
        heap.Erase(it->first);
        want.erase(it);
      } else {
        HeapOwner* owner = &owners[rng() % owners.size()];
        heap.Replace(it->first, owner, key);
        it->second = {key, owner};
      }
    }
    REQUIRE(heap.size() == want.size());
    largest = std::max(largest, want.size());
    REQUIRE(heap.Valid());
    if (!want.empty()) {
      Key least = want.begin()->second.first;
      for (const auto& [h, v] : want) least = std::min(least, v.first);
      REQUIRE(heap.KeyAt(0) == least);
    }
    if (op % 500 == 0) {
      for (const auto& [h, v] : want) {
        REQUIRE(heap.KeyOf(h) == v.first);
        REQUIRE(heap.OwnerOf(h) == v.second);
      }
    }
  }
  CHECK(work.heap_compares > 0);
  CHECK(work.heap_levels > 0);
  CHECK(largest >= 900);
}

TEST_CASE("mempool: IndexedHeap keeps its order and handles under random operations",
          "[mempool]") {
  for (std::uint64_t seed : {1, 2}) {
    CheckHeapAgainstMap<2>(seed);
    CheckHeapAgainstMap<4>(seed);
    CheckHeapAgainstMap<8>(seed);
  }
}

TEST_CASE("mempool: IndexedHeap pops in key order", "[mempool]") {
  WorkCounters work;
  IndexedHeap<std::uint64_t, HeapOwner, std::less<std::uint64_t>> heap(&work);
  HeapOwner o;
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> handles;
  for (int i = 0; i < 1000; ++i) {
    keys.push_back(rng() % 300);
    handles.push_back(heap.Push(&o, keys.back()));
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::uint64_t> popped;
  while (!heap.empty()) {
    popped.push_back(heap.KeyAt(0));
    // The handle at the top: the one whose key is there and whose position is 0.
    std::uint32_t top = 0;
    for (std::uint32_t h : handles) {
      if (heap.OwnerOf(h) != nullptr && heap.KeyOf(h) == heap.KeyAt(0)) {
        top = h;
        break;
      }
    }
    heap.Erase(top);
    REQUIRE(heap.Valid());
  }
  CHECK(popped == keys);
  // Handles are reused after an erase.
  CHECK(heap.Push(&o, 5) < 1000);
}

struct IndexedValue {
  std::uint64_t key = 0;
};
struct ValueByKey {
  using Key = std::uint64_t;
  static Key KeyOf(const IndexedValue* v) { return v->key; }
  // Four keys share each hash: equal homes and tags, told apart by the key.
  static std::uint64_t HashOf(Key k) { return k / 4; }
};

TEST_CASE("mempool: FlatIndex agrees with a map under random inserts and erases", "[mempool]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    FlatIndex<IndexedValue, ValueByKey> index(rng());
    std::uint64_t probes = 0;
    index.set_probe_counter(&probes);
    std::vector<std::unique_ptr<IndexedValue>> values(3000);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = std::make_unique<IndexedValue>();
      values[i]->key = i + 1;
    }
    std::set<std::size_t> in;
    for (int op = 0; op < 30000; ++op) {
      INFO("seed " << seed << " op " << op);
      const std::size_t i = rng() % values.size();
      // Grows to most of the values, then shrinks (the table grows by half and halves).
      const bool grow = (op / 7500) % 2 == 0;
      if (in.count(i) == 0) {
        if (grow || rng() % 4 == 0) {
          index.Insert(values[i].get());
          in.insert(i);
        }
      } else if (rng() % 8 == 0) {  // another object with the same key takes its place
        auto twin = std::make_unique<IndexedValue>(*values[i]);
        index.Replace(twin.get());
        REQUIRE(index.Find(twin->key) == twin.get());
        values[i] = std::move(twin);
      } else if (!grow || rng() % 4 == 0) {
        REQUIRE(index.Erase(values[i]->key) == values[i].get());
        in.erase(i);
      }
      REQUIRE(index.size() == in.size());
      if (op % 100 == 0) {
        for (std::size_t j = 0; j < values.size(); ++j) {
          REQUIRE((index.Find(values[j]->key) == values[j].get()) == (in.count(j) != 0));
        }
        std::size_t seen = 0;
        index.ForEach([&](IndexedValue*) { ++seen; });
        REQUIRE(seen == in.size());
        REQUIRE(index.Valid());
      }
    }
    CHECK(index.Erase(0) == nullptr);  // no value has key 0
    CHECK(probes > 0);
  }
}

struct ValueAllOneHash {
  using Key = std::uint64_t;
  static Key KeyOf(const IndexedValue* v) { return v->key; }
  static std::uint64_t HashOf(Key) { return 42; }
};

TEST_CASE("mempool: FlatIndex with one probe run longer than its distance bits", "[mempool]") {
  // Every key has the same home: distances pass 255 (where the slot's bits saturate and a
  // deletion reads the key instead).
  FlatIndex<IndexedValue, ValueAllOneHash> index(5);
  std::vector<std::unique_ptr<IndexedValue>> values(400);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = std::make_unique<IndexedValue>();
    values[i]->key = i + 1;
    index.Insert(values[i].get());
  }
  REQUIRE(index.Valid());
  std::mt19937_64 rng(9);
  std::set<std::size_t> in;
  for (std::size_t i = 0; i < values.size(); ++i) in.insert(i);
  for (int op = 0; op < 3000; ++op) {
    const std::size_t i = rng() % values.size();
    if (in.count(i) != 0) {
      REQUIRE(index.Erase(values[i]->key) == values[i].get());
      in.erase(i);
    } else {
      index.Insert(values[i].get());
      in.insert(i);
    }
    if (op % 50 == 0) {
      REQUIRE(index.Valid());
      for (std::size_t j = 0; j < values.size(); ++j) {
        REQUIRE((index.Find(values[j]->key) == values[j].get()) == (in.count(j) != 0));
      }
    }
  }
}

}  // namespace
}  // namespace kairos::mempool
