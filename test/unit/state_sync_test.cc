// State sync end to end below CometBFT: a snapshot written from a store (store::WriteSnapshot),
// every chunk verified in order (store::VerifyChunk), restored into an empty store
// (MerkleStore::BeginRestore .. FinishRestore), which must then hold exactly the source's keys
// and values, the same root, reopen at the snapshot's version and go on committing to the same
// roots as the source. A restore that does not finish (abandoned, or the process SIGKILLed at
// random instants) leaves an empty store; a snapshot write SIGKILLed leaves no snapshot listed,
// or a whole one. app::StateSync answers CometBFT's OfferSnapshot and ApplySnapshotChunk with
// the right codes: a bad sender's chunk is refetched and the sender rejected, a snapshot whose
// own chunk does not verify is rejected, an offer that does not match the trusted app hash, the
// format or its manifest is refused.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app/block_gate.h"
#include "app/state_sync.h"
#include "store/big_endian.h"
#include "store/merkle_store.h"
#include "store/snapshot.h"
#include "store/snapshot_writer.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;
namespace abci = ::tendermint::abci;

namespace {

StoreOptions Options(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  o.keep_recent = 10;
  o.checkpoint_interval = 3;
  return o;
}

// The app's commit info: an 8-byte block time (here the version).
std::string InfoOf(Version v) {
  std::string out;
  kairos::AppendBigEndian64(static_cast<std::uint64_t>(v), &out);
  return out;
}

// `keys` keys over three versions (inserts, overwrites, deletes); each version's commit info
// names it.
void Fill(MerkleStore* s, int keys) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(keys) * 31 + 7);
  for (Version v = 1; v <= 3; ++v) {
    ChangeSet c;
    for (int i = 0; i < keys; ++i) {
      const std::string key = "key/" + std::to_string(i);
      if (v == 1 || rng() % 3 == 0) {
        c[key] = std::string(static_cast<std::size_t>(rng() % 90), 'v') + std::to_string(v);
      } else if (rng() % 11 == 0) {
        c[key] = std::nullopt;
      }
    }
    REQUIRE(s->Stage(v, c, InfoOf(v)).ok());
    REQUIRE(s->Commit().ok());
  }
}

std::map<std::string, std::string> AllOf(const StoreView& view) {
  std::map<std::string, std::string> out;
  REQUIRE(view.ForEachLeaf([&](const StoreLeaf& l) {
                out.emplace(std::string(l.key), std::string(l.value));
                return Status::OK();
              }).ok());
  return out;
}

struct Snapshot {
  SnapshotManifest manifest;
  std::vector<std::string> chunks;
};

Snapshot Take(const MerkleStore& s, std::size_t chunk_bytes) {
  auto view = s.View();
  REQUIRE(view.ok());
  Snapshot snap;
  const Status st = WriteSnapshot(
      **view, chunk_bytes,
      [&](std::uint32_t index, std::string_view chunk) {
        REQUIRE(index == snap.chunks.size());
        snap.chunks.emplace_back(chunk);
        return Status::OK();
      },
      &snap.manifest);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return snap;
}

// Verifies every chunk in order and restores them into `target`.
void Restore(const Snapshot& snap, MerkleStore* target) {
  const SnapshotManifest& m = snap.manifest;
  REQUIRE(target->BeginRestore(m.version, m.root, m.commit_info).ok());
  std::optional<LeafPath> previous;
  for (std::uint32_t i = 0; i < snap.chunks.size(); ++i) {
    REQUIRE(Sha256Of(snap.chunks[i]) == m.chunk_hashes[i]);
    VerifiedChunk chunk;
    const Status st = VerifyChunk(snap.chunks[i], m.root, m.version, i,
                                  static_cast<std::uint32_t>(snap.chunks.size()),
                                  previous ? &*previous : nullptr, &chunk);
    INFO("chunk " << i << ": " << st.ToString());
    REQUIRE(st.ok());
    std::vector<MerkleStore::RestoreLeaf> leaves;
    for (const VerifiedLeaf& l : chunk.leaves) {
      leaves.push_back({l.key_hash, l.leaf_hash, l.key, l.value});
    }
    REQUIRE(target->RestoreLeaves(leaves).ok());
    previous = chunk.last;
  }
  const Status st = target->FinishRestore();
  INFO(st.ToString());
  REQUIRE(st.ok());
}

}  // namespace

