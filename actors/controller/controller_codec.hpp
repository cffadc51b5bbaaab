#pragma once

// Node -> controller requests and their answers (schema/controller.capnp) to and from plain
// values: BrokerRegistration, BrokerHeartbeat, CreateTopic, DeleteTopic, AlterConfigs,
// CreatePartitions, ElectLeaders, AlterPartitionReassignments, UnregisterBroker, AddVoter,
// RemoveVoter, AllocateProducerIds. A node's
// broker_lifecycle and controller client encode the requests and decode the answers; the
// controller actor the other way round.
// Decoding checks what a peer could get wrong and returns CORRUPT_MESSAGE (a frame that does not
// match the schema) or INVALID_REQUEST (a value out of range); it never throws.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "runtime/cluster/cluster_description.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/cluster/offline_replicas.hpp"
#include "runtime/errc.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"

namespace capstan {

// The request is controller::broker_registration_request (what register_broker decides on).
struct broker_registration_response_msg {
  errc error = errc::none;
  std::string message;
  int64_t broker_epoch = -1;
  int32_t leader_hint = -1;
};

struct broker_heartbeat_msg {
  node_id node{0};
  int64_t broker_epoch = -1;
  // Not ready to lead or be in an ISR (KRaft's wantFence).
  bool want_fence = false;
  // The replicas the node cannot serve.
  offline_replicas offline;
  // The node is stopping (KRaft's wantShutDown).
  bool want_shut_down = false;
  // The logs of its replicas whose partition has no leader.
  replica_log_infos leaderless{};
};

struct broker_heartbeat_response_msg {
  errc error = errc::none;
  std::string message;
  bool is_fenced = true;
  int32_t leader_hint = -1;
  // The controlled shutdown asked for is done (KRaft's shouldShutDown).
  bool should_shut_down = false;
};

// The request of CreateTopic is a topic_spec (what create_topic decides on).
struct delete_topic_msg {
  std::string name;
};

// AlterConfigs: overrides to set on topic `name` and overrides to remove (its others stay).
struct alter_configs_msg {
  std::string name;
  std::map<std::string, std::string> configs;
  std::vector<std::string> deleted{};
};

// CreatePartitions: grow topic `name` to `total` partitions.
struct create_partitions_msg {
  std::string name;
  int32_t total = 0;
};

struct election_target {
  std::string topic;
  int32_t partition = 0;
};

// ElectLeaders (preferred): these partitions; empty: every partition.
struct elect_leaders_msg {
  std::vector<election_target> partitions;
};

// AlterPartitionReassignments: one partition's target replicas, or a cancel of its reassignment.
struct reassignment_item {
  std::string topic;
  int32_t partition = 0;
  bool cancel = false;
  std::vector<int32_t> replicas; // ignored when cancel
};

struct reassign_partitions_msg {
  std::vector<reassignment_item> partitions;
};

// UnregisterBroker: node `node` leaves the metadata; answered by a topic_response_msg.
struct unregister_broker_msg {
  node_id node;
};

// AddVoter: node `voter`, whose controller listens at `endpoint` (HOST:PORT), becomes a voter;
// answered by a topic_response_msg.
struct add_voter_msg {
  node_id voter;
  std::string endpoint;
};

// RemoveVoter: node `voter` stops being a voter; answered by a topic_response_msg.
struct remove_voter_msg {
  node_id voter;
};

// One partition's outcome of an election or a reassignment: none when its preferred replica was
// elected, or its reassignment started.
struct election_outcome {
  std::string topic;
  int32_t partition = 0;
  errc error = errc::none;
  std::string message;
};

// The answer to ElectLeaders and AlterPartitionReassignments. error: the request as a whole
// (NOT_CONTROLLER, ...); then `results` is empty.
struct elect_leaders_response_msg {
  errc error = errc::none;
  std::string message;
  int32_t leader_hint = -1;
  std::vector<election_outcome> results;
};

// The answer to CreateTopic, DeleteTopic, AlterConfigs and CreatePartitions (id: the topic's),
// and to UnregisterBroker, AddVoter and RemoveVoter (id all zeros).
struct topic_response_msg {
  errc error = errc::none;
  std::string message;
  topic_id id{}; // all zeros on error
  int32_t leader_hint = -1;
};

// AllocateProducerIds: node `node` wants the next block of producer ids.
struct allocate_producer_ids_msg {
  node_id node{0};
};

// Producer ids [first_id, first_id + size) are the node's (size 0 on error).
struct allocate_producer_ids_response_msg {
  errc error = errc::none;
  std::string message;
  int64_t first_id = 0;
  int64_t size = 0;
  int32_t leader_hint = -1;
};

capnp_frame encode(const controller::broker_registration_request& m);
capnp_frame encode(const broker_registration_response_msg& m);
capnp_frame encode(const broker_heartbeat_msg& m);
capnp_frame encode(const broker_heartbeat_response_msg& m);
// A node's topic and election requests name their sender `from` (-1: unnamed), so that the
// receiving endpoint can drop them when the fault switch cuts that node off (link_faults.hpp).
capnp_frame encode(const topic_spec& m, node_id from = node_id{-1});
capnp_frame encode(const delete_topic_msg& m, node_id from = node_id{-1});
capnp_frame encode(const alter_configs_msg& m, node_id from = node_id{-1});
capnp_frame encode(const create_partitions_msg& m, node_id from = node_id{-1});
capnp_frame encode(const elect_leaders_msg& m, node_id from = node_id{-1});
capnp_frame encode(const reassign_partitions_msg& m, node_id from = node_id{-1});
capnp_frame encode(const unregister_broker_msg& m, node_id from = node_id{-1});
capnp_frame encode(const add_voter_msg& m, node_id from = node_id{-1});
capnp_frame encode(const remove_voter_msg& m, node_id from = node_id{-1});
capnp_frame encode(const elect_leaders_response_msg& m);
capnp_frame encode(const topic_response_msg& m);
capnp_frame encode(const voter_state& m);
capnp_frame encode(const allocate_producer_ids_msg& m);
capnp_frame encode(const allocate_producer_ids_response_msg& m);

// INVALID_REQUEST: a negative node id, an incarnation id that is not 16 bytes, a previous
// incarnation id that is neither empty (none) nor 16 bytes.
result<controller::broker_registration_request>
decode_broker_registration(const capnp_frame& frame);
result<broker_registration_response_msg>
decode_broker_registration_response(const capnp_frame& frame);
// INVALID_REQUEST: a negative node id, an offline replica without a 16-byte topic id or with a
// negative partition.
result<broker_heartbeat_msg> decode_broker_heartbeat(const capnp_frame& frame);
result<broker_heartbeat_response_msg> decode_broker_heartbeat_response(const capnp_frame& frame);
// INVALID_REQUEST: a config named twice. (The name and counts are the decision's to check.)
result<topic_spec> decode_create_topic(const capnp_frame& frame);
result<delete_topic_msg> decode_delete_topic(const capnp_frame& frame);
// INVALID_REQUEST: a config named twice.
result<alter_configs_msg> decode_alter_configs(const capnp_frame& frame);
// (The name and count are the decision's to check.)
result<create_partitions_msg> decode_create_partitions(const capnp_frame& frame);
// (Unknown and negative partitions are the decision's to answer, per partition.)
result<elect_leaders_msg> decode_elect_leaders(const capnp_frame& frame);
result<elect_leaders_response_msg> decode_elect_leaders_response(const capnp_frame& frame);
// (Unknown partitions and bad replica lists are the decision's to answer, per partition.)
result<reassign_partitions_msg> decode_reassign_partitions(const capnp_frame& frame);
// (A node that is not registered, negative ids too, is the decision's to answer.)
result<unregister_broker_msg> decode_unregister_broker(const capnp_frame& frame);
// INVALID_REQUEST: a negative voter id, an endpoint that is not HOST:PORT with a port in
// [1, 65535] (validate_voter_endpoint).
result<add_voter_msg> decode_add_voter(const capnp_frame& frame);
// INVALID_REQUEST: a negative voter id.
result<remove_voter_msg> decode_remove_voter(const capnp_frame& frame);
// INVALID_REQUEST: a topic id that is neither empty nor 16 bytes.
result<topic_response_msg> decode_topic_response(const capnp_frame& frame);
// INVALID_REQUEST: an incarnation id that is neither empty nor 16 bytes, more voters than
// raft::max_voters.
result<voter_state> decode_voter_state(const capnp_frame& frame);

// INVALID_REQUEST: a negative node id.
result<allocate_producer_ids_msg> decode_allocate_producer_ids(const capnp_frame& frame);
// INVALID_REQUEST: a successful answer with an empty, negative or overflowing block.
result<allocate_producer_ids_response_msg>
decode_allocate_producer_ids_response(const capnp_frame& frame);

} // namespace capstan
