#pragma once

// Node-local messages of the replication path and the typed interfaces of its actors: the fetch
// session (a leader's end of one remote fetcher), the replica fetcher and the fetcher manager.
// What crosses nodes is always a capnp_frame of schema/replication.capnp; these structs carry
// what one actor hands another inside a node (docs/messages.md says which and why).

#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/log/log_messages.hpp"
#include "actors/replica/replica_atoms.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "actors/replica/truncation.hpp"
#include "runtime/cluster/metadata.hpp"
#include "runtime/errc.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {


// A leader's end of one remote follower's fetcher: takes Fetch and OffsetsForLeaderEpoch frames
// for many partitions and answers each with one response frame. Replicas send it a notify when
// data arrives for a partition it found empty (its parked fetch then reads again).
using fetch_session_actor = caf::typed_actor<
  caf::replies_to<fetch_atom, capnp_frame>::with<capnp_frame>,
  caf::replies_to<epochend_atom, capnp_frame>::with<capnp_frame>,
  caf::reacts_to<notify_atom>,
  caf::reacts_to<tick_atom>>;

// What the controller decided for one partition, as the replica manager hands it to the replica
// (decoded from LeaderAndIsr).
struct replica_role {
  node_id leader{-1};
  leader_epoch epoch{0};
  std::vector<node_id> replicas;
  std::vector<node_id> isr;
  int32_t partition_epoch = 0;
};

// A follower's fetch of one partition, as the fetch session hands it to the leader replica.
struct follower_fetch_request {
  node_id replica{-1};
  leader_epoch current_leader_epoch{-1};
  offset fetch_offset{0};
  int32_t max_bytes = 1048576;
  // Told once when data arrives, if this read found nothing.
  fetch_session_actor watcher;
  // The fetching process's incarnation (all zeros: not named).
  incarnation_bytes incarnation{};
};

struct follower_fetch_result {
  errc error = errc::none;
  std::string message;
  offset high_watermark{-1};
  offset log_start{-1};
  offset log_end{-1};
  log_slice records; // [fetch_offset, log end), whole batches
};

// What a follower's fetcher needs to build its requests.
struct follower_position {
  leader_epoch latest_epoch{-1}; // -1: no epoch information (an empty log)
  offset log_end{0};
  offset high_watermark{0};
  offset log_start{0};
};

// Fetched batches for a follower to append verbatim.
struct replicate_request {
  leader_epoch epoch{0}; // the leader epoch the fetcher follows
  batch_buffer batches;  // may be empty: then only the HW is taken
  offset leader_high_watermark{0};
  // The leader's log start. The follower does not move its own with it yet (Kafka's does):
  // its retention deletes its old segments itself.
  offset leader_log_start{0};
};

// One partition a fetcher takes over (from the fetcher manager).
struct fetch_assignment {
  topic_partition tp;
  leader_epoch epoch{0};
  offset log_end{0};
  bool truncate_first = true;
};

// The controller's side of AlterPartition: a leader's proposed ISR changes (through its node's
// replica manager) -> AlterPartitionResponse with the committed states.
using controller_sink =
  caf::typed_actor<caf::replies_to<alterisr_atom, capnp_frame>::with<capnp_frame>>;

// Opens a fetch session on a leader node for a local fetcher (the replica manager does it,
// through the leader node's replica manager).
using session_provider = caf::typed_actor<
  caf::replies_to<session_atom, node_id, caf::actor>::with<fetch_session_actor>>;

using replica_fetcher_actor = caf::typed_actor<
  caf::reacts_to<assign_atom, std::vector<fetch_assignment>>,
  // Stops fetching these partitions (answers still in flight for them are dropped).
  caf::replies_to<unassign_atom, std::vector<topic_partition>>::with<bool>,
  caf::reacts_to<tick_atom>>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, truncation_decision& x) {
  return f(caf::meta::type_name("truncation_decision"), x.truncate_to, x.complete);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, follower_position& x) {
  return f(caf::meta::type_name("follower_position"), x.latest_epoch, x.log_end,
           x.high_watermark, x.log_start);
}

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::replica_role)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::follower_fetch_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::follower_fetch_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::replicate_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::fetch_assignment)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::fetch_assignment>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::topic_partition>)
