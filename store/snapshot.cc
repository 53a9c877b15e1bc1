// State sync snapshot chunks and manifests: the codec, and the check of one chunk against the
// trusted root (snapshot.h).
//
// A chunk (format 1) is zlib (Z_BEST_SPEED) over its body:
//   body = u8 format (1) | u64 BE version | u32 BE index | varint leaf count
//          | if count > 0: path of the first leaf, path of the last leaf | leaves
//   path = varint step count (at most 256) | per step, leaf to root: u8 side (1: we are the
//          right child) | 32-byte sibling
//   leaf = varint key length | key | varint value length | value
// Leaves are in strictly increasing key-hash order. The key hash and leaf hash of a path are
// not sent: they are the first and last leaf's. Decompression is bounded: a compressed chunk
// above kMaxSnapshotChunkBytes is refused unread, and inflation stops (refused) once the body
// would pass kMaxSnapshotChunkBodyBytes. No byte may follow the stream or the last leaf.
//
// The manifest: u8 format (1) | u64 BE version | 32-byte root | varint commit info length |
// commit info | varint leaves | varint raw bytes | varint chunk count | 32-byte chunk hashes.
//
// Verification recomputes the root top-down (Recompute below): nodes on the first or last
// leaf's path take their off-path children from the path's siblings (outside the chunk's
// range) or build them from the chunk's leaves (inside it); every sibling of both paths is
// either used or checked against what the leaves build, so the returned paths are authenticated
// whole.
//
// Thread-safety: pure functions.
#include "store/snapshot.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
#include <span>

#include <boost/algorithm/hex.hpp>
#include <boost/endian/conversion.hpp>

#include "store/big_endian.h"
#include "store/varint.h"

namespace kairos::store {

namespace {

constexpr int kMaxDepth = 256;                   // bits of a key hash
constexpr std::size_t kMaxCommitInfoBytes = 4096;  // SnapshotManifest::commit_info
// A changed, dropped or added leaf, or a forged path: found as a recomputed root that is not the
// trusted one, or earlier, as a path's sibling that is not what the leaves build.
constexpr const char* kNoMatch = "its leaves and paths are not the tree's: ";

std::string Hex(const Hash& h) {
  std::string out;
  boost::algorithm::hex_lower(h.begin(), h.end(), std::back_inserter(out));
  return out;
}

// Bit `d` of a key hash read as a 256-bit big-endian number, most significant first: the side
// (1 = right) the key takes below the node at depth d.
inline int BitAt(const Hash& h, int d) { return (h[d / 8] >> (7 - d % 8)) & 1; }

// The first bit where two different key hashes differ.
int FirstDifferingBit(const Hash& a, const Hash& b) {
  for (int i = 0; i < 32; ++i) {
    const auto x = static_cast<std::uint8_t>(a[i] ^ b[i]);
    if (x != 0) return i * 8 + std::countl_zero(x);
  }
  return kMaxDepth;  // equal (callers never pass equal hashes)
}

// ---- encoding helpers

void AppendPath(const LeafPath& path, std::string* out) {
  AppendUvarint(path.steps.size(), out);
  for (const PathStep& step : path.steps) {
    out->push_back(step.we_are_right ? 1 : 0);
    out->append(reinterpret_cast<const char*>(step.sibling.data()), step.sibling.size());
  }
}

bool ReadBytes(std::string_view* in, std::size_t n, std::string_view* out) {
  if (in->size() < n) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

bool ReadHash(std::string_view* in, Hash* out) {
  std::string_view bytes;
  if (!ReadBytes(in, out->size(), &bytes)) return false;
  std::memcpy(out->data(), bytes.data(), out->size());
  return true;
}

// A varint length followed by that many bytes.
bool ReadLengthPrefixed(std::string_view* in, std::string_view* out) {
  std::uint64_t n = 0;
  if (!ReadUvarint(in, &n) || n > in->size()) return false;
  return ReadBytes(in, static_cast<std::size_t>(n), out);
}

Status ReadPath(std::string_view* in, const char* which, std::vector<PathStep>* steps) {
  std::uint64_t n = 0;
  if (!ReadUvarint(in, &n)) {
    return Status::InvalidArgument(std::string("the path of the ") + which +
                                   " leaf is truncated (step count)");
  }
  if (n > static_cast<std::uint64_t>(kMaxDepth)) {
    return Status::InvalidArgument(std::string("the path of the ") + which + " leaf has " +
                                   std::to_string(n) + " steps, more than 256");
  }
  if (n * 33 > in->size()) {
    return Status::InvalidArgument(std::string("the path of the ") + which +
                                   " leaf is truncated (" + std::to_string(n) + " steps)");
  }
  steps->resize(static_cast<std::size_t>(n));
  for (PathStep& step : *steps) {
    const auto side = static_cast<std::uint8_t>((*in)[0]);
    if (side > 1) {
      return Status::InvalidArgument(std::string("the path of the ") + which +
                                     " leaf has a step whose side is " + std::to_string(side) +
                                     ", not 0 or 1");
    }
    step.we_are_right = side == 1;
    in->remove_prefix(1);
    ReadHash(in, &step.sibling);  // the size was checked above
  }
  return Status::OK();
}

// ---- decompression

// Inflates `chunk` into `body`, refusing a body past kMaxSnapshotChunkBodyBytes without
// allocating more than that: the buffer grows by doubling up to the cap, and a stream that
// still has output once the cap is full is refused.
Status Inflate(std::string_view chunk, std::string* body) {
  if (chunk.size() > kMaxSnapshotChunkBytes) {
    return Status::InvalidArgument("it is " + std::to_string(chunk.size()) +
                                   " bytes compressed, more than the limit of " +
                                   std::to_string(kMaxSnapshotChunkBytes));
  }
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Status::InvalidArgument("zlib could not start inflating");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk.data()));
  zs.avail_in = static_cast<uInt>(chunk.size());

