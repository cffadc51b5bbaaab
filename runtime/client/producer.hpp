#pragma once

// A batching producer on top of cluster_client, as Kafka's: records are accumulated per
// partition into batches of batch.size, sent after linger.ms or when full, with up to
// max.in.flight requests per partition; keyed records go to murmur2(key) % partitions (Kafka's
// default partitioner), keyless ones stick to one partition until its batch is sent.
// Idempotent unless the config says otherwise (client_config::enable_idempotence, Kafka 3.x's
// rules): each batch carries the producer id, epoch and a per-partition sequence, so retries after
// timeouts, lost connections and leader changes never write a record twice or out of order
// (docs/idempotence.md, "The client").

#include <functional>
#include <optional>
#include <string>

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/record_metadata.hpp"

namespace capstan::client {

// Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2) and toPositive.
int32_t murmur2(bytes_view data);
int32_t partition_for_key(bytes_view key, int32_t partitions);

class producer {
public:
  producer(cluster_client& client, client_config config);
  ~producer(); // flushes
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;

  // Queues one record; blocks while more than buffer.memory is queued. `done` runs on the client
  // thread with the record's partition and offset (a batch the broker found to be a duplicate
  // reports the offsets it was first written at), or its error after retries; a record whose
  // batch waited delivery.timeout.ms without being sent fails with REQUEST_TIMED_OUT on the
  // producer's sender thread. An unknown topic or partition, or a config resolve_idempotence
  // refuses (INVALID_CONFIG), fails at once on the caller's thread. Called from a `done` (the
  // client thread) for a topic this producer has not sent to yet, it fails at once with
  // INVALID_REQUEST: learning the topic would wait for that same thread.
  void send(const std::string& topic, std::optional<bytes_view> key,
            std::optional<bytes_view> value, std::optional<int32_t> partition,
            std::function<void(result<record_metadata>)> done);
  // Sends everything queued now and waits until every record sent so far is acknowledged or failed.
  void flush();

  // Asks the cluster for a producer id (initProducerId, blocking) and keeps it with its epoch.
  // An idempotent producer's sender thread does this itself before its first batch; calling it
  // first surfaces an error sooner. Partitions that have already sent keep the id they started
  // with. Until an id is known, identity() is {-1, -1}, and a failure leaves it so.
  status init_producer_id();
  producer_identity identity() const;

  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

} // namespace capstan::client
