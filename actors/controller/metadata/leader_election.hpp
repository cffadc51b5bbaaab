#pragma once

// Leader election rules (docs/controller.md, "Election rules"), as Kafka's controller applies
// them when a leader is lost or a node comes back.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/metadata_records.hpp"

namespace capstan::controller {

// Whether a node may lead or join an ISR now (in the image: registered and unfenced).
using liveness = std::function<bool(node_id)>;

struct election_result {
  node_id leader = no_leader; // no_leader: the partition goes offline
  bool unclean = false;       // the leader was not in the ISR

  bool operator==(const election_result&) const = default;
};

// Kafka's rule for a partition that needs a leader: the preferred replica (the first) if it is
// live and in `isr`; else the first replica, in replica order, that is live and in `isr`; else,
// only when `unclean_allowed`, the first live replica in replica order (Kafka says "the most
// caught-up", which the controller cannot know without asking each replica; KRaft too takes
// replica order), taking a replica that is not `wiped` (back on an empty disk) before one that
// is; else none.
election_result elect_leader(const std::vector<node_id>& replicas, const std::vector<node_id>& isr,
                             const liveness& live, bool unclean_allowed,
                             const std::vector<node_id>& wiped = {});

// The topic's unclean.leader.election.enable, else `broker_default`.
bool unclean_leader_election_enabled(const topic_image& topic, bool broker_default);

// The change that keeps partition `p` of `topic` led by a live ISR member after the set of live
// nodes changed (a node fenced or unfenced):
// - `leaving`, when set, is no longer live and leaves the ISR, unless it is the last member
//   (KRaft keeps the last one: it is the replica known to hold every committed record, and
//   becomes leader again when it returns);
// - a leader that is live and still in the ISR stays; otherwise elect_leader picks one, and an
//   unclean winner becomes the whole ISR.
// nullopt when nothing changes. An unclean election and a partition going offline each add a
// line to `warnings`. REQUIRES: `p` is a partition of `topic`.
std::optional<partition_change_record> leadership_change(const topic_image& topic, partition_id p,
                                                         const liveness& live,
                                                         std::optional<node_id> leaving,
                                                         bool unclean_allowed,
                                                         std::vector<std::string>& warnings);

} // namespace capstan::controller
