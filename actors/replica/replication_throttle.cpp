#include "actors/replica/replication_throttle.hpp"

#include <algorithm>

namespace capstan {

void replication_throttle::set_rate(int64_t bytes_per_second, clock::time_point now) {
  if (bytes_per_second == rate_) return;
  rate_ = std::max<int64_t>(bytes_per_second, 0);
  tokens_ = static_cast<double>(rate_);
  last_ = now;
}

void replication_throttle::refill(clock::time_point now) {
  if (now <= last_) return;
  const double seconds = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(rate_), tokens_ + seconds * static_cast<double>(rate_));
  last_ = now;
}

int32_t replication_throttle::allowance(int32_t wanted, clock::time_point now) {
  if (rate_ == 0) return wanted;
  refill(now);
  if (tokens_ < 1) return 0;
  return static_cast<int32_t>(std::min<double>(wanted, tokens_));
}

void replication_throttle::consumed(int64_t bytes) {
  if (rate_ > 0) tokens_ -= static_cast<double>(bytes);
}

} // namespace capstan
