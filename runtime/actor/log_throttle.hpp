#pragma once

// At most one log line per interval for an event a peer can repeat at will (a refused
// connection, a failed accept): the log stays readable and the disk stays free while a client
// loops. The events in between are counted, and the next line says how many there were.
// Not thread-safe: one owner thread (e.g. a kj loop).

#include <chrono>
#include <cstdint>
#include <optional>

namespace capstan {

class log_throttle {
public:
  using clock = std::chrono::steady_clock;

  explicit log_throttle(clock::duration interval) : interval_(interval) {}

  // Call once per event. Returns the number of events suppressed since the last line when this
  // one should be logged, nullopt when it should not.
  std::optional<uint64_t> admit(clock::time_point now) {
    if (logged_once_ && now - last_ < interval_) {
      ++suppressed_;
      return std::nullopt;
    }
    logged_once_ = true;
    last_ = now;
    const uint64_t skipped = suppressed_;
    suppressed_ = 0;
    return skipped;
  }

private:
  clock::duration interval_;
  clock::time_point last_{};
  bool logged_once_ = false;
  uint64_t suppressed_ = 0;
};

} // namespace capstan
