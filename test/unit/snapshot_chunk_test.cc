// State sync snapshot chunks (store/snapshot.h) against real trees: a MerkleStore's version is
// cut into chunks of N leaves (ChunkBuilder, with the first and last leaf's paths from Prove),
// and every chunk, checked in order against the version's root, verifies and yields exactly the
// store's keys and values, whatever the cut (chunks of one leaf, a few, many, or all; ends
// inside subtrees). Each way a chunk can be wrong is refused with its index and reason: a
// flipped byte, a changed value, a dropped or moved key, another snapshot's chunk or index,
// leaves out of order, a gap between chunks, a first chunk not at the leftmost leaf or a last
// not at the rightmost, truncated or trailing bytes, a body that inflates past the limit, a
// forged path. The empty tree's chunk, and the manifest's round trip and each refusal.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/merkle_store.h"
#include "store/snapshot.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

// What a changed, dropped, added or moved leaf or a forged path is refused as.
const std::string kNoMatch = "its leaves and paths are not the tree's: ";

struct Leaf {
  Hash key_hash;
  std::string key;
  std::string value;
};

// A store with `keys` keys at version 1 and the same keys, one value changed, at version 2.
class SnapshotTree {
 public:
  explicit SnapshotTree(int keys) {
    StoreOptions o;
    o.dir = dir_.path();
    o.page_cache_pages = 1024;
    o.value_cache_bytes = 1u << 20;
    o.write_buffer_bytes = 4u << 20;
    o.verify_on_open = false;
    store_ = OpenStore(o);
    ChangeSet c;
    for (int i = 0; i < keys; ++i) {
      c["key/" + std::to_string(i)] = "value " + std::to_string(i * 7919 % 1000003);
    }
    REQUIRE(store_->Stage(1, c).ok());
    REQUIRE(store_->Commit().ok());
    ChangeSet c2;
    c2["key/0"] = "changed";
    REQUIRE(store_->Stage(2, c2).ok());
    REQUIRE(store_->Commit().ok());
  }

  std::shared_ptr<const StoreView> View(Version v) const {
    auto view = store_->View(v);
    REQUIRE(view.ok());
    return *view;
  }

 private:
  TempDir dir_;
  std::unique_ptr<MerkleStore> store_;
};

std::vector<Leaf> LeavesOf(const StoreView& view) {
  std::vector<Leaf> out;
  const Status s = view.ForEachLeaf([&](const StoreLeaf& leaf) {
    out.push_back({leaf.key_hash, std::string(leaf.key), std::string(leaf.value)});
    return Status::OK();
  });
  REQUIRE(s.ok());
  return out;
}

LeafPath PathOf(const StoreView& view, const std::string& key) {
  KeyProof proof;
  const Status s = view.Prove(key, &proof);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(proof.exist.has_value());
  return proof.exist->path;
}

// One chunk of `leaves` (in the order given) with the given paths.
std::string Encode(Version version, std::uint32_t index, const std::vector<Leaf>& leaves,
                   const LeafPath& first, const LeafPath& last) {
  ChunkBuilder b(version, index);
  for (const Leaf& l : leaves) b.Add(l.key, l.value);
  auto chunk = std::move(b).Finish(first, last);
  INFO(chunk.status().ToString());
  REQUIRE(chunk.ok());
  return *chunk;
}

// A version cut into chunks of `per_chunk` leaves: each chunk's leaves and bytes.
struct Cut {
  Version version = 0;
  Hash root{};
  std::vector<std::vector<Leaf>> leaves;
  std::vector<std::string> chunks;
};

Cut CutVersion(const StoreView& view, std::size_t per_chunk) {
  Cut cut;
  cut.version = view.version();
  cut.root = view.root_hash();
  const std::vector<Leaf> all = LeavesOf(view);
  for (std::size_t i = 0; i < all.size(); i += per_chunk) {
    const auto end = all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + per_chunk));
    std::vector<Leaf> run(all.begin() + static_cast<std::ptrdiff_t>(i), end);
    const LeafPath first = PathOf(view, run.front().key);
    const LeafPath last = PathOf(view, run.back().key);
    cut.chunks.push_back(
        Encode(cut.version, static_cast<std::uint32_t>(cut.leaves.size()), run, first, last));
    cut.leaves.push_back(std::move(run));
  }
  return cut;
}

