#include "runtime/errc.hpp"

namespace capstan {

std::string_view to_string(errc code) {
  switch (code) {
    case errc::none: return "NONE";
    case errc::not_leader_or_follower: return "NOT_LEADER_OR_FOLLOWER";
    case errc::unknown_topic_or_partition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case errc::offset_out_of_range: return "OFFSET_OUT_OF_RANGE";
    case errc::corrupt_message: return "CORRUPT_MESSAGE";
    case errc::message_too_large: return "MESSAGE_TOO_LARGE";
    case errc::not_enough_replicas: return "NOT_ENOUGH_REPLICAS";
    case errc::not_enough_replicas_after_append: return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case errc::request_timed_out: return "REQUEST_TIMED_OUT";
    case errc::fenced_leader_epoch: return "FENCED_LEADER_EPOCH";
    case errc::unknown_leader_epoch: return "UNKNOWN_LEADER_EPOCH";
    case errc::stale_controller_epoch: return "STALE_CONTROLLER_EPOCH";
    case errc::inconsistent_topic_id: return "INCONSISTENT_TOPIC_ID";
    case errc::kafka_storage_error: return "KAFKA_STORAGE_ERROR";
    case errc::invalid_topic_exception: return "INVALID_TOPIC_EXCEPTION";
    case errc::topic_already_exists: return "TOPIC_ALREADY_EXISTS";
    case errc::invalid_replication_factor: return "INVALID_REPLICATION_FACTOR";
    case errc::policy_violation: return "POLICY_VIOLATION";
    case errc::unsupported_compression_type: return "UNSUPPORTED_COMPRESSION_TYPE";
    case errc::invalid_record: return "INVALID_RECORD";
    case errc::invalid_config: return "INVALID_CONFIG";
    case errc::unknown_server_error: return "UNKNOWN_SERVER_ERROR";
    case errc::network_exception: return "NETWORK_EXCEPTION";
    case errc::invalid_request: return "INVALID_REQUEST";
    case errc::invalid_required_acks: return "INVALID_REQUIRED_ACKS";
    case errc::invalid_partitions: return "INVALID_PARTITIONS";
    case errc::invalid_timestamp: return "INVALID_TIMESTAMP";
    case errc::not_controller: return "NOT_CONTROLLER";
    case errc::invalid_update_version: return "INVALID_UPDATE_VERSION";
    case errc::ineligible_replica: return "INELIGIBLE_REPLICA";
    case errc::duplicate_broker_registration: return "DUPLICATE_BROKER_REGISTRATION";
    case errc::inconsistent_cluster_id: return "INCONSISTENT_CLUSTER_ID";
    case errc::stale_broker_epoch: return "STALE_BROKER_EPOCH";
    case errc::election_not_needed: return "ELECTION_NOT_NEEDED";
    case errc::preferred_leader_not_available: return "PREFERRED_LEADER_NOT_AVAILABLE";
    case errc::out_of_order_sequence_number: return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case errc::invalid_producer_epoch: return "INVALID_PRODUCER_EPOCH";
    case errc::inconsistent_voter_set: return "INCONSISTENT_VOTER_SET";
    case errc::invalid_replica_assignment: return "INVALID_REPLICA_ASSIGNMENT";
    case errc::no_reassignment_in_progress: return "NO_REASSIGNMENT_IN_PROGRESS";
    case errc::broker_id_not_registered: return "BROKER_ID_NOT_REGISTERED";
    case errc::coordinator_load_in_progress: return "COORDINATOR_LOAD_IN_PROGRESS";
    case errc::coordinator_not_available: return "COORDINATOR_NOT_AVAILABLE";
    case errc::not_coordinator: return "NOT_COORDINATOR";
    case errc::illegal_generation: return "ILLEGAL_GENERATION";
    case errc::inconsistent_group_protocol: return "INCONSISTENT_GROUP_PROTOCOL";
    case errc::unknown_member_id: return "UNKNOWN_MEMBER_ID";
    case errc::invalid_session_timeout: return "INVALID_SESSION_TIMEOUT";
    case errc::rebalance_in_progress: return "REBALANCE_IN_PROGRESS";
    case errc::member_id_required: return "MEMBER_ID_REQUIRED";
    case errc::group_max_size_reached: return "GROUP_MAX_SIZE_REACHED";
    case errc::fenced_instance_id: return "FENCED_INSTANCE_ID";
    case errc::group_not_empty: return "GROUP_NOT_EMPTY";
    case errc::group_id_not_found: return "GROUP_ID_NOT_FOUND";
    case errc::unsupported_version: return "UNSUPPORTED_VERSION";
    case errc::duplicate_voter: return "DUPLICATE_VOTER";
    case errc::voter_not_found: return "VOTER_NOT_FOUND";
    case errc::unknown_topic_id: return "UNKNOWN_TOPIC_ID";
    case errc::broker_not_available: return "BROKER_NOT_AVAILABLE";
  }
  return "UNKNOWN_SERVER_ERROR";
}

errc errc_from_code(uint8_t code) {
  return code > static_cast<uint8_t>(last_errc) ? errc::unknown_server_error
                                                : static_cast<errc>(code);
}

} // namespace capstan
