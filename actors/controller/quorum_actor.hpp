#pragma once

// The controller quorum actor: one node's member of the controller quorum (docs/controller.md,
// "The quorum actor"). A thin shell around quorum_member: it ticks the Raft core on a timer,
// hands it the Raft frames the node endpoint delivers (raft_atom), sends the core's messages to
// the peers' node endpoints, and answers proposals once they commit.
//
// Local to its node: proposals, status and the image are plain values that do not cross actor
// systems; only the Raft frames (capnp_frame of schema/raft.capnp) do, through node endpoints.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/metadata_records.hpp"
#include "actors/controller/quorum_member.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "actors/replica/replica_atoms.hpp"
#include "runtime/result.hpp"

namespace capstan {

using propose_atom = caf::atom_constant<caf::atom("propose")>;
using image_atom = caf::atom_constant<caf::atom("image")>;
using qtick_atom = caf::atom_constant<caf::atom("qtick")>;
using resign_atom = caf::atom_constant<caf::atom("resign")>;
inline constexpr propose_atom propose_atom_v{};
inline constexpr image_atom image_atom_v{};
inline constexpr qtick_atom qtick_atom_v{};
inline constexpr resign_atom resign_atom_v{};

// The answer to a proposal: committed at `index` and applied to this member's image (code
// none); or NOT_CONTROLLER with the leader this member knows of (-1: none), so the caller can
// redirect; or the error the batch failed to apply with (the entry still took its index).
// REQUEST_TIMED_OUT: the outcome is unknown.
struct propose_reply {
  errc code = errc::none;
  uint64_t index = 0;
  int32_t leader = -1;
  std::string message;
};

using quorum_actor = caf::typed_actor<
    // A peer's Raft message, from the node endpoint.
    caf::reacts_to<raft_atom, capnp_frame>,
    // Propose the records as one metadata log entry; answered once it commits (or cannot).
    caf::replies_to<propose_atom, std::vector<controller::metadata_record>>::with<propose_reply>,
    caf::replies_to<status_atom>::with<controller::quorum_status>,
    // The committed image (a copy).
    caf::replies_to<image_atom>::with<controller::metadata_image>,
    // One tick of the Raft core, from the actor's ticker.
    caf::reacts_to<qtick_atom>,
    // Hand the quorum's leadership over before a clean stop (quorum_member::transfer_leadership):
    // answered with the voter told to take over once it was told, -1 if this member does not
    // lead, has no other voter, or gave up (after an election timeout).
    caf::replies_to<resign_atom>::with<int32_t>,
    // Change the voters (docs/controller.md, "Voter changes"): add node `id`, whose controller
    // listens at `endpoint`, or remove it. Answered once the voter set entry commits (index set),
    // or with why not: NOT_CONTROLLER with the leader, DUPLICATE_VOTER, VOTER_NOT_FOUND,
    // INVALID_REQUEST, or REQUEST_TIMED_OUT (another change is under way, the node did not catch
    // up, or the set would have no live majority).
    caf::replies_to<add_voter_atom, int32_t, std::string>::with<propose_reply>,
    caf::replies_to<remove_voter_atom, int32_t>::with<propose_reply>>;

struct quorum_options {
  node_id node{0};
  // The bootstrap voters (--controller-quorum's ids). This node need not be one: then it follows
  // as a learner until a leader adds it.
  std::vector<node_id> voters;
  // This member's Raft files.
  std::filesystem::path dir;
  std::string cluster_id;
  // Reaches the peers' node endpoints.
  peer_directory_actor peers;

  // The core counts time in ticks of this length; the timeouts below are rounded up to ticks.
  std::chrono::milliseconds tick_interval{50};
  // Kafka's controller.quorum.election.timeout.ms: a follower that hears from no leader for
  // between one and two of these starts an election; a leader that hears from no majority for
  // one steps down.
  std::chrono::milliseconds election_timeout{1000};
  // How often the leader sends heartbeats (Kafka's followers fetch every 500 ms).
  std::chrono::milliseconds heartbeat_interval{500};
  // Snapshot the image once this many entries follow the last snapshot.
  uint64_t snapshot_entries = 1024;
  // Seeds the randomized election timeouts; none: drawn from std::random_device.
  std::optional<uint64_t> seed;
  // Called once, on the actor's thread, when the member stops because its Raft files could not
  // be written (KAFKA_STORAGE_ERROR): the node should stop, as Kafka's broker does when its
  // metadata log dir fails. The actor has quit by the time the node acts on it.
  std::function<void(const error&)> on_storage_failure;
};

// Opens the member's storage (on the calling thread) and spawns the actor. Errors: the storage's
// (KAFKA_STORAGE_ERROR), a snapshot that does not load, INVALID_REQUEST for bad options.
result<quorum_actor> spawn_quorum_actor(caf::actor_system& sys, quorum_options options);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<capstan::controller::metadata_record>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::propose_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::controller::quorum_status)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::controller::metadata_image)
