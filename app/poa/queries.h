// The poa module's queries, /kairos.poa.v1.Query/{Validators,Validator,Authority,Params}
// (proto/kairos/poa/v1/query.proto), over a committed version. Each answer names the store
// keys it rests on (QueryAnswer::key and proven_keys), so a client can ask for their proofs.
// Validators is paginated as every module query is (app/pagination.h: at most 100 a page).
// Bad requests: code 18 with the path and what is wrong; an unknown name: code 6.
//
// Thread-safe: pure functions over the reader argument.
#pragma once

#include <cstddef>
#include <string_view>

#include "app/module.h"
#include "app/poa/keeper.h"

namespace kairos::app::poa {

inline constexpr std::string_view kQueryPathPrefix = "/kairos.poa.v1.Query/";

// Not OK only when the store fails.
Result<QueryAnswer> HandleQuery(const PoaKeeper& keeper, const QueryRequest& req);

}  // namespace kairos::app::poa
