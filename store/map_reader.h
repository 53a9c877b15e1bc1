// MapReader: a KvReader over key-value pairs held in memory, in a std::map. For a whole state
// copied out of a store to be read as one (kairosd export of a past height: a StoreView scans
// only its latest version in key order, so the export walks the tree into one of these), and
// for tests.
//
// Thread-safety: immutable once made; Get and Iterate may be called from any thread. An
// iterator is used by one thread and must not outlive its reader.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "store/kv.h"

namespace kairos::store {

class MapReader final : public KvReader {
 public:
  using Map = std::map<std::string, std::string, std::less<>>;
  explicit MapReader(Map data) : data_(std::move(data)) {}

  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                      std::string_view end) const override;
  const Map& data() const { return data_; }

 private:
  Map data_;
};

}  // namespace kairos::store
