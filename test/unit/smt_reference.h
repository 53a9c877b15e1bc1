// The reference the store tests check against: the SmtSpec root of a set of leaves, computed
// from scratch by the definition (no pages, no caching, no history).
#pragma once

#include <utility>
#include <vector>

#include "store/smt.h"

namespace kairos::test {

inline bool BitAt(const store::Hash& h, int i) { return (h[i / 8] >> (7 - i % 8)) & 1; }

// `leaves`: (key hash, value hash) pairs, distinct key hashes.
inline store::Hash ReferenceRoot(const std::vector<std::pair<store::Hash, store::Hash>>& leaves,
                                 int depth = 0) {
  if (leaves.empty()) return store::kEmptyHash;
  if (leaves.size() == 1) return store::LeafHash(leaves[0].first, leaves[0].second);
  std::vector<std::pair<store::Hash, store::Hash>> left, right;
  for (const auto& l : leaves) (BitAt(l.first, depth) ? right : left).push_back(l);
  return store::InnerHash(ReferenceRoot(left, depth + 1), ReferenceRoot(right, depth + 1));
}

}  // namespace kairos::test
