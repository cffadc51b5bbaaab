#include "actors/gateway/kafka/kafka_error_code.hpp"

namespace capstan {

int16_t kafka_error_code(errc code) {
  switch (code) {
  case errc::none: return 0;
  case errc::offset_out_of_range: return 1;
  case errc::corrupt_message: return 2;
  case errc::unknown_topic_or_partition: return 3;
  case errc::not_leader_or_follower: return 6;
  case errc::request_timed_out: return 7;
  case errc::message_too_large: return 10;
  case errc::stale_controller_epoch: return 11;
  case errc::network_exception: return 13;
  case errc::coordinator_load_in_progress: return 14;
  case errc::coordinator_not_available: return 15;
  case errc::not_coordinator: return 16;
  case errc::invalid_topic_exception: return 17;
  case errc::not_enough_replicas: return 19;
  case errc::not_enough_replicas_after_append: return 20;
  case errc::invalid_required_acks: return 21;
  case errc::illegal_generation: return 22;
  case errc::inconsistent_group_protocol: return 23;
  case errc::unknown_member_id: return 25;
  case errc::invalid_session_timeout: return 26;
  case errc::rebalance_in_progress: return 27;
  case errc::invalid_timestamp: return 32;
  case errc::unsupported_version: return 35;
  case errc::topic_already_exists: return 36;
  case errc::invalid_partitions: return 37;
  case errc::invalid_replication_factor: return 38;
  case errc::invalid_replica_assignment: return 39;
  case errc::invalid_config: return 40;
  case errc::not_controller: return 41;
  case errc::invalid_request: return 42;
  case errc::policy_violation: return 44;
  case errc::out_of_order_sequence_number: return 45;
  case errc::invalid_producer_epoch: return 47;
  case errc::kafka_storage_error: return 56;
  case errc::group_not_empty: return 68;
  case errc::group_id_not_found: return 69;
  case errc::fenced_leader_epoch: return 74;
  case errc::unknown_leader_epoch: return 75;
  case errc::unsupported_compression_type: return 76;
  case errc::stale_broker_epoch: return 77;
  case errc::member_id_required: return 79;
  case errc::preferred_leader_not_available: return 80;
  case errc::group_max_size_reached: return 81;
  case errc::fenced_instance_id: return 82;
  case errc::election_not_needed: return 84;
  case errc::no_reassignment_in_progress: return 85;
  case errc::invalid_record: return 87;
  case errc::inconsistent_voter_set: return 94;
  case errc::invalid_update_version: return 95;
  case errc::duplicate_broker_registration: return 101;
  case errc::broker_id_not_registered: return 102;
  case errc::inconsistent_topic_id: return 103;
  case errc::inconsistent_cluster_id: return 104;
  case errc::ineligible_replica: return 107;
  case errc::duplicate_voter: return 126;
  case errc::voter_not_found: return 127;
  case errc::unknown_server_error: return -1;
  }
  return -1;
}

} // namespace capstan
