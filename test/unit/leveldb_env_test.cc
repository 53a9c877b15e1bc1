// The store's LevelDB Env (store/leveldb_env.h): table files are handed to the kernel and their
// write-back started every `bytes_per_sync` bytes, a step behind their end; everything else is
// LevelDB's own behaviour, and what reaches the files is byte for byte what was appended.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <leveldb/env.h>

#include "smt_reference.h"
#include "store/leveldb_env.h"
#include "store/merkle_store.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

// Counts, per file name, the Flush and Sync calls that reach LevelDB's own files.
class CountingEnv final : public leveldb::EnvWrapper {
 public:
  CountingEnv() : EnvWrapper(leveldb::Env::Default()) {}
  struct Counts {
    int flushes = 0;
    int syncs = 0;
  };
  std::map<std::string, Counts> counts;

  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** out) override {
    leveldb::Status s = target()->NewWritableFile(name, out);
    if (s.ok()) *out = new File(*out, &counts[name]);
    return s;
  }

 private:
  class File final : public leveldb::WritableFile {
   public:
    File(leveldb::WritableFile* f, Counts* c) : f_(f), c_(c) {}
    leveldb::Status Append(const leveldb::Slice& data) override { return f_->Append(data); }
    leveldb::Status Close() override { return f_->Close(); }
    leveldb::Status Flush() override {
      ++c_->flushes;
      return f_->Flush();
    }
    leveldb::Status Sync() override {
      ++c_->syncs;
      return f_->Sync();
    }

   private:
    std::unique_ptr<leveldb::WritableFile> f_;
    Counts* c_;
  };
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Appends `total` bytes in 4 KiB pieces (a pattern that shows a lost or moved piece), syncs,
// closes, and returns what was appended.
std::string WriteThrough(leveldb::Env* env, const std::string& path, std::size_t total) {
  leveldb::WritableFile* raw = nullptr;
  REQUIRE(env->NewWritableFile(path, &raw).ok());
  std::unique_ptr<leveldb::WritableFile> file(raw);
  std::string written;
  for (std::size_t i = 0; written.size() < total; ++i) {
    const std::string piece(4096, static_cast<char>('a' + i % 26));
    REQUIRE(file->Append(piece).ok());
    written += piece;
  }
  REQUIRE(file->Sync().ok());
  REQUIRE(file->Close().ok());
  return written;
}

}  // namespace

TEST_CASE("a table file is flushed every bytes_per_sync and holds exactly what was appended",
          "[store][leveldb_env]") {
  TempDir dir;
  CountingEnv counting;
  IncrementalSyncEnv env(&counting, 64 << 10);
  const std::string table = dir / "000007.ldb";
  const std::string written = WriteThrough(&env, table, 1 << 20);
  CHECK(ReadFile(table) == written);
  // 1 MiB in 64 KiB steps, each requested once the file is a step past it (the last step
  // stays for the final sync): 15 write-back requests, each after a flush, none refused by
  // the kernel, and LevelDB's own sync at the end, once.
  CHECK(env.write_back_requests() == 15);
  CHECK(env.write_back_failures() == 0);
  CHECK(counting.counts[table].flushes == 15);
  CHECK(counting.counts[table].syncs == 1);
}

TEST_CASE("files other than tables, and any file with bytes_per_sync 0, are left as LevelDB "
          "writes them",
          "[store][leveldb_env]") {
  TempDir dir;
  CountingEnv counting;
  IncrementalSyncEnv env(&counting, 64 << 10);
  for (const std::string name : {"000005.log", "MANIFEST-000002", "CURRENT"}) {
    const std::string path = dir / name;
    const std::string written = WriteThrough(&env, path, 256 << 10);
    CHECK(ReadFile(path) == written);
    CHECK(counting.counts[path].flushes == 0);
  }
  CHECK(env.write_back_requests() == 0);
  IncrementalSyncEnv off(&counting, 0);
  const std::string table = dir / "000009.ldb";
  const std::string written = WriteThrough(&off, table, 256 << 10);
  CHECK(ReadFile(table) == written);
  CHECK(counting.counts[table].flushes == 0);
  CHECK(off.write_back_requests() == 0);
}

TEST_CASE("a store whose tables are written back in small steps keeps every version",
          "[store][leveldb_env]") {
  TempDir dir;
  StoreOptions o;
  o.dir = dir.path();
  o.write_buffer_bytes = 64 << 10;  // memtable flushes and compactions from the first blocks
  o.table_bytes_per_sync = 4 << 10;
  o.keep_recent = 0;
  std::map<std::string, std::string> model;
  Hash root{};
  {
    auto store = OpenStore(o);
    for (Version v = 1; v <= 40; ++v) {
      ChangeSet changes;
      for (int i = 0; i < 200; ++i) {
        const std::string key = "key" + std::to_string((v * 7919 + i * 104729) % 3000);
        const std::string value = "value at " + std::to_string(v) + " " + std::to_string(i);
        changes[key] = value;
        model[key] = value;
      }
      auto staged = store->Stage(v, changes);
      REQUIRE(staged.ok());
      REQUIRE(store->Commit().ok());
      root = *staged;
    }
  }
  // LevelDB wrote tables (memtable flushes, compactions), many write-back steps of them.
  std::uintmax_t table_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".ldb") table_bytes += entry.file_size();
  }
  CHECK(table_bytes > 4 * o.table_bytes_per_sync);
  auto store = OpenStore(o);
  REQUIRE(store->version() == 40);
  CHECK(store->root_hash() == root);
  std::vector<std::pair<Hash, Hash>> leaves;
  for (const auto& [k, v] : model) leaves.emplace_back(Sha256Of(k), Sha256Of(v));
  CHECK(root == kairos::test::ReferenceRoot(leaves));
  for (const auto& [k, v] : model) {
    std::string got;
    REQUIRE(store->Get(k, &got).ok());
    CHECK(got == v);
  }
}
