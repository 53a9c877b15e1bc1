// The SIGN_MODE_DIRECT sign bytes: the canonical encoding of cosmos.tx.v1beta1.SignDoc
// {body_bytes = 1, auth_info_bytes = 2, chain_id = 3, account_number = 4}. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kairos::ante {

std::string SignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                         std::string_view chain_id, std::uint64_t account_number);
// The same bytes appended to `out` (a buffer the caller reuses).
void AppendSignDocBytes(std::string_view body_bytes, std::string_view auth_info_bytes,
                        std::string_view chain_id, std::uint64_t account_number,
                        std::string* out);

}  // namespace kairos::ante
