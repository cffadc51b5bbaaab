#pragma once

// Kafka answers CreateTopics and CreatePartitions once the controller committed them. The gateway
// also waits, at most metadata_catch_up_wait, until this node's metadata cache shows the topic
// with `partitions` partitions and this node's replicas of them are open, so that the client's
// next call through this node finds them (on a single node: led). Past the wait it answers
// anyway: the change did commit.

#include <cstddef>
#include <memory>
#include <string>

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"

namespace capstan {

inline constexpr auto metadata_catch_up_wait = 5 * kj::SECONDS;
inline constexpr auto metadata_catch_up_poll = 5 * kj::MILLISECONDS;

// Resolves once this node's cache shows `topic` with at least `partitions` partitions and its
// replicas of them are routed, or after metadata_catch_up_wait. Never rejects.
kj::Promise<void> await_cached(std::shared_ptr<service_context> ctx, std::string topic,
                               size_t partitions);

} // namespace capstan
