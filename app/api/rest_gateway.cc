#include "app/api/rest_gateway.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <absl/strings/escaping.h>
#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "app/api/proto_json.h"
#include "google/api/annotations.pb.h"
#include "google/api/http.pb.h"

namespace kairos::app::api {

namespace {

namespace pb = google::protobuf;
using FieldPath = std::vector<const pb::FieldDescriptor*>;

// ---- path templates -----------------------------------------------------------------------

struct Segment {
  enum class Kind { kLiteral = 0, kWildcard = 1, kDeepWildcard = 2 };
  Kind kind;
  std::string literal;  // kLiteral
};

struct Variable {
  FieldPath field;
  std::string field_name;  // dotted, as written in the template
  std::size_t begin = 0;   // the segments it captures: [begin, end)
  std::size_t end = 0;
};

struct PathTemplate {
  std::vector<Segment> segments;
  std::vector<Variable> variables;
  std::string text;
};

// The field `dotted` names in `desc`: every part but the last a singular message field.
Result<FieldPath> ResolveFieldPath(const pb::Descriptor* desc, std::string_view dotted,
                                   bool by_json_name_too) {
  FieldPath path;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    const std::string name(dotted.substr(start, dot == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : dot - start));
    const pb::FieldDescriptor* field = desc->FindFieldByName(name);
    for (int i = 0; field == nullptr && by_json_name_too && i < desc->field_count(); ++i) {
      if (desc->field(i)->json_name() == name) field = desc->field(i);
    }
    if (field == nullptr) {
      std::string known;
      for (int i = 0; i < desc->field_count(); ++i) {
        known += (i == 0 ? "" : ", ") + desc->field(i)->name();
      }
      return Status::NotFound(desc->full_name() + " has no field \"" + name +
                              "\" (its fields: " + (known.empty() ? "none" : known) + ")");
    }
    path.push_back(field);
    if (dot == std::string_view::npos) break;
    if (field->is_repeated() || field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      return Status::InvalidArgument("\"" + std::string(dotted) + "\" goes into " +
                                     field->name() + ", which is not a singular message");
    }
    desc = field->message_type();
    start = dot + 1;
  }
  return path;
}

// Parses one grpc-gateway path template (google/api/http.proto's syntax) for `input`.
Result<PathTemplate> ParseTemplate(const std::string& text, const pb::Descriptor* input) {
  auto fail = [&](const std::string& why) -> Status {
    return Status::InvalidArgument("path template \"" + text + "\" of " + input->full_name() +
                                   ": " + why);
  };
  if (text.empty() || text[0] != '/') return fail("does not start with '/'");
  PathTemplate t;
  t.text = text;
  std::size_t i = 1;
  auto parse_segment = [&]() -> Status {
    const std::size_t start = i;
    while (i < text.size() && text[i] != '/' && text[i] != '{' && text[i] != '}' &&
           text[i] != '=' && text[i] != ':') {
      ++i;
    }
    const std::string seg = text.substr(start, i - start);
    if (seg.empty()) return fail("an empty segment");
    if (seg == "*") {
      t.segments.push_back({Segment::Kind::kWildcard, ""});
    } else if (seg == "**") {
      t.segments.push_back({Segment::Kind::kDeepWildcard, ""});
    } else {
      if (seg.find('*') != std::string::npos) return fail("'*' inside a literal");
      t.segments.push_back({Segment::Kind::kLiteral, seg});
    }
    return Status::OK();
  };
  while (i <= text.size()) {
    if (i < text.size() && text[i] == '{') {
      const auto close = text.find('}', i);
      if (close == std::string::npos) return fail("an unclosed '{'");
      const std::string inner = text.substr(i + 1, close - i - 1);
      const auto eq = inner.find('=');
      Variable v;
      v.field_name = inner.substr(0, eq);
      auto field = ResolveFieldPath(input, v.field_name, /*by_json_name_too=*/false);
      if (!field.ok()) return fail(field.status().message());
      v.field = *field;
      const pb::FieldDescriptor* last = v.field.back();
      if (last->is_repeated() || last->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        return fail("variable " + v.field_name + " is not a singular scalar field");
      }
      v.begin = t.segments.size();
      if (eq == std::string::npos) {
        t.segments.push_back({Segment::Kind::kWildcard, ""});
        i = close + 1;
      } else {
        // The nested segments: parse them in place, up to the '}'.
        i = i + 1 + eq + 1;
        while (true) {
          if (Status s = parse_segment(); !s.ok()) return s;
          if (i < text.size() && text[i] == '/') {
            ++i;
            continue;
          }
          if (i != close) return fail("a bad variable " + v.field_name);
          break;
        }
        i = close + 1;
      }
      v.end = t.segments.size();
      t.variables.push_back(std::move(v));
    } else {
      if (Status s = parse_segment(); !s.ok()) return s;
    }
    if (i == text.size()) break;
    if (text[i] == ':') return fail("a verb (\":...\"), which this gateway does not serve");
    if (text[i] != '/') return fail(std::string("an unexpected '") + text[i] + "'");
    ++i;
  }
  for (std::size_t s = 0; s + 1 < t.segments.size(); ++s) {
    if (t.segments[s].kind == Segment::Kind::kDeepWildcard) {
      return fail("'**' that is not the last segment");
    }
  }
  return t;
}

// ---- values -------------------------------------------------------------------------------

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in a query string). False
// on a bad escape.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      unsigned value = 0;
      const auto [ptr, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, value, 16);
      if (ec != std::errc() || ptr != in.data() + i + 3) return false;
      out->push_back(static_cast<char>(value));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

