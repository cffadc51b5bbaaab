// The metrics refresher: see metrics_refresher.hpp. One round per tick; a round's replies are
// published once the last replica answered or failed.

#include "actors/gateway/metrics_refresher.hpp"

#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/controller/metadata_actor.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

int64_t under_replicated_partitions(const std::vector<replica_status>& replicas) {
  int64_t out = 0;
  for (const auto& r : replicas)
    if (r.leader && r.isr < r.replicas) ++out;
  return out;
}

void set_controller_gauges(metrics_registry& registry, const controller_gauges& gauges) {
  registry
      .gauge("capstan_offline_partitions",
             "Partitions without a live leader, on the active controller's node (else 0)")
      .set(gauges.offline_partitions);
  registry.gauge("capstan_active_controller_count", "1 on the active controller, else 0")
      .set(gauges.active ? 1 : 0);
}

namespace {

struct refresher_state {
  static inline const char* name = "partition_metrics_refresher";
  std::function<routing_table_ptr()> routes;
  std::shared_ptr<metrics_registry> registry;
  std::chrono::milliseconds interval{};
  controller_gauge_source source;
};

using refresher_ptr = caf::stateful_actor<refresher_state>*;

struct refresh_round {
  size_t pending = 0;
  std::vector<std::pair<metric_labels, int64_t>> size, start, end;
  std::vector<replica_status> statuses;
  std::shared_ptr<metrics_registry> registry;

  void publish() {
    registry->set_gauge_family("capstan_log_size_bytes", "Bytes in the partition's log segments",
                               std::move(size));
    registry->set_gauge_family("capstan_log_start_offset", "First offset of the partition's log",
                               std::move(start));
    registry->set_gauge_family("capstan_log_end_offset",
                               "Offset the next record of the partition gets", std::move(end));
    registry
        ->gauge("capstan_under_replicated_partitions",
                "Partitions led here whose ISR is smaller than their replica set")
        .set(under_replicated_partitions(statuses));
  }
  void done() {
    if (--pending == 0) publish();
  }
};

void refresh_controller_gauges(refresher_ptr self) {
  auto& st = self->state;
  auto registry = st.registry;
  if (st.source.controller) {
    self->request(st.source.controller, st.interval, gauges_atom_v)
        .then([registry](const controller_gauges& g) { set_controller_gauges(*registry, g); },
              [](caf::error&) {});
  } else {
    set_controller_gauges(*registry, controller_gauges{});
  }
}

caf::behavior partition_metrics_refresher(refresher_ptr self,
                                          std::function<routing_table_ptr()> routes,
                                          std::shared_ptr<metrics_registry> registry,
                                          std::chrono::milliseconds interval,
                                          controller_gauge_source source) {
  self->state.routes = std::move(routes);
  self->state.registry = std::move(registry);
  self->state.interval = interval;
  self->state.source = std::move(source);
  self->send(self, tick_atom_v);
  return {[self](tick_atom) {
    auto& st = self->state;
    self->delayed_send(self, st.interval, tick_atom_v);
    refresh_controller_gauges(self);
    auto table = st.routes ? st.routes() : routing_table_ptr{};
    const size_t count = table ? table->size() : 0;
    st.registry->gauge("capstan_partitions", "Partition replicas on this node")
        .set(static_cast<int64_t>(count));
    auto round = std::make_shared<refresh_round>();
    round->registry = st.registry;
    if (count == 0) return round->publish();
    // Two questions per replica: its log's offsets and size, and its role with its ISR.
    round->pending = 2 * count;
    for (const auto& [tp, replica] : *table) {
      metric_labels labels{{"topic", tp.first}, {"partition", std::to_string(tp.second)}};
      self->request(replica, st.interval, info_atom_v)
          .then(
              [round, labels](const log_info& info) {
                round->size.emplace_back(labels, info.size_bytes);
                round->start.emplace_back(labels, info.log_start.value());
                round->end.emplace_back(labels, info.log_end.value());
                round->done();
              },
              [round](caf::error&) { round->done(); });
      self->request(replica, st.interval, status_atom_v)
          .then(
              [round](const replica_status& s) {
                round->statuses.push_back(s);
                round->done();
              },
              [round](caf::error&) { round->done(); });
    }
  }};
}

} // namespace

caf::actor spawn_partition_metrics_refresher(caf::actor_system& sys,
                                             std::function<routing_table_ptr()> routes,
                                             std::shared_ptr<metrics_registry> registry,
                                             std::chrono::milliseconds interval,
                                             controller_gauge_source source) {
  return sys.spawn(partition_metrics_refresher, std::move(routes), std::move(registry), interval,
                   std::move(source));
}

} // namespace capstan
