#pragma once

// The vocabulary of the controller's Raft core (docs/controller.md): terms, log indexes, log
// entries, snapshots and the hard state. Strong types keep a term from ever being used as an
// index; node ids are the cluster's (runtime/types.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/types.hpp"

namespace capstan::raft {

// A Raft term. 0 is "before any election": no entry, vote or leader carries it.
struct raft_term : strong<uint64_t, struct raft_term_tag> {
  using strong::strong;
  constexpr raft_term next() const { return raft_term{value() + 1}; }
};

// Position in the Raft log; the first entry has index 1, index 0 is the empty log's end.
struct log_index : strong<uint64_t, struct raft_log_index_tag> {
  using strong::strong;
  constexpr log_index operator+(uint64_t d) const { return log_index{value() + d}; }
  // REQUIRES: d <= value().
  constexpr log_index operator-(uint64_t d) const { return log_index{value() - d}; }
  constexpr uint64_t operator-(log_index o) const { return value() - o.value(); }
  constexpr log_index& operator++() {
    *this = log_index{value() + 1};
    return *this;
  }
};

// One log entry. `data` holds a metadata record, opaque to Raft; an empty `data` is the no-op a
// new leader appends (§5.4.2), which the state machine skips.
struct entry {
  raft_term term;
  log_index index;
  bytes data;

  bool operator==(const entry&) const = default;
};

// What a snapshot covers: every entry up to and including `index`, whose term was `term`.
struct snapshot_meta {
  log_index index;
  raft_term term;

  bool operator==(const snapshot_meta&) const = default;
};

// The state machine's image after applying every entry up to meta.index. Opaque to Raft.
struct snapshot {
  snapshot_meta meta;
  bytes data;

  bool operator==(const snapshot&) const = default;
};

// 16 random bytes a voter's Raft directory gets when it is created, and again whenever its stored
// state turns out lost or damaged (KIP-853's directory id). With the node id it names one
// incarnation of a voter's durable state: a voter that lost its disk comes back under the same
// node id with another directory id. All zeros: not known.
using directory_id = std::array<uint8_t, 16>;

// What must be durable before a node answers anyone in a term (Raft §5.1, figure 2).
struct hard_state {
  raft_term term;
  std::optional<node_id> voted_for;
  // The directory id of the candidate voted for: a vote is for one incarnation of that voter.
  directory_id voted_for_directory{};
  // This node's stored state was lost or damaged (or it is new): it may lack entries it once
  // acknowledged and votes it once cast, so it neither votes nor counts towards commitment
  // until it has caught up from a leader (docs/controller.md, "Quorum identity").
  bool catching_up = false;

  bool operator==(const hard_state&) const = default;
};

enum class role : uint8_t { follower, pre_candidate, candidate, leader };

std::string_view to_string(role r);

} // namespace capstan::raft