template <class Int>
bool ParseDecimal(const std::string& text, Int* out) {
  if (text.empty()) return false;
  const char* begin = text.data();
  if (text[0] == '+') ++begin;  // strconv.ParseInt accepts a '+' sign
  const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), *out, 10);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// Sets `field` of `msg` (adds to it when repeated) from the text `value`, typed as
// grpc-gateway's runtime does (strconv's forms, base64 bytes, enum names or numbers). On
// failure, the form the value should have.
Status SetScalar(pb::Message* msg, const pb::FieldDescriptor* field, const std::string& value) {
  const pb::Reflection* r = msg->GetReflection();
  const bool rep = field->is_repeated();
  auto bad = [&](const std::string& form) {
    return Status::InvalidArgument("\"" + value + "\" is not " + form);
  };
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      std::int32_t v;
      if (!ParseDecimal(value, &v)) return bad("a decimal 32-bit integer");
      rep ? r->AddInt32(msg, field, v) : r->SetInt32(msg, field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      std::int64_t v;
      if (!ParseDecimal(value, &v)) return bad("a decimal 64-bit integer");
      rep ? r->AddInt64(msg, field, v) : r->SetInt64(msg, field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      std::uint32_t v;
      if (value.starts_with('-') || !ParseDecimal(value, &v)) {
        return bad("a decimal unsigned 32-bit integer");
      }
      rep ? r->AddUInt32(msg, field, v) : r->SetUInt32(msg, field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      std::uint64_t v;
      if (value.starts_with('-') || !ParseDecimal(value, &v)) {
        return bad("a decimal unsigned 64-bit integer");
      }
      rep ? r->AddUInt64(msg, field, v) : r->SetUInt64(msg, field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      // strconv.ParseBool's forms.
      static const char* const kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
      static const char* const kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
      bool v;
      if (std::find(std::begin(kTrue), std::end(kTrue), value) != std::end(kTrue)) {
        v = true;
      } else if (std::find(std::begin(kFalse), std::end(kFalse), value) != std::end(kFalse)) {
        v = false;
      } else {
        return bad("a boolean (true or false, 1 or 0)");
      }
      rep ? r->AddBool(msg, field, v) : r->SetBool(msg, field, v);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
        return bad("a decimal number");
      }
      if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT) {
        rep ? r->AddFloat(msg, field, static_cast<float>(v))
            : r->SetFloat(msg, field, static_cast<float>(v));
      } else {
        rep ? r->AddDouble(msg, field, v) : r->SetDouble(msg, field, v);
      }
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      std::string v = value;
      if (field->type() == pb::FieldDescriptor::TYPE_BYTES) {
        // Standard base64, else URL-safe (grpc-gateway's runtime.Bytes); padding optional.
        if (!absl::Base64Unescape(value, &v) && !absl::WebSafeBase64Unescape(value, &v)) {
          return bad("base64 (standard or URL-safe; '+' must be sent as %2B)");
        }
      }
      rep ? r->AddString(msg, field, std::move(v)) : r->SetString(msg, field, std::move(v));
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumDescriptor* e = field->enum_type();
      const pb::EnumValueDescriptor* ev = e->FindValueByName(value);
      std::int32_t number;
      if (ev == nullptr && ParseDecimal(value, &number)) ev = e->FindValueByNumber(number);
      if (ev == nullptr) {
        std::string names;
        for (int i = 0; i < e->value_count(); ++i) {
          names += (i == 0 ? "" : ", ") + e->value(i)->name();
        }
        return bad("a value of " + e->full_name() + " (" + names + ", or its number)");
      }
      rep ? r->AddEnum(msg, field, ev) : r->SetEnum(msg, field, ev);
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return Status::InvalidArgument("a message field cannot be set from text");
  }
  return Status::OK();
}

// The message that holds the last field of `path` in `root`, made as needed.
pb::Message* HolderOf(pb::Message* root, const FieldPath& path) {
  pb::Message* msg = root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    msg = msg->GetReflection()->MutableMessage(msg, path[i]);
  }
  return msg;
}

