#include "app/poa/queries.h"

#include <utility>
#include <variant>

#include "app/hex.h"
#include "app/pagination.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"
#include "kairos/poa/v1/query.pb.h"

namespace kairos::app::poa {

namespace {

namespace ppb = kairos::poa::v1;

QueryAnswer Answer(std::string key, const google::protobuf::MessageLite& response) {
  QueryAnswer a;
  a.key = std::move(key);
  a.value = SerializeDeterministic(response);
  return a;
}

bool Parse(std::string_view path, std::string_view data, google::protobuf::MessageLite* req,
           QueryAnswer* bad) {
  if (req->ParseFromString(std::string(data))) return true;
  *bad = QueryAnswer::BadRequest(path, "data is not a " + req->GetTypeName());
  return false;
}

Result<QueryAnswer> Validators(const PoaKeeper& keeper, const QueryRequest& req) {
  ppb::QueryValidatorsRequest r;
  QueryAnswer bad;
  if (!Parse(req.path, req.data, &r, &bad)) return bad;
  auto spec = ReadPageRequest(req.path, r.pagination());
  if (auto* bad_page = std::get_if<QueryAnswer>(&spec)) return std::move(*bad_page);
  const PageSpec& page = std::get<PageSpec>(spec);
  if (!page.key.empty() && page.key.size() != crypto::kAddressBytes) {
    return QueryAnswer::BadRequest(req.path,
                                   "pagination.key must be a 20-byte consensus address (the "
                                   "next_key of the previous page), got " +
                                       std::to_string(page.key.size()) + " bytes");
  }
  auto totals = keeper.GetTotals(*req.state);
  if (!totals.ok()) return totals.status();

  ppb::QueryValidatorsResponse res;
  res.set_total_power(totals->power);
  std::vector<std::string> proven{std::string(PoaKeeper::kTotalsKey)};
  // The set holds at most max_validators (<= 10000): skipping an offset is bounded; the total
  // is the totals record, not a count.
  Status paged = Paginate(
      *req.state, PoaKeeper::kValidatorPrefix, page,
      [&](std::string_view address, std::string_view value) {
        ppb::Validator* v = res.add_validators();
        if (!ParseProto(value, v)) return Status::Corruption("a stored validator is malformed");
        res.add_addresses(HexEncode(address, /*upper=*/true));
        proven.push_back(PoaKeeper::ValidatorKey(address));
        return Status::OK();
      },
      res.mutable_pagination(), totals->validators);
  if (!paged.ok()) return PageFailure(req, paged);
  QueryAnswer a = Answer(std::string(PoaKeeper::kTotalsKey), res);
  a.proven_keys = std::move(proven);
  return a;
}

Result<QueryAnswer> OneValidator(const QueryRequest& req) {
  ppb::QueryValidatorRequest r;
  QueryAnswer bad;
  if (!Parse(req.path, req.data, &r, &bad)) return bad;
  std::string address;
  if (!HexDecode(r.address(), &address) || address.size() != crypto::kAddressBytes) {
    return QueryAnswer::BadRequest(req.path, "address \"" + ante::Printable(r.address(), 96) +
                                                 "\" is not a consensus address (40 hex digits)");
  }
  const std::string key = PoaKeeper::ValidatorKey(address);
  std::string stored;
  Status s = req.state->Get(key, &stored);
  if (!s.ok() && !s.IsNotFound()) return s;
  ppb::QueryValidatorResponse res;
  if (s.ok()) {
    res.set_found(true);
    if (!res.mutable_validator()->ParseFromString(stored)) {
      return Status::Corruption("a stored validator is malformed");
    }
  }
  return Answer(key, res);
}

}  // namespace

Result<QueryAnswer> HandleQuery(const PoaKeeper& keeper, const QueryRequest& req) {
  const std::string_view name = req.path.substr(kQueryPathPrefix.size());
  if (name == "Validators") return Validators(keeper, req);
  if (name == "Validator") return OneValidator(req);
  if (name == "Authority") {
    ppb::QueryAuthorityRequest r;
    QueryAnswer bad;
    if (!Parse(req.path, req.data, &r, &bad)) return bad;
    auto authority = keeper.GetAuthority(*req.state);
    if (!authority.ok()) return authority.status();
    ppb::QueryAuthorityResponse res;
    if (!authority->empty()) res.set_authority(crypto::EncodeAccountAddress(*authority));
    return Answer(std::string(PoaKeeper::kAuthorityKey), res);
  }
  if (name == "Params") {
    ppb::QueryParamsRequest r;
    QueryAnswer bad;
    if (!Parse(req.path, req.data, &r, &bad)) return bad;
    auto params = keeper.GetParams(*req.state);
    if (!params.ok()) return params.status();
    ppb::QueryParamsResponse res;
    *res.mutable_params() = ToProto(*params);
    return Answer(std::string(PoaKeeper::kParamsKey), res);
  }
  return QueryAnswer::Error(ante::kUnknownRequest,
                            "unknown query path '" + ante::Printable(req.path, 128) + "'");
}

}  // namespace kairos::app::poa
