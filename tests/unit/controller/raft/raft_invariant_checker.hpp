#pragma once

// Raft's safety properties (Raft paper, figure 3; docs/controller.md, "Simulation"), checked
// over a cluster's history by the simulation after every step. It sees nodes only through
// plain views and events, so its own tests can feed it hand-made histories that break a rule.
//
//   election safety        at most one leader per term, ever (one incarnation of one node: a
//                          node that lost its disk is another voter)
//   log matching           two logs with the same term at an index agree on every entry up to it
//   leader completeness    an entry committed while its observer was in term T is in the log (or
//                          snapshot) of every leader of a term above T
//   state machine safety   no two nodes apply different data at an index; each node applies
//                          indexes in order, so applied sequences are prefixes of each other
//   monotonic              commit index never drops while a node is up; term never drops while a
//                          node is up, and a restarted node's term is not below any term it sent

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "actors/controller/raft/raft_messages.hpp"
#include "actors/controller/raft/raft_types.hpp"

namespace capstan::raft::test {

// One up node as the checker sees it.
struct node_view {
  node_id id;
  raft::role role = raft::role::follower;
  raft_term term;
  log_index commit;
  snapshot_meta snap;
  std::span<const entry> entries; // consecutive from snap.index + 1
  directory_id directory{};
};

class raft_invariant_checker {
public:
  // Events. Each returns the first violation it finds, or nullopt.

  // `n` sent `m`, which shows its current term (except a pre-vote, which asks about the next
  // term, and a granted pre-vote response, which echoes it).
  void on_sent(node_id n, const message_body& m);
  // `n` (re)started with durable term `t`; its state machine is empty until a snapshot loads.
  std::optional<std::string> on_start(node_id n, raft_term t);
  // `n` lost or damaged its disk while down: it starts again from whatever raft_storage kept,
  // under a new directory id, so its earlier terms and commit index are no measure of it.
  void on_lost(node_id n);
  // `n`'s state machine applied `data` at `index`.
  std::optional<std::string> on_apply(node_id n, log_index index, const bytes& data);
  // `n`'s state machine loaded a snapshot holding the data of indexes 1..applied.size().
  std::optional<std::string> on_snapshot_loaded(node_id n, std::span<const bytes> applied);

  // The state after a step. `changed`: the views whose log may have changed in it (log
  // matching is checked between those and every other view).
  std::optional<std::string> check(std::span<const node_view> up, std::span<const node_id> changed);

  size_t committed_count() const { return committed_.size(); }
  size_t leader_count() const { return leaders_.size(); }

private:
  struct committed_entry {
    raft_term term;
    bytes data;
    raft_term observed_in; // the observer's term when it first saw the entry committed
  };
  struct node_track {
    raft_term term;
    log_index commit;
    log_index applied;
    raft_term max_sent;
  };

  std::optional<std::string> check_node(const node_view& v, std::span<const node_view> up);
  std::optional<std::string> check_leader_has(const node_view& leader, log_index i,
                                              const committed_entry& c) const;
  std::optional<std::string> record_applied(node_id n, log_index index, const bytes& data);

  std::map<raft_term, std::pair<node_id, directory_id>> leaders_;
  std::map<log_index, committed_entry> committed_;
  std::map<log_index, bytes> applied_;
  std::map<node_id, node_track> nodes_;
};

// Log matching between two views; nullopt when they agree.
std::optional<std::string> check_log_matching(const node_view& a, const node_view& b);

} // namespace capstan::raft::test
