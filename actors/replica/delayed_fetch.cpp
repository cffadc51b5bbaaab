#include "actors/replica/delayed_fetch.hpp"

#include <algorithm>

namespace capstan {

bool delayed_fetch_set::satisfied(const fetch_request& req, int64_t found) {
  return req.min_bytes <= 0 || found >= std::max<int64_t>(1, req.min_bytes);
}

uint64_t delayed_fetch_set::park(const fetch_request& req, int64_t bytes_found,
                                 int64_t bytes_below_hw, time_point deadline) {
  const auto id = next_id_++;
  parked_.emplace(id, parked_fetch{id, req, bytes_found, bytes_below_hw, deadline});
  return id;
}

std::vector<parked_fetch> delayed_fetch_set::take_ready(int64_t bytes_below_hw) {
  std::vector<parked_fetch> out;
  for (auto it = parked_.begin(); it != parked_.end();) {
    const auto& p = it->second;
    if (satisfied(p.request, p.bytes_found + (bytes_below_hw - p.total_at_park))) {
      out.push_back(p);
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<parked_fetch> delayed_fetch_set::take_below(offset hw) {
  std::vector<parked_fetch> out;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second.request.from < hw) {
      out.push_back(it->second);
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<delayed_fetch_set::time_point> delayed_fetch_set::next_deadline() const {
  std::optional<time_point> out;
  for (const auto& [id, f] : parked_)
    if (!out || f.deadline < *out) out = f.deadline;
  return out;
}

std::vector<parked_fetch> delayed_fetch_set::take_expired(time_point now) {
  std::vector<parked_fetch> out;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second.deadline <= now) {
      out.push_back(it->second);
      it = parked_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<parked_fetch> delayed_fetch_set::take_all() {
  std::vector<parked_fetch> out;
  out.reserve(parked_.size());
  for (auto& [id, p] : parked_) out.push_back(p);
  parked_.clear();
  return out;
}

} // namespace capstan
