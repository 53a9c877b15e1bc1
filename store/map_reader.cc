// MapReader: point reads and ordered scans of a std::map (see map_reader.h).
#include "store/map_reader.h"

#include <utility>

namespace kairos::store {

namespace {

class MapIterator final : public KvIterator {
 public:
  using It = MapReader::Map::const_iterator;
  MapIterator(It it, It end) : it_(it), end_(end) {}
  bool Valid() const override { return it_ != end_; }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second; }
  void Next() override { ++it_; }

 private:
  It it_;
  const It end_;
};

}  // namespace

Status MapReader::Get(std::string_view key, std::string* value) const {
  const auto it = data_.find(key);
  if (it == data_.end()) return Status::NotFound("absent");
  *value = it->second;
  return Status::OK();
}

std::unique_ptr<KvIterator> MapReader::Iterate(std::string_view start,
                                               std::string_view end) const {
  const auto first = data_.lower_bound(start);
  // An empty end means no upper bound; an end at or before start, an empty range.
  auto last = end.empty() ? data_.end() : data_.lower_bound(end);
  if (!end.empty() && end <= start) last = first;
  return std::make_unique<MapIterator>(first, last);
}

}  // namespace kairos::store
