// Commits the crash workload to the store in DIR, version after version, until killed.
// Used by store_crash_test.cc, which SIGKILLs it at random instants.
#include <cstdio>

#include "store_crash_workload.h"

int main(int argc, char** argv) {
  using namespace kairos::store;
  if (argc != 2) {
    std::fprintf(stderr, "usage: store_crash_child DIR\n");
    return 2;
  }
  auto store = MerkleStore::Open(crash::CrashStoreOptions(argv[1]));
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  for (;;) {
    const Version v = (*store)->version() + 1;
    auto root = (*store)->Stage(v, crash::ChangesAt(v));
    if (!root.ok()) {
      std::fprintf(stderr, "stage %lld: %s\n", static_cast<long long>(v),
                   root.status().ToString().c_str());
      return 1;
    }
    if (kairos::Status s = (*store)->Commit(); !s.ok()) {
      std::fprintf(stderr, "commit %lld: %s\n", static_cast<long long>(v), s.ToString().c_str());
      return 1;
    }
  }
}
