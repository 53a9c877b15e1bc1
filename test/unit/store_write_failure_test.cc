// MerkleStore when the disk fails a commit's synced write: the commit fails with LevelDB's
// error, the store refuses every later Stage and Commit (its memory may already hold the
// version the disk did not take), and a reopen finds a whole version, the old one or the new.
// The failure is injected through a LevelDB Env whose files' Sync fails on demand.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <leveldb/env.h>

#include "smt_reference.h"
#include "store/merkle_store.h"
#include "store_test_open.h"
#include "temp_dir.h"

using namespace kairos::store;
using kairos::Status;
using kairos::test::OpenStore;
using kairos::test::TempDir;

namespace {

// Every file LevelDB writes goes through here; once `fail_sync` is set, Sync fails (the bytes
// appended before may or may not reach the disk, like a failing device).
class FailingSyncEnv final : public leveldb::EnvWrapper {
 public:
  FailingSyncEnv() : EnvWrapper(leveldb::Env::Default()) {}
  std::atomic<bool> fail_sync{false};

  leveldb::Status NewWritableFile(const std::string& name, leveldb::WritableFile** out) override {
    return Wrap(target()->NewWritableFile(name, out), out);
  }
  leveldb::Status NewAppendableFile(const std::string& name,
                                    leveldb::WritableFile** out) override {
    return Wrap(target()->NewAppendableFile(name, out), out);
  }

 private:
  class File final : public leveldb::WritableFile {
   public:
    File(leveldb::WritableFile* base, const FailingSyncEnv* env) : base_(base), env_(env) {}
    leveldb::Status Append(const leveldb::Slice& data) override { return base_->Append(data); }
    leveldb::Status Close() override { return base_->Close(); }
    leveldb::Status Flush() override { return base_->Flush(); }
    leveldb::Status Sync() override {
      if (env_->fail_sync) return leveldb::Status::IOError("injected: the device failed fsync");
      return base_->Sync();
    }

   private:
    std::unique_ptr<leveldb::WritableFile> base_;
    const FailingSyncEnv* env_;
  };

  leveldb::Status Wrap(leveldb::Status s, leveldb::WritableFile** out) {
    if (s.ok()) *out = new File(*out, this);
    return s;
  }
};

Hash ModelRoot(const std::map<std::string, std::string>& model) {
  std::vector<std::pair<Hash, Hash>> leaves;
  for (const auto& [k, v] : model) leaves.emplace_back(Sha256Of(k), Sha256Of(v));
  return kairos::test::ReferenceRoot(leaves);
}

ChangeSet Block(int version, int size) {
  ChangeSet changes;
  for (int i = 0; i < size; ++i) {
    changes["key" + std::to_string((version * 7919 + i * 31) % 3000)] =
        "value" + std::to_string(version) + "-" + std::to_string(i);
  }
  return changes;
}

void Apply(const ChangeSet& changes, std::map<std::string, std::string>* model) {
  for (const auto& [k, v] : changes) (*model)[k] = *v;
}

}  // namespace

TEST_CASE("a commit whose synced write fails stops the store; a reopen finds a whole version",
          "[store]") {
  // 1,000 changes: the memory takes the version in on helpers during the write; 10: after it.
  const int size = GENERATE(1000, 10);
  INFO("changes per block: " << size);
  TempDir dir;
  FailingSyncEnv env;
  StoreOptions options;
  options.dir = dir.path();
  options.keep_recent = 0;
  options.checkpoint_interval = 2;
  options.env = &env;
  auto store = OpenStore(options);

  std::map<std::string, std::string> model;
  std::map<Version, std::map<std::string, std::string>> history;
  for (int v = 1; v <= 4; ++v) {
    const ChangeSet changes = Block(v, size);
    Apply(changes, &model);
    REQUIRE(store->Stage(v, changes).ok());
    REQUIRE(store->Commit().ok());
    history[v] = model;
  }
  const Hash old_root = store->root_hash();

  const ChangeSet failing = Block(5, size);
  Apply(failing, &model);
  history[5] = model;
  auto staged = store->Stage(5, failing);
  REQUIRE(staged.ok());
  REQUIRE(*staged == ModelRoot(model));
  env.fail_sync = true;
  const Status failed = store->Commit();
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.message(), Catch::Contains("committing version 5") &&
                                   Catch::Contains("injected: the device failed fsync") &&
                                   Catch::Contains("refuses every later call"));
  // It still names the last durable version and root, and goes no further.
  CHECK(store->version() == 4);
  CHECK(store->root_hash() == old_root);
  env.fail_sync = false;  // even once the device recovers
  auto again = store->Stage(5, failing);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message() == failed.message());
  const Status commit_again = store->Commit();
  CHECK(commit_again.message() == failed.message());
  store.reset();

  // Reopened without the failing device: version 4 or 5, each whole (its values and root).
  // (Here it is 5: LevelDB appended the record to its log before the failing Sync, and the
  // injected failure loses nothing; a real device may lose it.)
  options.env = nullptr;
  store = OpenStore(options);
  const Version reopened = store->version();
  REQUIRE((reopened == 4 || reopened == 5));
  CHECK(store->root_hash() == ModelRoot(history[reopened]));
  for (const auto& [key, value] : history[reopened]) {
    std::string got;
    REQUIRE(store->Get(key, &got).ok());
    REQUIRE(got == value);
  }
  // And it goes on from there.
  const ChangeSet next = Block(9, size);
  std::map<std::string, std::string> after = history[reopened];
  Apply(next, &after);
  auto root = store->Stage(reopened + 1, next);
  REQUIRE(root.ok());
  CHECK(*root == ModelRoot(after));
  REQUIRE(store->Commit().ok());
}
