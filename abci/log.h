// Module loggers. The process configures spdlog's default logger (sinks, pattern, level) before
// starting the server (app/logging.h); each module's logger is a named clone of it, made here
// for every module ("abci", "app", ...). Thread-safe once the default logger is configured.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace kairos::abci {

// The logger registered as `name`, or a clone of the default logger registered under that name.
// Callers keep the result in a function-local static (see Log()).
std::shared_ptr<spdlog::logger> NamedLogger(const std::string& name);

// The abci module's logger.
const std::shared_ptr<spdlog::logger>& Log();

}  // namespace kairos::abci
