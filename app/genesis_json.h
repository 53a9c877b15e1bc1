// Reading a module's genesis JSON (app_state.<module>) with clear errors: every function
// returns InvalidArgument "genesis <path>: <why>" naming the JSON path of the problem. Numbers
// may be JSON numbers or decimal strings (the SDK writes 64-bit integers as strings).
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ante/coins.h"
#include "store/status.h"

namespace kairos::app::genesis_json {

using json = nlohmann::json;

// InvalidArgument "genesis <path>: <why>".
Status Bad(const std::string& path, const std::string& why);
// `obj` is an object whose keys are all in `allowed` (a typo must not silently become a
// default).
Status CheckKeys(const json& obj, const std::string& path, std::set<std::string> allowed);
// A non-negative 64-bit integer.
Result<std::uint64_t> ReadUint(const json& v, const std::string& path);
// A signed 64-bit integer ("-7").
Result<std::int64_t> ReadInt(const json& v, const std::string& path);
// A height: a ReadInt that is not negative.
Result<std::int64_t> ReadHeight(const json& v, const std::string& path);
// An amount: a decimal string (or a JSON integer) below 2^256.
Result<ante::Uint256> ReadAmount(const json& v, const std::string& path);
// A duration string such as "600s" or "10m", in nanoseconds.
Result<std::int64_t> ReadDuration(const json& v, const std::string& path);
// A bech32 account address, as raw bytes.
Result<std::string> ReadAddress(const json& v, const std::string& path);
// true or false.
Result<bool> ReadBool(const json& v, const std::string& path);

}  // namespace kairos::app::genesis_json
