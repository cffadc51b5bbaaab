#pragma once

// Building a PartitionChange record from a partition's current state and its target leader and
// ISR, with the epochs bumped exactly when they must be (KRaft's PartitionChangeBuilder, reduced):
// the partition epoch on any change, the leader epoch when the leader changes (also to or from
// -1, offline).

#include <optional>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/metadata_records.hpp"

namespace capstan::controller {

// The record that takes `current` to `leader` and `isr` (an ISR in another order counts as a
// change, as in KRaft); nullopt when both are as they are.
std::optional<partition_change_record> make_partition_change(const topic_id& topic,
                                                             partition_id partition,
                                                             const partition_state& current,
                                                             node_id leader,
                                                             const std::vector<node_id>& isr);

} // namespace capstan::controller
