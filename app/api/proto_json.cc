// The proto3 JSON mapping with Cosmos type URLs: see proto_json.h.
#include "app/api/proto_json.h"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <memory>

namespace kairos::app::api {

namespace gp = google::protobuf;

namespace {

// Over the generated pool, with URL prefix "": a type URL is "/" + the type's full name.
gp::util::TypeResolver* Resolver() {
  static gp::util::TypeResolver* const resolver =
      gp::util::NewTypeResolverForDescriptorPool("", gp::DescriptorPool::generated_pool());
  return resolver;
}

std::string UrlOf(const gp::Descriptor* type) { return "/" + type->full_name(); }

}  // namespace

Result<std::string> ToJson(const gp::Descriptor* type, std::string_view bytes,
                           const JsonStyle& style) {
  gp::util::JsonPrintOptions options;
  options.preserve_proto_field_names = style.proto_names;
  options.always_print_primitive_fields = style.print_defaults;
  options.add_whitespace = style.indent;
  std::string json;
  const auto s = gp::util::BinaryToJsonString(Resolver(), UrlOf(type), std::string(bytes), &json,
                                              options);
  if (!s.ok()) {
    return Status::Corruption("not a " + type->full_name() + ": " + std::string(s.message()));
  }
  return json;
}

Result<std::string> FromJson(const gp::Descriptor* type, std::string_view json) {
  gp::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  std::string binary;
  const auto s = gp::util::JsonToBinaryString(Resolver(), UrlOf(type), std::string(json), &binary,
                                              options);
  if (!s.ok()) {
    return Status::InvalidArgument("not a " + type->full_name() + " in JSON: " +
                                   std::string(s.message()));
  }
  return binary;
}

}  // namespace kairos::app::api