std::uint32_t Count(const Cut& cut) { return static_cast<std::uint32_t>(cut.chunks.size()); }

// Checks chunks [0, upto) in order; returns the last one's result in *last.
void VerifyPrefix(const Cut& cut, std::uint32_t upto, VerifiedChunk* last) {
  VerifiedChunk previous;
  for (std::uint32_t i = 0; i < upto; ++i) {
    VerifiedChunk v;
    const Status s = VerifyChunk(cut.chunks[i], cut.root, cut.version, i, Count(cut),
                                 i == 0 ? nullptr : &previous.last, &v);
    INFO(s.ToString());
    REQUIRE(s.ok());
    previous = std::move(v);
  }
  *last = std::move(previous);
}

int SharedPrefixBits(const Hash& a, const Hash& b) {
  for (int i = 0; i < 32; ++i) {
    const auto x = static_cast<std::uint8_t>(a[i] ^ b[i]);
    if (x != 0) return i * 8 + std::countl_zero(x);
  }
  return 256;
}

// zlib by hand, to tamper with a body (the test trusts its own chunks' sizes).
std::string Inflated(const std::string& chunk) {
  std::string body(kMaxSnapshotChunkBodyBytes, '\0');
  uLongf size = static_cast<uLongf>(body.size());
  REQUIRE(uncompress(reinterpret_cast<Bytef*>(body.data()), &size,
                     reinterpret_cast<const Bytef*>(chunk.data()),
                     static_cast<uLong>(chunk.size())) == Z_OK);
  body.resize(size);
  return body;
}

std::string Deflated(const std::string& body) {
  std::string out(compressBound(static_cast<uLong>(body.size())), '\0');
  uLongf size = static_cast<uLongf>(out.size());
  REQUIRE(compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                    reinterpret_cast<const Bytef*>(body.data()),
                    static_cast<uLong>(body.size()), Z_BEST_SPEED) == Z_OK);
  out.resize(size);
  return out;
}

// Checks `chunk` as chunk `index` of `cut` after the honest chunks before it, and requires a
// refusal naming the chunk whose message contains `reason`.
void RequireRefused(const Cut& cut, std::uint32_t index, const std::string& chunk,
                    const std::string& reason, std::uint32_t count = 0,
                    const LeafPath* previous_last = nullptr) {
  VerifiedChunk previous;
  if (index > 0 && previous_last == nullptr) {
    VerifyPrefix(cut, index, &previous);
    previous_last = &previous.last;
  }
  VerifiedChunk out;
  const Status s = VerifyChunk(chunk, cut.root, cut.version, index,
                               count == 0 ? Count(cut) : count, previous_last, &out);
  INFO(s.ToString());
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().rfind("snapshot chunk " + std::to_string(index) + ": ", 0) == 0);
  CHECK(s.message().find(reason) != std::string::npos);
  CHECK(out.leaves.empty());
  CHECK(out.body.empty());
}

}  // namespace

