#pragma once

// The active controller's view of which nodes still heartbeat (KRaft's BrokerHeartbeatManager,
// reduced). Fed heartbeats with a clock value, it answers whose session expired; the controller
// actor turns an expiry into fence_broker and its records into a proposal. Only the active
// controller keeps one: sessions are not metadata, and a newly active controller starts every
// unfenced node's session afresh (start_all), as KRaft's does on activation; it also tells which
// of those nodes have heartbeated since (heard_from).
//
// Times are milliseconds of any monotonic clock; the class never reads a clock itself.

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "runtime/types.hpp"

namespace capstan::controller {

// broker.heartbeat.interval.ms: how often a node heartbeats (Kafka's default).
inline constexpr int64_t default_broker_heartbeat_interval_ms = 2000;
// broker.session.timeout.ms: a node that has not heartbeated for this long is fenced (Kafka's
// default).
inline constexpr int64_t default_broker_session_timeout_ms = 9000;

class broker_sessions {
public:
  explicit broker_sessions(int64_t session_timeout_ms = default_broker_session_timeout_ms);

  broker_sessions(const broker_sessions&) = default;
  broker_sessions(broker_sessions&&) noexcept = default;
  broker_sessions& operator=(const broker_sessions&) = default;
  broker_sessions& operator=(broker_sessions&&) noexcept = default;
  ~broker_sessions() = default;

  // Starts or renews `node`'s session at `now_ms`; from now on the node is heard from. A clock
  // value older than the last one seen for the node is ignored (a late message never shortens a
  // session).
  void heartbeat(node_id node, int64_t now_ms);

  // Starts a session at `now_ms` for each of `nodes` (a newly active controller, for every
  // unfenced node), keeping later ones. A node it starts is not heard from until its first
  // heartbeat(): the process may be alive, or may have died while no controller was active.
  void start_all(const std::vector<node_id>& nodes, int64_t now_ms);

  // `node`'s connection to the controller closed: its session counts as expired from now on, and
  // heartbeat() no longer renews it until heard_again(). A heartbeat that arrived before the loss
  // and is decided after it is the dead process's and must not keep it.
  void connection_lost(node_id node);
  // `node` was heard from after connection_lost(): a heartbeat or a registration arrived on a new
  // connection. heartbeat() renews its session again.
  void heard_again(node_id node);
  bool lost(node_id node) const { return lost_.count(node) != 0; }

  // Forgets `node` (it registered anew with another incarnation, or was fenced and should not be
  // reported again).
  void remove(node_id node);

  // True iff `node` has a session whose last heartbeat is less than the timeout before `now_ms`,
  // and its connection was not lost since.
  bool alive(node_id node, int64_t now_ms) const;

  // True iff `node` has a session that heartbeat() started or renewed (not only start_all).
  bool heard_from(node_id node) const;

  // Nodes with a session that expired by `now_ms` or whose connection was lost, ascending. They
  // stay until heartbeat() or remove().
  std::vector<node_id> expired(int64_t now_ms) const;

  int64_t session_timeout_ms() const { return timeout_ms_; }

private:
  struct session {
    int64_t last_heartbeat_ms = 0;
    bool heard = false;
  };

  int64_t timeout_ms_;
  std::map<node_id, session> sessions_;
  // Kept apart from the sessions: remove() at an expiry must not forget that a late heartbeat of
  // the dead process is no sign of life.
  std::set<node_id> lost_;
};

} // namespace capstan::controller
