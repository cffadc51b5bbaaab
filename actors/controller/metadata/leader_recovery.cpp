#include "actors/controller/metadata/leader_recovery.hpp"

#include <algorithm>
#include <optional>

#include "actors/controller/metadata/leader_election.hpp"
#include "actors/controller/metadata/partition_change.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan::controller {

namespace {

int32_t min_insync_of(const topic_image& topic, int32_t broker_default) {
  auto it = topic.configs.find(min_insync_replicas_key);
  if (it == topic.configs.end()) return broker_default;
  auto parsed = parse_min_insync_replicas(it->second);
  return parsed ? *parsed : broker_default;
}

// The reports that count for partition `p` of `topic`: from its replicas, unfenced, by their
// current registration, taken at the partition's current leader epoch; in replica order. A wiped
// replica's report does not count: its log may lack what its node acknowledged before the wipe.
std::vector<std::pair<node_id, replica_log_info>>
counted_reports(const metadata_image& image, const topic_image& topic, size_t p,
                const leaderless_reports& reports) {
  std::vector<std::pair<node_id, replica_log_info>> out;
  auto it = reports.find({topic.id, static_cast<int32_t>(p)});
  if (it == reports.end()) return out;
  const auto& state = topic.partitions[p];
  for (auto r : state.replicas) {
    auto report = it->second.find(r);
    if (report == it->second.end() || state.is_wiped(r)) continue;
    const auto* b = image.broker(r);
    if (b == nullptr || b->fenced || b->epoch != report->second.reported_by ||
        report->second.log.leader_epoch != state.leader_epoch.value())
      continue;
    out.emplace_back(r, report->second.log);
  }
  return out;
}

struct candidate {
  node_id leader = no_leader;
  replica_log_info log;
  size_t back = 0;
  int32_t needed = 0;
};

// The replica to lead partition `p`, if the partition is leaderless, no ISR member is alive, its
// topic does not take unclean elections, and enough replicas reported.
std::optional<candidate> choose(const metadata_image& image, const topic_image& topic, size_t p,
                                const leaderless_reports& reports,
                                const decision_options& options, const liveness& heard) {
  const auto& state = topic.partitions[p];
  if (state.leader != no_leader) return std::nullopt;
  if (unclean_leader_election_enabled(topic, options.unclean_leader_election_enable))
    return std::nullopt;
  for (auto n : state.isr)
    if (image.is_unfenced(n) && (!heard || heard(n))) return std::nullopt;
  const auto counted = counted_reports(image, topic, p, reports);
  const auto needed =
      replicas_needed_for_recovery(topic, state.replicas.size(), options.min_insync_replicas);
  if (static_cast<int32_t>(counted.size()) < needed || counted.empty()) return std::nullopt;
  // Raft's rule: the later last epoch, then the longer log; the first in replica order on a tie.
  const auto best = std::max_element(counted.begin(), counted.end(), [](const auto& a, const auto& b) {
    return std::pair{a.second.last_written_epoch, a.second.log_end} <
           std::pair{b.second.last_written_epoch, b.second.log_end};
  });
  return candidate{best->first, best->second, counted.size(), needed};
}

} // namespace

int32_t replicas_needed_for_recovery(const topic_image& topic, size_t replication_factor,
                                     int32_t default_min_insync_replicas) {
  const auto rf = static_cast<int32_t>(replication_factor);
  return rf - std::min(min_insync_of(topic, default_min_insync_replicas), rf) + 1;
}

std::vector<std::pair<topic_id, int32_t>> recoverable_partitions(const metadata_image& image,
                                                                 const leaderless_reports& reports,
                                                                 const decision_options& options,
                                                                 const liveness& heard) {
  std::vector<std::pair<topic_id, int32_t>> out;
  for (const auto& [key, by_node] : reports) {
    const auto* topic = image.topic(key.first);
    if (topic == nullptr || key.second < 0 ||
        static_cast<size_t>(key.second) >= topic->partitions.size())
      continue;
    if (choose(image, *topic, static_cast<size_t>(key.second), reports, options, heard))
      out.push_back(key);
  }
  return out;
}

decision recover_leaderless(const metadata_image& image, const leaderless_reports& reports,
                            const decision_options& options, const liveness& heard) {
  decision out;
  for (const auto& key : recoverable_partitions(image, reports, options, heard)) {
    const auto& topic = *image.topic(key.first);
    const auto p = static_cast<size_t>(key.second);
    const auto c = *choose(image, topic, p, reports, options, heard);
    const auto& state = topic.partitions[p];
    auto change = make_partition_change(topic.id, partition_id{key.second}, state, c.leader, {c.leader});
    if (!change) continue;
    out.records.emplace_back(std::move(*change));
    out.warnings.push_back(
        "partition " + topic.name + "-" + std::to_string(p) + " had no live ISR member (" +
        to_string(state.isr) + "); " + std::to_string(c.back) + " of its replicas are back (" +
        std::to_string(c.needed) + " needed to hold every acknowledged record): node " +
        std::to_string(c.leader.value()) + " leads, the most up-to-date (last epoch " +
        std::to_string(c.log.last_written_epoch) + ", log end " + std::to_string(c.log.log_end) +
        ")");
  }
  return out;
}

} // namespace capstan::controller
