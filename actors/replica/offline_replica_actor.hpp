#pragma once

// An offline partition: its log directory is damaged or unreadable, so nothing opened it. It
// stands in the routing table where the partition replica would, so every request gets
// KAFKA_STORAGE_ERROR with a message naming the damage (Kafka takes such a log offline too)
// rather than UNKNOWN_TOPIC_OR_PARTITION. It touches no file: the directory stays as it was
// found until an operator acts (`capstan log repair`, docs/operations.md).

#include <string>

#include <caf/fwd.hpp>

#include "actors/replica/replica_messages.hpp"

namespace capstan {

// `reason` is the whole message clients get, e.g. "orders-0 on node 1 is offline: ...".
partition_replica_actor spawn_offline_replica(caf::actor_system& sys, std::string reason);

} // namespace capstan
