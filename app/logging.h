// Process-wide logging setup (spdlog). Call once in main, before any module logs: every module
// logger ("abci", "store", "app") is a clone of the default logger configured here.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace kairos::app {

// `level`: trace|debug|info|warn|error|critical|off. `format`: plain|json. Logs go to stderr.
// REQUIRES: values validated by ValidateConfig.
void SetupLogging(const std::string& level, const std::string& format);

// The app module's logger.
const std::shared_ptr<spdlog::logger>& Log();

}  // namespace kairos::app
