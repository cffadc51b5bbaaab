#pragma once

// Kafka's FindCoordinator (versions 0-3) on the FindCoordinator handler
// (handlers/find_coordinator_handler.hpp): the coordinator node, at its advertised Kafka
// listener rather than its client RPC address.

#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/find_coordinator_handler.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// Kafka's key type for a consumer group; the only one capstan coordinates (a transactional id,
// type 1, is answered INVALID_REQUEST).
inline constexpr int64_t kafka_coordinator_key_group = 0;

// The body answering `a` at `version`. `brokers` are the live nodes as this node knows them: a
// coordinator without an advertised Kafka listener among them is COORDINATOR_NOT_AVAILABLE.
kafka::struct_value find_coordinator_response(const answer<coordinator_address>& a,
                                              const std::vector<broker_info>& brokers);

kj::Promise<bytes> serve_kafka_find_coordinator(const client_session& s, kafka::request req);

} // namespace capstan