std::string Dotted(const FieldPath& path) {
  std::string out;
  for (const auto* f : path) out += (out.empty() ? "" : ".") + f->name();
  return out;
}

}  // namespace

// ---- errors -------------------------------------------------------------------------------

HttpResponse ErrorResponse(Code code, std::string_view message, unsigned http_status) {
  HttpResponse res;
  res.status = http_status != 0 ? http_status : static_cast<unsigned>(HttpStatusFor(code));
  nlohmann::ordered_json body;
  body["code"] = static_cast<int>(code);
  body["message"] = std::string(message);
  body["details"] = nlohmann::ordered_json::array();
  // Replace, not throw, on invalid UTF-8 (a message may quote the client's bytes).
  res.body = body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return res;
}

// ---- routes -------------------------------------------------------------------------------

struct RestGateway::Route {
  std::string http_method;  // "GET", ...; a custom rule's kind as written
  PathTemplate path;
  const pb::MethodDescriptor* method = nullptr;
  std::string grpc_name;  // "/pkg.Service/Method"
  std::string body;       // "", "*" or a field name
  FieldPath body_field;   // when body names a field
};

namespace {

// Adds the routes of `rule` (and of its additional bindings) for `method`.
Status AddRoutes(const pb::MethodDescriptor* method, const google::api::HttpRule& rule,
                 bool top_level, std::vector<RestGateway::Route>* routes) {
  RestGateway::Route route;
  std::string path;
  switch (rule.pattern_case()) {
    case google::api::HttpRule::kGet: route.http_method = "GET", path = rule.get(); break;
    case google::api::HttpRule::kPut: route.http_method = "PUT", path = rule.put(); break;
    case google::api::HttpRule::kPost: route.http_method = "POST", path = rule.post(); break;
    case google::api::HttpRule::kDelete:
      route.http_method = "DELETE", path = rule.delete_();
      break;
    case google::api::HttpRule::kPatch: route.http_method = "PATCH", path = rule.patch(); break;
    case google::api::HttpRule::kCustom:
      route.http_method = rule.custom().kind();
      path = rule.custom().path();
      break;
    case google::api::HttpRule::PATTERN_NOT_SET:
      return Status::InvalidArgument(method->full_name() + ": an http rule without a pattern");
  }
  auto tmpl = ParseTemplate(path, method->input_type());
  if (!tmpl.ok()) return tmpl.status();
  route.path = std::move(*tmpl);
  route.method = method;
  route.grpc_name = "/" + method->service()->full_name() + "/" + method->name();
  route.body = rule.body();
  if (!route.body.empty() && route.body != "*") {
    auto field = ResolveFieldPath(method->input_type(), route.body, false);
    if (!field.ok()) {
      return Status::InvalidArgument(method->full_name() + ": body " + field.status().message());
    }
    if (field->back()->is_repeated() ||
        field->back()->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      return Status::InvalidArgument(method->full_name() + ": body " + route.body +
                                     " is not a singular message field");
    }
    route.body_field = *field;
  }
  if (!rule.response_body().empty()) {
    return Status::InvalidArgument(method->full_name() +
                                   ": response_body is not served by this gateway");
  }
  routes->push_back(std::move(route));
  if (top_level) {
    for (const auto& extra : rule.additional_bindings()) {
      if (Status s = AddRoutes(method, extra, false, routes); !s.ok()) return s;
    }
  }
  return Status::OK();
}

// The path variables' values when `route` matches `parts` (the path's raw segments).
std::optional<std::vector<std::string>> Match(const RestGateway::Route& route,
                                              const std::vector<std::string_view>& parts) {
  const auto& segs = route.path.segments;
  const bool deep = !segs.empty() && segs.back().kind == Segment::Kind::kDeepWildcard;
  if (deep ? parts.size() < segs.size() - 1 : parts.size() != segs.size()) return std::nullopt;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i].kind == Segment::Kind::kLiteral && parts[i] != segs[i].literal) {
      return std::nullopt;
    }
  }
  std::vector<std::string> values;
  for (const Variable& v : route.path.variables) {
    const std::size_t end = v.end == segs.size() && deep ? parts.size() : v.end;
    std::string value;
    for (std::size_t i = v.begin; i < end; ++i) {
      std::string decoded;
      if (!PercentDecode(parts[i], false, &decoded)) return std::nullopt;
      value += (i == v.begin ? "" : "/") + decoded;
    }
    values.push_back(std::move(value));
  }
  return values;
}