  constexpr std::size_t cap = kMaxSnapshotChunkBodyBytes;
  body->resize(std::min(cap, std::max<std::size_t>(64u << 10, chunk.size() * 4)));
  std::size_t produced = 0;
  for (;;) {
    if (produced == body->size()) {
      if (body->size() < cap) {
        body->resize(std::min(cap, body->size() * 2));
      } else {
        // Full at the cap: the stream must end here, with no more output.
        char probe;
        zs.next_out = reinterpret_cast<Bytef*>(&probe);
        zs.avail_out = 1;
        const int r = inflate(&zs, Z_NO_FLUSH);
        if (zs.avail_out == 0) {
          return Status::InvalidArgument("it decompresses past the limit of " +
                                         std::to_string(cap) + " bytes");
        }
        if (r == Z_STREAM_END) break;
        if (r == Z_OK || r == Z_BUF_ERROR) {
          return Status::InvalidArgument("its compressed stream is truncated");
        }
        return Status::InvalidArgument(std::string("it does not decompress (zlib: ") +
                                       (zs.msg != nullptr ? zs.msg : "error") + ")");
      }
    }
    zs.next_out = reinterpret_cast<Bytef*>(body->data() + produced);
    zs.avail_out = static_cast<uInt>(body->size() - produced);
    const int r = inflate(&zs, Z_NO_FLUSH);
    produced = body->size() - zs.avail_out;
    if (r == Z_STREAM_END) break;
    if (r == Z_OK) continue;
    if (r == Z_BUF_ERROR && zs.avail_out > 0) {
      return Status::InvalidArgument("its compressed stream is truncated");
    }
    if (r == Z_BUF_ERROR) continue;  // needs room: grow
    return Status::InvalidArgument(std::string("it does not decompress (zlib: ") +
                                   (zs.msg != nullptr ? zs.msg : "error") + ")");
  }
  if (zs.avail_in != 0) {
    return Status::InvalidArgument(std::to_string(zs.avail_in) +
                                   " bytes follow its compressed stream");
  }
  body->resize(produced);
  return Status::OK();
}

// ---- verification

// The chunk's leaves and its paths, and the top-down recomputation of the root from them.
// Leaves under one node form a contiguous run [lo, hi) of `leaves` (sorted), so no level copies
// any: each recursion takes indices into the one vector.
class Recompute {
 public:
  Recompute(std::span<const VerifiedLeaf> leaves, const std::vector<PathStep>& first,
            const std::vector<PathStep>& last)
      : leaves_(leaves),
        first_(first),
        last_(last),
        depth_first_(static_cast<int>(first.size())),
        depth_last_(static_cast<int>(last.size())) {}

