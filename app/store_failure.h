// What kairosd does when the store cannot be read or written: the node is broken. Answering on
// from a store that fails would be worse than stopping, so these stop the process loudly (exit
// code 74, EX_IOERR), as CometBFT expects of a broken app. Thread-safe.
#pragma once

#include <string>

#include "ante/errors.h"
#include "store/status.h"

namespace kairos::app {

[[noreturn]] void StopOnBrokenStore(const std::string& what, const Status& s);

// Stops if a tx outcome says the store broke; an ordinary tx failure returns.
void CheckStore(const ante::TxStatus& s, const char* where);

}  // namespace kairos::app
