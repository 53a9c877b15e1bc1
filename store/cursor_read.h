// One exact read through an iterator its caller keeps: how a view reads tree pages and values
// (MerkleStore::LoadDiskPage, ReadLeafValue). Every Get that consults more than one table counts
// towards a LevelDB seek compaction, an iterator's reads only through its read sampling (about
// once per MB read), and a snapshot's walk makes millions of such reads (docs/benchmarks.md,
// session 22). Internal to store/.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <leveldb/db.h>
#include <leveldb/iterator.h>

namespace kairos::store {

// The value of `key`, through `*cursor` (made in `db` with `read` when null, and then kept by
// the caller for its next reads, which so share `read`'s snapshot; drop it before any wait: it
// pins LevelDB's memtables and table files). Up to `max_steps` Nexts move the cursor forward
// to the key before it seeks (a reader going forward through nearby keys); 0: always seek.
// NotFound when the key is absent, else the iterator's status.
inline leveldb::Status ReadThroughCursor(leveldb::DB* db, const leveldb::ReadOptions& read,
                                         std::unique_ptr<leveldb::Iterator>* cursor,
                                         std::string_view key, int max_steps,
                                         std::string* value) {
  if (*cursor == nullptr) cursor->reset(db->NewIterator(read));
  leveldb::Iterator* it = cursor->get();
  const leveldb::Slice target(key.data(), key.size());
  bool seek = max_steps <= 0 || !it->Valid() || it->key().compare(target) > 0;
  for (int steps = 0; !seek && it->Valid() && it->key().compare(target) < 0; ++steps) {
    if (steps == max_steps) {
      seek = true;
    } else {
      it->Next();
    }
  }
  if (seek) it->Seek(target);
  if (!it->status().ok()) return it->status();
  if (!it->Valid() || it->key() != target) return leveldb::Status::NotFound(target);
  value->assign(it->value().data(), it->value().size());
  return leveldb::Status::OK();
}

}  // namespace kairos::store
