#include "abci/log.h"

namespace kairos::abci {

std::shared_ptr<spdlog::logger> NamedLogger(const std::string& name) {
  if (auto existing = spdlog::get(name)) return existing;
  auto l = spdlog::default_logger()->clone(name);
  spdlog::register_logger(l);
  return l;
}

const std::shared_ptr<spdlog::logger>& Log() {
  static const std::shared_ptr<spdlog::logger> logger = NamedLogger("abci");
  return logger;
}

}  // namespace kairos::abci
