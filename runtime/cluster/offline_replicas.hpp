#pragma once

// What a node reports about its replicas in every heartbeat, as the replica manager publishes it
// and the broker lifecycle reads it:
// - the replicas it cannot serve (damaged or unreadable at start, or whose disk failed since;
//   docs/operations.md, "Damaged partitions"): the controller takes the node out of those
//   partitions' ISRs and leadership, as KRaft does for a broker's offline log directories;
// - the log of each replica whose partition has no leader (docs/controller.md, "Last replica
//   standing"): the epoch of its last record and its log end, from which the controller elects
//   the most up-to-date replica once enough of them are back (KIP-966's GetReplicaLogInfo).

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

struct replica_log_info {
  topic_id topic{};
  int32_t partition = 0;
  // The leader epoch of its last record; -1 when it has none with an epoch.
  int32_t last_written_epoch = -1;
  int64_t log_end = 0;
  // The partition's leader epoch at which the controller named no leader: a report of an older
  // leadership no longer counts.
  int32_t leader_epoch = 0;

  bool operator==(const replica_log_info&) const = default;
};

using replica_log_infos = std::vector<replica_log_info>;

// A list replaced whole by the replica manager and read by the broker lifecycle from its own
// thread without a message round trip.
template <class List>
class published_list {
public:
  published_list() = default;
  published_list(const published_list&) = delete;
  published_list& operator=(const published_list&) = delete;

  // Never null.
  std::shared_ptr<const List> current() const { return std::atomic_load(&list_); }
  // Only the replica manager publishes.
  void publish(List list) {
    std::atomic_store(&list_,
                      std::shared_ptr<const List>(std::make_shared<List>(std::move(list))));
  }

private:
  std::shared_ptr<const List> list_ = std::make_shared<const List>();
};

using offline_replica_registry = published_list<offline_replicas>;
using leaderless_replica_registry = published_list<replica_log_infos>;

} // namespace capstan
