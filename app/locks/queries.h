// The locks module's queries, /kairos.locks.v1.Query/{Holder,Session,DepositQuote,
// Registration,Params,Var}: the request proto in, the response proto out, plus the store key the
// answer rests on, which the app proves when asked (prove=true). Predicates are judged at the
// next height (query height + 1), where a tx sent now runs first. Formats: query.proto.
//
// Thread-safe: pure functions over the reader argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "app/locks/keeper.h"
#include "app/module.h"
#include "store/kv.h"

namespace kairos::app::locks {

inline constexpr std::string_view kQueryPathPrefix = "/kairos.locks.v1.Query/";


// REQUIRES: path starts with kQueryPathPrefix. `kv` is the state at `height`. Not OK only when
// the store fails.
Result<QueryAnswer> HandleQuery(const LocksKeeper& keeper, std::string_view path,
                                std::string_view data, const store::KvReader& kv,
                                std::int64_t height);

}  // namespace kairos::app::locks
