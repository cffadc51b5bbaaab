#pragma once

// Client settings, named as Kafka's producer/consumer configs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/batch/compression.hpp"

namespace capstan::client {

// auto.offset.reset: where a consumer goes when its position is out of range (below the log start
// after retention or a repair, or past the log end).
enum class offset_reset {
  earliest, // the log start
  latest,   // the log end (Kafka's default)
  none,     // no reset: the poll fails with OFFSET_OUT_OF_RANGE
};

struct client_config {
  // host:port list; the first that answers gives the metadata.
  std::vector<std::string> bootstrap = {"127.0.0.1:9192"};
  int64_t request_timeout_ms = 30000;      // request.timeout.ms
  int64_t delivery_timeout_ms = 120000;    // delivery.timeout.ms: send() to acknowledgement
  int64_t retry_backoff_ms = 100;          // retry.backoff.ms
  int64_t metadata_max_age_ms = 300000;    // metadata.max.age.ms
  // producer
  int16_t acks = -1;                       // acks: 0, 1, -1 (all)
  int32_t batch_size = 16384;              // batch.size
  // batch.max.size (KIP-782's proposal): while a partition cannot send its open batch yet
  // (max.in.flight requests unanswered, or a full batch waiting ahead of it), that batch grows
  // past batch.size up to this and to half the topic's max.message.bytes; at or below
  // batch.size, batches never grow.
  int32_t batch_max_size = 262144;
  int64_t linger_ms = 0;                   // linger.ms (docs/architecture.md: not Kafka 4.0's 5)
  int32_t max_in_flight = 5;               // max.in.flight.requests.per.connection
  int64_t buffer_memory = 33554432;        // buffer.memory: send() blocks above it
  // compression.type: the codec of every batch sent; batch.size counts uncompressed bytes.
  compression compression_type = compression::none;
  // enable.idempotence, as Kafka 3.x: unset means on when acks is all and max_in_flight <= 5,
  // else off; set to true with acks 0/1 or max_in_flight > 5 it is INVALID_CONFIG
  // (resolve_idempotence in producer_sequencer.hpp, docs/idempotence.md).
  std::optional<bool> enable_idempotence;
  // consumer
  int32_t fetch_max_bytes = 52428800;      // fetch.max.bytes
  int32_t max_partition_fetch_bytes = 1048576; // max.partition.fetch.bytes
  int32_t fetch_min_bytes = 1;             // fetch.min.bytes
  int32_t fetch_max_wait_ms = 500;         // fetch.max.wait.ms
  offset_reset auto_offset_reset = offset_reset::latest; // auto.offset.reset
  // check.crcs: verify every fetched batch's CRC-32C before its records reach the application;
  // a mismatch fails the poll with CORRUPT_MESSAGE. Off saves the CRC computation only: the
  // batch framing is still checked, so a damaged batch can still fail, but flipped record bytes
  // are handed over as they came.
  bool check_crcs = true;
  // consumer group membership (group_consumer.hpp)
  std::string client_id = "capstan";           // client.id
  std::string group_instance_id;               // group.instance.id: empty for a dynamic member
  int32_t session_timeout_ms = 45000;          // session.timeout.ms
  int32_t heartbeat_interval_ms = 3000;        // heartbeat.interval.ms
  // max.poll.interval.ms: a member that does not poll for this long leaves its group; also its
  // rebalance timeout, as in Kafka.
  int32_t max_poll_interval_ms = 300000;
  bool enable_auto_commit = true;              // enable.auto.commit
  int32_t auto_commit_interval_ms = 5000;      // auto.commit.interval.ms
  // partition.assignment.strategy, in preference order (assignors.hpp). Kafka's default: range
  // is chosen while any member lacks cooperative-sticky, and the group rebalances eagerly unless
  // every assignor listed is cooperative.
  std::vector<std::string> partition_assignment_strategy = {"range", "cooperative-sticky"};
};

// bootstrap.servers as Kafka writes it, "host:port,host:port": the addresses, empty ones left out.
std::vector<std::string> split_bootstrap(std::string_view list);

} // namespace capstan::client
