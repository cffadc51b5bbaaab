#include "actors/controller/metadata/topic_decisions.hpp"

#include <algorithm>
#include <vector>

#include "actors/controller/metadata/replica_placement.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan::controller {

namespace {

error unknown_topic(const std::string& name) {
  return make_error(errc::unknown_topic_or_partition, "topic '" + name + "' does not exist");
}

// Unfenced nodes ascending by id (the map's order), with their racks.
std::vector<placement_broker> placement_brokers(const metadata_image& image) {
  std::vector<placement_broker> out;
  for (const auto& [id, b] : image.brokers())
    if (!b.fenced) out.push_back(placement_broker{id, b.rack});
  return out;
}

topic_id new_topic_id(const metadata_image& image, std::mt19937_64& rng) {
  for (;;) {
    topic_id id{};
    for (size_t i = 0; i < id.size(); i += 8) {
      const uint64_t r = rng();
      for (size_t j = 0; j < 8; ++j) id[i + j] = static_cast<uint8_t>(r >> (8 * j));
    }
    if (id != topic_id{} && image.topic(id) == nullptr) return id;
  }
}

// The Partition records of new partitions first, first + 1, ... with these replicas, after the
// node limit check (max.broker.partitions).
result<std::vector<metadata_record>> new_partitions(
  const metadata_image& image, const topic_id& topic, int32_t first,
  const std::vector<std::vector<node_id>>& placement, const decision_options& options) {
  std::vector<partition_assignment> added;
  for (const auto& replicas : placement) {
    partition_assignment a;
    for (auto n : replicas) a.replicas.push_back(n.value());
    added.push_back(std::move(a));
  }
  if (auto s = check_broker_partition_limit(image.to_cluster_metadata(no_leader).topics, added,
                                            options.max_broker_partitions);
      !s)
    return s.err();
  std::vector<metadata_record> out;
  out.reserve(placement.size());
  for (size_t i = 0; i < placement.size(); ++i)
    out.push_back(partition_record{topic, partition_id{first + static_cast<int32_t>(i)},
                                   placement[i], placement[i], placement[i].front(),
                                   leader_epoch{0}, partition_epoch{0}, {}, {}});
  return out;
}

} // namespace

result<decision> create_topic(const metadata_image& image, topic_spec spec,
                              const decision_options& options, std::mt19937_64& rng) {
  if (spec.partitions == -1) spec.partitions = options.default_partitions;
  if (spec.replication_factor == -1) spec.replication_factor = options.default_replication_factor;
  const auto brokers = placement_brokers(image);
  if (auto s = validate_topic_spec(spec, brokers.size()); !s) return s.err();
  if (image.topic_by_name(spec.name) != nullptr)
    return make_error(errc::topic_already_exists, "topic '" + spec.name + "' already exists");
  std::vector<std::string> names;
  for (const auto& [id, t] : image.topics()) names.push_back(t.name);
  if (auto s = check_topic_collision(spec.name, names); !s) return s.err();

  const auto id = new_topic_id(image, rng);
  auto placement = assign_replicas(brokers, spec.partitions, spec.replication_factor, rng);
  auto partitions = new_partitions(image, id, 0, placement, options);
  if (!partitions) return partitions.err();
  decision out;
  out.records.push_back(topic_record{spec.name, id, is_internal_topic(spec.name), spec.configs});
  for (auto& r : *partitions) out.records.push_back(std::move(r));
  return out;
}

