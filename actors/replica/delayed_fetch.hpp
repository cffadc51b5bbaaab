#pragma once

// Parked (long-poll) fetches of one partition replica, as Kafka's DelayedFetch purgatory: a fetch
// that finds fewer than min_bytes below the high watermark waits until appends raise the HW far
// enough or its max_wait_ms deadline passes. Plain bookkeeping: the actor keeps the response
// promises by id and asks this set which ones to answer; nothing here reads the log.
//
// Bytes are counted HW-based: `bytes_below_hw` is a running total of the bytes of every batch that
// the HW has passed since the replica started. A fetch parks with the bytes it already found
// below the HW and the running total at that moment; it is ready once
// found + (total now - total then) >= max(1, min_bytes).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "actors/replica/replica_messages.hpp"

namespace capstan {

struct parked_fetch {
  uint64_t id = 0;
  fetch_request request;
  int64_t bytes_found = 0;     // below the HW when it parked
  int64_t total_at_park = 0;   // bytes_below_hw when it parked
  std::chrono::steady_clock::time_point deadline;
};

class delayed_fetch_set {
public:
  using time_point = std::chrono::steady_clock::time_point;

  delayed_fetch_set() = default;
  delayed_fetch_set(const delayed_fetch_set&) = delete;
  delayed_fetch_set& operator=(const delayed_fetch_set&) = delete;
  delayed_fetch_set(delayed_fetch_set&&) = default;
  delayed_fetch_set& operator=(delayed_fetch_set&&) = default;

  // Whether `found` bytes satisfy `req` now (min_bytes <= 0 never waits).
  static bool satisfied(const fetch_request& req, int64_t found);

  // Parks a fetch; returns its id (unique for this set's lifetime).
  uint64_t park(const fetch_request& req, int64_t bytes_found, int64_t bytes_below_hw,
                time_point deadline);

  // Removes and returns the fetches that the bytes now below the HW satisfy, oldest first.
  std::vector<parked_fetch> take_ready(int64_t bytes_below_hw);
  // Removes and returns the fetches from an offset below `hw`, oldest first: for records whose
  // bytes were never counted (a new leader's inherited tail), reading is the only measure.
  std::vector<parked_fetch> take_below(offset hw);
  // Removes and returns the fetches whose deadline is at or before `now`, oldest first.
  std::vector<parked_fetch> take_expired(time_point now);
  // Removes and returns every parked fetch (on close).
  std::vector<parked_fetch> take_all();
  // The earliest deadline of a parked fetch; none when nothing is parked.
  std::optional<time_point> next_deadline() const;

  size_t size() const { return parked_.size(); }
  bool empty() const { return parked_.empty(); }

private:
  uint64_t next_id_ = 1;
  std::map<uint64_t, parked_fetch> parked_; // by id = arrival order
};

} // namespace capstan
