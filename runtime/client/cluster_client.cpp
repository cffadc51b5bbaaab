// cluster_client's own members: connect, which starts an rpc_cluster_client
// (rpc_cluster_client.hpp) at the first bootstrap address that answers, and the blocking forms of
// produce and fetch.

#include "runtime/client/cluster_client.hpp"

#include "runtime/client/rpc_cluster_client.hpp"

namespace capstan::client {

result<std::unique_ptr<cluster_client>> cluster_client::connect(const client_config& config) {
  auto client = std::make_unique<rpc_cluster_client>(config);
  if (auto s = client->bootstrap(); !s) return s.err();
  return std::unique_ptr<cluster_client>(std::move(client));
}

result<produce_response> cluster_client::produce_sync(const std::string& topic, int32_t partition,
                                                      int16_t acks, bytes batch) {
  auto data = std::make_shared<const bytes>(std::move(batch));
  return await<produce_response>([&](auto done) { produce(topic, partition, acks, data, done); });
}

result<fetch_response> cluster_client::fetch_sync(const std::string& topic, int32_t partition,
                                                  offset from, int32_t max_bytes, int32_t min_bytes,
                                                  int32_t max_wait_ms) {
  return await<fetch_response>([&](auto done) {
    fetch(topic, partition, from, leader_epoch{-1}, max_bytes, min_bytes, max_wait_ms,
          std::chrono::steady_clock::time_point::max(), done);
  });
}

} // namespace capstan::client