TEST_CASE("a snapshot restores into an empty store, which goes on as the source",
          "[statesync]") {
  const auto [keys, chunk_bytes] = GENERATE(table<int, std::size_t>(
      {{1, 1024}, {40, 1024}, {1500, 1024}, {1500, 64 << 10}, {1500, 10 << 20}}));
  INFO(keys << " keys, chunks of " << chunk_bytes << " bytes");
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  Fill(source.get(), keys);
  const Snapshot snap = Take(*source, chunk_bytes);
  CHECK(snap.manifest.version == 3);
  CHECK(snap.manifest.root == source->root_hash());
  CHECK(snap.manifest.commit_info == InfoOf(3));
  if (keys >= 1500 && chunk_bytes == 1024) CHECK(snap.chunks.size() > 20);
  SnapshotManifest decoded;
  REQUIRE(SnapshotManifest::Decode(snap.manifest.Encode(), &decoded).ok());
  CHECK(decoded.chunk_hashes == snap.manifest.chunk_hashes);

  {
    auto target = OpenStore(Options(dir / "target"));
    // Reads of the empty store cache "absent": the restore must not leave that behind.
    std::string before;
    REQUIRE(target->Get("key/0", &before).IsNotFound());
    Restore(snap, target.get());
    std::string after, expected;
    CHECK(target->Get("key/0", &after).ok() == source->Get("key/0", &expected).ok());
    CHECK(after == expected);
    CHECK(target->version() == 3);
    CHECK(target->root_hash() == source->root_hash());
    CHECK(target->commit_info() == InfoOf(3));
  }
  // Reopened: the same version, keys, values and root; then the same next block on both.
  auto target = OpenStore(Options(dir / "target"));
  REQUIRE(target->version() == 3);
  REQUIRE(target->root_hash() == source->root_hash());
  CHECK(AllOf(**target->View()) == AllOf(**source->View()));
  std::string value;
  CHECK(target->Get("key/0", &value).ok() == source->Get("key/0", &value).ok());
  CHECK(!target->View(2).ok());  // nothing below the snapshot's version is kept
  for (Version v = 4; v <= 8; ++v) {
    ChangeSet c{{"key/0", "next " + std::to_string(v)},
                {"new/" + std::to_string(v), "x"},
                {"key/1", std::nullopt}};
    REQUIRE(source->Stage(v, c).ok());
    REQUIRE(source->Commit().ok());
    REQUIRE(target->Stage(v, c).ok());
    REQUIRE(target->Commit().ok());
    CHECK(target->root_hash() == source->root_hash());
  }
  KeyProof proof;
  CHECK(target->Prove(8, "new/5", &proof).ok());
  CHECK(proof.exist.has_value());
}

