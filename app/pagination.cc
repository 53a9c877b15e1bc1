#include "app/pagination.h"

#include <algorithm>
#include <utility>

#include "app/proto_util.h"

namespace kairos::app {

std::variant<PageSpec, QueryAnswer> ReadPageRequest(
    std::string_view path, const cosmos::base::query::v1beta1::PageRequest& page) {
  if (page.reverse()) {
    return QueryAnswer::BadRequest(
        path, "pagination.reverse is not supported (the store iterates forward only)");
  }
  if (!page.key().empty() && page.offset() != 0) {
    return QueryAnswer::BadRequest(path,
                                   "pagination: either offset or key is expected, got both");
  }
  PageSpec spec;
  spec.key = page.key();
  spec.offset = page.offset();
  spec.count_total = page.count_total();
  if (page.limit() == 0) {
    spec.limit = kDefaultPageLimit;
    spec.count_total = true;  // the SDK counts the total when the limit is not given
  } else {
    spec.limit = static_cast<std::size_t>(
        std::min<std::uint64_t>(page.limit(), static_cast<std::uint64_t>(kMaxPageLimit)));
  }
  if (!spec.key.empty()) spec.count_total = false;  // the SDK ignores it with a key
  return spec;
}

Status Paginate(const store::KvReader& state, std::string_view prefix, const PageSpec& spec,
                const PageVisitor& visit, cosmos::base::query::v1beta1::PageResponse* out,
                std::optional<std::uint64_t> known_total) {
  std::string start(prefix);
  start += spec.key;
  auto it = state.Iterate(start, store::PrefixEnd(prefix));
  const bool count = spec.count_total && !known_total.has_value();
  std::uint64_t seen = 0;  // entries passed, from the start of the range
  std::size_t taken = 0;
  for (; it->Valid(); it->Next()) {
    if (seen < spec.offset) {  // skipped: the key index only, no value loaded
      ++seen;
      continue;
    }
    if (taken == spec.limit) {
      if (seen == spec.offset + taken) {  // the first entry after the page
        out->set_next_key(std::string(it->key().substr(prefix.size())));
        if (!count) break;
      }
      ++seen;
      continue;  // counting the rest: keys only
    }
    const std::string_view value = it->value();
    if (Status s = it->status(); !s.ok()) return s;  // the value failed to load
    if (Status s = visit(it->key().substr(prefix.size()), value); !s.ok()) return s;
    ++seen;
    ++taken;
  }
  if (Status s = it->status(); !s.ok()) return s;
  if (spec.count_total) out->set_total(known_total.value_or(seen));
  return Status::OK();
}

Result<QueryAnswer> AnswerPage(const QueryRequest& req, std::string_view prefix,
                               const PageSpec& spec, const PageVisitor& visit,
                               const google::protobuf::MessageLite& response,
                               cosmos::base::query::v1beta1::PageResponse* page_out) {
  QueryAnswer a;
  a.key = std::string(prefix);
  a.proven_keys.emplace();
  Status paged = Paginate(
      *req.state, prefix, spec,
      [&](std::string_view key, std::string_view value) {
        if (Status s = visit(key, value); !s.ok()) return s;
        a.proven_keys->push_back(a.key + std::string(key));
        return Status::OK();
      },
      page_out);
  if (!paged.ok()) return PageFailure(req, paged);
  a.value = SerializeDeterministic(response);
  return a;
}

Result<QueryAnswer> PageFailure(const QueryRequest& req, const Status& failure) {
  if (failure.code() != Status::Code::kInvalidArgument) return failure;
  const std::string_view method = req.path.substr(req.path.rfind('/') + 1);
  return QueryAnswer::Error(ante::kInvalidHeight,
                            "invalid height: " + std::string(method) +
                                " is answered at the latest height (" +
                                std::to_string(req.latest_height) + ") only; got height " +
                                std::to_string(req.height));
}

}  // namespace kairos::app
