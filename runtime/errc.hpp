#pragma once

// Error codes with Kafka's names (see docs/architecture.md, "Errors"). Values are stable: they
// cross process boundaries inside caf::error and Cap'n Proto responses.

#include <cstdint>
#include <string_view>

namespace capstan {

enum class errc : uint8_t {
  none = 0,
  not_leader_or_follower,
  unknown_topic_or_partition,
  offset_out_of_range,
  corrupt_message,
  message_too_large,
  not_enough_replicas,
  not_enough_replicas_after_append,
  request_timed_out,
  fenced_leader_epoch,
  unknown_leader_epoch,
  stale_controller_epoch,
  inconsistent_topic_id,
  kafka_storage_error,
  invalid_topic_exception,
  topic_already_exists,
  invalid_replication_factor,
  policy_violation,
  unsupported_compression_type,
  invalid_record,
  invalid_config,
  unknown_server_error,
  network_exception,
  invalid_request,
  invalid_required_acks,
  invalid_partitions,
  invalid_timestamp,
  not_controller,
  invalid_update_version,
  ineligible_replica,
  duplicate_broker_registration,
  inconsistent_cluster_id,
  stale_broker_epoch,
  election_not_needed,
  preferred_leader_not_available,
  // The idempotent producer's (docs/idempotence.md).
  out_of_order_sequence_number,
  invalid_producer_epoch,
  // The controller quorum's (docs/controller.md, "Quorum identity").
  inconsistent_voter_set,
  // Partition reassignment's (docs/operations.md, "Replacing a node").
  invalid_replica_assignment,
  no_reassignment_in_progress,
  // Unregistering a node gone for good (docs/operations.md, "Replacing a node").
  broker_id_not_registered,
  // The group coordinator's (docs/groups.md).
  coordinator_load_in_progress,
  coordinator_not_available,
  not_coordinator,
  // Group membership's (docs/groups.md, "Membership").
  illegal_generation,
  inconsistent_group_protocol,
  unknown_member_id,
  invalid_session_timeout,
  rebalance_in_progress,
  member_id_required,
  group_max_size_reached,
  fenced_instance_id,
  // Deleting a group (docs/groups.md, "Deleting a group").
  group_not_empty,
  group_id_not_found,
  // The Kafka wire codec's: an API version outside a message's description (docs/kafka.md).
  unsupported_version,
  // Changing the controller quorum's voters (docs/controller.md, "Voter changes").
  duplicate_voter,
  voter_not_found,
  // The Kafka listener's: a DeleteTopics v6 topic id no topic has (docs/kafka.md).
  unknown_topic_id,
  // Between nodes: a node's cluster address refused the connection, so no process listens there
  // (docs/controller.md, "Broker sessions").
  broker_not_available,
};

// The last value above: append new codes after it and move this along, so a receiver can tell a
// code it knows from one a newer peer sent.
inline constexpr errc last_errc = errc::broker_not_available;

// Kafka's upper-case name, e.g. "CORRUPT_MESSAGE".
std::string_view to_string(errc code);

// The errc a wire code stands for; a code past last_errc (from a newer peer) is
// UNKNOWN_SERVER_ERROR, as Kafka's clients treat an error code they do not know.
errc errc_from_code(uint8_t code);

} // namespace capstan
