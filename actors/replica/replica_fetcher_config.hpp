#pragma once

// A replica fetcher's settings, Kafka's replica.fetch.* broker configs (docs/configuration.md,
// "Replication"). A plain struct so that the node's config can hold it without CAF's headers.

#include <cstdint>

namespace capstan {

struct replica_fetcher_config {
  int32_t max_wait_ms = 500;                 // replica.fetch.wait.max.ms
  int32_t min_bytes = 1;                     // replica.fetch.min.bytes
  int32_t partition_max_bytes = 1048576;     // replica.fetch.max.bytes
  int32_t response_max_bytes = 10485760;     // replica.fetch.response.max.bytes
  int64_t backoff_ms = 1000;                 // replica.fetch.backoff.ms
  // How long a request may go unanswered beyond its max wait before the fetcher backs off and
  // asks again (the leader died or the link dropped it).
  int64_t request_timeout_ms = 30000;        // replica.socket.timeout.ms
};

} // namespace capstan
