#include "tests/support/kafka_vector.hpp"

#include <catch2/catch.hpp>

namespace capstan::kafka {

bytes from_hex(std::string_view hex) {
  bytes out;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); ++i) {
    if (hex[i] == ' ') continue;
    out.push_back(static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
    ++i;
  }
  return out;
}

struct_value decode_vector(const api_schema& api, message_kind kind, api_version version,
                           const bytes& wire) {
  auto decoded = decode_message(api, kind, version, wire);
  REQUIRE(decoded.ok());
  bytes again;
  REQUIRE(encode_message(api, kind, version, *decoded, again).ok());
  CHECK(again == wire);
  return std::move(decoded).value();
}

} // namespace capstan::kafka
