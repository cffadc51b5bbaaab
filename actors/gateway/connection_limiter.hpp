#pragma once

// Admission of client connections (docs/configuration.md, "Client connections"): at most
// max.connections open at once and at most max.connections.per.ip from one address, as Kafka
// counts them. Plain bookkeeping, used on the RPC server's kj thread only.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace capstan {

class connection_limiter {
public:
  enum class verdict { admitted, over_max_connections, over_max_connections_per_ip };

  // REQUIRES: both limits >= 1.
  connection_limiter(int32_t max_connections, int32_t max_connections_per_ip);
  connection_limiter(const connection_limiter&) = delete;
  connection_limiter& operator=(const connection_limiter&) = delete;

  // Counts a new connection from `ip` if both limits allow it; otherwise counts nothing and
  // says which limit refused it.
  verdict admit(const std::string& ip);
  // Ends a connection admitted from `ip`. REQUIRES: admit(ip) returned admitted for it.
  void release(const std::string& ip);

  int64_t open() const { return open_; }
  int32_t open_from(const std::string& ip) const;

private:
  int32_t max_connections_;
  int32_t max_connections_per_ip_;
  int64_t open_ = 0;
  std::unordered_map<std::string, int32_t> per_ip_;
};

// The config key that refused a connection ("max.connections", "max.connections.per.ip").
// REQUIRES: v != verdict::admitted.
std::string_view limit_name(connection_limiter::verdict v);

} // namespace capstan
