// The uvarints of the ABCI frame length prefix are store/varint.h's (the project's one varint);
// these names keep the abci-side spelling that the frame and dispatcher tests use.
// Pure functions; thread-safe.
#pragma once

#include "store/varint.h"

namespace kairos::abci {

using ::kairos::AppendUvarint;
using ::kairos::DecodeUvarint;
using ::kairos::EncodeUvarint;
using ::kairos::kMaxUvarintBytes;
using ::kairos::UvarintResult;
using ::kairos::UvarintStatus;

}  // namespace kairos::abci
