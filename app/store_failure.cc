#include "app/store_failure.h"

#include <cstdlib>

#include "app/logging.h"

namespace kairos::app {

void StopOnBrokenStore(const std::string& what, const Status& s) {
  Log()->critical("{} failed: {}. The store is broken; stopping.", what, s.ToString());
  spdlog::shutdown();
  std::_Exit(74);  // EX_IOERR
}

void CheckStore(const ante::TxStatus& s, const char* where) {
  if (s.store_failure()) StopOnBrokenStore(where, Status::IOError(s.log()));
}

}  // namespace kairos::app
