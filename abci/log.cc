#include "abci/log.h"

namespace kairos::abci {

const std::shared_ptr<spdlog::logger>& Log() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("abci")) return existing;
    auto l = spdlog::default_logger()->clone("abci");
    spdlog::register_logger(l);
    return l;
  }();
  return logger;
}

}  // namespace kairos::abci
