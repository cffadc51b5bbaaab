#pragma once

// The partition replica actor's state and the functions its handlers share, split by role:
// partition_replica_actor.cpp (roles, close, timers), replica_leader.cpp (produce, follower
// fetches, ISR changes), replica_follower.cpp (truncation and appends of fetched batches),
// replica_reads.cpp (consumer fetches and ListOffsets). Internal to actors/replica.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/armed_tick.hpp"
#include "actors/replica/delayed_fetch.hpp"
#include "actors/replica/held_promises.hpp"
#include "actors/replica/leader_state.hpp"
#include "actors/replica/partition_replica_actor.hpp"
#include "actors/replica/replication_messages.hpp"
#include "actors/replica/replication_throttle.hpp"

namespace capstan::replica_detail {

// An acks=-1 produce appended but not yet below the HW.
struct pending_produce {
  caf::typed_response_promise<produce_result> rp;
  produce_result result;
  std::chrono::steady_clock::time_point deadline;
};

// A produce that came before the LeaderAndIsr its node's metadata announced
// (partition_replica_options::announced_leadership): served once this replica leads, refused
// with NOT_LEADER_OR_FOLLOWER at its deadline or when the replica follows or closes instead.
struct awaiting_produce {
  produce_request req;
  caf::typed_response_promise<produce_result> rp;
  std::chrono::steady_clock::time_point arrived;
  std::chrono::steady_clock::time_point deadline;
};

enum class role_kind : uint8_t { leader, follower };

struct replica_state {
  static inline const char* name = "capstan.partition_replica";

  partition_replica_options opts;
  std::string log_name;
  partition_log_actor log;
  // Callers waiting on the log's answer to a request made for them (log_call.hpp).
  held_promises held;
  offset log_start{0};
  offset log_end{0};

  role_kind role = role_kind::follower;
  leader_epoch epoch{-1};
  node_id leader_node{-1};
  std::vector<node_id> replicas;

  // Leader only.
  std::optional<leader_state> leader;
  // Bytes appended but not yet below the HW, by the batch's end offset (last + 1).
  std::map<offset, int64_t> bytes_above_hw;
  // Running total of the bytes the HW has passed since start (delayed_fetch.hpp).
  int64_t bytes_below_hw = 0;
  // End of the tail a new leader inherited above its HW (written while it followed, or before a
  // restart): no byte count exists for it, so while the HW moves through it every parked fetch
  // below the HW is answered (delayed_fetch.hpp). None once the HW has passed it.
  std::optional<offset> uncounted_end;
  delayed_fetch_set parked;
  std::unordered_map<uint64_t, caf::typed_response_promise<fetch_result>> parked_promises;
  // acks=-1 produces waiting for the HW to reach the key (their last offset + 1).
  std::multimap<offset, pending_produce> pending_acks;
  // Fetch sessions whose follower found nothing: told once when the log grows.
  std::set<fetch_session_actor> watchers;
  // What followers outside the ISR may read (leader.replication.throttled.rate).
  replication_throttle throttle;
  bool isr_check_armed = false;
  // The timer for every deadline here (parked fetches, acks=-1 produces).
  armed_tick<std::chrono::steady_clock::time_point> tick;

  // Not leader yet, in arrival order.
  std::vector<awaiting_produce> awaiting_leadership;

  // Follower only: min(the leader's HW, the local log end).
  offset follower_hw{0};

  bool closing = false;

  offset high_watermark() const { return leader ? leader->high_watermark() : follower_hw; }
  bool is_leader() const { return role == role_kind::leader && leader.has_value(); }
};

using self_ptr = partition_replica_actor::stateful_pointer<replica_state>;

caf::error fail_with(errc code, std::string text);
caf::error not_leader(const replica_state& st);
timestamp_ms now_ms(self_ptr self);
std::string partition_name(const replica_state& st);

// replica_leader.cpp
caf::result<bool> become_leader(self_ptr self, const replica_role& role);
// Completes acks=-1 produces the HW passed and wakes parked consumer fetches.
void on_hw_advanced(self_ptr self);
// Fails every waiting acks=-1 produce with `code` (a lost leadership, a shrunk ISR).
void fail_pending_acks(self_ptr self, errc code, const std::string& why);
caf::result<produce_result> produce(self_ptr self, produce_request& req);
// Serves the produces that waited for this leadership (become_leader calls it).
void serve_awaiting_leadership(self_ptr self);
// Refuses the produces still waiting for a leadership: those past their deadline at `now`, or
// every one without `now`.
void refuse_awaiting_leadership(self_ptr self,
                                std::optional<std::chrono::steady_clock::time_point> now = {});
// A fetch (a follower's, or a consumer's that names an epoch) is for this leadership: else
// FENCED_LEADER_EPOCH (older), UNKNOWN_LEADER_EPOCH (newer) or NOT_LEADER_OR_FOLLOWER.
caf::error check_epoch(const replica_state& st, leader_epoch current);
caf::result<follower_fetch_result> follower_fetch(self_ptr self, follower_fetch_request& req);
caf::result<epoch_end> answer_epoch(self_ptr self, leader_epoch current, leader_epoch requested);
// Proposes an ISR shrink if a follower lags; re-arms itself every replica.lag.time.max.ms / 2.
void check_isr(self_ptr self);

// replica_follower.cpp
caf::result<bool> become_follower(self_ptr self, const replica_role& role);
caf::result<follower_position> position(self_ptr self);
caf::result<truncation_decision> truncate_by_epoch(self_ptr self, leader_epoch followed,
                                                   epoch_end leader_answer);
caf::result<offset> replicate(self_ptr self, replicate_request& req);
caf::result<offset> restart_at(self_ptr self, leader_epoch followed, offset start);

// replica_reads.cpp
caf::result<fetch_result> consumer_fetch(self_ptr self, fetch_request req);
caf::result<list_offsets_result> list_offsets(self_ptr self, timestamp_ms ts);
// Makes sure a tick (which expires parked fetches and acks=-1 produces) comes by `due`.
void arm_tick(self_ptr self, std::chrono::steady_clock::time_point due);

// Answers parked consumer fetches: those ready, or (at a tick) those past their deadline.
void answer_parked(self_ptr self, const std::vector<parked_fetch>& ready,
                   std::function<void()> done = {});

} // namespace capstan::replica_detail
