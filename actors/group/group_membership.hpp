#pragma once

// One consumer group's membership under Kafka's classic group protocol, as Kafka's
// GroupCoordinator runs it (docs/groups.md, "Membership"): members join, the coordinator picks a
// leader and a protocol and opens a generation, the leader's assignment reaches every member
// through SyncGroup, heartbeats keep sessions alive, and a join, a leave or an expired session
// starts the next rebalance.
//
//   Empty --join--> PreparingRebalance --all joined / rebalance timeout--> CompletingRebalance
//   CompletingRebalance --leader's SyncGroup--> Stable
//   CompletingRebalance, Stable --join (new member or new metadata) / leave / expiry-->
//       PreparingRebalance
//   PreparingRebalance --no member left--> Empty;  any --the coordinator unloads--> Dead
//
// A plain class with no clock and no I/O: the caller passes the time, and requests whose answer
// waits for the rebalance (JoinGroup, SyncGroup) carry a reply id that comes back, with the
// answer, in an `outcome` of this call or of a later one. tick() expires sessions and ends the
// join phase; next_deadline() says when it must run next.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/group/group_metadata_record.hpp"
#include "runtime/errc.hpp"
#include "runtime/group/group_messages.hpp"
#include "runtime/types.hpp"

namespace capstan {

enum class group_state : uint8_t { empty, preparing_rebalance, completing_rebalance, stable, dead };

// Kafka's name: "Empty", "PreparingRebalance", ...
const char* to_string(group_state s);

struct group_limits {
  // group.min.session.timeout.ms / group.max.session.timeout.ms (Kafka's defaults).
  int32_t min_session_timeout_ms = 6000;
  int32_t max_session_timeout_ms = 1800000;
  // group.initial.rebalance.delay.ms: the first rebalance of an empty group waits this long for
  // more members (each new one extends it, up to the rebalance timeout), so a group that starts
  // together does not rebalance once per member.
  int32_t initial_rebalance_delay_ms = 3000;
  // group.max.size.
  int32_t max_size = INT32_MAX;
};

class group_membership {
public:
  using reply_id = uint64_t;

  struct join_reply {
    reply_id to = 0;
    join_group_response response;
  };
  struct sync_reply {
    reply_id to = 0;
    sync_group_response response;
  };
  // Answers to deliver now, to requests of this call or parked by earlier ones.
  struct outcome {
    std::vector<join_reply> joins;
    std::vector<sync_reply> syncs;
  };

  // `new_member_id` makes the id of a member joining for the first time from its client id.
  group_membership(std::string group_id, group_limits limits,
                   std::function<std::string(const std::string& client_id)> new_member_id);

  outcome join(reply_id to, const join_group_request& req, timestamp_ms now);
  outcome sync(reply_id to, const sync_group_request& req, timestamp_ms now);
  // NONE, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS (the
  // member must rejoin), COORDINATOR_NOT_AVAILABLE when Dead.
  errc heartbeat(const group_member_ref& member, timestamp_ms now);
  // The member leaves at once (a consumer closing): its partitions move without waiting for its
  // session to expire. The generation is not checked, as Kafka's LeaveGroup.
  std::pair<errc, outcome> leave(const group_member_ref& member, timestamp_ms now);
  // Expires sessions and ends a join phase whose time is up.
  outcome tick(timestamp_ms now);
  // When tick() must run next; nullopt: nothing is due.
  std::optional<timestamp_ms> next_deadline() const;

  // Whether an offset commit from `member` is allowed now: a commit with no member id and
  // generation -1 (an admin tool, or a consumer that assigns its own partitions) only while the
  // group has no members; a member's only in its current generation, and not while the group
  // rebalances past the join phase it must rejoin in.
  errc check_commit(const group_member_ref& member) const;

  // The coordinator stops coordinating this group (it lost the partition's leadership): every
  // parked request gets NOT_COORDINATOR, and the group is Dead.
  outcome unload();

  // The group as its GroupMetadata record keeps it (the coordinator writes one whenever a
  // generation becomes Stable, or the group Empty): generation, protocol, leader, and each
  // member's metadata for that protocol and assignment. `wall_now` stamps it.
  group_metadata_value snapshot(timestamp_ms wall_now) const;
  // Resumes a new (Empty) membership from its record at a new coordinator: Stable with the
  // record's members, each with a session that starts `now`, or Empty without members.
  void restore(const group_metadata_value& record, timestamp_ms now);

  group_state state() const { return state_; }
  int32_t generation() const { return generation_; }

private:
  struct member {
    std::string id;
    std::string instance_id;
    std::string client_id;
    int32_t session_timeout_ms = 0;
    int32_t rebalance_timeout_ms = 0;
    std::vector<group_protocol> protocols;
    bytes assignment;
    timestamp_ms session_deadline = 0;
    std::optional<reply_id> awaiting_join;
    std::optional<reply_id> awaiting_sync;
    // Joined in the current join phase (or since the generation began).
    bool joined = false;
  };

  errc check_member(const group_member_ref& ref, const member** out) const;
  join_group_response reject_join(errc code, std::string message, std::string member_id = {}) const;
  outcome join_unknown(reply_id to, const join_group_request& req, timestamp_ms now);
  bool same_protocols(const std::vector<group_protocol>& before, const std::vector<group_protocol>& now) const;
  outcome join_known(reply_id to, member& m, const join_group_request& req, timestamp_ms now);
  void add_member(outcome& out, reply_id to, const std::string& id, const join_group_request& req,
                  timestamp_ms now);
  void update_member(member& m, reply_id to, const join_group_request& req, timestamp_ms now);
  // `id` by value: callers pass the member's own id, which the removal frees.
  outcome remove_member(std::string id, timestamp_ms now);
  // Starts a join phase; every member but `joiner` must join again. Syncs parked in
  // CompletingRebalance are answered REBALANCE_IN_PROGRESS into `out`.
  void prepare_rebalance(outcome& out, timestamp_ms now, const std::string& joiner);
  outcome maybe_complete_join(timestamp_ms now);
  outcome complete_join(timestamp_ms now);
  join_group_response join_answer(const member& m) const;
  bool protocols_supported(const join_group_request& req) const;
  std::string select_protocol() const;
  int32_t rebalance_timeout_ms() const;
  void complete_sync(outcome& out, const std::vector<member_assignment>& assignments);

  std::string group_id_;
  group_limits limits_;
  std::function<std::string(const std::string&)> new_member_id_;
  group_state state_ = group_state::empty;
  int32_t generation_ = 0;
  std::string protocol_type_;
  std::string protocol_name_;
  std::string leader_;
  std::map<std::string, member> members_;
  // Static members by group.instance.id.
  std::map<std::string, std::string> static_members_;
  // Ids handed out with MEMBER_ID_REQUIRED, not yet joined with, and until when they stay valid.
  std::map<std::string, timestamp_ms> pending_;
  // When the join phase ends at the latest (rebalance timeout), and, for an empty group's first
  // rebalance, when its initial delay ends (extended by each new member up to the latest).
  timestamp_ms join_deadline_ = 0;
  std::optional<timestamp_ms> initial_delay_end_;
};

} // namespace capstan