TEST_CASE("snapshot chunks round trip at every cut", "[snapshot][store]") {
  for (const int keys : {1, 10, 300, 3000}) {
    SnapshotTree tree(keys);
    const auto view = tree.View(1);
    const std::vector<Leaf> all = LeavesOf(*view);
    REQUIRE(all.size() == static_cast<std::size_t>(keys));
    int longest_shared_prefix = -1;
    for (const std::size_t per_chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7},
                                        std::size_t{64}, all.size()}) {
      INFO("keys " << keys << ", " << per_chunk << " leaves a chunk");
      const Cut cut = CutVersion(*view, per_chunk);
      REQUIRE(cut.chunks.size() == (all.size() + per_chunk - 1) / per_chunk);
      std::map<std::string, std::string> restored;
      VerifiedChunk previous;
      for (std::uint32_t i = 0; i < Count(cut); ++i) {
        VerifiedChunk v;
        const Status s = VerifyChunk(cut.chunks[i], cut.root, cut.version, i, Count(cut),
                                     i == 0 ? nullptr : &previous.last, &v);
        INFO("chunk " << i << ": " << s.ToString());
        REQUIRE(s.ok());
        REQUIRE(v.leaves.size() == cut.leaves[i].size());
        for (std::size_t j = 0; j < v.leaves.size(); ++j) {
          CHECK(v.leaves[j].key_hash == cut.leaves[i][j].key_hash);
          CHECK(v.leaves[j].key == cut.leaves[i][j].key);
          CHECK(v.leaves[j].value == cut.leaves[i][j].value);
          CHECK(restored.emplace(std::string(v.leaves[j].key), std::string(v.leaves[j].value))
                    .second);
        }
        // The returned paths are the tree's, authenticated.
        CHECK(v.first.key_hash == v.leaves.front().key_hash);
        CHECK(v.last.key_hash == v.leaves.back().key_hash);
        CHECK(RootFromPath(v.first) == cut.root);
        CHECK(RootFromPath(v.last) == cut.root);
        longest_shared_prefix = std::max(
            longest_shared_prefix,
            v.leaves.size() > 1 ? SharedPrefixBits(v.first.key_hash, v.last.key_hash) : -1);
        previous = std::move(v);
      }
      std::map<std::string, std::string> expected;
      for (const Leaf& l : all) expected.emplace(l.key, l.value);
      CHECK(restored == expected);
    }
    if (keys >= 300) {
      // Some chunk's first and last leaf lie deep inside one subtree (past the root page's
      // four levels): its ends are inside a subtree, not on page or root boundaries.
      CHECK(longest_shared_prefix >= 8);
    }
  }
}

TEST_CASE("snapshot chunk of the empty tree", "[snapshot]") {
  const std::string chunk = Encode(1, 0, {}, LeafPath{}, LeafPath{});
  VerifiedChunk out;
  const Status ok = VerifyChunk(chunk, kEmptyHash, 1, 0, 1, nullptr, &out);
  INFO(ok.ToString());
  CHECK(ok.ok());
  CHECK(out.leaves.empty());

  Hash nonzero{};
  nonzero[5] = 1;
  const Status wrong_root = VerifyChunk(chunk, nonzero, 1, 0, 1, nullptr, &out);
  CHECK(wrong_root.code() == Status::Code::kInvalidArgument);
  CHECK(wrong_root.message() ==
        "snapshot chunk 0: it has no leaf (the empty tree) but the root is " +
            std::string(10, '0') + "01" + std::string(52, '0'));
  const Status not_alone = VerifyChunk(chunk, kEmptyHash, 1, 0, 2, nullptr, &out);
  CHECK(not_alone.code() == Status::Code::kInvalidArgument);
  CHECK(not_alone.message().find("only the empty tree's single chunk may have none") !=
        std::string::npos);
}

