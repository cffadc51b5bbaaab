#pragma once

// Why a partition has no leader, in words, for `capstan topic describe` (docs/operations.md,
// "Reading topic describe"): computed from what every client has, the partition's metadata, the
// nodes Metadata names as live and the topic's configs, by the controller's own rules
// (docs/controller.md, "Last replica standing"). Plain functions.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/cluster/metadata.hpp"

namespace capstan {

// Node ids as `topic describe` prints them: "1,2,3".
std::string join_node_ids(const std::vector<int32_t>& ids);

// The partition's replicas on nodes not in `live`, in replica order.
std::vector<int32_t> offline_replicas(const partition_assignment& p, const std::set<int32_t>& live);

// Empty when the partition has a leader. Else what it waits for: an ISR member to come back, or
// (with unclean leader election off) enough of its replicas to report their logs, which is
// RF - min(min.insync.replicas, RF) + 1 of them; `configs` are the topic's overrides (without
// min.insync.replicas the broker default applies, which a client does not know).
std::string why_offline(const partition_assignment& p, const std::set<int32_t>& live,
                        const std::map<std::string, std::string>& configs);

} // namespace capstan
