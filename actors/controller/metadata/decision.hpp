#pragma once

// What every controller decision returns, and the settings decisions read.
//
// A decision is a pure function of the image and its inputs: it validates a request and returns
// the records that carry it out, or a named error (Kafka's names, runtime/errc.hpp). The
// controller actor proposes the records as one Raft entry (encode_batch), applies committed
// entries to its image, and sends what control_messages computes from the change.
//
// Decide against the image with every proposal still in flight applied, not only the committed
// one (as KRaft's active controller does): two decisions taken on the same committed state could
// both bump a partition from epoch 5 to 6, and the second would then fail to apply. When a
// proposal is lost (leadership moved on), drop that speculative image and start again from the
// committed one.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_records.hpp"

namespace capstan::controller {

struct decision {
  // One Raft entry, applied all or nothing; empty: nothing to propose (already so).
  std::vector<metadata_record> records;
  // For the operator, logged at WARN by the caller: unclean leader elections (records the old
  // ISR had may be lost) and partitions left without a leader.
  std::vector<std::string> warnings;
};

// Broker-wide settings (Kafka's names) that decisions apply.
struct decision_options {
  // unclean.leader.election.enable; a topic's own config overrides it.
  bool unclean_leader_election_enable = false;
  // num.partitions and default.replication.factor, for a topic created with -1.
  int32_t default_partitions = 1;
  int16_t default_replication_factor = 1;
  // max.broker.partitions (runtime/cluster/topic_validation.hpp).
  int32_t max_broker_partitions = std::numeric_limits<int32_t>::max();
  // min.insync.replicas; a topic's own config overrides it. Decides how many replicas of a
  // leaderless partition must be back to recover it (leader_recovery.hpp).
  int32_t min_insync_replicas = 1;
};

} // namespace capstan::controller
