#pragma once

// Last replica standing (docs/controller.md): a partition left without a leader because no
// member of its ISR is alive (every node crashed, and the last ISR member never came back) comes
// back on the replicas that did, with nothing acknowledged lost. KIP-966's "balanced" unclean
// recovery, as capstan decides it:
//
// An acks=all record was acknowledged only while the ISR held at least min.insync.replicas
// members, each with the record (the leader's high watermark does not advance otherwise). So any
// RF - min(min.insync.replicas, RF) + 1 replicas include one that holds every acknowledged
// record. Once that many replicas of a leaderless partition are registered and unfenced and have
// reported their log (the epoch of their last record and their log end, in their heartbeats), the
// most up-to-date of them, by Raft's rule (the later last epoch, then the longer log), holds every
// acknowledged record: it leads, alone in the ISR, and the others follow it and truncate what it
// does not have. A replica that came back with a shorter or empty log is never chosen over one
// that holds more. Kafka 4.x leaves such a partition offline when the replicas that came back had
// an unclean shutdown; capstan recovers it.
//
// Plain functions of the image and the reports; the active controller keeps the reports (they are
// not metadata) and asks for this decision when recoverable_partitions finds any.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/leader_election.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/cluster/offline_replicas.hpp"

namespace capstan::controller {

// One node's report of its replica of a leaderless partition, as its heartbeat carried it.
struct replica_log_report {
  broker_epoch reported_by{0}; // the registration that reported it
  replica_log_info log;
};

// The latest report of each node, by partition (topic id, partition).
using leaderless_reports =
    std::map<std::pair<topic_id, int32_t>, std::map<node_id, replica_log_report>>;

// How many of a partition's replicas must be back before the most up-to-date of them is sure
// to hold every acknowledged record: RF - min(min.insync.replicas, RF) + 1.
int32_t replicas_needed_for_recovery(const topic_image& topic, size_t replication_factor,
                                     int32_t default_min_insync_replicas);

// The partitions that recover_leaderless would give a leader now. `heard`: the nodes the active
// controller heard from since it became active (broker_decisions.hpp); an ISR member that is
// unfenced but not heard from (a registration of a process that died with the whole cluster) does
// not hold the partition back, as it would not be elected either.
std::vector<std::pair<topic_id, int32_t>> recoverable_partitions(const metadata_image& image,
                                                                 const leaderless_reports& reports,
                                                                 const decision_options& options,
                                                                 const liveness& heard = {});

// For each recoverable partition, a PartitionChange electing its most up-to-date reported
// replica (ties: replica order) as leader with an ISR of itself, and an info line for the
// operator in `warnings`. Partitions with unclean leader election enabled are not this
// decision's: their unclean election takes the first live replica at once.
decision recover_leaderless(const metadata_image& image, const leaderless_reports& reports,
                            const decision_options& options, const liveness& heard = {});

} // namespace capstan::controller