TEST_CASE("snapshot chunks that are wrong are refused with the chunk and the reason",
          "[snapshot][store]") {
  SnapshotTree tree(300);
  const auto view = tree.View(1);
  const Cut cut = CutVersion(*view, 7);  // 43 chunks
  REQUIRE(Count(cut) == 43);
  const std::uint32_t i = 3;
  const std::vector<Leaf>& run = cut.leaves[i];
  const LeafPath first = PathOf(*view, run.front().key);
  const LeafPath last = PathOf(*view, run.back().key);
  // The honest chunk re-encoded is the chunk (the tampered copies below differ only as said).
  REQUIRE(Encode(1, i, run, first, last) == cut.chunks[i]);

  SECTION("a flipped byte in the compressed chunk") {
    for (const std::size_t at : {std::size_t{2}, cut.chunks[i].size() / 2,
                                 cut.chunks[i].size() - 1}) {
      std::string bad = cut.chunks[i];
      bad[at] = static_cast<char>(bad[at] ^ 0x10);
      RequireRefused(cut, i, bad, "");
    }
  }
  SECTION("a changed value") {
    std::vector<Leaf> changed = run;
    changed[3].value += "!";
    RequireRefused(cut, i, Encode(1, i, changed, first, last),
                   kNoMatch);
  }
  SECTION("a dropped key") {
    std::vector<Leaf> dropped = run;
    dropped.erase(dropped.begin() + 3);
    RequireRefused(cut, i, Encode(1, i, dropped, first, last),
                   kNoMatch);
  }
  SECTION("an added key") {
    // A key hashed inside the chunk's range but not in the tree.
    std::vector<Leaf> added = run;
    for (int n = 0;; ++n) {
      Leaf extra{{}, "extra/" + std::to_string(n), "x"};
      extra.key_hash = Sha256Of(extra.key);
      if (run.front().key_hash < extra.key_hash && extra.key_hash < run.back().key_hash) {
        added.insert(std::upper_bound(added.begin(), added.end(), extra,
                                      [](const Leaf& a, const Leaf& b) {
                                        return a.key_hash < b.key_hash;
                                      }),
                     extra);
        break;
      }
    }
    RequireRefused(cut, i, Encode(1, i, added, first, last),
                   kNoMatch);
  }
  SECTION("a key moved from one chunk to the next") {
    // Chunk i without its middle key, chunk i + 1 with that key first: each is refused.
    std::vector<Leaf> without = run;
    const Leaf moved = without[3];
    without.erase(without.begin() + 3);
    RequireRefused(cut, i, Encode(1, i, without, first, last),
                   kNoMatch);
    std::vector<Leaf> with = cut.leaves[i + 1];
    with.insert(with.begin(), moved);
    RequireRefused(cut, i + 1,
                   Encode(1, i + 1, with, PathOf(*view, moved.key), PathOf(*view, with.back().key)),
                   kNoMatch);
    // (Moving chunk i's last key to the front of chunk i + 1 is another honest cut of the
    // same leaves: both chunks verify. The manifest's chunk hashes name the served cut.)
  }
  SECTION("a chunk of another snapshot, or at another index") {
    const Cut other = CutVersion(*tree.View(2), 7);
    RequireRefused(cut, i, other.chunks[i], "its header names version 2, not the snapshot's 1");
    RequireRefused(cut, i, cut.chunks[i + 1], "its header names index 4, not 3");
  }
  SECTION("leaves out of order") {
    std::vector<Leaf> swapped = run;
    std::swap(swapped[2], swapped[3]);
    RequireRefused(cut, i, Encode(1, i, swapped, first, last),
                   "leaf 3 is not after the one before in key-hash order");
    std::vector<Leaf> twice = run;
    twice.insert(twice.begin() + 3, twice[3]);
    RequireRefused(cut, i, Encode(1, i, twice, first, last),
                   "leaf 4 is not after the one before in key-hash order");
  }
  SECTION("a gap between chunks") {
    VerifiedChunk chunk0;
    VerifyPrefix(cut, 1, &chunk0);
    RequireRefused(cut, 2, cut.chunks[2], "chunk 2 does not meet chunk 1: a leaf lies between them",
                   0, &chunk0.last);
    // A previous last leaf after this chunk's first.
    VerifiedChunk chunk5;
    VerifyPrefix(cut, 6, &chunk5);
    RequireRefused(cut, 2, cut.chunks[2], "its first leaf is not after the last leaf of chunk 1",
                   0, &chunk5.last);
  }
  SECTION("a first chunk not at the leftmost leaf") {
    const std::vector<Leaf>& run1 = cut.leaves[1];
    RequireRefused(cut, 0,
                   Encode(1, 0, run1, PathOf(*view, run1.front().key), PathOf(*view, run1.back().key)),
                   "the first chunk does not begin at the leftmost leaf");
  }
  SECTION("a last chunk not at the rightmost leaf") {
    RequireRefused(cut, i, cut.chunks[i], "the last chunk does not end at the rightmost leaf",
                   i + 1);
  }
  SECTION("truncated and trailing bytes") {
    const std::string& chunk = cut.chunks[i];
    RequireRefused(cut, i, chunk.substr(0, chunk.size() - 1), "its compressed stream is truncated");
    RequireRefused(cut, i, chunk.substr(0, chunk.size() / 2), "its compressed stream is truncated");
    RequireRefused(cut, i, chunk + "x", "1 bytes follow its compressed stream");
    const std::string body = Inflated(chunk);
    RequireRefused(cut, i, Deflated(body.substr(0, body.size() - 1)), "leaf 6 is truncated (value)");
    RequireRefused(cut, i, Deflated(body + "x"), "1 bytes follow its leaves");
    RequireRefused(cut, i, Deflated(body.substr(0, 10)), "its header is truncated");
    std::string other_format = body;
    other_format[0] = 2;
    RequireRefused(cut, i, Deflated(other_format), "its format is 2, not 1");
    // A leaf count beyond what the bytes can hold (the path of the first leaf starts at 14).
    std::string many = body;
    REQUIRE(many[13] == 7);
    many[13] = 0x7f;
    RequireRefused(cut, i, Deflated(many), "its leaf count 127 is more than its");
  }
  SECTION("a body that inflates past the limit, or a chunk too large to inflate") {
    const std::string zeros = Deflated(std::string(kMaxSnapshotChunkBodyBytes + 1, '\0'));
    CHECK(zeros.size() < (1u << 20));  // the sender's cost: 0.4% of what it asks us to inflate
    RequireRefused(cut, i, zeros, "it decompresses past the limit of 67108864 bytes");
    // Exactly the limit inflates (and is then refused for what it holds).
    RequireRefused(cut, i, Deflated(std::string(kMaxSnapshotChunkBodyBytes, '\0')),
                   "its format is 0, not 1");
    RequireRefused(cut, i, std::string(kMaxSnapshotChunkBytes + 1, 'x'),
                   "it is 16711681 bytes compressed, more than the limit of 16711680");
  }
  SECTION("a forged path") {
    for (const bool forge_first : {true, false}) {
      for (std::size_t step = 0; step < (forge_first ? first : last).steps.size(); ++step) {
        LeafPath f = first, l = last;
        LeafPath& forged = forge_first ? f : l;
        forged.steps[step].sibling[7] ^= 1;
        VerifiedChunk out;
        VerifiedChunk previous;
        VerifyPrefix(cut, i, &previous);
        const Status s =
            VerifyChunk(Encode(1, i, run, f, l), cut.root, 1, i, Count(cut), &previous.last, &out);
        INFO((forge_first ? "first" : "last") << " path, step " << step << ": " << s.ToString());
        REQUIRE(s.code() == Status::Code::kInvalidArgument);
        CHECK(s.message().rfind("snapshot chunk 3: ", 0) == 0);
        // A sibling the recomputation uses changes the root; one it builds from the leaves, or
        // takes from the other path, is refused as not what it builds.
        CHECK(s.message().find(kNoMatch) != std::string::npos);
      }
    }
    LeafPath wrong_side = first;
    wrong_side.steps[0].we_are_right = !wrong_side.steps[0].we_are_right;
    RequireRefused(cut, i, Encode(1, i, run, wrong_side, last),
                   "the path of the first leaf goes the wrong way at depth " +
                       std::to_string(first.steps.size() - 1));
    LeafPath short_path = last;
    short_path.steps.erase(short_path.steps.begin());
    RequireRefused(cut, i, Encode(1, i, run, first, short_path), "");
  }
  SECTION("the builder refuses paths of other keys") {
    ChunkBuilder b(1, i);
    for (const Leaf& l : run) b.Add(l.key, l.value);
    auto chunk = std::move(b).Finish(last, first);
    REQUIRE(chunk.status().code() == Status::Code::kInvalidArgument);
    CHECK(chunk.status().message() ==
          "snapshot chunk 3: the paths do not name its first and last keys");
  }
}

