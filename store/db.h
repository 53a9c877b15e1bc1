// Db: the LevelDB database under a node's data directory. It is opened with paranoid checks,
// and every write goes through one synced WriteBatch, so a crash leaves either the batch or
// nothing. (The authenticated tree of a later issue builds on this handle.)
//
// Thread-safety: LevelDB's own. Reads and writes may come from any thread; callers that need
// read-modify-write atomicity serialise themselves (in Kairos: the application executor).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/status.h"

namespace leveldb {
class DB;
}

namespace kairos::store {

// A set of puts and deletes applied atomically by Db::Write. Later entries for the same key
// win, as in leveldb::WriteBatch.
class WriteBatch {
 public:
  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  bool empty() const { return ops_.empty(); }
  // key -> value, or nullopt for a delete.
  const std::map<std::string, std::optional<std::string>>& ops() const { return ops_; }

 private:
  std::map<std::string, std::optional<std::string>> ops_;
};

class Db {
 public:
  // Opens (creating if missing) the database in `dir`.
  static Result<std::unique_ptr<Db>> Open(const std::string& dir);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // NotFound when the key is absent; Corruption or IOError when the disk is broken.
  Status Get(std::string_view key, std::string* value) const;

  // Applies `batch` atomically with fsync. A failure here means the disk is broken: the
  // caller must stop the node, never carry on from the state it meant to write.
  Status Write(const WriteBatch& batch);

  const std::string& dir() const { return dir_; }

 private:
  Db(std::string dir, leveldb::DB* db);
  std::string dir_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace kairos::store
