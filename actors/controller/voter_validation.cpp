#include "actors/controller/voter_validation.hpp"

#include <string>

#include "actors/controller/raft/voter_set.hpp"
#include "actors/node/listen_address.hpp"

namespace capstan {

status validate_voter_id(int32_t id) {
  if (id < 0)
    return make_error(errc::invalid_request,
                      "a voter's node id is >= 0, not " + std::to_string(id));
  return {};
}

status validate_voter_endpoint(std::string_view endpoint) {
  auto bad = [&](const std::string& why) {
    return make_error(errc::invalid_request,
                      "voter endpoint '" + std::string(endpoint) + "' " + why);
  };
  if (endpoint.size() > raft::max_endpoint_bytes)
    return bad("is longer than " + std::to_string(raft::max_endpoint_bytes) + " bytes");
  // Exactly what the voters' own --controller-quorum entries take after the '@'.
  if (endpoint.find("://") != std::string_view::npos) return bad("is not HOST:PORT");
  auto address = parse_listen_address(endpoint, "voter endpoint");
  if (!address) return bad("is not HOST:PORT with a port in [1, 65535]");
  if (address->port == 0) return bad("needs a port in [1, 65535], not 0");
  return {};
}

} // namespace capstan