TEST_CASE("a snapshot of a version that left memory rebuilds its tree once, however many chunks",
          "[statesync]") {
  // Each chunk's first and last leaf are proven in the walk's own tree. With Proves the version
  // was rebuilt twice (replayed from a checkpoint): once by the walk, which keeps its rebuild
  // to itself, and once more for the proofs.
  TempDir dir;
  auto source = OpenStore(Options(dir.path() + "/source"));
  Fill(source.get(), 1500);
  REQUIRE(source->Stage(4, {{"key/7", "four"}}, InfoOf(4)).ok());
  REQUIRE(source->Commit().ok());
  auto view = source->View(4);
  REQUIRE(view.ok());
  // Later blocks push version 4 out of memory (recent_versions), within keep_recent.
  for (Version v = 5; v <= 12; ++v) {
    REQUIRE(source->Stage(v, {{"key/" + std::to_string(v), "later"}}, InfoOf(v)).ok());
    REQUIRE(source->Commit().ok());
  }
  const std::uint64_t rebuilds_before = source->view_stats().rebuilds;
  const std::uint64_t steps_before = source->view_stats().rebuild_steps;
  Snapshot snap;
  std::size_t pauses = 0;
  const Status st = WriteSnapshot(
      **view, 1024,
      [&](std::uint32_t, std::string_view chunk) {
        snap.chunks.emplace_back(chunk);
        return Status::OK();
      },
      &snap.manifest,
      [&] {
        ++pauses;
        return Status::OK();
      });
  INFO(st.ToString());
  REQUIRE(st.ok());
  REQUIRE(snap.chunks.size() > 20);
  CHECK(source->view_stats().rebuilds - rebuilds_before == 1);
  // The pause comes before every leaf, before each chunk is proven and before it is sunk, and
  // before each slice of a changeset the rebuild replays or undoes (every changeset here has
  // a key or more, so one slice or more each; the slicing itself: store_walk_test).
  const std::uint64_t steps = source->view_stats().rebuild_steps - steps_before;
  REQUIRE(steps > 0);
  REQUIRE(pauses > snap.manifest.leaves + 2 * snap.chunks.size());
  CHECK(pauses - (snap.manifest.leaves + 2 * snap.chunks.size()) >= steps);
  // The snapshot is version 4's.
  REQUIRE(snap.manifest.root == (*view)->root_hash());
  auto target = OpenStore(Options(dir.path() + "/target"));
  Restore(snap, target.get());
  CHECK(target->root_hash() == (*view)->root_hash());
  CHECK(AllOf(**target->View()) == AllOf(**view));
}

TEST_CASE("a snapshot write stops where its pause says so", "[statesync]") {
  TempDir dir;
  auto source = OpenStore(Options(dir.path() + "/source"));
  Fill(source.get(), 400);
  auto view = source->View();
  REQUIRE(view.ok());
  std::size_t pauses = 0, chunks = 0;
  SnapshotManifest manifest;
  const Status st = WriteSnapshot(
      **view, 1024,
      [&](std::uint32_t, std::string_view) {
        ++chunks;
        return Status::OK();
      },
      &manifest,
      [&] {
        return ++pauses == 100 ? Status::IOError("cancelled: the node is stopping")
                               : Status::OK();
      });
  CHECK(st.ToString().find("cancelled: the node is stopping") != std::string::npos);
  CHECK(pauses == 100);  // nothing more after the refusal
  CHECK(chunks < 100);
}

TEST_CASE("a gate keeps a waiting writer until the block is done, within its share",
          "[statesync]") {
  using kairos::app::BlockGate;
  using kairos::app::GateWaiter;
  BlockGate gate;
  // Open: no wait at all.
  {
    GateWaiter waiter(&gate, 0.8);
    waiter.Wait(nullptr);
    CHECK(waiter.waited().count() == 0);
  }
  // Closed: the writer waits until the executor opens it (its head start is an hour, so only
  // Open ends the wait: a writer that missed the Open would hang the test). The Open may also
  // come before the writer's first check: then it does not wait at all, which is right too.
  {
    gate.Close();
    std::atomic<bool> entering{false};
    GateWaiter waiter(&gate, 0.8, std::chrono::hours(1));
    std::thread writer([&] {
      entering = true;
      waiter.Wait(nullptr);
    });
    while (!entering) std::this_thread::yield();
    gate.Open();
    writer.join();
  }
  // Closed, and cancelled: the wait ends.
  {
    gate.Close();
    std::atomic<bool> cancel{true};
    GateWaiter waiter(&gate, 0.8, std::chrono::hours(1));
    waiter.Wait(&cancel);  // returns (a wait for the hour would hang the test)
    gate.Open();
  }
  // Closed for good (a FinalizeBlock never committed): the writer waits out its head start,
  // then no more while its waits exceed its share (none here).
  {
    gate.Close();
    GateWaiter waiter(&gate, 0.0, std::chrono::milliseconds(50));
    waiter.Wait(nullptr);
    const auto first = waiter.waited();
    CHECK(first >= std::chrono::milliseconds(50));
    waiter.Wait(nullptr);
    waiter.Wait(nullptr);
    CHECK(waiter.waited() == first);
    gate.Open();
  }
}