  Status Root(Hash* root) { return Both(0, root); }

 private:
  const Hash& FirstKey() const { return leaves_.front().key_hash; }
  const Hash& LastKey() const { return leaves_.back().key_hash; }
  // The sibling at depth d of a path of `depth` steps (steps go leaf to root).
  static const Hash& SiblingAt(const std::vector<PathStep>& steps, int d) {
    return steps[steps.size() - 1 - static_cast<std::size_t>(d)].sibling;
  }
  // The first index in [lo, hi) whose key goes right at depth d (keys share the prefix above d).
  std::size_t SplitAt(std::size_t lo, std::size_t hi, int d) const {
    const auto it = std::partition_point(
        leaves_.begin() + static_cast<std::ptrdiff_t>(lo),
        leaves_.begin() + static_cast<std::ptrdiff_t>(hi),
        [d](const VerifiedLeaf& leaf) { return BitAt(leaf.key_hash, d) == 0; });
    return static_cast<std::size_t>(it - leaves_.begin());
  }
  static Status Disagree(const char* which, int d, const char* what) {
    return Status::InvalidArgument(std::string(kNoMatch) + "the path of the " + which +
                                   " leaf has a sibling at depth " + std::to_string(d) +
                                   " that is not " + what);
  }

  // The node at depth d on both paths: it holds every leaf of the chunk.
  Status Both(int d, Hash* out) {
    if (d == depth_first_ || d == depth_last_) {
      if (leaves_.size() == 1 && depth_first_ == depth_last_) {
        *out = leaves_.front().leaf_hash;
        return Status::OK();
      }
      return Status::InvalidArgument(
          "the path of the " + std::string(d == depth_first_ ? "first" : "last") +
          " leaf ends at depth " + std::to_string(d) +
          ", where the subtree holds other leaves of the chunk");
    }
    const int bf = BitAt(FirstKey(), d);
    const int bl = BitAt(LastKey(), d);
    Hash left, right;
    if (bf == 1 && bl == 1) {  // the left child is left of the range
      left = SiblingAt(first_, d);
      if (SiblingAt(last_, d) != left) return Disagree("last", d, "the first leaf's");
      if (Status s = Both(d + 1, &right); !s.ok()) return s;
    } else if (bf == 0 && bl == 0) {  // the right child is right of the range
      right = SiblingAt(last_, d);
      if (SiblingAt(first_, d) != right) return Disagree("first", d, "the last leaf's");
      if (Status s = Both(d + 1, &left); !s.ok()) return s;
    } else {  // sorted and different: the first goes left, the last right
      const std::size_t split = SplitAt(0, leaves_.size(), d);
      if (Status s = OnePath(d + 1, 0, split, true, &left); !s.ok()) return s;
      if (Status s = OnePath(d + 1, split, leaves_.size(), false, &right); !s.ok()) return s;
      if (SiblingAt(first_, d) != right) {
        return Disagree("first", d, "what the chunk's leaves right of it build");
      }
      if (SiblingAt(last_, d) != left) {
        return Disagree("last", d, "what the chunk's leaves left of it build");
      }
    }
    *out = InnerHash(left, right);
    return Status::OK();
  }

