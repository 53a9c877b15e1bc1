// Text encodings the client needs at its edges: base64 (CometBFT's JSON carries []byte as
// standard base64 with padding) and URL percent-encoding (query strings of GET requests).
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kairos::client {

// Standard alphabet, with '=' padding.
std::string Base64Encode(std::string_view bytes);
// Standard alphabet; padding required when the length is not a multiple of 4 would need it.
// nullopt for any other character or a bad length. Empty input decodes to empty.
std::optional<std::string> Base64Decode(std::string_view text);

// RFC 3986: every byte except ALPHA / DIGIT / "-" / "." / "_" / "~" becomes %XX.
std::string PercentEncode(std::string_view text);

}  // namespace kairos::client
