// Text encodings the client needs at its edges: base64 (CometBFT's JSON carries []byte as
// standard base64 with padding) and URL percent-encoding (query strings of GET requests).
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "crypto/base64.h"

namespace kairos::client {

// Base64 lives in crypto/ (the ante pipeline's events use it too).
using crypto::Base64Decode;
using crypto::Base64Encode;

// RFC 3986: every byte except ALPHA / DIGIT / "-" / "." / "_" / "~" becomes %XX.
std::string PercentEncode(std::string_view text);

}  // namespace kairos::client
