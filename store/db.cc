#include "store/db.h"

#include <filesystem>

#include <leveldb/db.h>
#include <leveldb/write_batch.h>

namespace kairos::store {

namespace {
Status FromLevelDb(const leveldb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  if (s.IsInvalidArgument()) return Status::InvalidArgument(s.ToString());
  return Status::IOError(s.ToString());
}
}  // namespace

void WriteBatch::Put(std::string_view key, std::string_view value) {
  ops_[std::string(key)] = std::string(value);
}

void WriteBatch::Delete(std::string_view key) { ops_[std::string(key)] = std::nullopt; }

Db::Db(std::string dir, leveldb::DB* db) : dir_(std::move(dir)), db_(db) {}
Db::~Db() = default;

Result<std::unique_ptr<Db>> Db::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  leveldb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  leveldb::DB* raw = nullptr;
  const leveldb::Status s = leveldb::DB::Open(options, dir, &raw);
  if (!s.ok()) return FromLevelDb(s);
  return std::unique_ptr<Db>(new Db(dir, raw));
}

Status Db::Get(std::string_view key, std::string* value) const {
  leveldb::ReadOptions options;
  options.verify_checksums = true;
  return FromLevelDb(db_->Get(options, leveldb::Slice(key.data(), key.size()), value));
}

Status Db::Write(const WriteBatch& batch) {
  leveldb::WriteBatch wb;
  for (const auto& [key, value] : batch.ops()) {
    if (value) {
      wb.Put(key, *value);
    } else {
      wb.Delete(key);
    }
  }
  leveldb::WriteOptions options;
  options.sync = true;
  return FromLevelDb(db_->Write(options, &wb));
}

}  // namespace kairos::store
