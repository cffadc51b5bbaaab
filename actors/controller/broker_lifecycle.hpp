#pragma once

// A node's side of its registration with the active controller (KRaft's BrokerLifecycleManager,
// reduced), as a plain class: whom to ask next, whether to register or heartbeat, and how long to
// wait before the next request. broker_lifecycle_actor sends the requests and feeds the answers
// back.
//
// - Without a registration, it registers; with one, it heartbeats every heartbeat interval, and
//   right after registering (the first heartbeat says the node is ready, which unfences it).
// - NOT_CONTROLLER with a leader hint sends the next request there; without one, or when a voter
//   does not answer, it tries the next voter, waiting a backoff that doubles from min_backoff up
//   to max_backoff, and never longer than the heartbeat interval: a new active controller gives
//   every node a fresh session when it takes over, and a node still waiting on the old one must
//   reach it within that session (KAFKA-19294).
// - STALE_BROKER_EPOCH (the controller no longer knows this registration) registers anew.
// - Some refusals are for good (refusal()): INCONSISTENT_CLUSTER_ID at once (the node belongs to
//   another cluster; Kafka's broker stops on it too), DUPLICATE_BROKER_REGISTRATION once every
//   registration was refused so for duplicate_patience (another live process has this node id).
//   A predecessor's session ends within a session timeout, or two when the active controller
//   changes meanwhile, so a refusal that lasts longer is not one that waiting ends.
// - A change of active controller keeps the registration: the new controller has it in its image.
//   (Registering again would fence the node and move its leaderships for nothing.)

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "actors/controller/controller_codec.hpp"

namespace capstan {

struct broker_lifecycle_timing {
  // Kafka's broker.heartbeat.interval.ms.
  std::chrono::milliseconds heartbeat_interval{2000};
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // How long DUPLICATE_BROKER_REGISTRATION may go on before it is for good: twice the
  // controller's broker.session.timeout.ms (default 9000).
  std::chrono::milliseconds duplicate_patience{18000};
};

class broker_lifecycle {
public:
  // REQUIRES: voters non-empty.
  broker_lifecycle(std::vector<node_id> voters, broker_lifecycle_timing timing);

  broker_lifecycle(const broker_lifecycle&) = default;
  broker_lifecycle(broker_lifecycle&&) noexcept = default;
  broker_lifecycle& operator=(const broker_lifecycle&) = default;
  broker_lifecycle& operator=(broker_lifecycle&&) noexcept = default;
  ~broker_lifecycle() = default;

  // The voter the next request goes to.
  node_id target() const { return target_; }
  // True: the next request is a registration; false: a heartbeat of epoch().
  bool registering() const { return epoch_ < 0; }
  // The current registration's broker epoch, -1 when none.
  int64_t epoch() const { return epoch_; }
  // What the last heartbeat answer said (true until one says otherwise).
  bool fenced() const { return fenced_; }

  // Why the cluster refuses this node for good, once it does (then nothing more is to be sent).
  const std::optional<error>& refusal() const { return refusal_; }

  // Each returns how long to wait before the next request. `now`: when the answer came.
  std::chrono::milliseconds registered(const broker_registration_response_msg& answer,
                                       std::chrono::steady_clock::time_point now);
  std::chrono::milliseconds heartbeated(const broker_heartbeat_response_msg& answer);
  // No answer: a timeout, an unreachable voter, a voter without a controller.
  std::chrono::milliseconds failed();
  // Whether no controller can answer any more: more than half of the voters refused a connection
  // (their processes are gone), so none is left to elect or keep one.
  bool majority_gone(const std::set<node_id>& gone) const;

private:
  std::chrono::milliseconds refused(errc code, int32_t leader_hint);
  std::chrono::milliseconds next_voter();
  std::chrono::milliseconds succeeded(std::chrono::milliseconds wait);

  std::vector<node_id> voters_;
  broker_lifecycle_timing timing_;
  size_t voter_index_ = 0;
  node_id target_;
  int64_t epoch_ = -1;
  bool fenced_ = true;
  std::chrono::milliseconds backoff_;
  // Since when every registration was refused DUPLICATE_BROKER_REGISTRATION.
  std::optional<std::chrono::steady_clock::time_point> duplicate_since_;
  std::optional<error> refusal_;
};

} // namespace capstan
