#pragma once

// A partition leader's view of its replicas (Kafka's Partition with its remote Replica states):
// each follower's log end offset and when it last caught up, the ISR with at most one
// AlterPartition in flight, and the high watermark. Plain and synchronous: the partition replica
// actor feeds it fetches, appends and controller answers and sends what it proposes.
//
// Rules (docs/replication.md):
// - A follower's fetch offset is its log end offset (LEO). It has caught up at a fetch's time if
//   it asked for the leader's LEO, or at the previous fetch's time if it asked for at least the
//   leader's LEO of then (Kafka's Replica.updateFetchState).
// - HW = the smallest LEO over the maximal ISR (the committed ISR plus a member being added); it
//   never moves backwards, and it does not advance while the committed ISR is smaller than
//   min(min.insync.replicas, replication factor) (KIP-966). A member whose LEO is not known yet
//   holds the HW where it is.
// - Shrink: an ISR member that has not caught up for replica.lag.time.max.ms leaves. Expand: a
//   replica whose LEO reaches the HW and the start of the leader's epoch joins. A change is
//   proposed (with the partition epoch it builds on) and takes effect once the controller
//   commits it; until then a shrink keeps counting the leaving members (the larger ISR is the
//   safe one) and no other change is proposed.

#include <map>
#include <optional>
#include <vector>

#include "runtime/types.hpp"

namespace capstan {

struct follower_state {
  offset log_end{-1}; // -1 until its first fetch under this leadership
  timestamp_ms last_caught_up_ms = 0;
  offset last_fetch_leader_log_end{-1};
  timestamp_ms last_fetch_ms = 0;
  // The incarnation its latest fetch named (all zeros: none): which process of the node the
  // log end above belongs to.
  incarnation_bytes incarnation{};
};

struct leader_config {
  node_id leader{0};
  std::vector<node_id> replicas; // the assignment, leader included
  std::vector<node_id> isr;      // committed ISR, leader included
  int32_t partition_epoch = 0;
  // min.insync.replicas: the smallest committed ISR that acknowledges acks=all. The HW advances
  // once the ISR reaches min(it, replication factor), so a topic with fewer replicas than the
  // setting stays readable (acks=1 still works there; acks=all is refused).
  int32_t min_insync_replicas = 1;
  int64_t replica_lag_time_max_ms = 30000;
};

// An AlterPartition to send: the whole proposed ISR and the partition epoch it builds on, with
// each member's incarnation as its fetches named it (KIP-903: the controller refuses a member
// whose process restarted since, as its log may have lost what the leader saw it fetch). Empty
// when no member's is known; otherwise one per member, all zeros for the leader and for members
// that named none.
struct isr_proposal {
  std::vector<node_id> isr;
  int32_t partition_epoch = 0;
  std::vector<incarnation_bytes> incarnations{};
  friend bool operator==(const isr_proposal&, const isr_proposal&) = default;
};

class leader_state {
public:
  // Taking over at `now` with log end `leo` and high watermark `hw` (REQUIRES hw <= leo);
  // `epoch_start` is the offset at which this leader epoch starts (its LEO when elected). ISR
  // members count as caught up now, others as never (Kafka's resetReplicaState).
  leader_state(leader_config config, offset leo, offset hw, offset epoch_start, timestamp_ms now);

  leader_state(const leader_state&) = default;
  leader_state& operator=(const leader_state&) = default;
  leader_state(leader_state&&) = default;
  leader_state& operator=(leader_state&&) = default;

  // The leader's log grew to `leo`. Returns true iff the HW advanced.
  bool on_leader_append(offset leo);

  // `follower`'s process `incarnation` (all zeros: not named) fetched from `fetch_offset` at
  // `now`. Unknown replicas are ignored. Returns true iff the HW advanced.
  bool on_follower_fetch(node_id follower, offset fetch_offset, timestamp_ms now,
                         const incarnation_bytes& incarnation = {});

  // The ISR change to propose now, if any: nothing while one is in flight.
  std::optional<isr_proposal> propose_shrink(timestamp_ms now);
  std::optional<isr_proposal> propose_expand();

  // The controller committed `isr` at `partition_epoch` (its AlterPartition answer, or a
  // LeaderAndIsr for this same leader epoch). Partition epochs up to the current one are ignored
  // (a proposal in flight stays so). Returns true iff the HW advanced.
  bool on_isr_committed(std::vector<node_id> isr, int32_t partition_epoch);
  // The controller changed the assignment under this same leadership (a reassignment added or
  // removed replicas): new followers start unknown and outside the ISR, as at a new leadership;
  // removed ones are forgotten. The ISR comes with on_isr_committed.
  void set_replicas(std::vector<node_id> replicas);
  const std::vector<node_id>& replicas() const { return config_.replicas; }
  // The proposal in flight was refused or lost: nothing changes, a later check proposes again.
  void on_proposal_failed();
  // The topic's min.insync.replicas changed (an alter-config reached this leader). Lowering it
  // may let the HW advance at once; raising it above the ISR holds the HW until the ISR grows.
  // Returns true iff the HW advanced.
  bool set_min_insync_replicas(int32_t min_insync_replicas);

  offset high_watermark() const { return hw_; }
  offset log_end() const { return leo_; }
  const std::vector<node_id>& isr() const { return config_.isr; }
  int32_t partition_epoch() const { return config_.partition_epoch; }
  bool proposal_in_flight() const { return pending_.has_value(); }
  // Whether the committed ISR is at least min.insync.replicas (acks=all may be acknowledged).
  bool enough_replicas() const;
  bool in_isr(node_id n) const;
  const follower_state* follower(node_id n) const;

private:
  bool caught_up(const follower_state& f, timestamp_ms now) const;
  std::vector<node_id> maximal_isr() const;
  // `isr` at the current partition epoch, with its members' incarnations.
  isr_proposal proposal(std::vector<node_id> isr) const;
  bool recompute();

  leader_config config_;
  offset leo_;
  offset hw_;
  offset epoch_start_;
  std::map<node_id, follower_state> followers_;
  std::optional<isr_proposal> pending_;
};

} // namespace capstan
