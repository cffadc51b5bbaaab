// Which bootstrap address the client starts from: the first that is a capstan client port (it
// answers the Cap'n Proto bootstrap) and answers a metadata request.

#include "runtime/client/rpc_cluster_client.hpp"

#include <algorithm>

namespace capstan::client {

namespace {

// A capstan node answers the Cap'n Proto bootstrap from its RPC thread at once, without an actor
// in the way, so a peer that sends something else or stays silent this long after the TCP
// connection is up is not a client port: the cluster port speaks CAF's BASP, the metrics port
// HTTP (which waits for a request it never gets). Bounded by request.timeout.ms as well.
constexpr int64_t handshake_timeout_ms = 2000;

} // namespace

// Tries the bootstrap addresses in order; the first that completes the handshake and answers
// a metadata request becomes the address for admin calls.
status rpc_cluster_client::bootstrap() {
  if (config_.bootstrap.empty()) return make_error(errc::invalid_config, "empty bootstrap list");
  error last = make_error(errc::network_exception, "no bootstrap address answered");
  for (const auto& address : config_.bootstrap) {
    if (auto parsed = parse_host_port(address); !parsed) return parsed.err();
    auto r = run_sync<cluster_metadata>([this, address] {
      return with_timeout(handshake(address).then(
          [this, address](result<bool>&& shook) -> kj::Promise<result<cluster_metadata>> {
            if (!shook) return result<cluster_metadata>(shook.err());
            return metadata_call(connections_->connection(address).cap, {}, true);
          }));
    });
    if (r) {
      std::lock_guard lock(mu_);
      admin_address_ = address;
      return {};
    }
    last = r.err().message.rfind(address, 0) == 0
               ? r.err()
               : make_error(r.err().code, address + ": " + r.err().message);
  }
  return last;
}

// Waits for the peer's answer to the Cap'n Proto bootstrap on a new connection to `address`.
// A refused connection stays the network error it is; anything else that is not that answer
// becomes NETWORK_EXCEPTION "ADDRESS is not a capstan client port".
kj::Promise<result<bool>> rpc_cluster_client::handshake(const std::string& address) {
  auto not_client_port = [address](const std::string& why) {
    return result<bool>(make_error(errc::network_exception,
                                   address + " is not a capstan client port (" + why + ")"));
  };
  auto answered = connections_->connection(address).cap.whenResolved().then(
      [] { return result<bool>(true); },
      [not_client_port](kj::Exception&& e) {
        auto failure = from_exception(e);
        if (failure.message.rfind("cannot connect", 0) == 0) return result<bool>(failure);
        return not_client_port(e.getType() == kj::Exception::Type::DISCONNECTED
                                   ? "the connection closed before a Cap'n Proto RPC answer"
                                   : "its answer is not Cap'n Proto RPC");
      });
  const auto limit = std::min(handshake_timeout_ms, config_.request_timeout_ms);
  auto silent =
      io_->provider->getTimer()
          .afterDelay(limit * kj::MILLISECONDS)
          .then([this, address, limit, not_client_port]() -> kj::Promise<result<bool>> {
            // Still connecting: the request timeout decides, as for any unreachable address.
            if (!connections_->connected(address)) return kj::NEVER_DONE;
            return not_client_port("no Cap'n Proto answer within " + std::to_string(limit) + " ms");
          });
  return answered.exclusiveJoin(kj::mv(silent));
}

} // namespace capstan::client
