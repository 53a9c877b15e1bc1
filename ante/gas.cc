#include "ante/gas.h"

namespace kairos::ante {

void GasMeter::Consume(std::uint64_t amount, std::string_view where) {
  if (exhausted_) return;
  consumed_ = amount > kInfinite - consumed_ ? kInfinite : consumed_ + amount;
  if (consumed_ > limit_) {
    exhausted_ = true;
    exhausted_at_ = std::string(where);
  }
}

namespace {

// Charges IterNextCostFlat plus the per-byte read cost for each entry it yields (the SDK's
// gaskv iterator charges on every valid position).
class GasIterator final : public store::KvIterator {
 public:
  GasIterator(std::unique_ptr<store::KvIterator> inner, GasMeter* meter, KvGasConfig config)
      : inner_(std::move(inner)), meter_(meter), config_(config) {
    Charge();
  }
  bool Valid() const override { return inner_->Valid(); }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  void Next() override {
    inner_->Next();
    Charge();
  }
  Status status() const override { return inner_->status(); }

 private:
  void Charge() {
    if (!inner_->Valid()) return;
    meter_->Consume(config_.iter_next_cost_flat, "IterNextFlat");
    meter_->Consume(config_.read_cost_per_byte * (inner_->key().size() + inner_->value().size()),
                    "ValuePerByte");
  }
  std::unique_ptr<store::KvIterator> inner_;
  GasMeter* meter_;
  KvGasConfig config_;
};

}  // namespace

Status GasKv::Get(std::string_view key, std::string* value) const {
  meter_->Consume(config_.read_cost_flat, "ReadFlat");
  Status s = inner_->Get(key, value);
  std::size_t bytes = key.size() + (s.ok() ? value->size() : 0);
  meter_->Consume(config_.read_cost_per_byte * bytes, "ReadPerByte");
  return s;
}

std::unique_ptr<store::KvIterator> GasKv::Iterate(std::string_view start,
                                                  std::string_view end) const {
  return std::make_unique<GasIterator>(inner_->Iterate(start, end), meter_, config_);
}

Status GasKv::Set(std::string_view key, std::string_view value) {
  meter_->Consume(config_.write_cost_flat, "WriteFlat");
  meter_->Consume(config_.write_cost_per_byte * (key.size() + value.size()), "WritePerByte");
  return inner_->Set(key, value);
}

Status GasKv::Delete(std::string_view key) {
  meter_->Consume(config_.delete_cost, "Delete");
  return inner_->Delete(key);
}

Result<bool> GasKv::Has(std::string_view key) const {
  meter_->Consume(config_.has_cost, "Has");
  std::string ignored;
  Status s = inner_->Get(key, &ignored);
  if (s.ok()) return true;
  if (s.IsNotFound()) return false;
  return s;
}

}  // namespace kairos::ante
