#include "actors/controller/metadata/metadata_image.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "runtime/storage/partition_metadata.hpp"

namespace capstan::controller {

namespace {

bool contains(const std::vector<node_id>& nodes, node_id n) {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

std::string partition_name(const topic_image& t, partition_id p) {
  return t.name + "-" + std::to_string(p.value());
}

// The per-partition invariants of the header comment, for a state about to be stored.
status check_partition(const partition_state& p, const std::string& name) {
  auto invalid = [&](const std::string& why) {
    return make_error(errc::invalid_request, "partition " + name + ": " + why);
  };
  if (p.replicas.empty()) return invalid("no replicas");
  // Empty only without a leader: the last member came back with a log that may lack what it held
  // (KIP-966; broker_decisions.hpp, register_broker).
  if (p.isr.empty() && p.leader != no_leader) return invalid("empty ISR with a leader");
  for (auto n : p.isr)
    if (!contains(p.replicas, n))
      return invalid("ISR " + to_string(p.isr) + " is not within replicas " +
                     to_string(p.replicas));
  if (p.leader != no_leader && !contains(p.isr, p.leader))
    return invalid("leader " + std::to_string(p.leader.value()) + " is not in ISR " +
                   to_string(p.isr));
  const auto& moving = p.reassignment;
  std::vector<node_id> seen;
  for (const auto* part : {&moving.adding, &moving.removing})
    for (auto n : *part) {
      if (!contains(p.replicas, n) || contains(seen, n))
        return invalid("reassignment adding " + to_string(moving.adding) + " removing " +
                       to_string(moving.removing) + " does not fit replicas " +
                       to_string(p.replicas));
      seen.push_back(n);
    }
  if (moving.removing.size() >= p.replicas.size())
    return invalid("reassignment removes every replica of " + to_string(p.replicas));
  for (auto n : p.wiped)
    if (!contains(p.replicas, n) || contains(p.isr, n))
      return invalid("wiped replicas " + to_string(p.wiped) + " are not replicas " +
                     to_string(p.replicas) + " outside ISR " + to_string(p.isr));
  return {};
}

error unknown_topic(const topic_id& id) {
  return make_error(errc::unknown_topic_or_partition, "no topic with id " + to_base64_uuid(id));
}

} // namespace

bool partition_state::has_replica(node_id n) const { return contains(replicas, n); }

bool partition_state::in_isr(node_id n) const { return contains(isr, n); }

bool partition_state::is_wiped(node_id n) const { return contains(wiped, n); }

metadata_image::metadata_image(std::string cluster_id) : cluster_id_(std::move(cluster_id)) {}

status metadata_image::apply(const metadata_record& record) {
  return std::visit(
    [this](const auto& r) -> status {
      using T = std::decay_t<decltype(r)>;
      if constexpr (std::is_same_v<T, register_broker_record>) return apply_register(r);
      else if constexpr (std::is_same_v<T, fence_broker_record>)
        return apply_fencing(r.node, r.epoch, true);
      else if constexpr (std::is_same_v<T, unfence_broker_record>)
        return apply_fencing(r.node, r.epoch, false);
      else if constexpr (std::is_same_v<T, topic_record>) return apply_topic(r);
      else if constexpr (std::is_same_v<T, partition_record>) return apply_partition(r);
      else if constexpr (std::is_same_v<T, partition_change_record>) return apply_change(r);
      else if constexpr (std::is_same_v<T, remove_topic_record>) return apply_remove(r);
      else if constexpr (std::is_same_v<T, topic_config_record>) return apply_config(r);
      else if constexpr (std::is_same_v<T, unregister_broker_record>) return apply_unregister(r);
      else return apply_producer_ids(r);
    },
    record);
}

status metadata_image::apply(const std::vector<metadata_record>& batch) {
  auto named = [](const status& s, size_t i, const metadata_record& r) -> status {
    return make_error(s.code(), "record " + std::to_string(i) + " (" +
                                  std::string(record_kind(r)) + "): " + s.err().message);
  };
  if (batch.empty()) return {};
  if (batch.size() == 1) {
    auto s = apply(batch.front());
    return s ? s : named(s, 0, batch.front());
  }
  metadata_image next = *this;
  for (size_t i = 0; i < batch.size(); ++i)
    if (auto s = next.apply(batch[i]); !s) return named(s, i, batch[i]);
  *this = std::move(next);
  return {};
}

status metadata_image::apply_register(const register_broker_record& r) {
  if (r.cluster_id != cluster_id_)
    return make_error(errc::inconsistent_cluster_id,
                      "node " + std::to_string(r.node.value()) + " registered for cluster '" +
                        r.cluster_id + "', this is cluster '" + cluster_id_ + "'");
  if (r.node.value() < 0)
    return make_error(errc::invalid_request, "node id " + std::to_string(r.node.value()));
  if (r.epoch.value() < 0 || r.epoch.value() >= max_broker_epochs)
    return make_error(errc::invalid_request, "broker epoch " + std::to_string(r.epoch.value()));
  if (auto it = brokers_.find(r.node); it != brokers_.end() && r.epoch <= it->second.epoch)
    return make_error(errc::stale_broker_epoch,
                      "node " + std::to_string(r.node.value()) + " registered with epoch " +
                        std::to_string(r.epoch.value()) + ", not above its epoch " +
                        std::to_string(it->second.epoch.value()));
  brokers_[r.node] = broker_registration{r.node,        r.incarnation, r.epoch,
                                         r.client_host, r.client_port, r.cluster_host,
                                         r.cluster_port, r.rack,       true,
                                         r.kafka_host,   r.kafka_port};
  max_broker_epoch_ = std::max(max_broker_epoch_, r.epoch);
  if (r.new_data_dir)
    for (auto& [id, t] : topics_)
      for (auto& p : t.partitions)
        if (p.has_replica(r.node) && !p.in_isr(r.node) && !p.is_wiped(r.node))
          p.wiped.push_back(r.node);
  return {};
}

status metadata_image::apply_fencing(node_id node, broker_epoch epoch, bool fenced) {
  auto it = brokers_.find(node);
  if (it == brokers_.end() || it->second.epoch != epoch)
    return make_error(errc::stale_broker_epoch,
                      "node " + std::to_string(node.value()) + " has no registration of epoch " +
                        std::to_string(epoch.value()));
  it->second.fenced = fenced;
  return {};
}

// Only a fenced node leaves: an unfenced one may lead or be in an ISR. A fenced node may still be
// a replica (of partitions not reassigned off it): those replicas stay as they are, offline, as
// KRaft leaves them.
status metadata_image::apply_unregister(const unregister_broker_record& r) {
  auto it = brokers_.find(r.node);
  if (it == brokers_.end() || it->second.epoch != r.epoch)
    return make_error(errc::stale_broker_epoch,
                      "node " + std::to_string(r.node.value()) + " has no registration of epoch " +
                        std::to_string(r.epoch.value()));
  if (!it->second.fenced)
    return make_error(errc::invalid_request,
                      "node " + std::to_string(r.node.value()) + " is unfenced");
  brokers_.erase(it);
  return {};
}

status metadata_image::apply_topic(const topic_record& r) {
  if (r.name.empty()) return make_error(errc::invalid_topic_exception, "topic name is empty");
  if (r.id == topic_id{}) return make_error(errc::invalid_request, "topic id is all zeros");
  if (topic_ids_.count(r.name) != 0)
    return make_error(errc::topic_already_exists, "topic '" + r.name + "' already exists");
  if (topics_.count(r.id) != 0)
    return make_error(errc::topic_already_exists,
                      "topic id " + to_base64_uuid(r.id) + " is in use by '" + topics_[r.id].name + "'");
  topics_[r.id] = topic_image{r.name, r.id, r.internal, r.configs, {}};
  topic_ids_[r.name] = r.id;
  return {};
}

status metadata_image::apply_partition(const partition_record& r) {
  auto it = topics_.find(r.topic);
  if (it == topics_.end()) return unknown_topic(r.topic);
  auto& t = it->second;
  if (r.partition.value() != static_cast<int64_t>(t.partitions.size()))
    return make_error(errc::invalid_partitions,
                      "partition " + partition_name(t, r.partition) + " is not the next one (" +
                        std::to_string(t.partitions.size()) + ")");
  partition_state p{r.replicas,        r.isr,          r.leader, r.leader_epoch,
                    r.partition_epoch, r.reassignment, r.wiped};
  if (p.leader_epoch.value() < 0 || p.partition_epoch.value() < 0)
    return make_error(errc::invalid_request,
                      "partition " + partition_name(t, r.partition) + " has a negative epoch");
  if (auto s = check_partition(p, partition_name(t, r.partition)); !s) return s;
  t.partitions.push_back(std::move(p));
  return {};
}

status metadata_image::apply_change(const partition_change_record& r) {
  auto it = topics_.find(r.topic);
  if (it == topics_.end()) return unknown_topic(r.topic);
  auto& t = it->second;
  if (r.partition.value() < 0 || r.partition.value() >= static_cast<int64_t>(t.partitions.size()))
    return make_error(errc::unknown_topic_or_partition,
                      "no partition " + partition_name(t, r.partition));
  const auto name = partition_name(t, r.partition);
  auto& current = t.partitions[static_cast<size_t>(r.partition.value())];
  if (current.partition_epoch.value() >= max_partition_epochs - 1 ||
      r.partition_epoch != next(current.partition_epoch))
    return make_error(errc::invalid_update_version,
                      "partition " + name + " is at partition epoch " +
                        std::to_string(current.partition_epoch.value()) + ", the change gives " +
                        std::to_string(r.partition_epoch.value()));
  const auto expected_leader_epoch = r.leader ? current.leader_epoch.value() + int64_t{1}
                                              : int64_t{current.leader_epoch.value()};
  if (expected_leader_epoch >= max_partition_epochs ||
      r.leader_epoch.value() != expected_leader_epoch)
    return make_error(errc::invalid_update_version,
                      "partition " + name + " is at leader epoch " +
                        std::to_string(current.leader_epoch.value()) + ", the change gives " +
                        std::to_string(r.leader_epoch.value()) +
                        (r.leader ? " with a new leader" : " without a new leader"));
  partition_state next_state = current;
  if (r.leader) next_state.leader = *r.leader;
  if (r.isr) next_state.isr = *r.isr;
  if (r.replicas) next_state.replicas = *r.replicas;
  if (r.reassignment) next_state.reassignment = *r.reassignment;
  next_state.leader_epoch = r.leader_epoch;
  next_state.partition_epoch = r.partition_epoch;
  std::erase_if(next_state.wiped, [&](node_id n) {
    return next_state.in_isr(n) || !next_state.has_replica(n);
  });
  if (auto s = check_partition(next_state, name); !s) return s;
  current = std::move(next_state);
  return {};
}

status metadata_image::apply_remove(const remove_topic_record& r) {
  auto it = topics_.find(r.topic);
  if (it == topics_.end()) return unknown_topic(r.topic);
  topic_ids_.erase(it->second.name);
  topics_.erase(it);
  return {};
}

status metadata_image::apply_config(const topic_config_record& r) {
  auto it = topics_.find(r.topic);
  if (it == topics_.end()) return unknown_topic(r.topic);
  it->second.configs = r.configs;
  return {};
}

status metadata_image::apply_producer_ids(const producer_ids_record& r) {
  if (r.first_id != next_producer_id_ || r.size <= 0 ||
      r.first_id > std::numeric_limits<int64_t>::max() - r.size)
    return make_error(errc::invalid_request,
                      "producer id block [" + std::to_string(r.first_id) + ", +" +
                        std::to_string(r.size) + ") does not start at the next id " +
                        std::to_string(next_producer_id_) + " or is empty or overflows");
  next_producer_id_ = r.first_id + r.size;
  return {};
}

const broker_registration* metadata_image::broker(node_id id) const {
  auto it = brokers_.find(id);
  return it == brokers_.end() ? nullptr : &it->second;
}

bool metadata_image::is_unfenced(node_id id) const {
  auto b = broker(id);
  return b != nullptr && !b->fenced;
}

std::vector<node_id> metadata_image::unfenced_brokers() const {
  std::vector<node_id> out;
  for (const auto& [id, b] : brokers_)
    if (!b.fenced) out.push_back(id);
  return out;
}

const topic_image* metadata_image::topic(const topic_id& id) const {
  auto it = topics_.find(id);
  return it == topics_.end() ? nullptr : &it->second;
}

const topic_image* metadata_image::topic_by_name(const std::string& name) const {
  auto it = topic_ids_.find(name);
  return it == topic_ids_.end() ? nullptr : topic(it->second);
}

const partition_state* metadata_image::partition(const topic_id& id, partition_id p) const {
  auto t = topic(id);
  if (t == nullptr || p.value() < 0 || p.value() >= static_cast<int64_t>(t->partitions.size()))
    return nullptr;
  return &t->partitions[static_cast<size_t>(p.value())];
}

cluster_metadata metadata_image::to_cluster_metadata(node_id controller) const {
  cluster_metadata out;
  out.cluster_id = cluster_id_;
  out.controller_id = controller.value();
  for (const auto& [id, b] : brokers_)
    if (!b.fenced) out.brokers.push_back(broker_info{id.value(), b.client_host, b.client_port, b.kafka_host, b.kafka_port});
  auto ints = [](const std::vector<node_id>& nodes) {
    std::vector<int32_t> v;
    v.reserve(nodes.size());
    for (auto n : nodes) v.push_back(n.value());
    return v;
  };
  for (const auto& [id, t] : topics_) {
    topic_metadata tm;
    tm.name = t.name;
    tm.id = t.id;
    tm.internal = t.internal;
    tm.configs = t.configs;
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      tm.partitions.push_back(partition_assignment{static_cast<int32_t>(i), ints(p.replicas),
                                                   p.leader.value(), p.leader_epoch.value(),
                                                   ints(p.isr), ints(p.wiped)});
    }
    out.topics.emplace(t.name, std::move(tm));
  }
  return out;
}

std::vector<metadata_record> metadata_image::to_records() const {
  std::vector<metadata_record> out;
  for (const auto& [id, b] : brokers_) {
    out.push_back(register_broker_record{id, b.incarnation, cluster_id_, b.client_host,
                                         b.client_port, b.cluster_host, b.cluster_port, b.rack,
                                         b.epoch, false, b.kafka_host, b.kafka_port});
    if (!b.fenced) out.push_back(unfence_broker_record{id, b.epoch});
  }
  for (const auto& [id, t] : topics_) {
    out.push_back(topic_record{t.name, t.id, t.internal, t.configs});
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      out.push_back(partition_record{t.id, partition_id{static_cast<int32_t>(i)}, p.replicas,
                                     p.isr, p.leader, p.leader_epoch, p.partition_epoch,
                                     p.reassignment, p.wiped});
    }
  }
  if (next_producer_id_ > 0) out.push_back(producer_ids_record{0, next_producer_id_});
  return out;
}

} // namespace capstan::controller
