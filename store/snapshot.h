// State sync snapshots of one version of the store: the chunk format, its codec, and the
// verification of a chunk on its own against the version's root (the app hash a light client
// trusts). Format 1, documented in store/README.md ("Snapshots").
//
// A snapshot is every leaf (key, value) of the version in key-hash order (the tree's order, so
// each chunk is a contiguous run of leaves, a range of key hashes), cut into chunks of at most
// about `chunk_bytes` of keys and values. A chunk carries, besides its leaves, the Merkle paths
// of its first and last leaf. From those and its leaves alone the root is recomputed: the
// subtrees left of the first leaf and right of the last are the paths' siblings, every subtree
// between them is built from the chunk's leaves. A chunk that recomputes the root therefore
// holds exactly the leaves the tree has from its first to its last, no more and none fewer.
// Consecutive chunks must meet: the last leaf of one and the first of the next are neighbours
// in the tree (no leaf between them, shown by the empty siblings of their authenticated
// paths); the first chunk starts at the leftmost leaf and the last ends at the rightmost. So
// the chunks, each checked on arrival, are the whole tree. An empty tree is one chunk with no
// leaf (root: 32 zero bytes).
//
// The manifest (the ABCI snapshot's metadata) names the version, its root, the app's commit
// info (kept beside the tree, e.g. the last block time; see MerkleStore::Stage) and each
// chunk's SHA-256: a chunk whose bytes are not the manifest's is a bad sender's, found before
// anything is decompressed.
//
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/sha256.h"
#include "store/smt.h"
#include "store/status.h"

namespace kairos::store {

inline constexpr std::uint32_t kSnapshotFormat = 1;
// CometBFT refuses chunks of 16 MB or more (p2p message limit): the largest compressed chunk
// a snapshot may hold, and the largest a restore accepts.
inline constexpr std::size_t kMaxSnapshotChunkBytes = (16u << 20) - (64u << 10);
// The largest chunk body (decompressed) a restore accepts: a chunk is cut once its keys and
// values pass chunk_bytes (at most kMaxSnapshotChunkBytes), and one leaf may pass it by its own
// size (bounded by the chain's value limit, far below this).
inline constexpr std::size_t kMaxSnapshotChunkBodyBytes = 64u << 20;
// The most leaves a chunk may hold (the writer cuts there too): what a restore allocates for one
// chunk before its proof is checked stays bounded (~200 MB), whatever count a chunk claims.
inline constexpr std::uint64_t kMaxSnapshotChunkLeaves = 1u << 21;

// Accumulates one chunk's leaves (in key-hash order) and encodes it.
class ChunkBuilder {
 public:
  // A chunk of the snapshot of `version`, at position `index`.
  ChunkBuilder(Version version, std::uint32_t index);
  void Add(std::string_view key, std::string_view value);
  std::size_t leaves() const { return leaves_; }
  // Bytes of keys and values added (what chunk_bytes bounds).
  std::size_t raw_bytes() const { return raw_bytes_; }
  // The chunk: its header, the paths of its first and last leaf (REQUIRES: the paths of the
  // first and last leaf added, leaf to root; ignored when no leaf was added), and the leaves,
  // compressed (zlib, Z_BEST_SPEED: deterministic for one zlib build, so honest nodes of one
  // release serve byte-identical chunks). InvalidArgument when the paths do not name the first
  // and last keys added or the result would pass kMaxSnapshotChunkBytes.
  Result<std::string> Finish(const LeafPath& first, const LeafPath& last) &&;

 private:
  Version version_;
  std::uint32_t index_;
  std::string leaves_bytes_;
  std::size_t leaves_ = 0;
  std::size_t raw_bytes_ = 0;
  Hash first_key_hash_{};
  Hash last_key_hash_{};
};

// One leaf of a verified chunk. `key` and `value` point into VerifiedChunk::body.
struct VerifiedLeaf {
  Hash key_hash;   // sha256(key)
  Hash leaf_hash;  // LeafHash(key_hash, sha256(value))
  std::string_view key;
  std::string_view value;
};

struct VerifiedChunk {
  std::string body;  // the decompressed chunk (the leaves point into it)
  std::vector<VerifiedLeaf> leaves;
  // The authenticated paths of the first and last leaf (none for the empty tree's chunk): the
  // next chunk's check needs `last`.
  LeafPath first;
  LeafPath last;
};

// Checks `chunk`, position `index` of the `count` chunks of a snapshot of `version` whose root
// is `root`, and decodes it into `out`. `previous_last`: the `last` path of chunk index - 1 as
// its own check returned it (nullptr for index 0). InvalidArgument, naming the chunk and what is
// wrong, when:
//  - it does not decompress, or decompresses past kMaxSnapshotChunkBodyBytes, or is malformed;
//  - its header names another version or index (a chunk of another snapshot, or moved);
//  - its leaves are not in strictly increasing key-hash order, or it has none (but for the
//    empty tree's single chunk), or its paths do not name its first and last leaf;
//  - the root recomputed from its paths and leaves is not `root` (a changed, dropped or added
//    key or value, or a forged path);
//  - it does not meet the previous chunk (a leaf between the previous chunk's last and this
//    chunk's first), the first chunk does not begin at the leftmost leaf, or the last
//    (index == count - 1) does not end at the rightmost.
// Nothing is trusted before it returns OK.
Status VerifyChunk(std::string_view chunk, const Hash& root, Version version, std::uint32_t index,
                   std::uint32_t count, const LeafPath* previous_last, VerifiedChunk* out);

// The ABCI snapshot's metadata.
struct SnapshotManifest {
  Version version = 0;
  Hash root{};
  std::string commit_info;  // MerkleStore::commit_info of the version (not under the root)
  std::uint64_t leaves = 0;
  std::uint64_t raw_bytes = 0;  // keys and values
  std::vector<Hash> chunk_hashes;  // sha256 of each chunk's bytes, in order

  std::string Encode() const;
  // InvalidArgument naming the field when malformed (an outsider offers it): at most
  // kMaxSnapshotManifestBytes, at least one chunk, version > 0, commit info at most 4 KiB.
  static Status Decode(std::string_view in, SnapshotManifest* out);
};
// CometBFT limits a snapshot's metadata to 4 MB on the network.
inline constexpr std::size_t kMaxSnapshotManifestBytes = 4u << 20;

}  // namespace kairos::store
