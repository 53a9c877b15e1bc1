// proof_vectors: builds stores with known contents and prints ICS-23 proofs for them as JSON
// lines for ics23-verify (the Go reference verifier): existence and absence proofs that must
// verify, and tampered ones (value, key, root, proof bytes) that must not.
//
// Usage: proof_vectors DIR | ics23-verify
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "app/hex.h"
#include "app/proofs.h"
#include "store/merkle_store.h"

using namespace kairos;

namespace {

std::string HexHash(const store::Hash& h) {
  return app::HexEncode(std::string_view(reinterpret_cast<const char*>(h.data()), h.size()));
}

void Emit(const std::string& name, const store::Hash& root, const std::string& key,
          const std::string* value, const std::string& proof, bool expect) {
  std::cout << "{\"name\":\"" << name << "\",\"root\":\"" << HexHash(root) << "\",\"key\":\""
            << app::HexEncode(key) << "\",\"value\":" << (value ? "\"" + app::HexEncode(*value) + "\"" : "null")
            << ",\"proof\":\"" << app::HexEncode(proof) << "\",\"expect\":" << (expect ? "true" : "false")
            << "}\n";
}

// Emits the proof of `key` at `version`, plus tampered copies that must fail.
void EmitCase(const store::MerkleStore& s, store::Version version, const store::Hash& root,
              const std::string& key, const std::string& label) {
  store::KeyProof kp;
  if (Status st = s.Prove(version, key, &kp); !st.ok()) {
    std::cerr << "Prove(" << label << "): " << st.ToString() << "\n";
    std::exit(2);
  }
  const std::string proof = app::EncodeCommitmentProof(key, kp);  // what a Query answer carries
  if (proof != app::ToCommitmentProof(key, kp).SerializeAsString()) {
    std::cerr << "Prove(" << label << "): the arena-built proof differs from the heap-built one\n";
    std::exit(2);
  }
  store::Hash bad_root = root;
  bad_root[7] ^= 0x40;
  std::string bad_proof = proof;
  bad_proof[bad_proof.size() / 2] = static_cast<char>(bad_proof[bad_proof.size() / 2] ^ 0x01);
  if (kp.exist) {
    const std::string& value = kp.exist->value;
    const std::string other_value = value + "x";
    const std::string other_key = key + "x";
    Emit(label + "/exist", root, key, &value, proof, true);
    Emit(label + "/exist-wrong-value", root, key, &other_value, proof, false);
    Emit(label + "/exist-wrong-key", root, other_key, &value, proof, false);
    Emit(label + "/exist-wrong-root", bad_root, key, &value, proof, false);
    Emit(label + "/exist-flipped-bit", root, key, &value, bad_proof, false);
    Emit(label + "/exist-as-absence", root, key, nullptr, proof, false);
  } else {
    Emit(label + "/absent", root, key, nullptr, proof, true);
    Emit(label + "/absent-wrong-root", bad_root, key, nullptr, proof, false);
    Emit(label + "/absent-flipped-bit", root, key, nullptr, bad_proof, false);
    // The neighbours' own keys are present: the same proof must not show them absent.
    for (const auto* side : {&kp.left, &kp.right}) {
      if (*side) Emit(label + "/absent-for-neighbour", root, (*side)->key, nullptr, proof, false);
    }
  }
}

std::unique_ptr<store::MerkleStore> Open(const std::filesystem::path& dir) {
  store::StoreOptions o;
  o.dir = dir.string();
  o.keep_recent = 0;
  auto s = store::MerkleStore::Open(o);
  if (!s.ok()) {
    std::cerr << s.status().ToString() << "\n";
    std::exit(2);
  }
  return std::move(*s);
}

void Commit(store::MerkleStore& s, const store::ChangeSet& c) {
  if (!s.Stage(s.version() + 1, c).ok() || !s.Commit().ok()) {
    std::cerr << "commit failed\n";
    std::exit(2);
  }
}

// Keys whose hashes share their first `bits` bits with sha256("twin-0"): deep paths.
std::vector<std::string> Twins(int count, int bits) {
  const store::Hash target = store::Sha256Of("twin-0");
  std::vector<std::string> out{"twin-0"};
  for (int i = 1; static_cast<int>(out.size()) < count; ++i) {
    const std::string k = "twin-" + std::to_string(i);
    const store::Hash h = store::Sha256Of(k);
    bool same = true;
    for (int b = 0; b < bits && same; ++b) {
      same = ((h[b / 8] ^ target[b / 8]) >> (7 - b % 8) & 1) == 0;
    }
    if (same) out.push_back(k);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: proof_vectors DIR\n";
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::filesystem::remove_all(dir);

  {  // One key: absence proofs have a single neighbour.
    auto s = Open(dir / "one");
    Commit(*s, {{"only", "value"}});
    for (const std::string k : {"only", "a", "zzz", "other"}) {
      EmitCase(*s, s->version(), s->root_hash(), k, "one-key/" + k);
    }
  }
  {  // Keys sharing 14 hash bits: long chains of single-child pages.
    auto s = Open(dir / "twins");
    store::ChangeSet c;
    for (const auto& k : Twins(3, 14)) c[k] = "v-" + k;
    Commit(*s, c);
    for (const std::string k : {"twin-0", "absent-1", "absent-2"}) {
      EmitCase(*s, s->version(), s->root_hash(), k, "twins/" + k);
    }
  }
  {  // A few thousand keys over several versions, with deletes; proofs at old versions too.
    auto s = Open(dir / "many");
    std::mt19937 rng(42);
    std::vector<std::pair<store::Version, store::Hash>> roots;
    for (int block = 0; block < 5; ++block) {
      store::ChangeSet c;
      for (int i = 0; i < 800; ++i) c["key-" + std::to_string(rng() % 3000)] = "val-" + std::to_string(rng());
      for (int i = 0; i < 100; ++i) c["key-" + std::to_string(rng() % 3000)] = std::nullopt;
      Commit(*s, c);
      roots.emplace_back(s->version(), s->root_hash());
    }
    for (const auto& [version, root] : roots) {
      for (int i = 0; i < 40; ++i) {
        const std::string k = "key-" + std::to_string(rng() % 3300);
        EmitCase(*s, version, root, k, "many/v" + std::to_string(version) + "/" + k);
      }
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
