#include "actors/node/listen_address.hpp"

#include <cerrno>
#include <charconv>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

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

bool address_in_use(const listen_address& address) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const auto port = std::to_string(address.port);
  if (::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found) != 0) return false;
  bool in_use = false;
  for (const addrinfo* a = found; a != nullptr && !in_use; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    // As the listeners themselves bind: a socket in TIME_WAIT does not count as in use.
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    in_use = ::bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return in_use;
}

error listen_failure(std::string_view listener, const listen_address& address, std::string_view reason) {
  const std::string named = std::string(listener) + " " + address.host + ":" + std::to_string(address.port);
  if (address.port != 0 && address_in_use(address))
    return make_error(errc::network_exception, named + " is in use (another process listens there)");
  return make_error(errc::network_exception, named + ": " + std::string(reason));
}

} // namespace capstan
