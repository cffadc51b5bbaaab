#pragma once

// The controller's invariants over committed metadata images (docs/controller.md, "Simulation"),
// checked by the controller simulation after every entry a quorum member applies and every image
// it loads. Like raft_invariant_checker it sees only plain values, so its own tests can feed it
// hand-made histories that break a rule.
//
//   equal images        two images at the same applied index are equal (every member replays the
//                       same log; one restored from a snapshot too)
//   partition state     the ISR is a non-empty subset of the replicas; the leader is -1 or an
//                       unfenced ISR member; an ISR of two or more holds no fenced node
//   one leader          at most one leader per partition and leader epoch, over every image
//   clean election      a new leader was in the ISR before (no topic here allows unclean), or
//                       last-replica-standing recovery chose it: then it is not marked wiped and
//                       is the whole new ISR
//   ISR expansion       a node joins an ISR (the leader unchanged) only if it caught up with the
//                       leader while the partition was at the epoch the change builds on
//   batches apply       a committed decision applies to the image it was decided on

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/raft/raft_types.hpp"

namespace capstan::controller::test {

class controller_invariant_checker {
public:
  // A follower fetched up to its leader's log end while the partition was at `epoch`.
  void on_caught_up(const topic_id& topic, partition_id p, node_id replica, partition_epoch epoch);
  // An active controller decided (and proposes) to recover partition `p` on `leader` at `epoch`
  // (leader_recovery.hpp), which may then elect it from outside the ISR.
  void on_recovery_decided(const topic_id& topic, partition_id p, leader_epoch epoch,
                           node_id leader);

  // `voter` applied the entry at `index`, which took its image from `before` to `after`;
  // `applied` is what applying it gave.
  std::optional<std::string> on_applied(node_id voter, raft::log_index index,
                                        const metadata_image& before, const metadata_image& after,
                                        const status& applied);
  // `voter` holds `image` at `index`, loaded from a snapshot (a leader's, or its own at restart).
  std::optional<std::string> on_loaded(node_id voter, raft::log_index index,
                                       const metadata_image& image);

  size_t images_seen() const { return fingerprints_.size(); }

private:
  std::optional<std::string> check_image(node_id voter, raft::log_index index,
                                         const metadata_image& image);

  std::map<raft::log_index, uint64_t> fingerprints_;
  std::map<std::tuple<topic_id, int32_t, int32_t>, node_id> leaders_;
  std::set<std::tuple<topic_id, int32_t, int32_t, int32_t>> caught_up_;
  std::set<std::tuple<topic_id, int32_t, int32_t, int32_t>> recoveries_;
};

// A hash of everything the image holds, for "equal images".
uint64_t fingerprint(const metadata_image& image);

} // namespace capstan::controller::test