TEST_CASE("snapshot manifest round trip and refusals", "[snapshot]") {
  SnapshotManifest m;
  m.version = 12345;
  m.root = Sha256Of("root");
  m.commit_info = "commit info";
  m.leaves = 1000000;
  m.raw_bytes = 123456789;
  m.chunk_hashes = {Sha256Of("a"), Sha256Of("b"), Sha256Of("c")};
  const std::string encoded = m.Encode();
  SnapshotManifest d;
  REQUIRE(SnapshotManifest::Decode(encoded, &d).ok());
  CHECK(d.version == m.version);
  CHECK(d.root == m.root);
  CHECK(d.commit_info == m.commit_info);
  CHECK(d.leaves == m.leaves);
  CHECK(d.raw_bytes == m.raw_bytes);
  CHECK(d.chunk_hashes == m.chunk_hashes);

  auto refused = [](const std::string& in, const std::string& reason) {
    SnapshotManifest out;
    const Status s = SnapshotManifest::Decode(in, &out);
    INFO(s.ToString());
    REQUIRE(s.code() == Status::Code::kInvalidArgument);
    CHECK(s.message().rfind("snapshot manifest: ", 0) == 0);
    CHECK(s.message().find(reason) != std::string::npos);
  };
  // Every truncation names the field it cuts.
  const std::size_t commit_info_at = 1 + 8 + 32;
  for (std::size_t n = 0; n < encoded.size(); ++n) {
    INFO("truncated to " << n);
    const char* field = n < 1                         ? "format"
                        : n < 9                       ? "version"
                        : n < commit_info_at          ? "root"
                        : n < commit_info_at + 1 + 11 ? "commit_info"
                        : n < encoded.size() - 3 * 32 - 1 - 4 ? "leaves"
                        : n < encoded.size() - 3 * 32 - 1 ? "raw_bytes"
                                                          : "chunk count";
    refused(encoded.substr(0, n), field);
  }
  refused(encoded + "x", "1 bytes follow the chunk hashes");
  refused(std::string(kMaxSnapshotManifestBytes + 1, '\1'), "more than the limit of 4194304");
  std::string format = encoded;
  format[0] = 2;
  refused(format, "format: 2, not 1");

  SnapshotManifest bad = m;
  bad.version = 0;
  refused(bad.Encode(), "version: 0 is not positive");
  bad.version = -5;
  refused(bad.Encode(), "version: -5 is not positive");
  bad = m;
  bad.commit_info.assign(4097, 'c');
  refused(bad.Encode(), "commit_info: 4097 bytes, more than 4096");
  bad.commit_info.assign(4096, 'c');
  CHECK(SnapshotManifest::Decode(bad.Encode(), &d).ok());
  bad = m;
  bad.chunk_hashes.clear();
  refused(bad.Encode(), "chunk count: zero");
  // A count far beyond the bytes that follow, refused before anything is reserved.
  bad = m;
  bad.chunk_hashes.resize(1);
  std::string huge = bad.Encode();
  huge.resize(huge.size() - 33);
  huge += std::string("\xff\xff\xff\xff\x0f", 5);  // 2^32 - 1 chunks
  huge += std::string(32, 'h');
  refused(huge, "chunk count: 4294967295 hashes do not fit in the 32 bytes left");
}

// Not a test: a rough figure of VerifyChunk's speed (Debug + sanitizers in the test build).
TEST_CASE("snapshot chunk verify speed", "[.][snapshot_speed]") {
  SnapshotTree tree(20000);
  const auto view = tree.View(1);
  const Cut cut = CutVersion(*view, 2000);
  std::size_t raw = 0;
  for (const auto& run : cut.leaves) {
    for (const Leaf& l : run) raw += l.key.size() + l.value.size();
  }
  const auto start = std::chrono::steady_clock::now();
  VerifiedChunk last;
  VerifyPrefix(cut, Count(cut), &last);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("verify: 20000 leaves, %zu raw bytes in %.3f s: %.0f leaves/s, %.1f MB/s\n", raw, s,
              20000 / s, raw / s / 1e6);
}
