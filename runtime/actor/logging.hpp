#pragma once

// Named spdlog loggers, one per module ("capstan" is the default), all writing to stderr with one
// pattern: time, level, logger name, message. Safe to call from any thread.

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "runtime/result.hpp"

namespace capstan {

inline constexpr std::string_view default_logger_name = "capstan";

// Returns the logger called `name`, creating it on first use at the current global level.
std::shared_ptr<spdlog::logger> get_logger(std::string_view name = default_logger_name);

// Sets the level of every logger, existing and future. Accepts spdlog's names: "trace",
// "debug", "info", "warning"/"warn", "error"/"err", "critical", "off"; anything else is
// INVALID_CONFIG and changes nothing.
status set_log_level(std::string_view level);

} // namespace capstan
