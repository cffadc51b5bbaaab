// Where a group's coordinator is: findCoordinator at the first node that answers, and which
// errors mean asking again.

#include "runtime/client/rpc_cluster_client.hpp"

namespace capstan::client {

bool rpc_cluster_client::coordinator_retriable(errc code) {
  return code == errc::not_coordinator || code == errc::coordinator_not_available ||
         code == errc::coordinator_load_in_progress || code == errc::network_exception ||
         code == errc::request_timed_out;
}

// The client address of `group`'s coordinator, from the first of the admin address, the known
// nodes and the bootstrap addresses that answers.
kj::Promise<result<std::string>> rpc_cluster_client::find_coordinator(std::string group) {
  return try_find_coordinator(std::move(group), addresses_to_ask(), 0);
}

kj::Promise<result<std::string>>
rpc_cluster_client::try_find_coordinator(std::string group, std::vector<std::string> candidates,
                                         size_t i) {
  const auto address = candidates[i];
  auto& conn = connections_->connection(address);
  auto req = conn.cap.findCoordinatorRequest();
  req.setGroup(group);
  auto attempt =
      with_timeout(req.send().then([](auto response) -> result<std::string> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        return std::string(response.getHost().cStr()) + ":" + std::to_string(response.getPort());
      })).catch_([](kj::Exception&& e) { return result<std::string>(from_exception(e)); });
  return attempt.then(
      [this, group = std::move(group), candidates = std::move(candidates), i, address,
       id = conn.id](result<std::string>&& r) mutable -> kj::Promise<result<std::string>> {
        if (r || (r.code() != errc::network_exception && r.code() != errc::request_timed_out))
          return kj::mv(r);
        connections_->forget(address, id);
        if (i + 1 >= candidates.size()) return kj::mv(r);
        return try_find_coordinator(std::move(group), std::move(candidates), i + 1);
      });
}

} // namespace capstan::client
