// Branch's undo journal (BeginJournal / CommitJournal / RollBackJournal, BranchJournal) against a
// model: a journal that commits must leave the branch as if the writes had been made without
// one, and one that rolls back as if they had never been made: the same point reads, the same
// iteration, the same changes(). Random writes, deletes, rewrites of one key and iterations in
// the middle of a journal (which move pending writes into the sorted index) are mixed.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "store/branch.h"
#include "store/map_reader.h"

using namespace kairos::store;
using kairos::Status;

namespace {

// A parent that is not a branch (store::MapReader), so the branch under test caches its answers
// (as the check state does over the committed store).
MapReader Parent(const std::map<std::string, std::string>& data) {
  return MapReader(MapReader::Map(data.begin(), data.end()));
}

using Model = std::map<std::string, std::optional<std::string>>;  // the branch's writes

std::map<std::string, std::string> Visible(const std::map<std::string, std::string>& parent,
                                           const Model& writes) {
  std::map<std::string, std::string> out = parent;
  for (const auto& [k, v] : writes) {
    if (v) {
      out[k] = *v;
    } else {
      out.erase(k);
    }
  }
  return out;
}

std::map<std::string, std::string> ScanAll(const KvReader& r) {
  std::map<std::string, std::string> out;
  for (auto it = r.Iterate("", ""); it->Valid(); it->Next()) {
    out.emplace(std::string(it->key()), std::string(it->value()));
  }
  return out;
}

void RequireSame(const Branch& b, const std::map<std::string, std::string>& parent,
                 const Model& writes, const std::vector<std::string>& keys) {
  const auto want = Visible(parent, writes);
  for (const std::string& k : keys) {
    std::string v;
    Status s = b.Get(k, &v);
    auto it = want.find(k);
    if (it == want.end()) {
      REQUIRE(s.IsNotFound());
    } else {
      REQUIRE(s.ok());
      REQUIRE(v == it->second);
    }
  }
  REQUIRE(ScanAll(b) == want);
  ChangeSet changes = b.changes();
  REQUIRE(changes.size() == writes.size());
  for (const auto& [k, v] : writes) {
    auto it = changes.find(k);
    REQUIRE(it != changes.end());
    REQUIRE(it->second == v);
  }
}

}  // namespace

TEST_CASE("a branch journal that commits keeps its writes, one that rolls back leaves no trace",
          "[store][branch]") {
  const std::map<std::string, std::string> parent_data = {
      {"k01", "p1"}, {"k03", "p3"}, {"k05", "p5"}, {"k07", "p7"}};
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) keys.push_back("k0" + std::to_string(i));
  std::mt19937 rng(20261121);
  for (int trial = 0; trial < 200; ++trial) {
    MapReader parent = Parent(parent_data);
    Branch b(parent, KvLimits{});
    Model committed;  // the branch's writes that stand
    for (int round = 0; round < 12; ++round) {
      // Some writes outside any journal first, sometimes: they must survive a rollback.
      Model pending = committed;
      if (rng() % 3 == 0) {
        const std::string& k = keys[rng() % keys.size()];
        REQUIRE(b.Set(k, "out" + std::to_string(round)).ok());
        committed[k] = "out" + std::to_string(round);
        pending = committed;
      }
      const bool commit = rng() % 2 == 0;
      {
        BranchJournal journal(b);
        REQUIRE(b.journal_open());
        const int ops = 1 + static_cast<int>(rng() % 8);
        for (int op = 0; op < ops; ++op) {
          const std::string& k = keys[rng() % keys.size()];
          switch (rng() % 5) {
            case 0:
            case 1: {
              const std::string v = "v" + std::to_string(trial) + "." + std::to_string(op);
              REQUIRE(b.Set(k, v).ok());
              pending[k] = v;
              break;
            }
            case 2:
              REQUIRE(b.Delete(k).ok());
              pending[k] = std::nullopt;
              break;
            case 3: {  // a read: caches the parent's answer while the journal is open
              std::string v;
              (void)b.Get(k, &v);
              break;
            }
            case 4:  // an iteration: sorts the pending writes in the middle of the journal
              REQUIRE(ScanAll(b) == Visible(parent_data, pending));
              break;
          }
        }
        RequireSame(b, parent_data, pending, keys);
        if (commit) journal.Commit();
        // else: the destructor rolls back
      }
      REQUIRE_FALSE(b.journal_open());
      if (commit) committed = pending;
      RequireSame(b, parent_data, committed, keys);
    }
    // A child applied on top still sees and merges everything the journals kept.
    Branch child(b, KvLimits{});
    REQUIRE(child.Set("k09", "child").ok());
    b.Apply(child);
    committed["k09"] = "child";
    RequireSame(b, parent_data, committed, keys);
  }
}

TEST_CASE("a rolled-back journal restores a key written before it and rewritten in it",
          "[store][branch]") {
  MapReader parent = Parent({{"a", "1"}});
  Branch b(parent, KvLimits{});
  REQUIRE(b.Set("a", "2").ok());
  b.BeginJournal();
  REQUIRE(b.Set("a", "3").ok());
  REQUIRE(b.Delete("a").ok());
  REQUIRE(b.Set("b", "new").ok());
  std::string v;
  REQUIRE(b.Get("a", &v).IsNotFound());
  b.RollBackJournal();
  REQUIRE(b.Get("a", &v).ok());
  CHECK(v == "2");
  CHECK(b.Get("b", &v).IsNotFound());
  ChangeSet changes = b.changes();
  REQUIRE(changes.size() == 1);
  CHECK(changes.at("a") == std::optional<std::string>("2"));
}

TEST_CASE("a journaled write may take its value from the branch's own iterator",
          "[store][branch]") {
  MapReader parent = Parent({{"p", "parent"}});
  Branch b(parent, KvLimits{});
  // Short values (held inline by std::string) and long ones (on the heap).
  REQUIRE(b.Set("a", "x").ok());
  REQUIRE(b.Set("b", std::string(100, 'y')).ok());
  b.BeginJournal();
  // Rewrites every key with the view the iterator hands out of the branch's own storage.
  for (auto it = b.Iterate("", ""); it->Valid(); it->Next()) {
    REQUIRE(b.Set(it->key(), it->value()).ok());
  }
  std::string v;
  REQUIRE(b.Get("a", &v).ok());
  CHECK(v == "x");
  REQUIRE(b.Get("b", &v).ok());
  CHECK(v == std::string(100, 'y'));
  REQUIRE(b.Get("p", &v).ok());
  CHECK(v == "parent");
  b.RollBackJournal();
  CHECK(b.changes().size() == 2);
  CHECK(b.Get("p", &v).ok());
}