// True when `a` is more specific than `b`: position by position, a literal beats `*` beats
// `**`; at equal kinds, the longer template.
bool MoreSpecific(const PathTemplate& a, const PathTemplate& b) {
  const std::size_t n = std::min(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a.segments[i].kind != b.segments[i].kind) {
      return a.segments[i].kind < b.segments[i].kind;
    }
  }
  return a.segments.size() > b.segments.size();
}

}  // namespace

RestGateway::RestGateway(ApiBackend& backend, std::vector<Route> routes)
    : backend_(backend), routes_(std::move(routes)) {}

RestGateway::~RestGateway() = default;

Result<std::unique_ptr<RestGateway>> RestGateway::Create(
    ApiBackend& backend, const std::vector<const pb::ServiceDescriptor*>& services) {
  std::vector<Route> routes;
  for (const pb::ServiceDescriptor* service : services) {
    for (int m = 0; m < service->method_count(); ++m) {
      const pb::MethodDescriptor* method = service->method(m);
      if (method->client_streaming() || method->server_streaming()) continue;
      if (!method->options().HasExtension(google::api::http)) continue;
      const auto& rule = method->options().GetExtension(google::api::http);
      if (Status s = AddRoutes(method, rule, true, &routes); !s.ok()) return s;
    }
  }
  // The order they are tried in: the most specific first (stable: ties keep the services'
  // order, as the first registered of two identical patterns wins).
  std::stable_sort(routes.begin(), routes.end(), [](const Route& a, const Route& b) {
    return MoreSpecific(a.path, b.path);
  });
  return std::unique_ptr<RestGateway>(new RestGateway(backend, std::move(routes)));
}

