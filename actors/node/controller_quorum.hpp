#pragma once

// The controller quorum a node is told of (--controller-quorum, controller.quorum.voters):
// "ID@HOST:PORT,..." as Kafka's controller.quorum.voters, where HOST:PORT is the voter's cluster
// listener (its published node endpoint). docs/configuration.md, "Cluster".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/node/listen_address.hpp"
#include "runtime/result.hpp"

namespace capstan {

// A voter's Raft files (term, vote, metadata log, snapshots), under its data dir; Kafka's name.
inline constexpr const char* cluster_metadata_dir = "__cluster_metadata-0";

struct quorum_voter {
  int32_t id = 0;
  listen_address address;
};

// The voters in the order given. INVALID_CONFIG naming the entry when the text is empty, an entry
// is empty or not ID@HOST:PORT, an id is not an integer in [0, 2^31-1], a port is 0 (a voter must
// be reachable at a known port), an id appears twice, or two voters are given the same host
// and port.
result<std::vector<quorum_voter>> parse_controller_quorum(std::string_view text);

// process.roles (Kafka's key): "broker" or "broker,controller", in either order, spaces around
// the commas allowed. Every capstan node serves partitions, so "broker" must be there;
// "controller" runs a controller quorum member even on a node --controller-quorum does not name,
// so that `capstan cluster add-voter` can add it (docs/controller.md, "Voter changes").
// True when "controller" is given; INVALID_CONFIG for an empty text, an unknown role, a role
// given twice, or no "broker".
result<bool> parse_process_roles(std::string_view text);

} // namespace capstan
