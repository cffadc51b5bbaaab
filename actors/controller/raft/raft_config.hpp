#pragma once

// Settings of one Raft node. Times are in ticks: the driver calls raft_core::tick() at a fixed
// interval, so the core never reads a clock (docs/controller.md).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"
#include "runtime/types.hpp"

namespace capstan::raft {

struct raft_config {
  node_id id;
  // This node's Raft directory id (raft_storage's identity): its messages carry it.
  directory_id directory{};
  // The bootstrap voters (--controller-quorum): the voters until the log records others
  // (docs/controller.md, "Voter changes"). This node need not be one of them: a node that is
  // not a voter follows a leader that replicates to it, and never campaigns.
  std::vector<node_id> voters;

  // A follower that hears from no leader for a random number of ticks in
  // [election_timeout_ticks, 2 * election_timeout_ticks) starts a pre-vote. A leader that has
  // not heard from a majority within election_timeout_ticks steps down (check-quorum).
  uint32_t election_timeout_ticks = 10;
  // A leader sends heartbeats (and retries probes) every heartbeat_ticks.
  uint32_t heartbeat_ticks = 2;

  // Seeds the generator of randomized election timeouts: the same seed and inputs give the same
  // outputs. Give each node its own seed.
  uint64_t seed = 0;

  // One AppendEntries carries at most this many entries and, beyond its first entry, at most
  // this many bytes of entry data.
  size_t max_entries_per_append = 64;
  size_t max_bytes_per_append = size_t{1} << 20;
  // AppendEntries in flight to one follower before waiting for acknowledgements (pipelining).
  size_t max_inflight_appends = 4;

  // A node being added as a voter must hold every committed entry within this many ticks of
  // the change starting, or the change ends with REQUEST_TIMED_OUT.
  uint32_t voter_catch_up_ticks = 300;

  // The driver is told it may compact (ready::snapshot_due) once this many applied entries, or
  // this many bytes of applied entry data, follow the last snapshot.
  uint64_t snapshot_entries = 1024;
  uint64_t snapshot_bytes = uint64_t{4} << 20;
};

} // namespace capstan::raft