std::vector<std::string> RestGateway::DescribeRoutes() const {
  std::vector<std::string> out;
  for (const Route& r : routes_) {
    out.push_back(r.http_method + " " + r.path.text + " -> " + r.grpc_name);
  }
  return out;
}

std::variant<RestGateway::Call, HttpResponse> RestGateway::Prepare(
    const RestRequest& request) const {
  const std::string_view target = request.target;
  const auto qmark = target.find('?');
  const std::string_view path = target.substr(0, qmark);
  const std::string_view query =
      qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1);

  // Route.
  std::vector<std::string_view> parts;
  if (path.empty() || path[0] != '/') {
    return ErrorResponse(Code::kNotFound,
                         "Not Found: no route for path \"" + std::string(path) + "\"", 404);
  }
  for (std::size_t start = 1;;) {
    const auto slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos
                                                                         : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  const Route* route = nullptr;
  std::vector<std::string> values;
  std::string allowed;  // the methods of the routes whose path matches
  for (const Route& r : routes_) {
    auto matched = Match(r, parts);
    if (!matched) continue;
    if (r.http_method == request.method) {
      route = &r;
      values = std::move(*matched);
      break;
    }
    if (allowed.find(r.http_method) == std::string::npos) {
      allowed += (allowed.empty() ? "" : ", ") + r.http_method;
    }
  }
  if (route == nullptr) {
    if (!allowed.empty()) {
      HttpResponse res = ErrorResponse(
          Code::kUnimplemented,
          "Method Not Allowed: " + std::string(request.method) + " " + std::string(path) +
              " (allowed: " + allowed + ")",
          405);
      res.headers.emplace_back("Allow", allowed);
      return res;
    }
    return ErrorResponse(Code::kNotFound,
                         "Not Found: no route for path \"" + std::string(path) + "\"", 404);
  }

  // Height.
  std::int64_t height = 0;
  if (request.height_header) {
    const std::string text(*request.height_header);
    std::string why;
    if (!ParseHeightHeader(text, &height, &why)) {
      return ErrorResponse(Code::kInvalidArgument,
                           std::string("bad ") + kHeightHeader + " header \"" + text +
                               "\": expected a decimal height, 0 or more (0: the latest)");
    }
  }

  // The request message: path variables, then query parameters, then the body.
  const pb::Descriptor* input = route->method->input_type();
  std::unique_ptr<pb::Message> msg(
      pb::MessageFactory::generated_factory()->GetPrototype(input)->New());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Variable& v = route->path.variables[i];
    pb::Message* holder = HolderOf(msg.get(), v.field);
    if (Status s = SetScalar(holder, v.field.back(), values[i]); !s.ok()) {
      return ErrorResponse(Code::kInvalidArgument, "bad path parameter \"" + v.field_name +
                                                       "\": " + s.message());
    }
  }

  if (route->body != "*" && !query.empty()) {
    // Group the values by name (a repeated field takes each), in a fixed order.
    std::map<std::string, std::vector<std::string>> params;
    for (std::size_t start = 0; start <= query.size();) {
      auto amp = query.find('&', start);
      if (amp == std::string_view::npos) amp = query.size();
      const std::string_view pair = query.substr(start, amp - start);
      start = amp + 1;
      if (pair.empty()) continue;
      const auto eq = pair.find('=');
      std::string name, value;
      if (!PercentDecode(pair.substr(0, eq), true, &name) ||
          !PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                         true, &value)) {
        return ErrorResponse(Code::kInvalidArgument,
                             "bad query string: an invalid %-escape in \"" + std::string(pair) +
                                 "\"");
      }
      params[name].push_back(std::move(value));
    }
    for (const auto& [name, list] : params) {
      // A parameter naming a path variable is ignored, as grpc-gateway filters them out.
      const bool is_path_variable =
          std::any_of(route->path.variables.begin(), route->path.variables.end(),
                      [&](const Variable& v) { return v.field_name == name; });
      if (is_path_variable) continue;
      auto field = ResolveFieldPath(input, name, /*by_json_name_too=*/true);
      if (!field.ok()) {
        return ErrorResponse(Code::kInvalidArgument,
                             "unknown query parameter \"" + name + "\": " +
                                 field.status().message());
      }
      const pb::FieldDescriptor* last = field->back();
      if (last->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        return ErrorResponse(Code::kInvalidArgument,
                             "bad query parameter \"" + name + "\": " + Dotted(*field) +
                                 " is a message; set its fields (" + name + ".<field>=...)");
      }
      if (!last->is_repeated() && list.size() > 1) {
        return ErrorResponse(Code::kInvalidArgument,
                             "bad query parameter \"" + name + "\": given " +
                                 std::to_string(list.size()) + " times, but " + Dotted(*field) +
                                 " is not repeated");
      }
      pb::Message* holder = HolderOf(msg.get(), *field);
      for (const std::string& value : list) {
        if (Status s = SetScalar(holder, last, value); !s.ok()) {
          return ErrorResponse(Code::kInvalidArgument,
                               "bad query parameter \"" + name + "\": " + s.message());
        }
      }
    }
  }

  if (!route->body.empty() && !request.body.empty()) {
    const pb::Descriptor* body_type =
        route->body == "*" ? input : route->body_field.back()->message_type();
    auto binary = FromJson(body_type, request.body);  // protobuf's parser, unknown fields refused
    if (!binary.ok()) {
      return ErrorResponse(Code::kInvalidArgument, "bad JSON body: " + binary.status().message());
    }
    pb::Message* target_msg = msg.get();
    if (route->body != "*") {
      pb::Message* holder = HolderOf(msg.get(), route->body_field);
      target_msg = holder->GetReflection()->MutableMessage(holder, route->body_field.back());
    }
    if (!target_msg->MergeFromString(*binary)) {
      return ErrorResponse(Code::kInvalidArgument, "bad JSON body for " +
                                                       body_type->full_name() +
                                                       ": it does not convert to the message");
    }
  }

  std::string serialized;
  if (!msg->SerializeToString(&serialized)) {
    return ErrorResponse(Code::kInternal, "cannot serialize the request");
  }
  return Call{route, route->grpc_name, std::move(serialized), height};
}

