// Base64, standard alphabet with '=' padding (RFC 4648): how CometBFT's JSON carries bytes and
// how the SDK's events show signatures. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kairos::crypto {

std::string Base64Encode(std::string_view bytes);
// Padding required where the length needs it. nullopt for any other character or a bad
// length. Empty input decodes to empty.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace kairos::crypto
