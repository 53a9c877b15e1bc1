// EmptyReader: a store::KvReader with no keys, the parent of a store::Branch that a unit test
// fills from nothing. Thread-safe (it holds nothing).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/kv.h"
#include "store/status.h"

namespace kairos::test {

class EmptyReader final : public store::KvReader {
 public:
  Status Get(std::string_view, std::string*) const override { return Status::NotFound(""); }
  std::unique_ptr<store::KvIterator> Iterate(std::string_view, std::string_view) const override {
    struct End final : store::KvIterator {
      bool Valid() const override { return false; }
      std::string_view key() const override { return {}; }
      std::string_view value() const override { return {}; }
      void Next() override {}
    };
    return std::make_unique<End>();
  }
};

}  // namespace kairos::test
