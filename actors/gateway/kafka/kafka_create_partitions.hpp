#pragma once

// Kafka CreatePartitions (versions 0-3) through the shared create-partitions handler
// (handlers/create_partitions_handler.hpp), one call per topic. The controller places the new
// replicas itself: explicit assignments are refused with INVALID_REPLICA_ASSIGNMENT.
// ValidateOnly checks the count against the topic's current one without growing it.

#include <vector>

#include <kj/async.h>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_header.hpp"

namespace capstan {

// What ValidateOnly answers for growing `topic` to `count` partitions given `md`:
// UNKNOWN_TOPIC_OR_PARTITION, or INVALID_PARTITIONS unless `count` exceeds the current count.
error validate_create_partitions(const std::string& topic, int32_t count,
                                 const cluster_metadata& md);

// REQUIRES: `results` holds one answer per topic of `req`, in order.
kafka::struct_value create_partitions_response_body(const std::vector<answer<bool>>& results,
                                                    const kafka::request& req);

// REQUIRES: `req` is a decoded CreatePartitions request at an offered version.
kj::Promise<bytes> serve_kafka_create_partitions(const client_session& s, kafka::request req);

} // namespace capstan
