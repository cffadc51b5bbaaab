#include "runtime/client/client_config.hpp"

#include <algorithm>

namespace capstan::client {

std::vector<std::string> split_bootstrap(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

} // namespace capstan::client
