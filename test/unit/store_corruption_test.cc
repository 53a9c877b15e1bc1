// A corrupted store refuses to open, with an error that names the damaged file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "store/merkle_store.h"
#include "temp_dir.h"

using namespace kairos::store;
namespace fs = std::filesystem;

namespace {

StoreOptions SmallTables(const std::string& dir) {
  StoreOptions o;
  o.dir = dir;
  o.write_buffer_bytes = 64 << 10;  // flush to table files often
  return o;
}

void Fill(const std::string& dir) {
  auto store = MerkleStore::Open(SmallTables(dir));
  REQUIRE(store.ok());
  for (Version v = 1; v <= 20; ++v) {
    ChangeSet c;
    for (int i = 0; i < 200; ++i) c["key-" + std::to_string(v * 1000 + i)] = std::string(100, 'v');
    REQUIRE((*store)->Stage(v, c).ok());
    REQUIRE((*store)->Commit().ok());
  }
}

// Flips bytes in the second half of `path`.
void Damage(const fs::path& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f);
  const auto size = static_cast<std::streamoff>(fs::file_size(path));
  for (std::streamoff i = size / 2; i < size; i += 7) {
    f.seekg(i);
    const char c = static_cast<char>(f.get());
    f.seekp(i);
    f.put(static_cast<char>(c ^ 0x5a));
  }
}

std::vector<fs::path> Files(const std::string& dir, const std::string& pattern) {
  std::vector<fs::path> out;
  const std::regex re(pattern);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (std::regex_match(e.path().filename().string(), re)) out.push_back(e.path());
  }
  return out;
}

std::string OpenError(const std::string& dir) {
  auto store = MerkleStore::Open(SmallTables(dir));
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == kairos::Status::Code::kCorruption);
  return store.status().message();
}

}  // namespace

TEST_CASE("a damaged table file is named on open", "[store][corruption]") {
  kairos::test::TempDir dir;
  Fill(dir.path());
  const auto tables = Files(dir.path(), R"(\d{6}\.ldb)");
  REQUIRE_FALSE(tables.empty());
  for (const auto& t : tables) Damage(t);
  CHECK_THAT(OpenError(dir.path()), Catch::Matches(R"(.*/\d{6}\.ldb: Corruption: .*)"));
}

TEST_CASE("a damaged write-ahead log is named on open", "[store][corruption]") {
  kairos::test::TempDir dir;
  Fill(dir.path());
  const auto logs = Files(dir.path(), R"(\d{6}\.log)");
  REQUIRE_FALSE(logs.empty());
  for (const auto& l : logs) {
    if (fs::file_size(l) > 0) Damage(l);
  }
  CHECK_THAT(OpenError(dir.path()), Catch::Contains(".log"));
}

TEST_CASE("a damaged manifest is named on open", "[store][corruption]") {
  kairos::test::TempDir dir;
  Fill(dir.path());
  const auto manifests = Files(dir.path(), R"(MANIFEST-\d+)");
  REQUIRE(manifests.size() == 1);
  Damage(manifests[0]);
  CHECK_THAT(OpenError(dir.path()), Catch::Contains(manifests[0].filename().string()));
}

TEST_CASE("a damaged CURRENT file is named on open", "[store][corruption]") {
  kairos::test::TempDir dir;
  Fill(dir.path());
  Damage(fs::path(dir.path()) / "CURRENT");
  CHECK_THAT(OpenError(dir.path()), Catch::Contains("CURRENT"));
}

TEST_CASE("an intact store opens with the same root", "[store][corruption]") {
  kairos::test::TempDir dir;
  Fill(dir.path());
  auto store = MerkleStore::Open(SmallTables(dir.path()));
  REQUIRE(store.ok());
  CHECK((*store)->version() == 20);
}
