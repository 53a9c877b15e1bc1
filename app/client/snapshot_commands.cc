#include "app/client/snapshot_commands.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "app/client/cli_util.h"
#include "app/client/commands.h"
#include "app/config.h"
#include "app/hex.h"
#include "app/logging.h"
#include "app/node_options.h"
#include "app/state_sync.h"
#include "store/big_endian.h"
#include "store/merkle_store.h"

namespace kairos::client {

namespace {

namespace fs = std::filesystem;

// A snapshot as one file (dump, load): this magic, then the manifest and each chunk, each
// after its length as 4 bytes big-endian. The file is untrusted: load checks every chunk
// against the manifest and its proof.
constexpr std::string_view kArchiveMagic = "KAIROS-SNAPSHOT-1\n";

app::Config LoadNodeConfig(const std::string& home) {
  return Take(app::LoadConfig((fs::path(home) / "config.toml").string()), kExitUsage);
}

std::unique_ptr<app::SnapshotFiles> OpenFiles(const std::string& home) {
  app::SetupLogging("warn", "plain");  // stdout carries the answer only
  const app::Config config = LoadNodeConfig(home);
  auto files = std::make_unique<app::SnapshotFiles>(app::HomePath(home, config.snapshot_dir));
  Check(files->Init());
  return files;
}

std::unique_ptr<store::MerkleStore> OpenNodeStore(const std::string& home) {
  const app::Config config = LoadNodeConfig(home);
  const std::string dir = app::HomePath(home, config.db_dir);
  auto db = store::MerkleStore::Open(app::StoreOptionsFor(config, dir));
  if (!db.ok()) {
    const std::string why = db.status().ToString();
    Fail(kExitFailure, "cannot open the store in " + dir + ": " + why +
                           (why.find("lock") != std::string::npos
                                ? " (is the node running? stop it first)"
                                : ""));
  }
  return std::move(*db);
}

store::SnapshotManifest ManifestOf(const app::SnapshotFiles::Listed& l) {
  store::SnapshotManifest m;
  Check(store::SnapshotManifest::Decode(l.metadata, &m));
  return m;
}

app::SnapshotFiles::Listed Find(const app::SnapshotFiles& files, std::uint64_t height,
                                std::uint32_t format) {
  if (format != store::kSnapshotFormat) {
    Fail(kExitUsage, "format " + std::to_string(format) + ": this build knows only format " +
                         std::to_string(store::kSnapshotFormat));
  }
  for (const auto& l : files.List()) {
    if (l.height == height) return l;
  }
  Fail(kExitFailure, "no snapshot at height " + std::to_string(height) + " in " + files.dir());
}

void PrintListed(const app::SnapshotFiles::Listed& l, const std::string& output) {
  const store::SnapshotManifest m = ManifestOf(l);
  if (IsJson(output)) {
    OrderedJson j;
    j["height"] = l.height;
    j["format"] = store::kSnapshotFormat;
    j["chunks"] = l.chunks;
    j["keys"] = m.leaves;
    j["raw_bytes"] = m.raw_bytes;
    j["hash"] = app::HexEncode(l.hash, true);
    j["app_hash"] = app::HexEncode(store::ToBytes(m.root), true);
    PrintJson(j);
    return;
  }
  std::cout << "height: " << l.height << " format: " << store::kSnapshotFormat
            << " chunks: " << l.chunks << " keys: " << m.leaves << " hash: "
            << app::HexEncode(l.hash, true)
            << " app_hash: " << app::HexEncode(store::ToBytes(m.root), true) << "\n";
}

void WriteU32(std::ostream& out, std::size_t n) {
  std::string b;
  AppendBigEndian64(n, &b);
  out.write(b.data() + 4, 4);
}

Result<std::string> ReadBlock(std::istream& in, std::size_t max, const std::string& what) {
  char len[4];
  if (!in.read(len, 4)) return Status::InvalidArgument("the file ends before " + what);
  const std::uint32_t n = (static_cast<std::uint32_t>(static_cast<unsigned char>(len[0])) << 24) |
                          (static_cast<std::uint32_t>(static_cast<unsigned char>(len[1])) << 16) |
                          (static_cast<std::uint32_t>(static_cast<unsigned char>(len[2])) << 8) |
                          static_cast<std::uint32_t>(static_cast<unsigned char>(len[3]));
  if (n > max) return Status::InvalidArgument(what + " is larger than " + std::to_string(max));
  std::string bytes(n, '\0');
  if (!in.read(bytes.data(), n)) return Status::InvalidArgument("the file ends inside " + what);
  return bytes;
}

}  // namespace

void AddSnapshotCommands(CLI::App& app, const std::string& home) {
  auto* cmd = app.add_subcommand(
      "snapshots", "State sync snapshots of this node (config [state_sync]): list, take, restore, "
                   "move as a file");
  cmd->require_subcommand(1);

  static std::string output;
  auto* list = cmd->add_subcommand("list", "List the snapshots in the snapshot directory");
  AddOutputFlag(list, &output);
  list->callback([&home] {
    const auto files_ptr = OpenFiles(home);
    const app::SnapshotFiles& files = *files_ptr;
    for (const auto& l : files.List()) PrintListed(l, output);
  });

  auto* exp = cmd->add_subcommand(
      "export", "Take a snapshot of the latest committed height (the node must be stopped)");
  AddOutputFlag(exp, &output);
  exp->callback([&home] {
    const app::Config config = LoadNodeConfig(home);
    std::unique_ptr<store::MerkleStore> db = OpenNodeStore(home);
    if (db->version() == 0) Fail(kExitFailure, "the store has no committed block");
    const auto files_ptr = OpenFiles(home);
    app::SnapshotFiles& files = *files_ptr;
    auto view = Take(db->View());
    PrintListed(Take(files.Write(*view, config.snapshot_chunk_bytes)), output);
  });

  static std::uint64_t height = 0;
  static std::uint32_t format = store::kSnapshotFormat;
  const auto add_target = [](CLI::App* c) {
    c->add_option("height", height, "The snapshot's height")->required();
    c->add_option("format", format, "The snapshot's format")->capture_default_str();
  };

  auto* restore = cmd->add_subcommand(
      "restore", "Restore a snapshot of the snapshot directory into this home's empty store "
                 "(each chunk verified; the node must be stopped)");
  add_target(restore);
  restore->callback([&home] {
    const auto files_ptr = OpenFiles(home);
    const app::SnapshotFiles& files = *files_ptr;
    const app::SnapshotFiles::Listed l = Find(files, height, format);
    const store::SnapshotManifest m = ManifestOf(l);
    std::unique_ptr<store::MerkleStore> db = OpenNodeStore(home);
    if (db->version() != 0) {
      Fail(kExitFailure, "the store already holds height " + std::to_string(db->version()) +
                             ": restore into an empty home");
    }
    Check(app::RestoreSnapshot(db.get(), m, [&](std::uint32_t i) {
      return files.LoadChunk(l.height, store::kSnapshotFormat, i);
    }));
    std::cout << "restored height " << db->version() << ", app hash "
              << app::HexEncode(store::ToBytes(db->root_hash()), true) << "\n";
  });

  static std::string file;
  auto* dump = cmd->add_subcommand("dump", "Write a snapshot as one file, to move it elsewhere");
  add_target(dump);
  dump->add_option("--output-file", file, "The file (default: <height>-<format>.snapshot)");
  dump->callback([&home] {
    const auto files_ptr = OpenFiles(home);
    const app::SnapshotFiles& files = *files_ptr;
    const app::SnapshotFiles::Listed l = Find(files, height, format);
    const std::string path =
        file.empty() ? std::to_string(height) + "-" + std::to_string(format) + ".snapshot" : file;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) Fail(kExitFailure, "cannot create " + path);
    out << kArchiveMagic;
    WriteU32(out, l.metadata.size());
    out << l.metadata;
    for (std::uint32_t i = 0; i < l.chunks; ++i) {
      const std::string chunk = Take(files.LoadChunk(l.height, store::kSnapshotFormat, i));
      WriteU32(out, chunk.size());
      out << chunk;
    }
    out.flush();
    if (!out) Fail(kExitFailure, "cannot write " + path);
    std::cout << "wrote " << path << "\n";
  });

