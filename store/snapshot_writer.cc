#include "store/snapshot_writer.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace kairos::store {

namespace {

// The authenticated path of a leaf of `view`, by a Prove (after the walk: the walk offered its
// tree, if it rebuilt one, to the store's rebuild cache, where this finds it).
Status ProvenPathOf(const StoreView& view, std::string_view key, LeafPath* out) {
  KeyProof proof;
  if (Status s = view.Prove(key, &proof); !s.ok()) return s;
  if (!proof.exist) {
    return Status::Corruption("a key the snapshot walk visited has no existence proof");
  }
  *out = std::move(proof.exist->path);
  return Status::OK();
}

}  // namespace

Status WriteSnapshot(const StoreView& view, std::size_t chunk_bytes, const ChunkSink& sink,
                     SnapshotManifest* manifest, const WalkPause& pause) {
  if (chunk_bytes < 1024 || chunk_bytes > kMaxSnapshotChunkTarget) {
    return Status::InvalidArgument("a snapshot's chunk size must be between 1 KiB and " +
                                   std::to_string(kMaxSnapshotChunkTarget) + " bytes");
  }
  *manifest = SnapshotManifest{};
  manifest->version = view.version();
  manifest->root = view.root_hash();
  manifest->commit_info = view.commit_info();
  std::optional<ChunkBuilder> chunk;
  std::string first_key, last_key;
  Hash first_key_hash{}, last_key_hash{};
  // Closes the chunk: `path_of` gives the paths of its first and last leaf.
  using PathOf = std::function<Status(std::string_view key, const Hash& key_hash, LeafPath*)>;
  auto close = [&](const PathOf& path_of) -> Status {
    if (pause) {
      if (Status s = pause(); !s.ok()) return s;
    }
    LeafPath first, last;
    if (chunk->leaves() > 0) {
      if (Status s = path_of(first_key, first_key_hash, &first); !s.ok()) return s;
      if (Status s = path_of(last_key, last_key_hash, &last); !s.ok()) return s;
    }
    const auto index = static_cast<std::uint32_t>(manifest->chunk_hashes.size());
    Result<std::string> bytes = std::move(*chunk).Finish(first, last);
    chunk.reset();
    if (!bytes.ok()) return bytes.status();
    manifest->chunk_hashes.push_back(Sha256Of(*bytes));
    if (pause) {
      if (Status s = pause(); !s.ok()) return s;
    }
    return sink(index, *bytes);
  };
  Status walked = view.ForEachLeafWithPaths([&](const StoreLeaf& leaf,
                                                const WalkPathOf& walk_path_of) -> Status {
    if (pause) {
      if (Status s = pause(); !s.ok()) return s;
    }
    const std::size_t bytes = leaf.key.size() + leaf.value.size();
    // Cut before the leaf that would pass chunk_bytes: a chunk passes it only when one leaf
    // alone does.
    if (chunk && (chunk->raw_bytes() + bytes > chunk_bytes ||
                  chunk->leaves() == kMaxSnapshotChunkLeaves)) {
      if (Status s = close([&](std::string_view, const Hash& key_hash, LeafPath* path) {
            return walk_path_of(key_hash, path);
          });
          !s.ok()) {
        return s;
      }
    }
    if (!chunk) {
      chunk.emplace(view.version(), static_cast<std::uint32_t>(manifest->chunk_hashes.size()));
      first_key.assign(leaf.key);
      first_key_hash = leaf.key_hash;
    }
    chunk->Add(leaf.key, leaf.value);
    last_key.assign(leaf.key);
    last_key_hash = leaf.key_hash;
    ++manifest->leaves;
    manifest->raw_bytes += bytes;
    return Status::OK();
  }, kEmptyHash, pause);
  if (!walked.ok()) return walked;
  // The last, partly filled chunk; or the empty tree's single chunk.
  if (!chunk && manifest->chunk_hashes.empty()) chunk.emplace(view.version(), 0);
  if (chunk) {
    return close([&](std::string_view key, const Hash&, LeafPath* path) {
      return ProvenPathOf(view, key, path);
    });
  }
  return Status::OK();
}

}  // namespace kairos::store
