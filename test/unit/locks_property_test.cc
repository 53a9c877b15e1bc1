// Property tests of the locks module: invariants 1-8 of specs/locks.md over random actions
// (Register, RefundRegistration, Acquire of 1-3 slots, Write set/add, Release) by many users,
// several txs per block, with random parameters, through the real message path. Fixed seeds, so
// a failure replays exactly.
//
// Checked after every tx (state before and after it, and its events):
//   1, 2, 8  CheckInvariants: every lock's holder has a session listing it, |held| <= L, the
//            escrow balance == active deposits + bonds (and the queue/LastEnd bookkeeping);
//   3        every lock_session_ended: refund + forfeit == deposit, bounty <= forfeit;
//   4        every deposit charged and every quote: D0 <= deposit <= D0 * 2^b;
//   5        no v != u acquires, writes or releases a slot of u's active session;
//   6        a slot disappears only in a tx that ended its holder's session;
//   7        every session starts at exactly D0 * 2^max(0, LastEnd + b - h), LastEnd taken from
//            the session ends the events reported (releases, takeovers, renewals, EndBlock),
//            so cool-off follows both a release and an expiry;
//   and the supply equals the sum of all balances (money is only moved or burned).
// The txs run on the runner driver (which shows the state between txs) and, for some seeds, block
// by block on a real KairosApp too: every result, event and the locks and bank state must be the
// same (the app commits each block to LevelDB with a sync, which is what takes the time).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "app/locks/keeper.h"
#include "app/locks/params.h"
#include "crypto/bech32.h"
#include "kairos/locks/v1/query.pb.h"
#include "locks_chain.h"
#include "app/locks/msgs.h"

