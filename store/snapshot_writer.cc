#include "store/snapshot_writer.h"

#include <optional>
#include <string>
#include <utility>

namespace kairos::store {

namespace {

// The authenticated path of a leaf of `view` (the walk just visited it).
Status LeafPathOf(const StoreView& view, std::string_view key, LeafPath* out) {
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
                     SnapshotManifest* manifest) {
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
  auto close = [&]() -> Status {
    LeafPath first, last;
    if (chunk->leaves() > 0) {
      if (Status s = LeafPathOf(view, first_key, &first); !s.ok()) return s;
      if (Status s = LeafPathOf(view, last_key, &last); !s.ok()) return s;
    }
    const auto index = static_cast<std::uint32_t>(manifest->chunk_hashes.size());
    Result<std::string> bytes = std::move(*chunk).Finish(first, last);
    chunk.reset();
    if (!bytes.ok()) return bytes.status();
    manifest->chunk_hashes.push_back(Sha256Of(*bytes));
    return sink(index, *bytes);
  };
  Status walked = view.ForEachLeaf([&](const StoreLeaf& leaf) -> Status {
    const std::size_t bytes = leaf.key.size() + leaf.value.size();
    // Cut before the leaf that would pass chunk_bytes: a chunk passes it only when one leaf
    // alone does.
    if (chunk && (chunk->raw_bytes() + bytes > chunk_bytes ||
                  chunk->leaves() == kMaxSnapshotChunkLeaves)) {
      if (Status s = close(); !s.ok()) return s;
    }
    if (!chunk) {
      chunk.emplace(view.version(), static_cast<std::uint32_t>(manifest->chunk_hashes.size()));
      first_key.assign(leaf.key);
    }
    chunk->Add(leaf.key, leaf.value);
    last_key.assign(leaf.key);
    ++manifest->leaves;
    manifest->raw_bytes += bytes;
    return Status::OK();
  });
  if (!walked.ok()) return walked;
  // The last, partly filled chunk; or the empty tree's single chunk.
  if (!chunk && manifest->chunk_hashes.empty()) chunk.emplace(view.version(), 0);
  if (chunk) return close();
  return Status::OK();
}

}  // namespace kairos::store
