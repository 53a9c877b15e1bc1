// Writes a state sync snapshot (store/snapshot.h, format 1) of one committed version, from a
// view: the walk of its tree, cut into chunks.
// Thread-safety: runs on any thread (a view may be read from any), beside commits.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "store/merkle_store.h"
#include "store/snapshot.h"

namespace kairos::store {

// Called once per chunk, in order; a non-OK status ends the write, which returns it.
using ChunkSink = std::function<Status(std::uint32_t index, std::string_view chunk)>;

// The largest chunk_bytes: with one leaf of the largest value a chain may set beside it, a
// compressed chunk stays under CometBFT's limit (kMaxSnapshotChunkBytes).
inline constexpr std::size_t kMaxSnapshotChunkTarget = 12u << 20;

// Walks every leaf of `view`'s version (StoreView::ForEachLeaf: authenticated by its root),
// cuts a chunk before the leaf that would take its keys and values past `chunk_bytes`
// (1 KiB .. kMaxSnapshotChunkTarget; one leaf larger than that is a chunk alone), proves its
// first and last leaf (in the walk's own tree: ForEachLeafWithPaths), hands it to `sink` and
// fills `manifest` (the commit info is the view's: make the view of the latest version, right
// after its commit). `pause` (may be empty) is called between units of work: before each leaf,
// before each chunk is proven, compressed and handed to the sink, and between slices of the tree
// rebuild a walk makes when its version has left memory (StoreView::ForEachLeafWithPaths). It
// may block, to keep the write off the CPU while the node works on a block (app::BlockGate); a
// non-OK status (cancelled) ends the write. Memory: one chunk.
Status WriteSnapshot(const StoreView& view, std::size_t chunk_bytes, const ChunkSink& sink,
                     SnapshotManifest* manifest, const WalkPause& pause = {});

}  // namespace kairos::store
