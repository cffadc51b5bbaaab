#pragma once

// FindCoordinator: the node leading the group's __consumer_offsets partition. A group's first
// call on a cluster has the controller create that topic; the caller retries meanwhile.

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"

namespace capstan {

// The coordinator's node and where each front door's clients reach it.
struct coordinator_address {
  int32_t node = -1;
  std::string host; // its client RPC listener
  uint16_t port = 0;
  std::string kafka_host; // its advertised Kafka listener; port 0: none
  uint16_t kafka_port = 0;
};

// INVALID_REQUEST for a bad group id; COORDINATOR_NOT_AVAILABLE before this node has the
// controller's metadata, while the offsets topic is being created or its partition has no leader.
kj::Promise<answer<coordinator_address>> handle_find_coordinator(const client_session& s,
                                                                 const std::string& group);

} // namespace capstan
