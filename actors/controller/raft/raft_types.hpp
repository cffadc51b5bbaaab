#pragma once

// The vocabulary of the controller's Raft core (docs/controller.md): terms, log indexes, log
// entries, snapshots and the hard state. Strong types keep a term from ever being used as an
// index; node ids are the cluster's (runtime/types.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// What an entry holds: a metadata record, opaque to Raft, or a voter set (voter_set.hpp).
enum class entry_kind : uint8_t { data, voters };

// One log entry. For entry_kind::data, `data` holds a metadata record, opaque to Raft; an empty
// `data` is the no-op a new leader appends (§5.4.2), which the state machine skips. For
// entry_kind::voters, `data` is encode_voter_set's bytes: the voters from this entry on, which
// the state machine skips too.
struct entry {
  raft_term term;
  log_index index;
  bytes data;
  entry_kind kind = entry_kind::data;

  bool operator==(const entry&) const = default;
};

// What a snapshot covers: every entry up to and including `index`, whose term was `term`.
struct snapshot_meta {
  log_index index;
  raft_term term;

  bool operator==(const snapshot_meta&) const = default;
};

// 16 random bytes a voter's Raft directory gets when it is created, and again whenever its stored
// state turns out lost or damaged (KIP-853's directory id). With the node id it names one
// incarnation of a voter's durable state: a voter that lost its disk comes back under the same
// node id with another directory id. All zeros: not known.
using directory_id = std::array<uint8_t, 16>;

// One voter of the controller quorum as the Raft log records it (KIP-853's VotersRecord).
struct voter {
  node_id id;
  // Its Raft directory's incarnation when it was added; all zeros for a bootstrap voter, whose
  // directory nobody knew when the quorum was configured.
  directory_id directory{};
  // Where its controller quorum member listens (host:port); empty for a bootstrap voter, whose
  // address the configuration holds. Opaque to Raft: the driver connects to it.
  std::string endpoint{};

  bool operator==(const voter&) const = default;
};

// The voters from some point of the log on (docs/controller.md, "Voter changes"): ascending by
// id, no id twice. Empty in a snapshot: the bootstrap voters (raft_config::voters), so a quorum
// whose voters never changed records none.
using voter_set = std::vector<voter>;

// The state machine's image after applying every entry up to meta.index, which is opaque to
// Raft, and the voters in effect at meta.index.
struct snapshot {
  snapshot_meta meta;
  bytes data;
  voter_set voters{};

  bool operator==(const snapshot&) const = default;
};

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
