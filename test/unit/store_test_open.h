// Test helper shared by the store tests: opens a MerkleStore or fails the test with the reason.
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "store/merkle_store.h"

namespace kairos::test {

inline std::unique_ptr<store::MerkleStore> OpenStore(const store::StoreOptions& o) {
  auto s = store::MerkleStore::Open(o);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(*s);
}

}  // namespace kairos::test
