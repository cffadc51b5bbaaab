#pragma once

// A consumer that is a member of its group (Kafka's subscribe()): it joins the group at its
// coordinator, and the group leader's assignor (partition.assignment.strategy) shares the
// subscribed topics' partitions among the members; a member reads only what it was assigned.
// Heartbeats go from a thread of its own every heartbeat.interval.ms; a member that does not
// poll for max.poll.interval.ms leaves the group, as in Kafka. Offsets are committed as the
// member, fenced by its generation: automatically every auto.commit.interval.ms
// (enable.auto.commit), before partitions are revoked, on close, and by commit().
//
// Eager assignors (range, roundrobin) revoke every partition before each rebalance;
// cooperative-sticky revokes only the partitions that move, and the member rejoins at once so
// that the next generation hands them on (docs/groups.md, "Consumers in a group"). A
// cooperative member that owns partitions joins in the background and keeps fetching them
// meanwhile, so a rebalance does not stop the partitions it does not move.
//
// Not thread-safe for the caller: poll, commit and close from one thread, never the client's.
// Rebalance callbacks run on that thread, inside poll or close.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client/assignors.hpp"
#include "runtime/client/consumer.hpp"

namespace capstan::client {

struct rebalance_listener {
  // Before partitions are taken away: their positions can still be committed.
  std::function<void(const std::vector<topic_partition_key>&)> on_revoked;
  std::function<void(const std::vector<topic_partition_key>&)> on_assigned;
  // The membership ended without a rebalance (the session expired, the generation was fenced,
  // the poll interval passed): the partitions may already belong to another member, so nothing
  // is committed for them.
  std::function<void(const std::vector<topic_partition_key>&)> on_lost;
};

class group_consumer {
public:
  // INVALID_CONFIG: no group, an assignor no one has, a heartbeat interval not below the session
  // timeout, a non-positive interval.
  static result<std::unique_ptr<group_consumer>> create(cluster_client& client, client_config config,
                                                        std::string group);
  // close(), its error dropped.
  ~group_consumer();
  group_consumer(const group_consumer&) = delete;
  group_consumer& operator=(const group_consumer&) = delete;

  // The topics to be assigned partitions of: by name (a topic that does not exist yet is
  // assigned once it does), or every topic whose whole name matches `pattern`, looked up again
  // every metadata.max.age.ms (INVALID_CONFIG: not an ECMAScript regular expression). A new
  // subscription rejoins the group at the next poll.
  void subscribe(std::vector<std::string> topics, rebalance_listener listener = {});
  status subscribe_matching(const std::string& pattern, rebalance_listener listener = {});

  // Joins the group when needed, then polls the assigned partitions as consumer::poll_each does.
  // The time a join waits for does not count toward `timeout` (a join is bounded by
  // max.poll.interval.ms, the group's rebalance timeout); a cooperative member that owns
  // partitions does not wait for it, but polls them while it joins. Newly assigned partitions start at the group's
  // committed offsets, or where auto.offset.reset says. Fails with the group's error when the
  // membership cannot go on (FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL,
  // GROUP_MAX_SIZE_REACHED, ...) or no coordinator answers within request.timeout.ms.
  result<size_t> poll_each(std::chrono::milliseconds timeout, const std::function<void(const record_ref&)>& visit,
                           size_t max_records = std::numeric_limits<size_t>::max());

  // Commits the positions of the assigned partitions as this member (Kafka's commitSync).
  // ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS: the group moved on; the next
  // poll rejoins, and the uncommitted records may be read again by whichever member gets them.
  status commit();

  // Commits (with auto-commit), revokes the partitions and leaves the group (a static member
  // stays, to come back within its session timeout without a rebalance). Idempotent. A join
  // under way ends first: the leave answers it at once; a static member, which does not leave,
  // waits for it (at most request.timeout.ms plus the rebalance timeout).
  status close();

  std::vector<topic_partition_key> assignment() const;
  // The generation and member id of the last successful join (-1 and empty before one).
  int32_t generation() const;
  std::string member_id() const;
  std::vector<position_reset> take_resets() { return inner_.take_resets(); }

private:
  enum class phase { unjoined, stable, closed };

  // What one JoinGroup and its SyncGroup answered, as the joining thread got it.
  struct join_outcome {
    result<join_group_response> joined;
    std::optional<result<sync_group_response>> synced; // after a join without error
    // The leader's: every member's topics and their partition counts.
    std::set<std::string> group_topics;
    partition_counts counts;
  };

  group_consumer(cluster_client& client, client_config config, std::string group,
                 std::vector<const assignor*> assignors);

  // Stable: true. A join running while the owned partitions can be polled: false. Else it waits
  // for the joins it needs, adding the time waited to `waited`.
  result<bool> ensure_active(std::chrono::steady_clock::duration& waited);
  void resubscribed(rebalance_listener listener);
  void start_join();
  join_outcome join_and_sync(join_group_request req);
  status finish_join(join_outcome outcome);
  std::vector<member_assignment> leader_assign(const join_group_response& joined, join_outcome& out) const;
  void rejoin_after(errc why);
  void apply_assignment(const consumer_assignment& a, bool cooperative);
  void give_up_owned(bool lost);
  status commit_as_member();
  void maybe_auto_commit();
  void maybe_refresh_subscription();
  std::vector<std::string> subscribed_topics();
  bool cooperative() const;
  void heartbeat_loop();
  group_member_ref member_ref() const;

  cluster_client& client_;
  const client_config config_;
  const std::string group_;
  const std::vector<const assignor*> assignors_;
  consumer inner_;
  rebalance_listener listener_;

  // What the subscription names; `pattern_` when subscribed by regex, and then `topics_` is its
  // last match.
  std::vector<std::string> topics_;
  std::optional<std::regex> pattern_;
  // The leader's: every member's topics, so that partitions added to any rebalance the group.
  std::set<std::string> group_topics_;
  // Partition counts of the topics watched (the subscription's and group_topics_) as last
  // looked up: a change rejoins.
  partition_counts counts_;
  std::chrono::steady_clock::time_point next_metadata_check_;
  std::chrono::steady_clock::time_point next_auto_commit_;
  std::set<topic_partition_key> owned_;
  // The join under way, on a thread of its own (valid while one runs or waits to be finished).
  std::future<join_outcome> join_;

  // Shared with the heartbeat thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  phase phase_ = phase::unjoined;
  std::string member_id_;
  int32_t generation_ = -1;
  std::string protocol_;
  bool rejoin_needed_ = true;
  // The heartbeat thread found the membership gone (or gave it up); the next poll tells the
  // listener the partitions are lost.
  bool lost_ = false;
  std::optional<error> fatal_;
  // A join and sync the joining thread completed, which no poll has taken up yet: the
  // coordinator counts the member in that generation, so the heartbeats go on in it.
  std::optional<group_member_ref> synced_;
  std::chrono::steady_clock::time_point last_poll_;
  bool stopping_ = false;
  std::thread heartbeats_;
};

} // namespace capstan::client