  // The node at depth d on one end's path only (the first leaf's, whose run starts at lo, or
  // the last's, whose run ends at hi), holding leaves [lo, hi).
  Status OnePath(int d, std::size_t lo, std::size_t hi, bool first_end, Hash* out) {
    const std::vector<PathStep>& steps = first_end ? first_ : last_;
    const char* which = first_end ? "first" : "last";
    if (d == static_cast<int>(steps.size())) {
      if (hi - lo != 1) {
        return Status::InvalidArgument(std::string("the path of the ") + which +
                                       " leaf ends at depth " + std::to_string(d) +
                                       ", where the subtree holds other leaves of the chunk");
      }
      *out = leaves_[lo].leaf_hash;
      return Status::OK();
    }
    const int bit = BitAt(first_end ? FirstKey() : LastKey(), d);
    Hash child[2];  // left, right
    if (bit == (first_end ? 1 : 0)) {
      // The other child is outside the range (left of the first leaf, right of the last).
      child[1 - bit] = SiblingAt(steps, d);
      if (Status s = OnePath(d + 1, lo, hi, first_end, &child[bit]); !s.ok()) return s;
    } else {
      // The other child is inside the range: built from the leaves.
      const std::size_t split = SplitAt(lo, hi, d);
      const bool left = bit == 0;
      if (Status s = OnePath(d + 1, left ? lo : split, left ? split : hi, first_end, &child[bit]);
          !s.ok()) {
        return s;
      }
      child[1 - bit] = left ? Build(d + 1, split, hi) : Build(d + 1, lo, split);
      if (SiblingAt(steps, d) != child[1 - bit]) {
        return Disagree(which, d,
                        left ? "what the chunk's leaves right of it build"
                             : "what the chunk's leaves left of it build");
      }
    }
    *out = InnerHash(child[0], child[1]);
    return Status::OK();
  }

  // The subtree at depth d holding exactly leaves [lo, hi) (which share its d-bit prefix), as
  // the tree hashes it: empty, one leaf collapsed, or the node where they first part, lifted
  // through the single-child nodes above it.
  Hash Build(int d, std::size_t lo, std::size_t hi) const {
    if (lo == hi) return kEmptyHash;
    if (hi - lo == 1) return leaves_[lo].leaf_hash;
    const Hash& key = leaves_[lo].key_hash;
    const int c = FirstDifferingBit(key, leaves_[hi - 1].key_hash);
    const std::size_t split = SplitAt(lo, hi, c);
    Hash h = InnerHash(Build(c + 1, lo, split), Build(c + 1, split, hi));
    for (int l = c - 1; l >= d; --l) {
      h = BitAt(key, l) == 1 ? InnerHash(kEmptyHash, h) : InnerHash(h, kEmptyHash);
    }
    return h;
  }

  std::span<const VerifiedLeaf> leaves_;
  const std::vector<PathStep>& first_;
  const std::vector<PathStep>& last_;
  int depth_first_;
  int depth_last_;
};

// Whether a path's sides are the ones its key hash takes.
Status CheckSides(const std::vector<PathStep>& steps, const Hash& key_hash, const char* which) {
  const int depth = static_cast<int>(steps.size());
  for (int d = 0; d < depth; ++d) {
    if (steps[static_cast<std::size_t>(depth - 1 - d)].we_are_right != (BitAt(key_hash, d) == 1)) {
      return Status::InvalidArgument(std::string("the path of the ") + which +
                                     " leaf goes the wrong way at depth " + std::to_string(d));
    }
  }
  return Status::OK();
}

// No leaf lies between `previous` (the last leaf of the chunk before) and `first` (this
// chunk's first), both authenticated: below the depth s where they part, every subtree right
// of the previous leaf's path and left of the first leaf's path is empty. Only the siblings the
// recomputations used are read (the previous path's right siblings, the first path's left).
bool Meets(const LeafPath& previous, const LeafPath& first) {
  const int s = FirstDifferingBit(previous.key_hash, first.key_hash);
  const int depth_previous = static_cast<int>(previous.steps.size());
  for (int d = s + 1; d < depth_previous; ++d) {
    const PathStep& step = previous.steps[static_cast<std::size_t>(depth_previous - 1 - d)];
    if (!step.we_are_right && step.sibling != kEmptyHash) return false;
  }
  const int depth_first = static_cast<int>(first.steps.size());
  for (int d = s + 1; d < depth_first; ++d) {
    const PathStep& step = first.steps[static_cast<std::size_t>(depth_first - 1 - d)];
    if (step.we_are_right && step.sibling != kEmptyHash) return false;
  }
  return true;
}

// VerifyChunk without the message's prefix; fills `out` as it goes (cleared on failure).
Status VerifyBody(std::string_view chunk, const Hash& root, Version version,
                  std::uint32_t index, std::uint32_t count, const LeafPath* previous_last,
                  VerifiedChunk* out) {
  if (count == 0 || index >= count) {
    return Status::InvalidArgument("index " + std::to_string(index) + " is not below the count " +
                                   std::to_string(count));
  }
  if (index > 0 && previous_last == nullptr) {
    return Status::InvalidArgument("the previous chunk's last path is missing");
  }
  if (Status s = Inflate(chunk, &out->body); !s.ok()) return s;

  std::string_view in = out->body;
  std::string_view header;
  if (!ReadBytes(&in, 1 + 8 + 4, &header)) {
    return Status::InvalidArgument("its header is truncated");
  }
  const auto format = static_cast<std::uint8_t>(header[0]);
  if (format != kSnapshotFormat) {
    return Status::InvalidArgument("its format is " + std::to_string(format) + ", not " +
                                   std::to_string(kSnapshotFormat));
  }
  const std::uint64_t chunk_version = ReadBigEndian64(header.substr(1));
  if (chunk_version != static_cast<std::uint64_t>(version)) {
    return Status::InvalidArgument("its header names version " + std::to_string(chunk_version) +
                                   ", not the snapshot's " + std::to_string(version));
  }
  const std::uint32_t chunk_index =
      boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(header.data() + 9));
  if (chunk_index != index) {
    return Status::InvalidArgument("its header names index " + std::to_string(chunk_index) +
                                   ", not " + std::to_string(index));
  }
  std::uint64_t n = 0;
  if (!ReadUvarint(&in, &n)) return Status::InvalidArgument("its leaf count is truncated");

