// Gas: a GasMeter with a limit, and GasKv, a KvStore wrapper that charges the Cosmos SDK's KV gas
// costs (store/types/gas.go KVGasConfig) for every access, so gas_used is a deterministic function
// of what a tx reads and writes.
//
// Running out of gas does not unwind the stack (no exceptions across modules): the meter records
// the first location that went over, every later Consume is a no-op, and the tx runner turns an
// exhausted meter into code 11 and throws the tx's branch away. Code that consumes gas checks
// `exhausted()` before doing more work.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "store/kv.h"

namespace kairos::ante {

struct KvGasConfig {  // cosmos-sdk KVGasConfig
  std::uint64_t has_cost = 1000;
  std::uint64_t delete_cost = 1000;
  std::uint64_t read_cost_flat = 1000;
  std::uint64_t read_cost_per_byte = 3;
  std::uint64_t write_cost_flat = 2000;
  std::uint64_t write_cost_per_byte = 30;
  std::uint64_t iter_next_cost_flat = 30;
};

class GasMeter {
 public:
  static constexpr std::uint64_t kInfinite = std::numeric_limits<std::uint64_t>::max();
  explicit GasMeter(std::uint64_t limit = kInfinite) : limit_(limit) {}

  // Adds `amount` (saturating). Past the limit the meter is exhausted and remembers `where`.
  void Consume(std::uint64_t amount, std::string_view where);
  bool exhausted() const { return exhausted_; }
  const std::string& exhausted_at() const { return exhausted_at_; }
  std::uint64_t consumed() const { return consumed_; }
  std::uint64_t limit() const { return limit_; }
  void set_limit(std::uint64_t limit) { limit_ = limit; }

 private:
  std::uint64_t limit_;
  std::uint64_t consumed_ = 0;
  bool exhausted_ = false;
  std::string exhausted_at_;
};

// Charges `meter` for every access to `inner`. REQUIRES: both outlive the wrapper.
class GasKv final : public store::KvStore {
 public:
  GasKv(store::KvStore& inner, GasMeter& meter, KvGasConfig config = {})
      : inner_(&inner), meter_(&meter), config_(config) {}

  Status Get(std::string_view key, std::string* value) const override;
  std::unique_ptr<store::KvIterator> Iterate(std::string_view start,
                                             std::string_view end) const override;
  Status Set(std::string_view key, std::string_view value) override;
  Status Delete(std::string_view key) override;

  // A presence check, charged as the SDK's Has (flat has_cost).
  Result<bool> Has(std::string_view key) const;

 private:
  store::KvStore* inner_;
  GasMeter* meter_;
  KvGasConfig config_;
};

}  // namespace kairos::ante