HttpResponse RestGateway::Answer(const Route& route, const CallResult& result) {
  if (result.code != Code::kOk) return ErrorResponse(result.code, result.message);
  // Proto field names and every default printed, as the SDK's gateway marshaler (OrigName,
  // EmitDefaults); Any with the Cosmos type URL in "@type".
  auto json = ToJson(route.method->output_type(), result.response);
  if (!json.ok()) {
    return ErrorResponse(Code::kInternal, "cannot write the answer as JSON: " +
                                              json.status().message());
  }
  HttpResponse res;
  res.status = 200;
  res.body = std::move(*json);
  if (result.height > 0) {
    const std::string height = std::to_string(result.height);
    res.headers.emplace_back(kHeightResponseHeader, height);
    res.headers.emplace_back(kGatewayHeightResponseHeader, height);
  }
  return res;
}

void RestGateway::Handle(const RestRequest& request,
                         std::function<void(HttpResponse)> done) const {
  auto prepared = Prepare(request);
  if (auto* refused = std::get_if<HttpResponse>(&prepared)) {
    done(std::move(*refused));
    return;
  }
  Call& call = std::get<Call>(prepared);
  const Route* route = call.route;
  backend_.Call(std::move(call.method), std::move(call.request), call.height,
                [route, done = std::move(done)](CallResult result) {
                  done(Answer(*route, result));
                });
}

HttpResponse RestGateway::HandleNow(const RestRequest& request) const {
  auto prepared = Prepare(request);
  if (auto* refused = std::get_if<HttpResponse>(&prepared)) return std::move(*refused);
  const Call& call = std::get<Call>(prepared);
  return Answer(*call.route, backend_.CallNow(call.method, call.request, call.height));
}

}  // namespace kairos::app::api
