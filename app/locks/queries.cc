#include "app/locks/queries.h"

#include "ante/errors.h"
#include "app/locks/msg_server.h"
#include "app/proto_util.h"
#include "crypto/bech32.h"
#include "kairos/locks/v1/query.pb.h"

namespace kairos::app::locks {

namespace {

namespace lpb = kairos::locks::v1;

QueryAnswer BadRequest(std::string_view path, const std::string& why) {
  QueryAnswer a;
  a.code = ante::kInvalidRequest;
  a.log = "invalid request: " + std::string(path) + ": " + why;
  return a;
}

QueryAnswer Answer(std::string key, const google::protobuf::MessageLite& response) {
  QueryAnswer a;
  a.key = std::move(key);
  a.value = SerializeDeterministic(response);
  return a;
}

std::string Amount(const ante::Uint256& v) { return ante::ToString(v); }

// Parses the request; on failure *bad is the answer.
bool Parse(std::string_view path, std::string_view data, google::protobuf::MessageLite* req,
           QueryAnswer* bad) {
  if (req->ParseFromString(std::string(data))) return true;
  *bad = BadRequest(path, "data is not a " + req->GetTypeName());
  return false;
}

bool ParseAddress(std::string_view path, const std::string& text, std::string* raw,
                  QueryAnswer* bad) {
  auto a = crypto::DecodeAccountAddress(text);
  if (a.ok() && a->size() == crypto::kAddressBytes) {
    *raw = *a;
    return true;
  }
  *bad = BadRequest(path, "invalid address \"" + ante::Printable(text, 96) + "\"");
  return false;
}

bool ParseSlot(std::string_view path, const std::string& resource, const std::string& key,
               LockSlot* slot, QueryAnswer* bad) {
  *slot = {resource, key};
  if (auto problem = SlotProblem(*slot)) {
    *bad = BadRequest(path, *problem);
    return false;
  }
  return true;
}

}  // namespace

Result<QueryAnswer> HandleQuery(const LocksKeeper& keeper, std::string_view path,
                                std::string_view data, const store::KvReader& kv,
                                std::int64_t height) {
  const std::string_view name = path.substr(kQueryPathPrefix.size());
  const std::int64_t next = height + 1;
  QueryAnswer bad;
  auto params = keeper.GetParams(kv);
  if (!params.ok()) return params.status();

  if (name == "Holder" || name == "Var") {
    std::string resource, key;
    if (name == "Var") {
      lpb::QueryVarRequest req;
      if (!Parse(path, data, &req, &bad)) return bad;
      resource = req.resource();
      key = req.key();
    } else {
      lpb::QueryHolderRequest req;
      if (!Parse(path, data, &req, &bad)) return bad;
      resource = req.resource();
      key = req.key();
    }
    LockSlot slot;
    if (!ParseSlot(path, resource, key, &slot, &bad)) return bad;
    if (name == "Var") {
      auto value = keeper.GetVar(kv, slot);
      if (!value.ok()) return value.status();
      lpb::QueryVarResponse res;
      res.set_value(*value);
      return Answer(LocksKeeper::VarKey(slot), res);
    }
    auto holder = keeper.GetHolder(kv, slot);
    if (!holder.ok()) return holder.status();
    lpb::QueryHolderResponse res;
    if (*holder) {
      auto session = keeper.GetSession(kv, **holder);
      if (!session.ok()) return session.status();
      res.set_holder(crypto::EncodeAccountAddress(**holder));
      res.set_active(LocksKeeper::Active(*session, next));
      if (*session) res.set_expiry((*session)->expiry);
    }
    return Answer(LocksKeeper::LockKey(slot), res);
  }

  if (name == "Session" || name == "DepositQuote" || name == "Registration") {
    // The three requests hold the same one field; the error names the one asked for.
    lpb::QuerySessionRequest session_req;
    lpb::QueryDepositQuoteRequest quote_req;
    lpb::QueryRegistrationRequest reg_req;
    google::protobuf::MessageLite* req = &session_req;
    if (name == "DepositQuote") req = &quote_req;
    if (name == "Registration") req = &reg_req;
    if (!Parse(path, data, req, &bad)) return bad;
    const std::string& text = name == "DepositQuote"   ? quote_req.address()
                              : name == "Registration" ? reg_req.address()
                                                       : session_req.address();
    std::string address;
    if (!ParseAddress(path, text, &address, &bad)) return bad;
    auto session = keeper.GetSession(kv, address);
    if (!session.ok()) return session.status();
    const bool active = LocksKeeper::Active(*session, next);
    if (name == "Session") {
      lpb::QuerySessionResponse res;
      res.set_found(session->has_value());
      if (*session) *res.mutable_session() = ToProto(**session);
      res.set_active(active);
      return Answer(LocksKeeper::SessionKey(address), res);
    }
    auto reg = keeper.GetRegistration(kv, address);
    if (!reg.ok()) return reg.status();
    const bool whitelisted = LocksKeeper::Whitelisted(*params, *reg, next);
    if (name == "Registration") {
      lpb::QueryRegistrationResponse res;
      res.set_found(reg->has_value());
      res.set_whitelisted(whitelisted);
      if (*reg) {
        *res.mutable_registration() = ToProto(**reg);
        std::int64_t from = 0;
        if (!__builtin_add_overflow((*reg)->expiry, params->refund_holding_period, &from)) {
          res.set_refundable_from(from);
        }
      }
      return Answer(LocksKeeper::RegistrationKey(address), res);
    }
    auto last_end = keeper.GetLastEnd(kv, address);
    if (!last_end.ok()) return last_end.status();
    // A session that expired but was not cleaned up yet ends at its expiry when the next
    // Acquire ends it, so the quote counts from there.
    std::optional<std::int64_t> end = *last_end;
    if (*session && !active) end = (*session)->expiry;
    auto denom = keeper.GetDenom(kv);
    if (!denom.ok()) return denom.status();
    lpb::QueryDepositQuoteResponse res;
    res.set_deposit(active ? "0" : Amount(LocksKeeper::DepositRequired(*params, end, next)));
    res.set_active(active);
    res.set_last_session_end(end.value_or(0));
    res.set_cooloff_until(LocksKeeper::CooloffUntil(*params, end));
    res.set_whitelisted(whitelisted);
    res.set_denom(*denom);
    return Answer(LocksKeeper::LastEndKey(address), res);
  }

  if (name == "Params") {
    auto denom = keeper.GetDenom(kv);
    if (!denom.ok()) return denom.status();
    lpb::QueryParamsResponse res;
    *res.mutable_params() = ToProto(*params);
    res.set_denom(*denom);
    res.set_escrow_address(crypto::EncodeAccountAddress(EscrowAddress()));
    const std::string sink = ForfeitSinkAddress(*params);
    if (!sink.empty()) res.set_forfeit_sink_address(crypto::EncodeAccountAddress(sink));
    return Answer(std::string(LocksKeeper::kParamsKey), res);
  }

  QueryAnswer unknown;
  unknown.code = ante::kUnknownRequest;
  unknown.log = "unknown query path '" + ante::Printable(path, 128) + "'";
  return unknown;
}

}  // namespace kairos::app::locks
