#include "runtime/cli/option_checks.hpp"

#include <charconv>
#include <string>

#include "actors/node/listen_address.hpp"

namespace capstan::cli {

CLI::Validator integer_in(int64_t min, int64_t max) {
  const bool unbounded = max == std::numeric_limits<int64_t>::max();
  const std::string allowed = unbounded ? "an integer >= " + std::to_string(min)
                                        : "an integer in " + std::to_string(min) + ".." + std::to_string(max);
  const std::string shown =
    unbounded ? "INT >= " + std::to_string(min) : "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
    [min, max, allowed](std::string& text) -> std::string {
      int64_t v = 0;
      const char* end = text.data() + text.size();
      auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (text.empty() || ptr != end || (ec != std::errc{} && ec != std::errc::result_out_of_range))
        return "'" + text + "' is not " + allowed;
      if (ec == std::errc::result_out_of_range || v < min || v > max) return text + " is not " + allowed;
      return {};
    },
    shown);
}

CLI::Validator non_empty(const std::string& allowed) {
  return CLI::Validator(
    [allowed](std::string& text) -> std::string {
      if (!text.empty()) return {};
      return "an empty value is not allowed; give " + allowed;
    },
    "");
}

CLI::Validator listen_address_check() {
  return CLI::Validator(
    [](std::string& text) -> std::string {
      if (parse_listen_address(text, "address")) return {};
      return "'" + text + "' is not HOST:PORT with a port in 0..65535";
    },
    "HOST:PORT");
}

} // namespace capstan::cli