  if (n == 0) {
    if (!in.empty()) {
      return Status::InvalidArgument(std::to_string(in.size()) + " bytes follow its leaves");
    }
    if (count != 1) {
      return Status::InvalidArgument("it has no leaf, but only the empty tree's single chunk "
                                     "may have none (" + std::to_string(count) + " chunks)");
    }
    if (root != kEmptyHash) {
      return Status::InvalidArgument("it has no leaf (the empty tree) but the root is " +
                                     Hex(root));
    }
    return Status::OK();
  }

  std::vector<PathStep> first_steps, last_steps;
  if (Status s = ReadPath(&in, "first", &first_steps); !s.ok()) return s;
  if (Status s = ReadPath(&in, "last", &last_steps); !s.ok()) return s;
  if (n > kMaxSnapshotChunkLeaves) {
    return Status::InvalidArgument("its leaf count " + std::to_string(n) + " is more than " +
                                   std::to_string(kMaxSnapshotChunkLeaves));
  }
  if (n > in.size() / 2) {  // a leaf takes at least two bytes
    return Status::InvalidArgument("its leaf count " + std::to_string(n) + " is more than its " +
                                   std::to_string(in.size()) + " remaining bytes can hold");
  }
  out->leaves.reserve(static_cast<std::size_t>(n));
  for (std::uint64_t i = 0; i < n; ++i) {
    VerifiedLeaf leaf;
    if (!ReadLengthPrefixed(&in, &leaf.key)) {
      return Status::InvalidArgument("leaf " + std::to_string(i) + " is truncated (key)");
    }
    if (!ReadLengthPrefixed(&in, &leaf.value)) {
      return Status::InvalidArgument("leaf " + std::to_string(i) + " is truncated (value)");
    }
    leaf.key_hash = Sha256Of(leaf.key);
    leaf.leaf_hash = LeafHash(leaf.key_hash, Sha256Of(leaf.value));
    if (!out->leaves.empty() && !(out->leaves.back().key_hash < leaf.key_hash)) {
      return Status::InvalidArgument("leaf " + std::to_string(i) +
                                     " is not after the one before in key-hash order");
    }
    out->leaves.push_back(leaf);
  }
  if (!in.empty()) {
    return Status::InvalidArgument(std::to_string(in.size()) + " bytes follow its leaves");
  }

