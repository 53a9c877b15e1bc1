#include "app/genesis_json.h"

#include <charconv>

#include "ante/context.h"
#include "crypto/bech32.h"

namespace kairos::app::genesis_json {

namespace {

// A 64-bit integer of type T (uint64_t or int64_t): a JSON integer or a decimal string.
template <class T>
Result<T> ReadInteger(const json& v, const std::string& path, std::string_view what) {
  std::string text;
  if (v.is_number_integer()) {
    text = v.is_number_unsigned() ? std::to_string(v.get<std::uint64_t>())
                                  : std::to_string(v.get<std::int64_t>());
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    return Bad(path, "must be " + std::string(what) + " or a decimal string");
  }
  T out = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return Bad(path, "not " + std::string(what) + ": \"" + text + "\"");
  }
  return out;
}

}  // namespace

Status Bad(const std::string& path, const std::string& why) {
  return Status::InvalidArgument("genesis " + path + ": " + why);
}

Status CheckKeys(const json& obj, const std::string& path, std::set<std::string> allowed) {
  if (!obj.is_object()) return Bad(path, "must be a JSON object");
  for (const auto& [key, value] : obj.items()) {
    if (!allowed.contains(key)) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Bad(path + "." + key, "unknown field (known: " + list + ")");
    }
  }
  return Status::OK();
}

Result<std::uint64_t> ReadUint(const json& v, const std::string& path) {
  return ReadInteger<std::uint64_t>(v, path, "a non-negative 64-bit integer");
}

Result<std::int64_t> ReadInt(const json& v, const std::string& path) {
  return ReadInteger<std::int64_t>(v, path, "a signed 64-bit integer");
}

Result<std::int64_t> ReadHeight(const json& v, const std::string& path) {
  auto h = ReadInt(v, path);
  if (h.ok() && *h < 0) return Bad(path, "must not be negative");
  return h;
}

Result<ante::Uint256> ReadAmount(const json& v, const std::string& path) {
  std::string text;
  if (v.is_number_unsigned()) {
    text = std::to_string(v.get<std::uint64_t>());
  } else if (v.is_string()) {
    text = v.get<std::string>();
  } else {
    return Bad(path, "must be a decimal string");
  }
  if (text.empty()) return ante::Uint256(0);
  auto amount = ante::ParseAmount(text);
  if (!amount.ok()) return Bad(path, "not a decimal integer below 2^256: \"" + text + "\"");
  return *amount;
}

Result<std::int64_t> ReadDuration(const json& v, const std::string& path) {
  if (!v.is_string()) return Bad(path, "must be a duration string such as \"600s\" or \"10m\"");
  auto d = ante::ParseDuration(v.get<std::string>());
  if (!d.ok()) return Bad(path, d.status().message());
  return *d;
}

Result<std::string> ReadAddress(const json& v, const std::string& path) {
  if (!v.is_string()) return Bad(path, "must be a bech32 address string");
  auto a = crypto::DecodeAccountAddress(v.get<std::string>());
  if (!a.ok()) return Bad(path, a.status().message());
  return *a;
}

Result<bool> ReadBool(const json& v, const std::string& path) {
  if (!v.is_boolean()) return Bad(path, "must be true or false");
  return v.get<bool>();
}

}  // namespace kairos::app::genesis_json
