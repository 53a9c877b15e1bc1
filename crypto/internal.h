// Internal to crypto/ (not for other modules): byte-pointer views for the C libraries, and the
// process-wide libsecp256k1 context. Thread-safe: the context is created once (a magic static)
// and only read afterwards.
#pragma once

#include <secp256k1.h>

#include <string>
#include <string_view>

namespace kairos::crypto::internal {

// Views of std::string bytes as the unsigned char pointers that OpenSSL and libsecp256k1 take.
inline const unsigned char* Uchars(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
inline unsigned char* Uchars(std::string& s) {
  return reinterpret_cast<unsigned char*>(s.data());
}

// The one libsecp256k1 context (defined in keys.cc): created and randomized on first use, never
// destroyed, passed only as const (which libsecp256k1 documents as safe from any thread).
const secp256k1_context* Secp256k1Context();

}  // namespace kairos::crypto::internal