TEST_CASE("the empty tree's snapshot is one chunk with no leaf", "[statesync]") {
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  REQUIRE(source->Stage(1, {}).ok());
  REQUIRE(source->Commit().ok());
  const Snapshot snap = Take(*source, 1024);
  REQUIRE(snap.chunks.size() == 1);
  CHECK(snap.manifest.leaves == 0);
  auto target = OpenStore(Options(dir / "target"));
  Restore(snap, target.get());
  CHECK(target->version() == 1);
  CHECK(target->root_hash() == kEmptyHash);
}

TEST_CASE("RestoreWriter writes each chunk handed over, in order; a failed write comes back",
          "[statesync]") {
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  Fill(source.get(), 400);
  const Snapshot snap = Take(*source, 1024);
  const SnapshotManifest& m = snap.manifest;
  const auto count = static_cast<std::uint32_t>(snap.chunks.size());
  REQUIRE(count > 10);
  const auto verified = [&](std::uint32_t i, const LeafPath* previous) {
    auto chunk = std::make_unique<VerifiedChunk>();
    REQUIRE(VerifyChunk(snap.chunks[i], m.root, m.version, i, count, previous, chunk.get()).ok());
    return chunk;
  };
  auto target = OpenStore(Options(dir / "target"));

  SECTION("RestoreSnapshot: chunks are checked while the last ones are written") {
    REQUIRE(kairos::app::RestoreSnapshot(target.get(), m, [&](std::uint32_t i) {
              return kairos::Result<std::string>(snap.chunks.at(i));
            }).ok());
    CHECK(target->version() == m.version);
    CHECK(target->root_hash() == source->root_hash());
    auto restored = target->View();
    auto original = source->View();
    REQUIRE(restored.ok());
    REQUIRE(original.ok());
    CHECK(AllOf(**restored) == AllOf(**original));
  }
  SECTION("a write that fails: Push and Finish return its error, later chunks are dropped") {
    REQUIRE(target->BeginRestore(m.version, m.root, m.commit_info).ok());
    {
      kairos::app::RestoreWriter writer(target.get());
      auto first = verified(0, nullptr);
      const LeafPath first_last = first->last;
      auto second = verified(1, &first_last);
      REQUIRE(writer.Push(std::move(second)).ok());
      // Out of key-hash order: the store refuses it, on the writer's thread.
      REQUIRE(writer.Push(std::move(first)).ok());
      const Status st = writer.Finish();
      INFO(st.ToString());
      CHECK(st.code() == Status::Code::kInvalidArgument);
      CHECK(st.message().find("increasing key-hash order") != std::string::npos);
      CHECK(writer.Push(verified(0, nullptr)).code() == Status::Code::kInvalidArgument);
    }
    REQUIRE(target->AbortRestore().ok());
    CHECK(target->version() == 0);
    std::string value;
    CHECK(target->Get("key/0", &value).IsNotFound());
  }
  SECTION("a restore abandoned with chunks in flight: the writer stops, the store is wiped") {
    REQUIRE(target->BeginRestore(m.version, m.root, m.commit_info).ok());
    {
      kairos::app::RestoreWriter writer(target.get());
      std::optional<LeafPath> previous;
      for (std::uint32_t i = 0; i < count / 2; ++i) {
        auto chunk = verified(i, previous ? &*previous : nullptr);
        previous = chunk->last;
        REQUIRE(writer.Push(std::move(chunk)).ok());
      }
    }  // destroyed without Finish
    REQUIRE(target->AbortRestore().ok());
    CHECK(target->version() == 0);
    REQUIRE(kairos::app::RestoreSnapshot(target.get(), m, [&](std::uint32_t i) {
              return kairos::Result<std::string>(snap.chunks.at(i));
            }).ok());
    CHECK(target->root_hash() == source->root_hash());
  }
}

