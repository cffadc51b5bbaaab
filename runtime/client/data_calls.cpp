// The data calls, routed to the partition leader and retried as routed_call.hpp says: produce
// and fetch for the producer's and consumer's own threads, list_offsets blocking.

#include "runtime/client/rpc_cluster_client.hpp"

#include "runtime/client/routed_call.hpp"

namespace capstan::client {

void rpc_cluster_client::produce(const std::string& topic, int32_t partition, int16_t acks,
                                 std::shared_ptr<const bytes> data,
                                 std::function<void(result<produce_response>)> done) {
  auto timeout = static_cast<int32_t>(config_.request_timeout_ms);
  auto call = [data, acks, timeout, topic, partition](capnp_cap& cap) {
    const auto words = data->size() / sizeof(capnp::word) + 32;
    auto req = cap.produceRequest(capnp::MessageSize{words, 0});
    req.setTopic(topic);
    req.setPartition(partition);
    req.setAcks(acks);
    req.setTimeoutMs(timeout);
    req.setRecords(capnp::Data::Reader(data->data(), data->size()));
    return req.send().then([](auto response) -> result<produce_response> {
      if (response.getErrorCode() != 0)
        return from_code(response.getErrorCode(), response.getErrorMessage());
      return produce_response{offset{response.getBaseOffset()}, response.getLogAppendTime(),
                              offset{response.getLogStartOffset()}};
    });
  };
  start_routed<produce_response>(topic, partition, config_.delivery_timeout_ms, std::move(call),
                                 std::move(done));
}

void rpc_cluster_client::fetch(const std::string& topic, int32_t partition, offset from,
                               leader_epoch last_fetched_epoch, int32_t max_bytes,
                               int32_t min_bytes, int32_t max_wait_ms,
                               steady::time_point retry_until,
                               std::function<void(result<fetch_response>)> done) {
  auto call = [=, this](capnp_cap& cap) {
    auto req = cap.fetchRequest();
    req.setTopic(topic);
    req.setPartition(partition);
    req.setOffset(from.value());
    req.setMaxBytes(max_bytes);
    req.setMinBytes(min_bytes);
    req.setMaxWaitMs(max_wait_ms);
    // Each attempt names the leadership it routes to: a leader the metadata no longer names
    // refuses it (KIP-320), and the retry follows the refreshed metadata.
    req.setCurrentLeaderEpoch(leader_epoch_of(topic, partition));
    req.setLastFetchedEpoch(last_fetched_epoch.value());
    return req.send().then([](auto response) -> result<fetch_response> {
      if (response.getErrorCode() != 0)
        return from_code(response.getErrorCode(), response.getErrorMessage());
      auto records = response.getRecords();
      return fetch_response{
          offset{response.getHighWatermark()}, offset{response.getLogStartOffset()},
          bytes(records.begin(), records.end()), leader_epoch{response.getDivergingEpoch()},
          offset{response.getDivergingEndOffset()}};
    });
  };
  start_routed<fetch_response>(topic, partition, config_.request_timeout_ms + max_wait_ms,
                               std::move(call), std::move(done), retry_until);
}

result<int64_t> rpc_cluster_client::list_offsets(const std::string& topic, int32_t partition,
                                                 int64_t timestamp) {
  auto call = [=](capnp_cap& cap) {
    auto req = cap.listOffsetsRequest();
    req.setTopic(topic);
    req.setPartition(partition);
    req.setTimestamp(timestamp);
    return req.send().then([](auto response) -> result<int64_t> {
      if (response.getErrorCode() != 0)
        return from_code(response.getErrorCode(), response.getErrorMessage());
      return static_cast<int64_t>(response.getOffset());
    });
  };
  return await<int64_t>([&](auto done) {
    start_routed<int64_t>(topic, partition, config_.request_timeout_ms, std::move(call), done);
  });
}

} // namespace capstan::client
