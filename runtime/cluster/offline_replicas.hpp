#pragma once

// The replicas a node cannot serve (damaged or unreadable at start, or whose disk failed since),
// as the replica manager publishes them and the broker lifecycle reports them in every heartbeat
// (docs/operations.md, "Damaged partitions"). The controller takes the node out of those
// partitions' ISRs and leadership, as KRaft does for a broker's offline log directories.

#include <atomic>
#include <memory>
#include <vector>

#include "runtime/cluster/metadata.hpp"

namespace capstan {

struct offline_replica {
  topic_id topic{};
  int32_t partition = 0;

  bool operator==(const offline_replica&) const = default;
};

using offline_replicas = std::vector<offline_replica>;

// The current list, replaced whole by the replica manager and read by the broker lifecycle from
// its own thread without a message round trip.
class offline_replica_registry {
public:
  offline_replica_registry() = default;
  offline_replica_registry(const offline_replica_registry&) = delete;
  offline_replica_registry& operator=(const offline_replica_registry&) = delete;

  // Never null.
  std::shared_ptr<const offline_replicas> current() const { return std::atomic_load(&list_); }
  // Only the replica manager publishes.
  void publish(offline_replicas list) {
    std::atomic_store(&list_, std::shared_ptr<const offline_replicas>(
                                  std::make_shared<offline_replicas>(std::move(list))));
  }

private:
  std::shared_ptr<const offline_replicas> list_ = std::make_shared<const offline_replicas>();
};

} // namespace capstan