namespace kairos::test {
namespace {

namespace lpb = kairos::locks::v1;
using app::locks::LocksKeeper;
using app::locks::Session;
using ante::Uint256;

// What the invariants compare before and after a tx.
struct Snapshot {
  std::map<std::string, std::string> holders;  // slot key part -> holder
  std::map<std::string, Session> sessions;     // holder -> session
  std::map<std::string, std::string> vars;     // slot key part -> stored value
};

std::map<std::string, std::string> ScanPrefix(const store::KvReader& kv, std::string_view prefix) {
  std::map<std::string, std::string> out;
  auto it = kv.Iterate(prefix, store::PrefixEnd(prefix));
  for (; it->Valid(); it->Next()) {
    out.emplace(std::string(it->key().substr(prefix.size())), std::string(it->value()));
  }
  REQUIRE(it->status().ok());
  return out;
}

Snapshot Take(const LocksKeeper& keeper, const store::KvReader& kv) {
  Snapshot s;
  s.holders = ScanPrefix(kv, LocksKeeper::kLockPrefix);
  s.vars = ScanPrefix(kv, LocksKeeper::kVarPrefix);
  for (const auto& [address, bytes] : ScanPrefix(kv, LocksKeeper::kSessionPrefix)) {
    auto session = keeper.GetSession(kv, address);
    REQUIRE(session.ok());
    REQUIRE(session->has_value());
    s.sessions.emplace(address, **session);
  }
  return s;
}

std::string Attr(const tendermint::abci::Event& e, const std::string& key) {
  for (const auto& a : e.attributes()) {
    if (a.key() == key) return a.value();
  }
  FAIL("event " << e.type() << " has no attribute " << key);
  return {};
}

Uint256 ToAmount(const std::string& text) {
  auto v = ante::ParseAmount(text);
  REQUIRE(v.ok());
  return *v;
}

struct World {
  app::locks::Params params;
  std::vector<TestKey> users;
  std::vector<app::locks::LockSlot> slots;
};

// Random params within the spec's constraints, small enough that everything happens often.
app::locks::Params RandomParams(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  app::locks::Params p;
  p.session_period = pick(1, 6);
  p.cooloff_period = pick(0, 12);
  p.whitelist_period = pick(3, 40);
  p.refund_holding_period = pick(0, 20);
  p.base_deposit = pick(0, 4) == 0 ? 0 : pick(1, 5000);
  p.whitelist_fee = pick(0, 3) == 0 ? 0 : pick(1, 100000);
  p.max_locks_per_session = static_cast<std::uint64_t>(pick(1, 4));
  p.scale_refund = pick(0, 1) == 1;
  p.release_bounty_bps = static_cast<std::uint32_t>(pick(0, 2) == 0 ? 0 : pick(0, 10000));
  p.forfeit_sink = pick(0, 1) == 0 ? "burn" : "treasury";
  p.end_block_cleanup_limit = static_cast<std::uint64_t>(pick(0, 3));
  return p;
}

std::string ParamsJson(const app::locks::Params& p) {
  auto amount = [](const Uint256& v) { return "\"" + ante::ToString(v) + "\""; };
  return std::string("{\"params\":{") + "\"session_period\":" + std::to_string(p.session_period) +
         ",\"cooloff_period\":" + std::to_string(p.cooloff_period) +
         ",\"whitelist_period\":" + std::to_string(p.whitelist_period) +
         ",\"refund_holding_period\":" + std::to_string(p.refund_holding_period) +
         ",\"base_deposit\":" + amount(p.base_deposit) +
         ",\"whitelist_fee\":" + amount(p.whitelist_fee) +
         ",\"max_locks_per_session\":" + std::to_string(p.max_locks_per_session) +
         ",\"scale_refund\":" + (p.scale_refund ? "true" : "false") +
         ",\"release_bounty_bps\":" + std::to_string(p.release_bounty_bps) +
         ",\"forfeit_sink\":\"" + p.forfeit_sink + "\"" +
         ",\"end_block_cleanup_limit\":" + std::to_string(p.end_block_cleanup_limit) + "}}";
}

class PropertyRun {
 public:
  PropertyRun(std::uint64_t seed, int users, int blocks, bool on_app)
      : rng_(seed), blocks_(blocks) {
    world_.params = RandomParams(rng_);
    for (int i = 0; i < users; ++i) {
      world_.users.push_back(MakeKey("locks-prop-" + std::to_string(i)));
    }
    world_.slots = {Slot("counter"), Slot("book", "alice"), Slot("book", "bob"), Slot("pool"),
                    Slot("book", "carol")};
    std::vector<std::pair<TestKey, std::string>> funded;
    for (std::size_t i = 0; i < world_.users.size(); ++i) {
      // The last user is poor: its deposits and bonds fail for insufficient funds.
      funded.emplace_back(world_.users[i], i + 1 == world_.users.size() ? "3000stake"
                                                                         : "1000000000stake");
    }
    chain_ = std::make_unique<LocksChain>(funded, ParamsJson(world_.params), 2,
                                          LocksChain::Driver::kRunner);
    if (on_app) app_chain_ = std::make_unique<LocksChain>(funded, ParamsJson(world_.params), 2);
    accounts_.push_back(app::locks::EscrowAddress());
    accounts_.push_back(app::ModuleAddress("treasury"));
    for (const TestKey& k : world_.users) accounts_.push_back(k.address);
    INFO("params " << ParamsJson(world_.params));
  }

  void Run() {
    INFO("params " << ParamsJson(world_.params));
    for (int b = 0; b < blocks_; ++b) RunBlock();
    CHECK(successes_ > 0);
    CHECK(sessions_started_ > 0);
  }

  // How often each event (and each session end reason, and a non-zero bounty) was seen.
  const std::map<std::string, std::size_t>& seen() const { return seen_; }

