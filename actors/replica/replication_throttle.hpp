#pragma once

// Kafka's leader.replication.throttled.rate for one partition leader: what it serves followers
// outside the ISR (a reassignment's new replicas, a node back on an empty disk) is limited to
// `rate` bytes per second, so that copying a whole log does not starve producers and in-sync
// followers of the leader's disk and network. A token bucket holding at most one second's worth;
// a read may overdraw it by one batch (a fetch always returns its first batch whole), and the
// fetches after it get nothing until the debt is repaid. In-sync followers are never throttled,
// as in Kafka's ReplicaManager. Not thread-safe; a value type.

#include <chrono>
#include <cstdint>

namespace capstan {

class replication_throttle {
public:
  using clock = std::chrono::steady_clock;

  // 0: no limit. Starts with a full second's worth.
  void set_rate(int64_t bytes_per_second, clock::time_point now);
  int64_t rate() const { return rate_; }

  // How many bytes a throttled fetch may read now, at most `wanted`: 0 while the bucket is in
  // debt; `wanted` without a limit.
  int32_t allowance(int32_t wanted, clock::time_point now);
  // A throttled fetch read `bytes`.
  void consumed(int64_t bytes);

private:
  void refill(clock::time_point now);

  int64_t rate_ = 0;
  double tokens_ = 0;
  clock::time_point last_{};
};

} // namespace capstan
