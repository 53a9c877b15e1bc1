// The abci module's logger. The process configures spdlog's default logger (sinks, pattern,
// level) before starting the server; this logger is a named clone of it.
#pragma once

#include <memory>

#include <spdlog/spdlog.h>

namespace kairos::abci {

const std::shared_ptr<spdlog::logger>& Log();

}  // namespace kairos::abci
