// The store's on-disk records: table prefixes, key builders, record encodings and the key
// index iterator, shared by merkle_store.cc and store_view.cc. Internal to store/ (not part of
// the store's interface; merkle_store.h documents the layout).
// Thread-safety: pure functions; a StateIterator is used by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/status.h>

#include "store/big_endian.h"
#include "store/kv.h"
#include "store/sha256.h"
#include "store/smt.h"
#include "store/status.h"
#include "store/varint.h"

namespace kairos::store {

inline constexpr char kChangesetPrefix = 'C';
inline constexpr char kCheckpointPrefix = 'K';
inline constexpr char kPagePrefix = 'N';
inline constexpr char kRootPrefix = 'R';
inline constexpr char kValuePrefix = 'V';
inline constexpr char kStatePrefix = 'S';
inline constexpr char kStalePagePrefix = 'Y';  // on-disk pages a version replaced

// The markers (M).
inline const std::string kLatestKey = "Mlatest";
inline const std::string kFormatKey = "Mformat";
inline const std::string kEarliestKey = "Mearliest";
inline const std::string kCommitInfoKey = "Mcommit_info";
// The on-disk layout. 1 (no marker): pages every version, P preimages, history-only V.
// 2: changesets, checkpointed pages, every value in V with its key, leaf slots with versions.
// 3: S records hold no version (the tree's leaf has it), so an update of an existing key
//    writes no S record.
inline constexpr int kFormatVersion = 3;

// Every read checks block checksums, so a corrupt table is reported, never served.
inline leveldb::ReadOptions VerifiedRead() {
  leveldb::ReadOptions o;
  o.verify_checksums = true;
  return o;
}

// A view's read (a query's, on a query thread): checked, and kept out of LevelDB's block cache,
// which holds the blocks that CheckTx, FinalizeBlock and Commit read; a past-height rebuild
// streams up to a checkpoint interval of changesets and would push those out.
inline leveldb::ReadOptions ViewRead() {
  leveldb::ReadOptions o = VerifiedRead();
  o.fill_cache = false;
  return o;
}

inline std::string_view AsView(const Hash& h) {
  return {reinterpret_cast<const char*>(h.data()), h.size()};
}

inline Hash HashFromView(std::string_view in) {
  Hash h{};
  std::copy_n(reinterpret_cast<const std::uint8_t*>(in.data()), h.size(), h.begin());
  return h;
}

// The key builders append to a buffer (reused where a block writes thousands) or return one.
inline void AppendPageKey(Version v, const NibblePath& path, std::string* out) {
  out->push_back(kPagePrefix);
  AppendBigEndian64(static_cast<std::uint64_t>(v), out);
  path.AppendTo(out);
}

inline std::string PageKey(Version v, const NibblePath& path) {
  std::string k;
  AppendPageKey(v, path, &k);
  return k;
}

inline std::string VersionKey(char prefix, Version v) {
  std::string k(1, prefix);
  AppendBigEndian64(static_cast<std::uint64_t>(v), &k);
  return k;
}

// Newest first: the inverted version makes a Seek land on the latest entry at or below it.
inline void AppendValueKey(const Hash& key_hash, Version v, std::string* out) {
  out->push_back(kValuePrefix);
  out->append(AsView(key_hash));
  AppendBigEndian64(~static_cast<std::uint64_t>(v), out);
}

inline std::string ValueKey(const Hash& key_hash, Version v) {
  std::string k;
  AppendValueKey(key_hash, v, &k);
  return k;
}

inline void AppendStateKey(std::string_view key, std::string* out) {
  out->push_back(kStatePrefix);
  out->append(key);
}

inline std::string StateKey(std::string_view key) {
  std::string k;
  AppendStateKey(key, &k);
  return k;
}

inline std::string EncodeRoot(const Slot& root, const Hash& hash) {
  std::string out(1, static_cast<char>(root.kind));
  out.append(AsView(hash));
  if (root.kind == Slot::Kind::kLeaf) {
    out.append(AsView(root.key_hash));  // the hash is the leaf hash
    AppendBigEndian64(static_cast<std::uint64_t>(root.version), &out);
  } else if (root.kind == Slot::Kind::kPage) {
    AppendBigEndian64(static_cast<std::uint64_t>(root.version), &out);
  }
  return out;
}

inline bool DecodeRoot(std::string_view in, Slot* root, Hash* hash) {
  if (in.size() < 33) return false;
  const auto kind = static_cast<Slot::Kind>(in[0]);
  *hash = HashFromView(in.substr(1, 32));
  in.remove_prefix(33);
  *root = Slot{};
  switch (kind) {
    case Slot::Kind::kEmpty: return in.empty();
    case Slot::Kind::kLeaf:
      if (in.size() != 40) return false;
      *root = Slot::LeafWithHash(HashFromView(in.substr(0, 32)), *hash,
                                 static_cast<Version>(ReadBigEndian64(in.substr(32))));
      return true;
    case Slot::Kind::kPage:
      if (in.size() != 8) return false;
      root->kind = Slot::Kind::kPage;
      root->hash = *hash;
      root->version = static_cast<Version>(ReadBigEndian64(in));
      return true;
  }
  return false;
}

inline Hash RootHashOf(const Slot& root) {
  return root.kind == Slot::Kind::kEmpty ? kEmptyHash : root.hash;
}

// The on-disk pages a version replaced: deleted once it falls below the replay base (Y).
struct StaleList {
  std::vector<std::string> keys;

