#include "actors/node/listen_address.hpp"

#include <charconv>

namespace capstan {

result<listen_address> parse_listen_address(std::string_view text, std::string_view what) {
  auto bad = [&](const std::string& why) {
    return make_error(errc::invalid_config,
                      std::string(what) + ": '" + std::string(text) + "' " + why);
  };
  std::string_view rest = text;
  if (auto scheme = rest.find("://"); scheme != std::string_view::npos) rest = rest.substr(scheme + 3);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return bad("is not HOST:PORT");
  std::string_view host = rest.substr(0, colon);
  std::string_view port_text = rest.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return bad("has no host");
  uint32_t port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() ||
      port > 65535)
    return bad("has no port in [0, 65535]");
  return listen_address{std::string(host), static_cast<uint16_t>(port)};
}

} // namespace capstan