  static std::string load_path;
  auto* load = cmd->add_subcommand(
      "load", "Add a snapshot file (from dump) to the snapshot directory, every chunk checked");
  load->add_option("file", load_path, "The file")->required();
  load->callback([&home] {
    std::ifstream in(load_path, std::ios::binary);
    if (!in) Fail(kExitUsage, "cannot open " + load_path);
    std::string magic(kArchiveMagic.size(), '\0');
    if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) ||
        magic != kArchiveMagic) {
      Fail(kExitUsage, load_path + " is not a kairosd snapshot file");
    }
    const std::string metadata =
        Take(ReadBlock(in, store::kMaxSnapshotManifestBytes, "the manifest"), kExitUsage);
    store::SnapshotManifest m;
    Check(store::SnapshotManifest::Decode(metadata, &m), kExitUsage, load_path + ": ");
    // Checked as a restoring peer checks them, before anything is kept.
    const auto next = [&](std::uint32_t i) {
      return ReadBlock(in, store::kMaxSnapshotChunkBytes, "chunk " + std::to_string(i));
    };
    const std::streampos start = in.tellg();
    Check(app::VerifySnapshotChunks(m, next), kExitFailure, load_path + ": ");
    in.clear();
    in.seekg(start);
    const auto files_ptr = OpenFiles(home);
    app::SnapshotFiles& files = *files_ptr;
    PrintListed(Take(files.Import(metadata, next)), "");
  });

  auto* del = cmd->add_subcommand("delete", "Delete a snapshot");
  add_target(del);
  del->callback([&home] {
    const auto files_ptr = OpenFiles(home);
    app::SnapshotFiles& files = *files_ptr;
    Find(files, height, format);
    Check(files.Delete(height));
    std::cout << "deleted the snapshot at height " << height << "\n";
  });
}

}  // namespace kairos::client
