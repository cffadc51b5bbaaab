#pragma once

// Partition choice for records sent without an explicit partition, as Kafka's default
// partitioner: a keyed record goes to toPositive(murmur2(key)) % partitions (producer.hpp); a
// keyless record sticks to one partition per topic until the batch it went into is closed, then
// a different partition is picked at random (KIP-480), so keyless records fill whole batches.

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

namespace capstan::client {

class sticky_partitioner {
public:
  explicit sticky_partitioner(uint64_t seed = std::random_device{}());

  // The current sticky partition of `topic`, chosen at random on first use.
  // REQUIRES: partitions > 0.
  int32_t partition(const std::string& topic, int32_t partitions);
  // A batch of `topic` on `previous` was closed: moves the sticky partition elsewhere (to a
  // different one whenever partitions > 1). A call for a partition that is no longer the
  // sticky one changes nothing, as in Kafka's onNewBatch.
  void on_new_batch(const std::string& topic, int32_t partitions, int32_t previous);

private:
  std::mt19937_64 rng_;
  std::unordered_map<std::string, int32_t> sticky_;
};

} // namespace capstan::client
