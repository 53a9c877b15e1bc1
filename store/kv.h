// The key-value interfaces every state reader and writer uses: KvReader (point reads and
// ordered iteration), KvStore (adds writes), and ChangeSet (a sorted set of writes).
// Keys and values are byte strings compared by bytes. Values are never empty: an empty value
// would be indistinguishable from absence in proofs, so deleting is the only way to remove.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/status.h"

namespace kairos::store {

// key -> new value, or nullopt for a delete. Ordered, so whatever consumes it is deterministic.
using ChangeSet = std::map<std::string, std::optional<std::string>, std::less<>>;

// Forward iteration over keys in [start, end), in byte order.
class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual bool Valid() const = 0;
  virtual std::string_view key() const = 0;    // REQUIRES: Valid()
  virtual std::string_view value() const = 0;  // REQUIRES: Valid()
  virtual void Next() = 0;                     // REQUIRES: Valid()
  // Not OK if the underlying database failed; the iterator is then not Valid().
  virtual Status status() const { return Status::OK(); }
};

class KvReader {
 public:
  virtual ~KvReader() = default;
  // NotFound when absent.
  virtual Status Get(std::string_view key, std::string* value) const = 0;
  // Keys in [start, end); an empty `end` means no upper bound.
  virtual std::unique_ptr<KvIterator> Iterate(std::string_view start,
                                              std::string_view end) const = 0;
};

class KvStore : public KvReader {
 public:
  // InvalidArgument for an empty key or value, or one over the size limits.
  virtual Status Set(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;
};

struct KvLimits {
  std::size_t max_key_bytes = 4096;
  std::size_t max_value_bytes = 4u << 20;
  // OK, or InvalidArgument naming the limit that `key`/`value` break.
  Status Check(std::string_view key, const std::string_view* value) const;
};

// The smallest key greater than every key that starts with `prefix` ("" if none exists):
// Iterate(prefix, PrefixEnd(prefix)) visits exactly the keys with that prefix.
std::string PrefixEnd(std::string_view prefix);

}  // namespace kairos::store
