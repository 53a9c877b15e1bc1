// Pagination of the module queries over one store prefix, with the Cosmos SDK's PageRequest
// semantics (cosmos-sdk types/query/pagination.go, Paginate): a page starts at `key` (the
// next_key of the previous page) or skips `offset` entries, never both; `limit` 0 asks for the
// default (100) and then also counts the total, as the SDK does; a limit above kMaxPageLimit is
// cut to it (the SDK has no maximum; Kairos caps every paginated query); `count_total` is
// honoured with an offset (or none) and ignored with a key, as in the SDK; `next_key` is the
// key of the first entry after the page (relative to the prefix, as the SDK's prefix store
// returns it), empty at the end. `reverse` is refused: the store's iterators (store/kv.h) go
// forward only.
//
// What a page costs (the store's iterator reads the key index and loads a value only when asked,
// store/records.h StateIterator): one seek, then `offset` + `limit` + 1 key-index steps, and
// `limit` value loads. count_total (asked, or implied by limit 0 with no key) adds a key-only
// scan of the rest of the prefix, as the SDK's Paginate does, unless the caller knows the total
// (poa keeps it in a record). A range scan reads the latest version only (the key index is not
// versioned): at a past height the page is code 26 (PageFailure).
//
// Thread-safe: pure functions over the reader argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "app/module.h"
#include "cosmos/base/query/v1beta1/pagination.pb.h"

namespace kairos::app {

// The page size a limit of 0 asks for, and the largest page any paginated query answers.
inline constexpr std::size_t kDefaultPageLimit = 100;
inline constexpr std::size_t kMaxPageLimit = 100;

// A PageRequest checked, with the SDK's defaults applied.
struct PageSpec {
  std::string key;            // relative to the prefix; empty: from the start (or the offset)
  std::uint64_t offset = 0;   // entries to skip (only without a key)
  std::size_t limit = kDefaultPageLimit;
  bool count_total = false;   // set PageResponse.total (never with a key)
};

// The page a request asks for, or a code 18 answer naming pagination.<field> for `path`.
std::variant<PageSpec, QueryAnswer> ReadPageRequest(
    std::string_view path, const cosmos::base::query::v1beta1::PageRequest& page);

// Called for each entry of the page, with its key relative to the prefix. A non-OK status
// (Corruption for a malformed record) stops the page and is returned.
using PageVisitor = std::function<Status(std::string_view key, std::string_view value)>;

// Visits the page `spec` of the keys under `prefix` and fills `out` (next_key, and total when
// counted: `known_total` when given, else by counting the keys). Not OK when the store fails,
// when `visit` fails, or InvalidArgument when `state` is not the latest version (PageFailure).
Status Paginate(const store::KvReader& state, std::string_view prefix, const PageSpec& spec,
                const PageVisitor& visit, cosmos::base::query::v1beta1::PageResponse* out,
                std::optional<std::uint64_t> known_total = std::nullopt);

// A paginated query's answer: Paginate over `prefix` (filling `page_out`, the response's
// pagination), then `response` serialized, with `key` the prefix and every key of the page
// proven when the client asks (prove=true); code 26 at a past height (PageFailure).
Result<QueryAnswer> AnswerPage(const QueryRequest& req, std::string_view prefix,
                               const PageSpec& spec, const PageVisitor& visit,
                               const google::protobuf::MessageLite& response,
                               cosmos::base::query::v1beta1::PageResponse* page_out);

// What a query answers when Paginate failed: code 26 "invalid height: <method> is answered at
// the latest height (N) only" for a past height (the range scan's InvalidArgument), else the
// store's failure itself.
Result<QueryAnswer> PageFailure(const QueryRequest& req, const Status& failure);

}  // namespace kairos::app
