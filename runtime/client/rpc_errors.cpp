#include "runtime/client/rpc_errors.hpp"

#include <string>

namespace capstan::client {

error from_exception(const kj::Exception& e) {
  std::string text(e.getDescription().cStr());
  if (e.getType() == kj::Exception::Type::DISCONNECTED)
    return make_error(errc::network_exception,
                      text.rfind("cannot connect", 0) == 0 ? text : "connection lost: " + text);
  return make_error(errc::unknown_server_error, text);
}

error from_code(uint8_t code, capnp::Text::Reader message) {
  if (code > static_cast<uint8_t>(last_errc))
    return make_error(errc::unknown_server_error,
                      "error code " + std::to_string(code) +
                          " (unknown to this client): " + message.cStr());
  return make_error(errc_from_code(code), std::string(message.cStr()));
}

} // namespace capstan::client
