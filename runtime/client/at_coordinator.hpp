#pragma once

// The templates that run a group call at its coordinator and find the coordinator again when it
// moved: in a header, as each group call instantiates them (group_calls.cpp). Internal to
// runtime/client.

#include "runtime/client/rpc_cluster_client.hpp"

namespace capstan::client {

// Runs `call` at the coordinator of `group` (docs/groups.md), found with findCoordinator at
// the admin address or any other node known, and found again after NOT_COORDINATOR,
// COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or a failed connection, as Kafka's
// consumer does, retry.backoff.ms apart, until `deadline`; then the last error.
template <class T>
kj::Promise<result<T>>
rpc_cluster_client::at_coordinator(std::string group,
                                   std::function<kj::Promise<result<T>>(capnp_cap)> call,
                                   steady::time_point deadline, int64_t call_timeout_ms) {
  auto known = coordinators_.find(group);
  auto where = known != coordinators_.end()
                   ? kj::Promise<result<std::string>>(result<std::string>(known->second))
                   : find_coordinator(group);
  return where.then(
      [this, group = std::move(group), call = std::move(call), deadline,
       call_timeout_ms](result<std::string>&& address) mutable -> kj::Promise<result<T>> {
        if (!address)
          return coordinator_retry<T>(std::move(group), std::move(call), deadline, address.err(),
                                      call_timeout_ms);
        coordinators_[group] = *address;
        auto& conn = connections_->connection(*address);
        auto attempt = with_timeout(call(conn.cap), call_timeout_ms).catch_([](kj::Exception&& e) {
          return result<T>(from_exception(e));
        });
        return attempt.then([this, group = std::move(group), call = std::move(call), deadline,
                             call_timeout_ms, address = *address,
                             id = conn.id](result<T>&& r) mutable -> kj::Promise<result<T>> {
          if (r || !coordinator_retriable(r.code())) return kj::mv(r);
          coordinators_.erase(group);
          if (r.code() == errc::network_exception || r.code() == errc::request_timed_out)
            connections_->forget(address, id);
          return coordinator_retry<T>(std::move(group), std::move(call), deadline, r.err(),
                                      call_timeout_ms);
        });
      });
}

template <class T>
kj::Promise<result<T>> rpc_cluster_client::coordinator_retry(
    std::string group, std::function<kj::Promise<result<T>>(capnp_cap)> call,
    steady::time_point deadline, error last, int64_t call_timeout_ms) {
  const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
  if (steady::now() + backoff >= deadline) return result<T>(std::move(last));
  return io_->provider->getTimer()
      .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
      .then([this, group = std::move(group), call = std::move(call), deadline,
             call_timeout_ms]() mutable {
        return at_coordinator<T>(std::move(group), std::move(call), deadline, call_timeout_ms);
      });
}

} // namespace capstan::client
