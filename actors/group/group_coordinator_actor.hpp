#pragma once

// The group coordinator: committed consumer-group offsets, stored as records keyed by
// (group, topic, partition) in the cluster's compacted topic __consumer_offsets, for the groups
// whose partition of it this node leads (docs/groups.md); an in-memory map, rebuilt from the
// partition when this node takes its leadership, answers fetches. It also runs those groups'
// membership (group_membership.hpp), recording each Stable or Empty generation in the same
// partition (group_metadata_record.hpp), from which a new coordinator resumes the group.

#include <optional>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/controller/metadata_actor.hpp"
#include "actors/group/group_membership.hpp"
#include "runtime/cluster/topic_validation.hpp" // consumer_offsets_topic

namespace capstan {

using commit_atom = caf::atom_constant<caf::atom("commit")>;
using lsgroups_atom = caf::atom_constant<caf::atom("lsgroups")>;
using gtick_atom = caf::atom_constant<caf::atom("gtick")>;
using joingrp_atom = caf::atom_constant<caf::atom("joingrp")>;
using syncgrp_atom = caf::atom_constant<caf::atom("syncgrp")>;
using beat_atom = caf::atom_constant<caf::atom("beat")>;
using leavegrp_atom = caf::atom_constant<caf::atom("leavegrp")>;
using descgrp_atom = caf::atom_constant<caf::atom("descgrp")>;
using delgrp_atom = caf::atom_constant<caf::atom("delgrp")>;
inline constexpr delgrp_atom delgrp_atom_v{};
inline constexpr descgrp_atom descgrp_atom_v{};
inline constexpr joingrp_atom joingrp_atom_v{};
inline constexpr syncgrp_atom syncgrp_atom_v{};
inline constexpr beat_atom beat_atom_v{};
inline constexpr leavegrp_atom leavegrp_atom_v{};
inline constexpr lsgroups_atom lsgroups_atom_v{};
inline constexpr gtick_atom gtick_atom_v{};
inline constexpr commit_atom commit_atom_v{};

struct group_offset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1; // -1: nothing committed
  std::string metadata;
  errc error = errc::none;
  // The partition leader epoch of the last record read before `offset` (-1: unknown): the
  // consumer that resumes from the commit checks it against the leader's log (KIP-320).
  int32_t leader_epoch = -1;
};

using group_offsets = std::vector<group_offset>;

// Errors: INVALID_REQUEST for an empty group id; per-entry errors in group_offset::error (a
// commit the group's membership refuses, by member or generation, has that error in every
// entry). Join and sync answers carry their errors; heartbeat and leave fail with them.
using group_coordinator_actor = caf::typed_actor<
  caf::replies_to<commit_atom, std::string, group_member_ref, group_offsets>::with<group_offsets>,
  caf::replies_to<joingrp_atom, std::string, join_group_request>::with<join_group_response>,
  caf::replies_to<syncgrp_atom, std::string, sync_group_request>::with<sync_group_response>,
  caf::replies_to<beat_atom, std::string, group_member_ref>::with<bool>,
  caf::replies_to<leavegrp_atom, std::string, group_member_ref>::with<bool>,
  // Kafka's DescribeGroups for one group: "Empty" for a group with commits and no members.
  caf::replies_to<descgrp_atom, std::string>::with<group_summary>,
  // Kafka's DeleteGroups for one group: GROUP_NOT_EMPTY while it has members,
  // GROUP_ID_NOT_FOUND for a group with neither members nor commits.
  caf::replies_to<delgrp_atom, std::string>::with<bool>,
  caf::replies_to<fetch_atom, std::string, group_offsets>::with<group_offsets>,
  // The groups with commits in the partitions this node leads, sorted (Kafka's ListGroups at one
  // broker). COORDINATOR_LOAD_IN_PROGRESS while one of those is still loading.
  caf::replies_to<lsgroups_atom>::with<std::vector<std::string>>,
  // The timer that follows the node's leaderships of __consumer_offsets.
  caf::reacts_to<gtick_atom>>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::group_offsets)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::group_member_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::join_group_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::join_group_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::sync_group_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::sync_group_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::group_summary)
