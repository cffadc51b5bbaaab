#include "actors/gateway/connection_limiter.hpp"

#include <cassert>

namespace capstan {

connection_limiter::connection_limiter(int32_t max_connections, int32_t max_connections_per_ip)
    : max_connections_(max_connections), max_connections_per_ip_(max_connections_per_ip) {
  assert(max_connections >= 1 && max_connections_per_ip >= 1);
}

connection_limiter::verdict connection_limiter::admit(const std::string& ip) {
  if (open_ >= max_connections_) return verdict::over_max_connections;
  auto& from_ip = per_ip_[ip];
  if (from_ip >= max_connections_per_ip_) return verdict::over_max_connections_per_ip;
  ++from_ip;
  ++open_;
  return verdict::admitted;
}

void connection_limiter::release(const std::string& ip) {
  auto it = per_ip_.find(ip);
  assert(it != per_ip_.end() && it->second > 0 && open_ > 0);
  if (--it->second == 0) per_ip_.erase(it);
  --open_;
}

int32_t connection_limiter::open_from(const std::string& ip) const {
  auto it = per_ip_.find(ip);
  return it == per_ip_.end() ? 0 : it->second;
}

std::string_view limit_name(connection_limiter::verdict v) {
  switch (v) {
  case connection_limiter::verdict::over_max_connections:
    return "max.connections";
  case connection_limiter::verdict::over_max_connections_per_ip:
    return "max.connections.per.ip";
  case connection_limiter::verdict::admitted:
    break;
  }
  return "none";
}

} // namespace capstan
