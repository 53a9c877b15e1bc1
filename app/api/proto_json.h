// The proto3 JSON mapping of Kairos's messages, as the Cosmos SDK prints it, by protobuf's own
// JSON support. Cosmos type URLs are "/cosmos.auth.v1beta1.BaseAccount", without the
// "type.googleapis.com" host that protobuf's default resolver demands, so every conversion goes
// through a type resolver over the generated pool with an empty URL prefix: an Any prints as
// {"@type": "/cosmos.auth.v1beta1.BaseAccount", ...its fields} and parses back the same way.
// Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <google/protobuf/descriptor.h>

#include "store/status.h"

namespace kairos::app::api {

struct JsonStyle {
  bool proto_names = true;          // "account_number" (the SDK's REST), else "accountNumber"
  bool print_defaults = true;       // zero values too, as the SDK's REST prints them
  bool indent = false;
};

// `bytes`, a serialized `type`, as JSON. Corruption when the bytes are not a `type`.
Result<std::string> ToJson(const google::protobuf::Descriptor* type, std::string_view bytes,
                           const JsonStyle& style = {});

// JSON of a `type`, serialized. InvalidArgument with protobuf's message (it names the field)
// when the JSON is not a `type`; unknown fields are refused.
Result<std::string> FromJson(const google::protobuf::Descriptor* type, std::string_view json);

}  // namespace kairos::app::api
