#include "runtime/actor/logging.hpp"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace capstan {

namespace {

constexpr const char* log_pattern = "%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v";

// Serializes get-or-create so two threads asking for a new name get one logger.
std::mutex registry_mutex;

} // namespace

std::shared_ptr<spdlog::logger> get_logger(std::string_view name) {
  std::string key{name};
  std::lock_guard guard{registry_mutex};
  if (auto existing = spdlog::get(key))
    return existing;
  auto logger = spdlog::stderr_color_mt(key);
  logger->set_pattern(log_pattern);
  logger->set_level(spdlog::get_level());
  return logger;
}

status set_log_level(std::string_view level) {
  std::string name{level};
  auto parsed = spdlog::level::from_str(name);
  // from_str maps unknown names to "off"; only an explicit "off" may mean off.
  if (parsed == spdlog::level::off && name != "off")
    return make_error(errc::invalid_config, "unknown log level '" + std::string{level} + "'");
  spdlog::set_level(parsed);
  return {};
}

} // namespace capstan
