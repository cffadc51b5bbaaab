#pragma once

// The active controller's logic, without actors (docs/controller.md, "The active controller"):
// what a node's request decides against the committed image, what to answer once the decision's
// records committed, and which control messages the change sends to which node. The controller
// actor feeds it requests one at a time, proposes the records through its quorum actor, and hands
// it the committed image afterwards.
//
// One request at a time: prepare() decides against the committed image, so the actor must not
// prepare the next request before the previous one's records committed (or failed) and commit()
// saw the image they built. KRaft pipelines decisions over a speculative image; capstan does not
// yet.
//
// Times are milliseconds of any monotonic clock; the class never reads a clock. Not thread-safe.

#include <cstdint>
#include <optional>
#include <random>
#include <variant>
#include <vector>

#include "actors/controller/controller_codec.hpp"
#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/broker_sessions.hpp"
#include "actors/controller/metadata/control_messages.hpp"
#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/leader_recovery.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/reassignment_decisions.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "actors/controller/quorum_member.hpp"
#include "actors/replica/control_codec.hpp"
#include "runtime/cluster/cluster_description.hpp"

namespace capstan::controller {

struct active_controller_options {
  // This controller's node: the controller id on its messages and the leader hint it gives.
  node_id node{0};
  decision_options decisions;
  // broker.session.timeout.ms
  int64_t session_timeout_ms = default_broker_session_timeout_ms;
  // Seeds topic ids and replica placement.
  uint64_t seed = 0;
  // leader.imbalance.per.broker.percentage, for the periodic leader_rebalance.
  int32_t imbalance_percentage = 10;
};

// A node's session ran out: fence the registration with this epoch (unless it heartbeated since).
struct session_expiry {
  node_id node;
  broker_epoch epoch;
};

// The periodic preferred leader election (auto.leader.rebalance.enable): elects the partitions
// imbalanced_partitions picks.
struct leader_rebalance {};

// Leaderless partitions that enough replicas came back to (metadata/leader_recovery.hpp): elects
// the most up-to-date replica of each.
struct leader_recovery {};

using controller_request =
    std::variant<broker_registration_request, broker_heartbeat_msg, topic_spec, delete_topic_msg,
                 alter_configs_msg, create_partitions_msg, elect_leaders_msg, alter_partition_msg,
                 allocate_producer_ids_msg, session_expiry, leader_rebalance, leader_recovery,
                 reassign_partitions_msg, unregister_broker_msg, import_topics_msg>;

// The answer to a request; std::monostate for a session expiry or a rebalance, which nobody asked
// for.
using controller_answer =
    std::variant<std::monostate, broker_registration_response_msg, broker_heartbeat_response_msg,
                 topic_response_msg, elect_leaders_response_msg, alter_partition_response_msg,
                 allocate_producer_ids_response_msg>;

// A request decided against the image: refused (refused.code != none), or the records to propose
// (empty: nothing to change, answer at once).
struct prepared_request {
  controller_request request;
  error refused;
  decision changes;
  // alter_partition's outcome per item.
  std::vector<error> outcomes;
  // A preferred election's (elect_leaders_msg, leader_rebalance) or a reassignment's outcome per
  // partition.
  std::vector<preferred_election_result> elections;
};

// One control message for one node, not numbered yet (control_streams numbers and encodes it); a
// node's messages go out in the order given.
struct outgoing_message {
  enum class kind { update_metadata, leader_and_isr, stop_replica };
  outgoing_message(node_id to, update_metadata_msg m);
  outgoing_message(node_id to, leader_and_isr_msg m);
  outgoing_message(node_id to, stop_replica_msg m);

  node_id to;
  kind what;
  std::variant<update_metadata_msg, leader_and_isr_msg, stop_replica_msg> message;

  // A full UpdateMetadata: the first message of a node's whole state, which restarts its stream.
  bool starts_full_state() const;
  // The message numbered `sequence` of its node's stream, encoded.
  capnp_frame encode_as(int64_t sequence) const;
  // The partitions a LeaderAndIsr or StopReplica names: what the node's work on it grows with
  // (0 for UpdateMetadata, which costs the node little).
  size_t partitions() const;
  // Takes in `later`, a message to the same registration after this one, and says so, when both
  // are LeaderAndIsr or both UpdateMetadata deltas; anything else is left alone. A partition or
  // topic named by both goes with `later`'s state once keep_last_states() ran.
  bool absorb(outgoing_message& later);
  // Drops the states absorb() appended for a partition named again later: each partition once,
  // with its last state, in the order of their last mention.
  void keep_last_states();
  // Whether `later` may go before this message: an UpdateMetadata delta before a LeaderAndIsr
  // that names none of the topics the delta creates, changes or removes (a node takes a topic's
  // configs from UpdateMetadata before it opens the topic's replicas, so never the other way
  // round). StopReplica and full states stay where they are.
  bool may_follow(const outgoing_message& later) const;
  // `later` went before this message: node addresses this one names take later's.
  void passed_by(const outgoing_message& later);
};

struct settled_request {
  controller_answer answer;
  std::vector<outgoing_message> messages;
};

class active_controller {
public:
  explicit active_controller(active_controller_options options);