  // Appends one page's entry to an encoded list: its key (as PageKey) after its length.
  static void Append(Version v, const NibblePath& path, std::string* out) {
    const std::size_t at = out->size();
    out->push_back('\0');
    AppendPageKey(v, path, out);
    (*out)[at] = static_cast<char>(out->size() - at - 1);
  }

  static bool Decode(std::string_view in, StaleList* out) {
    while (!in.empty()) {
      const auto len = static_cast<std::uint8_t>(in[0]);
      if (in.size() < 1u + len) return false;
      out->keys.emplace_back(in.substr(1, len));
      in.remove_prefix(1u + len);
    }
    return true;
  }
};

// A changeset entry: key hash, then 1 and the leaf hash, or 0 (deleted); then the version of
// the value it replaced (0: none), as a varint, and when not 0 the leaf hash it replaced.
// Replaying forward needs the new hashes; undoing a version (a past tree rebuilt from a newer
// checkpoint) the replaced ones and their versions; pruning the versions.
inline void AppendChange(const KeyUpdate& u, Version previous, const Hash& previous_leaf,
                         std::string* out) {
  out->append(AsView(u.key_hash));
  out->push_back(u.leaf_hash ? '\x01' : '\x00');
  if (u.leaf_hash) out->append(AsView(*u.leaf_hash));
  AppendUvarint(static_cast<std::uint64_t>(previous), out);
  if (previous > 0) out->append(AsView(previous_leaf));
}

// Decodes a changeset: its updates, and optionally each one's replaced version, or the updates
// that undo it (`undo`: the replaced leaf, with its version, or a delete of an inserted key).
inline bool DecodeChangeset(std::string_view in, std::vector<KeyUpdate>* out,
                            std::vector<Version>* previous = nullptr,
                            std::vector<KeyUpdate>* undo = nullptr) {
  out->clear();
  if (previous != nullptr) previous->clear();
  if (undo != nullptr) undo->clear();
  while (!in.empty()) {
    if (in.size() < 33) return false;
    KeyUpdate u{HashFromView(in.substr(0, 32)), std::nullopt};
    const char flag = in[32];
    in.remove_prefix(33);
    if (flag == 1) {
      if (in.size() < 32) return false;
      u.leaf_hash = HashFromView(in.substr(0, 32));
      in.remove_prefix(32);
    } else if (flag != 0) {
      return false;
    }
    std::uint64_t prev = 0;
    if (!ReadUvarint(&in, &prev)) return false;
    if (prev > static_cast<std::uint64_t>(std::numeric_limits<Version>::max())) return false;
    KeyUpdate back{u.key_hash, std::nullopt, static_cast<Version>(prev)};
    if (prev > 0) {
      if (in.size() < 32) return false;
      back.leaf_hash = HashFromView(in.substr(0, 32));
      in.remove_prefix(32);
    } else if (!u.leaf_hash) {
      return false;  // deleting an absent key is never recorded
    }
    if (!out->empty() && !(out->back().key_hash < u.key_hash)) return false;
    out->push_back(u);
    if (previous != nullptr) previous->push_back(static_cast<Version>(prev));
    if (undo != nullptr) undo->push_back(back);
  }
  return true;
}

// A V record: 1, varint key length, key, value; or 0 (a tombstone).

inline bool DecodeValueRecord(std::string_view in, std::string_view* key,
                              std::string_view* value) {
  if (in.empty() || in[0] != 1) return false;
  in.remove_prefix(1);
  std::uint64_t len = 0;
  if (!ReadUvarint(&in, &len) || in.size() < len) return false;
  *key = in.substr(0, len);
  *value = in.substr(len);
  return true;
}

inline Status FromLevelDb(const leveldb::Status& s, std::string_view context) {
  if (s.ok()) return Status::OK();
  std::string msg = std::string(context) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  return Status::IOError(msg);
}

// Iterates the key index (S) in key order; each value is loaded (the value cache, or the tree's
// leaf and then V) when asked for.
class StateIterator final : public KvIterator {
 public:
  using Loader = std::function<Status(std::string_view key, std::string* value)>;
  StateIterator(leveldb::Iterator* it, std::string_view start, std::string_view end, Loader load)
      : it_(it), end_(end.empty() ? std::string(1, kStatePrefix + 1) : StateKey(end)),
        load_(std::move(load)) {
    it_->Seek(StateKey(start));
  }
  bool Valid() const override {
    return status_.ok() && it_->Valid() && it_->key().compare(leveldb::Slice(end_)) < 0;
  }
  std::string_view key() const override {
    return {it_->key().data() + 1, it_->key().size() - 1};
  }
  std::string_view value() const override {
    if (!loaded_) {
      status_ = it_->value().empty()
                    ? load_(key(), &value_)
                    : Status::Corruption("a key index (S) record is not empty");
      loaded_ = true;
    }
    return value_;
  }
  void Next() override {
    it_->Next();
    loaded_ = false;
  }
  Status status() const override {
    if (!status_.ok()) return status_;
    return FromLevelDb(it_->status(), "iterating state");
  }

 private:
  std::unique_ptr<leveldb::Iterator> it_;
  std::string end_;
  Loader load_;
  mutable bool loaded_ = false;
  mutable std::string value_;
  mutable Status status_;
};

}  // namespace kairos::store