TEST_CASE("a restore that does not finish leaves an empty store", "[statesync]") {
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  Fill(source.get(), 300);
  const Snapshot snap = Take(*source, 1024);
  const auto half = [&](MerkleStore* target) {
    REQUIRE(target->BeginRestore(3, snap.manifest.root, "").ok());
    VerifiedChunk chunk;
    REQUIRE(VerifyChunk(snap.chunks[0], snap.manifest.root, 3, 0,
                        static_cast<std::uint32_t>(snap.chunks.size()), nullptr, &chunk)
                .ok());
    std::vector<MerkleStore::RestoreLeaf> leaves;
    for (const VerifiedLeaf& l : chunk.leaves) leaves.push_back({l.key_hash, l.leaf_hash, l.key, l.value});
    REQUIRE(target->RestoreLeaves(leaves).ok());
  };
  SECTION("the process stops in the middle: the next open wipes it") {
    { auto target = OpenStore(Options(dir / "target")); half(target.get()); }
    auto target = OpenStore(Options(dir / "target"));
    CHECK(target->version() == 0);
    std::string value;
    CHECK(target->Get("key/0", &value).IsNotFound());
    Restore(snap, target.get());  // and it can start over
    CHECK(target->root_hash() == source->root_hash());
  }
  SECTION("abandoned (another snapshot offered): wiped at once") {
    auto target = OpenStore(Options(dir / "target"));
    half(target.get());
    REQUIRE(target->AbortRestore().ok());
    CHECK(!target->restoring());
    Restore(snap, target.get());
    CHECK(target->root_hash() == source->root_hash());
  }
  SECTION("misuse is refused") {
    auto target = OpenStore(Options(dir / "target"));
    CHECK(target->RestoreLeaves({}).code() == Status::Code::kInvalidArgument);
    CHECK(target->FinishRestore().code() == Status::Code::kInvalidArgument);
    CHECK(source->BeginRestore(3, snap.manifest.root, "").code() ==
          Status::Code::kInvalidArgument);  // not empty
    REQUIRE(target->BeginRestore(3, snap.manifest.root, "").ok());
    ChangeSet c;
    c["key/0"] = "v";
    CHECK(target->Stage(1, c, "").status().code() == Status::Code::kInvalidArgument);
    CHECK(target->FinishRestore().code() == Status::Code::kCorruption);  // no leaf: wrong root
  }
}

TEST_CASE("a restore or a snapshot write SIGKILLed at random instants leaves no half state",
          "[statesync][crash]") {
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  Fill(source.get(), 3000);
  const Snapshot snap = Take(*source, 16 << 10);
  std::mt19937 rng(std::random_device{}());
  int restored = 0, empty = 0, listed = 0, unlisted = 0;
  // Iteration -1 runs the child to its end and times it; the kills then land at random instants
  // of that span (and a little after).
  std::chrono::microseconds span{0};
  for (int i = -1; i < 12; ++i) {
    INFO("iteration " << i);
    const std::string target_dir = dir / ("target" + std::to_string(i));
    const std::string snap_dir = dir / ("snapshots" + std::to_string(i));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child: restore the snapshot, then write one of its own from the restored store.
      auto opened = MerkleStore::Open(Options(target_dir));
      if (!opened.ok()) ::_exit(3);
      const SnapshotManifest& m = snap.manifest;
      if (!(*opened)->BeginRestore(m.version, m.root, m.commit_info).ok()) ::_exit(4);
      std::optional<LeafPath> previous;
      for (std::uint32_t c = 0; c < snap.chunks.size(); ++c) {
        VerifiedChunk chunk;
        if (!VerifyChunk(snap.chunks[c], m.root, m.version, c,
                         static_cast<std::uint32_t>(snap.chunks.size()),
                         previous ? &*previous : nullptr, &chunk)
                 .ok()) {
          ::_exit(5);
        }
        std::vector<MerkleStore::RestoreLeaf> leaves;
        for (const VerifiedLeaf& l : chunk.leaves) {
          leaves.push_back({l.key_hash, l.leaf_hash, l.key, l.value});
        }
        if (!(*opened)->RestoreLeaves(leaves).ok()) ::_exit(6);
        previous = chunk.last;
      }
      if (!(*opened)->FinishRestore().ok()) ::_exit(7);
      kairos::app::SnapshotFiles files(snap_dir);
      if (!files.Init().ok()) ::_exit(8);
      auto view = (*opened)->View();
      if (!view.ok() || !files.Write(**view, 16 << 10).ok()) ::_exit(9);
      ::_exit(0);
    }
    int status = 0;
    if (i < 0) {
      const auto started = std::chrono::steady_clock::now();
      ::waitpid(child, &status, 0);
      span = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - started);
      REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(
          rng() % static_cast<std::uint64_t>(span.count() * 11 / 10 + 1)));
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      REQUIRE((WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)));
    }
    auto target = OpenStore(Options(target_dir));
    if (target->version() == 0) {
      ++empty;
      std::string value;
      CHECK(target->Get("key/0", &value).IsNotFound());
      continue;
    }
    ++restored;
    REQUIRE(target->version() == 3);
    REQUIRE(target->root_hash() == source->root_hash());
    kairos::app::SnapshotFiles files(snap_dir);
    REQUIRE(files.Init().ok());
    const auto list = files.List();
    if (list.empty()) {
      ++unlisted;
      continue;
    }
    ++listed;
    REQUIRE(list.size() == 1);
    SnapshotManifest m;
    REQUIRE(SnapshotManifest::Decode(list[0].metadata, &m).ok());
    std::optional<LeafPath> previous;
    for (std::uint32_t c = 0; c < list[0].chunks; ++c) {
      auto bytes = files.LoadChunk(3, kSnapshotFormat, c);
      REQUIRE(bytes.ok());
      VerifiedChunk chunk;
      REQUIRE(VerifyChunk(*bytes, m.root, 3, c, list[0].chunks, previous ? &*previous : nullptr,
                          &chunk)
                  .ok());
      previous = chunk.last;
    }
  }
  // What the kills hit (informative; the instants are random).
  WARN("child's whole run " << span.count() / 1000 << " ms; restore killed before it finished "
       << empty << " times, finished " << restored
                                            << "; snapshot listed whole " << listed
                                            << ", unlisted " << unlisted);
}

