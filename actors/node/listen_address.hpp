#pragma once

// "HOST:PORT" listener addresses, as the node flags and config keys take them. Kafka's
// "NAME://HOST:PORT" listener form is accepted too (the name is ignored), and "[::1]:PORT" for
// IPv6 hosts.

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/result.hpp"

namespace capstan {

struct listen_address {
  std::string host;
  uint16_t port = 0; // 0: any free port
};

// INVALID_CONFIG naming `what` (the flag or key) when the text is not HOST:PORT with a port in
// [0, 65535] and a non-empty host.
result<listen_address> parse_listen_address(std::string_view text, std::string_view what);

// True when binding `address` now fails with EADDRINUSE. Tells what a listener's failure meant
// when the library that opened it does not say (CAF reports only "cannot_open_port").
bool address_in_use(const listen_address& address);

// NETWORK_EXCEPTION for a listener the node could not open, naming it (`listener` says which:
// "client listener"): "client listener 127.0.0.1:9192 is in use (...)" when the address is taken,
// else "client listener 127.0.0.1:9192: <reason>" with the socket layer's `reason`.
error listen_failure(std::string_view listener, const listen_address& address, std::string_view reason);

} // namespace capstan
