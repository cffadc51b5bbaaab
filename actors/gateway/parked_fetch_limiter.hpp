#pragma once

// Caps on parked fetches (docs/configuration.md, "Client connections"): capstan's own
// fetch.max.parked.per.connection and fetch.max.parked.per.node. A fetch that may wait
// (maxWaitMs > 0 and minBytes > 0) can sit in its replica for up to 300 s, holding a reply slot
// and a response promise; without a cap a client could park them by the million. The gateway
// sees every client fetch, so it counts them: from the moment it forwards one until its replica
// answers (or the gateway's wait for the answer ends). A client that cancels its call or closes
// its connection does not free the place early, since the fetch still sits in the replica.
//
// Threads: try_park on the RPC server's kj thread only; release from any thread (the CAF worker
// that receives the replica's answer).

#include <atomic>
#include <cstdint>

namespace capstan {

class parked_fetch_limiter {
public:
  // One per connection: its fetches that may park now.
  struct connection_count {
    std::atomic<int32_t> parked{0};
  };

  // REQUIRES: both limits >= 0 (0: no fetch may park).
  parked_fetch_limiter(int32_t max_per_connection, int32_t max_per_node);
  parked_fetch_limiter(const parked_fetch_limiter&) = delete;
  parked_fetch_limiter& operator=(const parked_fetch_limiter&) = delete;

  // Counts one more fetch that may park on `c` if both caps allow it; otherwise counts nothing
  // and returns false (the fetch is then answered at once with what is there).
  bool try_park(connection_count& c);
  // REQUIRES: try_park(c) returned true for this fetch.
  void release(connection_count& c);

  int64_t parked() const { return parked_.load(std::memory_order_relaxed); }

private:
  int32_t max_per_connection_;
  int32_t max_per_node_;
  std::atomic<int64_t> parked_{0};
};

} // namespace capstan