  const VerifiedLeaf& first = out->leaves.front();
  const VerifiedLeaf& last = out->leaves.back();
  if (Status s = CheckSides(first_steps, first.key_hash, "first"); !s.ok()) return s;
  if (Status s = CheckSides(last_steps, last.key_hash, "last"); !s.ok()) return s;
  Hash recomputed{};
  if (Status s = Recompute(out->leaves, first_steps, last_steps).Root(&recomputed); !s.ok()) {
    return s;
  }
  if (recomputed != root) {
    return Status::InvalidArgument(std::string(kNoMatch) +
                                   "the root recomputed from its leaves and paths is " +
                                   Hex(recomputed) + ", not the trusted " + Hex(root));
  }
  out->first = LeafPath{first.key_hash, first.leaf_hash, std::move(first_steps), 0};
  out->last = LeafPath{last.key_hash, last.leaf_hash, std::move(last_steps), 0};

  // The paths are authenticated: now the range's ends.
  if (index == 0) {
    for (const PathStep& step : out->first.steps) {
      if (step.we_are_right && step.sibling != kEmptyHash) {
        return Status::InvalidArgument(
            "the first chunk does not begin at the leftmost leaf: a leaf lies left of its first");
      }
    }
  } else {
    if (!(previous_last->key_hash < first.key_hash)) {
      return Status::InvalidArgument("its first leaf is not after the last leaf of chunk " +
                                     std::to_string(index - 1));
    }
    if (!Meets(*previous_last, out->first)) {
      return Status::InvalidArgument("chunk " + std::to_string(index) + " does not meet chunk " +
                                     std::to_string(index - 1) + ": a leaf lies between them");
    }
  }
  if (index == count - 1) {
    for (const PathStep& step : out->last.steps) {
      if (!step.we_are_right && step.sibling != kEmptyHash) {
        return Status::InvalidArgument(
            "the last chunk does not end at the rightmost leaf: a leaf lies right of its last");
      }
    }
  }
  return Status::OK();
}

}  // namespace

// ---- ChunkBuilder

ChunkBuilder::ChunkBuilder(Version version, std::uint32_t index)
    : version_(version), index_(index) {}

void ChunkBuilder::Add(std::string_view key, std::string_view value) {
  const Hash key_hash = Sha256Of(key);
  if (leaves_ == 0) first_key_hash_ = key_hash;
  last_key_hash_ = key_hash;
  AppendUvarint(key.size(), &leaves_bytes_);
  leaves_bytes_.append(key);
  AppendUvarint(value.size(), &leaves_bytes_);
  leaves_bytes_.append(value);
  ++leaves_;
  raw_bytes_ += key.size() + value.size();
}

Result<std::string> ChunkBuilder::Finish(const LeafPath& first, const LeafPath& last) && {
  std::string body;
  body.push_back(static_cast<char>(kSnapshotFormat));
  AppendBigEndian64(static_cast<std::uint64_t>(version_), &body);
  unsigned char index[4];
  boost::endian::store_big_u32(index, index_);
  body.append(reinterpret_cast<const char*>(index), sizeof index);
  AppendUvarint(leaves_, &body);
  if (leaves_ > 0) {
    if (first.key_hash != first_key_hash_ || last.key_hash != last_key_hash_) {
      return Status::InvalidArgument("snapshot chunk " + std::to_string(index_) +
                                     ": the paths do not name its first and last keys");
    }
    if (first.steps.size() > kMaxDepth || last.steps.size() > kMaxDepth) {
      return Status::InvalidArgument("snapshot chunk " + std::to_string(index_) +
                                     ": a path has more than 256 steps");
    }
    AppendPath(first, &body);
    AppendPath(last, &body);
    body.append(leaves_bytes_);
    std::string().swap(leaves_bytes_);
  }
  std::string out(compressBound(static_cast<uLong>(body.size())), '\0');
  uLongf out_size = static_cast<uLongf>(out.size());
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &out_size,
                reinterpret_cast<const Bytef*>(body.data()), static_cast<uLong>(body.size()),
                Z_BEST_SPEED) != Z_OK) {
    return Status::InvalidArgument("snapshot chunk " + std::to_string(index_) +
                                   ": zlib could not compress it");
  }
  out.resize(out_size);
  if (out.size() > kMaxSnapshotChunkBytes) {
    return Status::InvalidArgument("snapshot chunk " + std::to_string(index_) + ": " +
                                   std::to_string(out.size()) +
                                   " bytes compressed, more than the limit of " +
                                   std::to_string(kMaxSnapshotChunkBytes));
  }
  return out;
}