TEST_CASE("StateSync answers OfferSnapshot and ApplySnapshotChunk with CometBFT's codes",
          "[statesync]") {
  TempDir dir;
  auto source = OpenStore(Options(dir / "source"));
  Fill(source.get(), 400);
  const Snapshot snap = Take(*source, 1024);
  REQUIRE(snap.chunks.size() >= 3);
  const std::string metadata = snap.manifest.Encode();
  const auto offer_of = [&](const std::string& meta) {
    abci::RequestOfferSnapshot req;
    req.mutable_snapshot()->set_height(3);
    req.mutable_snapshot()->set_format(kSnapshotFormat);
    req.mutable_snapshot()->set_chunks(static_cast<std::uint32_t>(snap.chunks.size()));
    req.mutable_snapshot()->set_hash(ToBytes(Sha256Of(meta)));
    req.mutable_snapshot()->set_metadata(meta);
    req.set_app_hash(ToBytes(snap.manifest.root));
    return req;
  };
  const auto chunk_req = [&](std::uint32_t i, std::string bytes, std::string sender) {
    abci::RequestApplySnapshotChunk req;
    req.set_index(i);
    req.set_chunk(std::move(bytes));
    req.set_sender(std::move(sender));
    return req;
  };
  auto target = OpenStore(Options(dir / "target"));
  kairos::app::StateSync sync(target.get(), {});
  using Offer = abci::ResponseOfferSnapshot;
  using Apply = abci::ResponseApplySnapshotChunk;
  bool restored = false;

  SECTION("offers that do not match are refused") {
    auto req = offer_of(metadata);
    req.mutable_snapshot()->set_format(2);
    CHECK(sync.Offer(req).result() == Offer::REJECT_FORMAT);
    req = offer_of(metadata);
    req.set_app_hash(std::string(32, 'x'));
    CHECK(sync.Offer(req).result() == Offer::REJECT);
    req = offer_of(metadata);
    req.mutable_snapshot()->set_hash(std::string(32, 'y'));
    CHECK(sync.Offer(req).result() == Offer::REJECT);
    req = offer_of(metadata);
    req.mutable_snapshot()->set_chunks(1);
    CHECK(sync.Offer(req).result() == Offer::REJECT);
    req = offer_of(metadata);
    req.mutable_snapshot()->set_height(4);
    CHECK(sync.Offer(req).result() == Offer::REJECT);
    CHECK(sync.Offer(offer_of("garbage")).result() == Offer::REJECT);
    auto other = OpenStore(Options(dir / "other"));
    Fill(other.get(), 10);  // height 3 too, another state
    kairos::app::StateSync full(other.get(), {});
    CHECK(full.Offer(offer_of(metadata)).result() == Offer::ABORT);
    SnapshotManifest odd = snap.manifest;
    odd.commit_info = "7 bytes";  // not a block time: the restored node could not load it
    CHECK(sync.Offer(offer_of(odd.Encode())).result() == Offer::REJECT);
    CHECK(sync.Apply(chunk_req(0, snap.chunks[0], "p"), &restored).result() == Apply::ABORT);
  }
  SECTION("a bad sender's chunk is fetched again, and the restore completes") {
    REQUIRE(sync.Offer(offer_of(metadata)).result() == Offer::ACCEPT);
    for (std::uint32_t i = 0; i < snap.chunks.size(); ++i) {
      if (i == 1) {
        std::string bad = snap.chunks[1];
        bad[bad.size() / 2] ^= 1;
        const Apply res = sync.Apply(chunk_req(1, bad, "evil-peer"), &restored);
        CHECK(res.result() == Apply::RETRY);
        CHECK(std::vector<std::uint32_t>(res.refetch_chunks().begin(),
                                         res.refetch_chunks().end()) ==
              std::vector<std::uint32_t>{1});
        REQUIRE(res.reject_senders_size() == 1);
        CHECK(res.reject_senders(0) == "evil-peer");
        CHECK(!restored);
      }
      const Apply res = sync.Apply(chunk_req(i, snap.chunks[i], "good-peer"), &restored);
      REQUIRE(res.result() == Apply::ACCEPT);
      CHECK(restored == (i + 1 == snap.chunks.size()));
    }
    CHECK(target->version() == 3);
    CHECK(target->root_hash() == source->root_hash());
    // The process stops before CometBFT records the state; state sync offers it again: it is
    // accepted, and its chunks acknowledged without writing.
    kairos::app::StateSync again(target.get(), {});
    REQUIRE(again.Offer(offer_of(metadata)).result() == Offer::ACCEPT);
    restored = false;
    for (std::uint32_t i = 0; i < snap.chunks.size(); ++i) {
      REQUIRE(again.Apply(chunk_req(i, "", "peer"), &restored).result() == Apply::ACCEPT);
    }
    CHECK(restored);
    CHECK(target->version() == 3);
    CHECK(target->root_hash() == source->root_hash());
  }
  SECTION("a snapshot whose manifest lists a chunk that does not verify is rejected") {
    Snapshot forged = snap;
    // Chunk 1 replaced by chunk 2 (valid bytes, wrong place), and the manifest made to match.
    forged.manifest.chunk_hashes[1] = Sha256Of(snap.chunks[2]);
    const std::string meta = forged.manifest.Encode();
    REQUIRE(sync.Offer(offer_of(meta)).result() == Offer::ACCEPT);
    REQUIRE(sync.Apply(chunk_req(0, snap.chunks[0], "a"), &restored).result() == Apply::ACCEPT);
    const Apply res = sync.Apply(chunk_req(1, snap.chunks[2], "b"), &restored);
    CHECK(res.result() == Apply::REJECT_SNAPSHOT);
    CHECK(!target->restoring());
    CHECK(target->version() == 0);
    // The honest snapshot is then accepted and restored from the start.
    REQUIRE(sync.Offer(offer_of(metadata)).result() == Offer::ACCEPT);
    for (std::uint32_t i = 0; i < snap.chunks.size(); ++i) {
      REQUIRE(sync.Apply(chunk_req(i, snap.chunks[i], "c"), &restored).result() ==
              Apply::ACCEPT);
    }
    CHECK(restored);
    CHECK(target->root_hash() == source->root_hash());
  }
}