result<decision> create_partitions(const metadata_image& image, const std::string& name,
                                   int32_t total, const decision_options& options) {
  auto topic = image.topic_by_name(name);
  if (topic == nullptr) return unknown_topic(name);
  const auto current = static_cast<int32_t>(topic->partitions.size());
  if (total <= current)
    return make_error(errc::invalid_partitions,
                      "topic '" + name + "' has " + std::to_string(current) +
                        " partitions; the count can only grow, and " + std::to_string(total) +
                        " is no increase");
  if (total > max_topic_partitions)
    return make_error(errc::policy_violation,
                      "a topic has at most " + std::to_string(max_topic_partitions) +
                        " partitions, not " + std::to_string(total));
  if (current == 0)
    return make_error(errc::invalid_request, "topic '" + name + "' has no partition 0");
  const auto brokers = placement_brokers(image);
  const auto& partition0 = topic->partitions.front().replicas;
  const auto replication_factor = static_cast<int32_t>(partition0.size());
  if (static_cast<size_t>(replication_factor) > brokers.size())
    return make_error(errc::invalid_replication_factor,
                      "topic '" + name + "' has " + std::to_string(replication_factor) +
                        " replicas per partition, but only " + std::to_string(brokers.size()) +
                        " nodes are unfenced");
  auto at = std::find_if(brokers.begin(), brokers.end(), [&](const placement_broker& b) {
    return b.id >= partition0.front();
  });
  const auto start = at == brokers.end() ? 0 : static_cast<int32_t>(at - brokers.begin());
  auto placement =
    assign_replicas(brokers, total - current, replication_factor, start, start, current);
  auto partitions = new_partitions(image, topic->id, current, placement, options);
  if (!partitions) return partitions.err();
  return decision{std::move(*partitions), {}};
}

result<decision> delete_topic(const metadata_image& image, const std::string& name) {
  auto topic = image.topic_by_name(name);
  if (topic == nullptr) return unknown_topic(name);
  if (topic->internal || is_internal_topic(name))
    return make_error(errc::policy_violation, "internal topic '" + name + "' cannot be deleted");
  return decision{{remove_topic_record{topic->id}}, {}};
}

result<decision> alter_configs(const metadata_image& image, const std::string& name,
                               const std::map<std::string, std::string>& changes,
                               const std::vector<std::string>& deleted) {
  auto topic = image.topic_by_name(name);
  if (topic == nullptr) return unknown_topic(name);
  auto overrides = altered_topic_configs(topic->configs, changes, deleted);
  if (!overrides) return overrides.err();
  decision out;
  if (*overrides != topic->configs)
    out.records.push_back(topic_config_record{topic->id, std::move(*overrides)});
  return out;
}

result<decision> import_topics(const metadata_image& image, const import_topics_msg& m) {
  decision out;
  for (const auto& t : m.topics) {
    if (t.id == topic_id{})
      return make_error(errc::invalid_request, "topic '" + t.name + "' has no topic id");
    const auto* same_id = image.topic(t.id);
    const auto* same_name = image.topic_by_name(t.name);
    if (same_id != nullptr && same_id == same_name) continue;
    if (same_id != nullptr || same_name != nullptr)
      return make_error(errc::topic_already_exists,
                        "topic '" + t.name + "' cannot be imported: the controller holds " +
                          (same_name != nullptr ? "that name under another topic id"
                                                : "its topic id under another name"));
    out.records.push_back(topic_record{t.name, t.id, t.internal, t.configs});
    auto partitions = t.partitions;
    std::sort(partitions.begin(), partitions.end(),
              [](const auto& a, const auto& b) { return a.partition < b.partition; });
    for (size_t i = 0; i < partitions.size(); ++i) {
      const auto& p = partitions[i];
      if (p.partition != static_cast<int32_t>(i))
        return make_error(errc::invalid_request, "topic '" + t.name + "' has no partition " +
                                                   std::to_string(i));
      if (p.replicas != std::vector<int32_t>{m.node.value()})
        return make_error(errc::invalid_request,
                          "partition " + t.name + "-" + std::to_string(i) +
                            " has replicas other than node " + std::to_string(m.node.value()));
      const std::vector<node_id> alone{m.node};
      out.records.push_back(partition_record{t.id, partition_id{p.partition}, alone, alone, m.node,
                                             leader_epoch{p.leader_epoch}, partition_epoch{0},
                                             {}, {}});
    }
  }
  if (m.next_producer_id > image.next_producer_id())
    out.records.push_back(producer_ids_record{image.next_producer_id(),
                                              m.next_producer_id - image.next_producer_id()});
  return out;
}

} // namespace capstan::controller