// ---- VerifyChunk

Status VerifyChunk(std::string_view chunk, const Hash& root, Version version, std::uint32_t index,
                   std::uint32_t count, const LeafPath* previous_last, VerifiedChunk* out) {
  *out = VerifiedChunk{};
  const Status s = VerifyBody(chunk, root, version, index, count, previous_last, out);
  if (s.ok()) return s;
  *out = VerifiedChunk{};
  return Status::InvalidArgument("snapshot chunk " + std::to_string(index) + ": " + s.message());
}

// ---- SnapshotManifest

std::string SnapshotManifest::Encode() const {
  std::string out;
  out.push_back(static_cast<char>(kSnapshotFormat));
  AppendBigEndian64(static_cast<std::uint64_t>(version), &out);
  out.append(ToBytes(root));
  AppendUvarint(commit_info.size(), &out);
  out.append(commit_info);
  AppendUvarint(leaves, &out);
  AppendUvarint(raw_bytes, &out);
  AppendUvarint(chunk_hashes.size(), &out);
  for (const Hash& h : chunk_hashes) out.append(ToBytes(h));
  return out;
}

Status SnapshotManifest::Decode(std::string_view in, SnapshotManifest* out) {
  auto refuse = [](const std::string& what) {
    return Status::InvalidArgument("snapshot manifest: " + what);
  };
  if (in.size() > kMaxSnapshotManifestBytes) {
    return refuse("it is " + std::to_string(in.size()) + " bytes, more than the limit of " +
                  std::to_string(kMaxSnapshotManifestBytes));
  }
  SnapshotManifest m;
  std::string_view field;
  if (!ReadBytes(&in, 1, &field)) return refuse("format: truncated");
  if (static_cast<std::uint8_t>(field[0]) != kSnapshotFormat) {
    return refuse("format: " + std::to_string(static_cast<std::uint8_t>(field[0])) + ", not " +
                  std::to_string(kSnapshotFormat));
  }
  if (!ReadBytes(&in, 8, &field)) return refuse("version: truncated");
  m.version = static_cast<Version>(ReadBigEndian64(field));
  if (m.version <= 0) return refuse("version: " + std::to_string(m.version) + " is not positive");
  if (!ReadHash(&in, &m.root)) return refuse("root: truncated");
  std::uint64_t n = 0;
  if (!ReadUvarint(&in, &n)) return refuse("commit_info: truncated length");
  if (n > kMaxCommitInfoBytes) {
    return refuse("commit_info: " + std::to_string(n) + " bytes, more than " +
                  std::to_string(kMaxCommitInfoBytes));
  }
  if (!ReadBytes(&in, static_cast<std::size_t>(n), &field)) return refuse("commit_info: truncated");
  m.commit_info.assign(field);
  if (!ReadUvarint(&in, &m.leaves)) return refuse("leaves: truncated");
  if (!ReadUvarint(&in, &m.raw_bytes)) return refuse("raw_bytes: truncated");
  if (!ReadUvarint(&in, &n)) return refuse("chunk count: truncated");
  if (n == 0) return refuse("chunk count: zero (a snapshot has at least one chunk)");
  if (n > in.size() / 32) {
    return refuse("chunk count: " + std::to_string(n) + " hashes do not fit in the " +
                  std::to_string(in.size()) + " bytes left");
  }
  m.chunk_hashes.resize(static_cast<std::size_t>(n));
  for (Hash& h : m.chunk_hashes) ReadHash(&in, &h);  // the size was checked above
  if (!in.empty()) {
    return refuse(std::to_string(in.size()) + " bytes follow the chunk hashes");
  }
  *out = std::move(m);
  return Status::OK();
}

}  // namespace kairos::store