 private:
  std::int64_t Pick(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  const TestKey& AnyUser() { return world_.users[Pick(0, world_.users.size() - 1)]; }
  const app::locks::LockSlot& AnySlot() { return world_.slots[Pick(0, world_.slots.size() - 1)]; }

  ante::Msg RandomMsg(const TestKey& u) {
    const app::locks::Params& p = world_.params;
    const Uint256 max_deposit =
        Pick(0, 5) == 0 ? Uint256(Pick(0, 3000)) : Uint256(p.base_deposit << p.cooloff_period);
    switch (Pick(0, 9)) {
      case 0: return MsgRegister(u);
      case 1: return MsgRefund(u, AnyUser());
      case 2:
      case 3: return MsgRelease(u, Pick(0, 2) == 0 ? AnyUser() : u);
      case 4:
      case 5: {
        const app::locks::LockWriteOp op = Pick(0, 1) ? app::locks::LockWriteOp::kAdd : app::locks::LockWriteOp::kSet;
        const std::int64_t value =
            Pick(0, 9) == 0 ? INT64_MAX - Pick(0, 3) : Pick(-50, 50);  // overflows now and then
        return MsgWrite(u, AnySlot(), op, value, max_deposit);
      }
      default: {
        std::vector<app::locks::LockSlot> slots;
        std::set<std::string> seen;
        for (std::int64_t n = Pick(1, 3); n > 0; --n) {
          const app::locks::LockSlot& s = AnySlot();
          if (seen.insert(LocksKeeper::SlotKeyPart(s)).second) slots.push_back(s);
        }
        return MsgAcquire(u, slots, max_deposit);
      }
    }
  }

  void RunBlock() {
    const std::int64_t h = chain_->next_height();
    std::vector<std::string> txs;
    std::vector<std::string> senders;
    for (std::int64_t n = Pick(0, 4); n > 0; --n) {
      const TestKey& u = AnyUser();
      std::vector<ante::Msg> msgs{RandomMsg(u)};
      if (Pick(0, 7) == 0) msgs.push_back(RandomMsg(u));  // two messages, one tx
      txs.push_back(chain_->Tx(u, msgs));
      senders.push_back(u.address);
    }
    Snapshot before;
    LocksChain::Observer observer;
    observer.before = [&](std::size_t, const store::KvReader& kv) {
      before = Take(chain_->keeper(), kv);
    };
    observer.after = [&](std::size_t i, const LockTxResult& r, const store::KvReader& kv) {
      INFO("height " << h << " tx " << i << ": code " << r.code << " " << r.log);
      const Snapshot after = Take(chain_->keeper(), kv);
      CheckTx(h, senders[i], before, after, r);
      Status s = chain_->keeper().CheckInvariants(kv, h);
      INFO(s.message());
      REQUIRE(s.ok());
    };
    const std::vector<LockTxResult> results = chain_->Block(txs, observer);
    // EndBlock's session ends (by the module, at expiry) feed the cool-off model too.
    CheckEvents(h, chain_->end_block_events());
    if (app_chain_) CheckSameOnApp(txs, results);
    chain_->CheckInvariants();
    CheckSupply();
    CheckQuotes();
  }

  // Invariants 5 and 6 between the state before and after one tx by `sender`, then 3, 4, 7 on
  // its events.
  void CheckTx(std::int64_t h, const std::string& sender, const Snapshot& before,
               const Snapshot& after, const LockTxResult& r) {
    std::set<std::string> ended;
    for (const auto& e : r.events) {
      if (e.type() == "lock_session_ended") {
        ended.insert(*crypto::DecodeAccountAddress(Attr(e, "holder")));
      }
    }
    for (const auto& [slot, holder] : before.holders) {
      const Session& session = before.sessions.at(holder);
      auto now = after.holders.find(slot);
      if (holder != sender && h < session.expiry) {  // 5: u's active session is untouchable
        CHECK(now != after.holders.end());
        if (now != after.holders.end()) CHECK(now->second == holder);
        CHECK(after.sessions.contains(holder));
        CHECK(ended.count(holder) == 0);
        auto var_before = before.vars.find(slot);
        auto var_after = after.vars.find(slot);
        CHECK((var_before == before.vars.end()) == (var_after == after.vars.end()));
        if (var_before != before.vars.end() && var_after != after.vars.end()) {
          CHECK(var_before->second == var_after->second);
        }
      }
      if (now == after.holders.end() || now->second != holder) {  // 6
        CHECK(ended.count(holder) == 1);
      }
    }
    if (r.ok()) ++successes_;
    CheckEvents(h, r.events);
  }

  void CheckEvents(std::int64_t h, const std::vector<tendermint::abci::Event>& events) {
    const app::locks::Params& p = world_.params;
    for (const auto& e : events) {
      ++seen_[e.type()];
      if (e.type() == "lock_session_ended") {  // 3
        ++seen_["reason " + Attr(e, "reason")];
        if (Attr(e, "bounty") != "0") ++seen_["bounty"];
        const Uint256 deposit = ToAmount(Attr(e, "deposit"));
        const Uint256 refund = ToAmount(Attr(e, "refund"));
        const Uint256 forfeit = ToAmount(Attr(e, "forfeit"));
        const Uint256 bounty = ToAmount(Attr(e, "bounty"));
        CHECK(refund + forfeit == deposit);
        CHECK(refund <= deposit);
        CHECK(bounty <= forfeit);
        const std::int64_t end = std::stoll(Attr(e, "end"));
        CHECK(end <= h);
        if (Attr(e, "expired") == "false") CHECK(end == h);  // a release: cool-off from now
        last_end_[Attr(e, "holder")] = end;                  // 7: the model's LastEnd
      } else if (e.type() == "lock_session_started") {
        const Uint256 deposit = ToAmount(Attr(e, "deposit"));
        const std::string holder = Attr(e, "holder");
        std::optional<std::int64_t> last;
        if (auto it = last_end_.find(holder); it != last_end_.end()) last = it->second;
        Uint256 want = p.base_deposit;  // 7: D0 * 2^max(0, LastEnd + b - h)
        if (last && p.base_deposit != 0 && *last + p.cooloff_period - h > 0) {
          want = p.base_deposit << static_cast<unsigned>(*last + p.cooloff_period - h);
        }
        CHECK(deposit == want);
        if (p.base_deposit > 0) {  // 4
          CHECK(deposit >= p.base_deposit);
          CHECK(deposit <= (p.base_deposit << p.cooloff_period));
        }
        ++sessions_started_;
      }
    }
  }

  // The same block on the real app gives the same results, events and state.
  void CheckSameOnApp(const std::vector<std::string>& txs,
                      const std::vector<LockTxResult>& results) {
    const std::vector<LockTxResult> on_app = app_chain_->Block(txs);
    REQUIRE(on_app.size() == results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      INFO("tx " << i << ": " << results[i].log);
      CHECK(on_app[i].code == results[i].code);
      CHECK(on_app[i].codespace == results[i].codespace);
      CHECK(on_app[i].log == results[i].log);
      REQUIRE(on_app[i].events.size() == results[i].events.size());
      for (std::size_t k = 0; k < results[i].events.size(); ++k) {
        CHECK(on_app[i].events[k].SerializeAsString() == results[i].events[k].SerializeAsString());
      }
    }
    REQUIRE(app_chain_->end_block_events().size() == chain_->end_block_events().size());
    for (std::string_view prefix : {"locks/", "bank/"}) {
      CHECK(ScanPrefix(app_chain_->state(), prefix) == ScanPrefix(chain_->state(), prefix));
    }
  }

  void CheckSupply() {
    Uint256 sum = chain_->Balance(app::bank::FeeCollectorAddress());
    for (const std::string& a : accounts_) sum += chain_->Balance(a);
    CHECK(sum == chain_->Supply());
  }

  void CheckQuotes() {  // 4, as the DepositQuote query reports it
    const app::locks::Params& p = world_.params;
    for (const TestKey& k : world_.users) {
      lpb::QueryDepositQuoteRequest q;
      q.set_address(k.bech32);
      const auto quote = chain_->Query<lpb::QueryDepositQuoteResponse>("DepositQuote", q);
      const Uint256 d = ToAmount(quote.deposit());
      if (quote.active() || p.base_deposit == 0) {
        CHECK(d == 0);
      } else {
        CHECK(d >= p.base_deposit);
        CHECK(d <= (p.base_deposit << p.cooloff_period));
      }
    }
  }

  std::mt19937_64 rng_;
  int blocks_;
  World world_;
  std::unique_ptr<LocksChain> chain_;      // the runner driver, observed between txs
  std::unique_ptr<LocksChain> app_chain_;  // the same blocks on a KairosApp
  std::vector<std::string> accounts_;
  std::map<std::string, std::int64_t> last_end_;  // bech32 -> the last end the events reported
  std::size_t successes_ = 0;
  std::size_t sessions_started_ = 0;
  std::map<std::string, std::size_t> seen_;
};

TEST_CASE("locks properties: invariants 1-8 hold over random actions by many users", "[locks]") {
  std::map<std::string, std::size_t> seen;
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    INFO("seed " << seed);
    PropertyRun run(seed, 7, 120, /*on_app=*/seed <= 2);
    run.Run();
    for (const auto& [what, n] : run.seen()) seen[what] += n;
  }
  // The runs did reach every path the invariants are about.
  for (const char* what :
       {"lock_session_started", "lock_acquired", "lock_takeover", "lock_var_written",
        "lock_registered", "lock_registration_refunded", "reason release", "reason takeover",
        "reason renewal", "reason end_block", "bounty", "burn"}) {
    INFO(what);
    CHECK(seen[what] > 0);
  }
}

}  // namespace
}  // namespace kairos::test