  active_controller(const active_controller&) = delete;
  active_controller& operator=(const active_controller&) = delete;
  active_controller(active_controller&&) = default;
  active_controller& operator=(active_controller&&) = default;
  ~active_controller() = default;

  // Becomes active as the quorum leader of `term` (the controller epoch its messages carry) over
  // the committed image: every unfenced node's session starts at `now_ms` (as KRaft does on
  // activation), and every registered node gets its full state.
  std::vector<outgoing_message> activate(metadata_image committed, int32_t term, int64_t now_ms);
  // `node`'s whole state as of the committed image: a full UpdateMetadata, then LeaderAndIsr of
  // everything it hosts. Sent after activation and registration, and whenever a message to the
  // node was lost (docs/controller.md, "Metadata that always arrives"). REQUIRES: active().
  std::vector<outgoing_message> full_state(node_id node) const;
  // Forgets the sessions; prepare() and commit() need activate() again.
  void deactivate();
  bool active() const { return active_; }
  int32_t epoch() const { return epoch_; }
  const metadata_image& image() const { return image_; }

  // A heartbeat just arrived: renews the node's session if it names the current registration,
  // so a heartbeat waiting in the queue behind proposals does not let its session run out, and
  // keeps the logs it reports of its replicas without a leader (they replace its earlier
  // reports). REQUIRES: active().
  void heartbeat_arrived(const broker_heartbeat_msg& heartbeat, int64_t now_ms);

  // `node`'s connection to this controller closed (broker_sessions::connection_lost): its session
  // ends now. REQUIRES: active().
  void connection_lost(node_id node) { sessions_.connection_lost(node); }

  // True iff some leaderless partition can be recovered now (a leader_recovery request would
  // elect a leader for it). REQUIRES: active().
  bool recovery_due() const;

  // Decides `request` against the committed image; a heartbeat of the current registration
  // renews its session. REQUIRES: active().
  prepared_request prepare(controller_request request, int64_t now_ms);

  // The request's answer from `committed`, the image once its records are applied (nullopt: it
  // had none, the image is unchanged), and the messages the change sends. `applied`: the error
  // the records failed to apply with (answered as such). `committed` becomes the image.
  // REQUIRES: active().
  settled_request commit(const prepared_request& prepared, std::optional<metadata_image> committed,
                         const error& applied, int64_t now_ms);

  // The answer commit() gives, without changing anything: for a proposal that committed after
  // this controller stopped being active. Its change took effect all the same, and answering
  // NOT_CONTROLLER would make the caller retry a change that is done (a created topic's retry
  // would meet TOPIC_ALREADY_EXISTS). The new active controller sends the nodes their state.
  controller_answer committed_answer(const prepared_request& prepared,
                                     const metadata_image& committed, const error& applied) const;

  // Refusal of `request` (NOT_CONTROLLER, REQUEST_TIMED_OUT, CORRUPT_MESSAGE) with a leader hint.
  static controller_answer refuse(const controller_request& request, const error& why,
                                  int32_t leader_hint);

  // Sessions that ran out by `now_ms`, of unfenced nodes, as requests to fence them; each is
  // reported once (a heartbeat starts a new session). REQUIRES: active().
  std::vector<session_expiry> expired_sessions(int64_t now_ms);

  // True iff `node`'s session is alive (tests and the duplicate-registration check).
  bool session_alive(node_id node, int64_t now_ms) const { return sessions_.alive(node, now_ms); }

private:
  controller_stamp stamp() const { return controller_stamp{opts_.node, epoch_}; }
  std::vector<outgoing_message> messages(const control_plan& plan, const metadata_image& before,
                                         const metadata_image& after,
                                         std::optional<node_id> full_for) const;
  controller_answer answer(const prepared_request& prepared, const metadata_image& committed) const;

  active_controller_options opts_;
  std::mt19937_64 rng_;
  bool active_ = false;
  int32_t epoch_ = 0;
  metadata_image image_;
  broker_sessions sessions_;
  // Not metadata, as the sessions: a newly active controller learns them from heartbeats.
  leaderless_reports reports_;
};

// Kafka's OfflinePartitionsCount: the partitions of `image` without a leader (or, never in a
// committed image, with a fenced one).
int64_t offline_partitions(const metadata_image& image);

// A voter's report for `cluster describe`: its member's Raft state and, iff `controller` is
// active, every node registered in its image with its fencing state.
voter_state describe_voter(const quorum_status& member, const active_controller& controller);

} // namespace capstan::controller
