#include "actors/replica/control_codec.hpp"

#include <algorithm>
#include <cstring>

#include <capnp/message.h>

#include "actors/replica/codec_fields.hpp"
#include "actors/replica/fetch_codec.hpp"
#include "schema/replication.capnp.h"

namespace capstan {

namespace {

using codec::incarnation_data;
using codec::invalid;
using codec::read_incarnation;
using codec::read_tp;
using codec::set_tp;

capnp::Data::Reader id_data(const topic_id& id) { return capnp::Data::Reader(id.data(), id.size()); }

// A topic id is 16 bytes; an absent one (older sender) reads as all zeros.
result<topic_id> read_id(capnp::Data::Reader d) {
  topic_id id{};
  if (d.size() == 0) return id;
  if (d.size() != id.size()) return invalid("a topic id has 16 bytes, not " + std::to_string(d.size()));
  std::memcpy(id.data(), d.begin(), id.size());
  return id;
}

template <class List>
void set_nodes(List list, const std::vector<node_id>& v) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, v[i].value());
}

template <class Reader>
result<std::vector<node_id>> read_nodes(Reader list, const char* what) {
  if (list.size() > 1024) return invalid(std::string(what) + " lists " + std::to_string(list.size()) + " nodes");
  std::vector<node_id> out;
  out.reserve(list.size());
  for (auto n : list) {
    if (n < 0) return invalid(std::string(what) + " names node " + std::to_string(n));
    out.push_back(node_id{n});
  }
  return out;
}

template <class List>
status check_count(const List& list, const char* what) {
  if (list.size() > max_partitions_per_request)
    return invalid(std::string(what) + " lists " + std::to_string(list.size()) + " entries, at most " +
                   std::to_string(max_partitions_per_request));
  return {};
}

template <class T, class F>
auto decode(const capnp_frame& frame, F&& f) -> decltype(f(std::declval<typename T::Reader>())) {
  auto r = frame.try_read<T>(std::forward<F>(f));
  if (!r) return r.err();
  return std::move(*r);
}

void put_state(schema::PartitionState::Builder b, const partition_state_msg& p) {
  set_tp(b.initTopicPartition(), p.tp);
  b.setTopicId(id_data(p.id));
  b.setLeader(p.leader.value());
  b.setLeaderEpoch(p.epoch.value());
  set_nodes(b.initIsr(static_cast<unsigned>(p.isr.size())), p.isr);
  b.setPartitionEpoch(p.partition_epoch);
  set_nodes(b.initReplicas(static_cast<unsigned>(p.replicas.size())), p.replicas);
  set_nodes(b.initWipedReplicas(static_cast<unsigned>(p.wiped.size())), p.wiped);
}

result<partition_state_msg> get_state(schema::PartitionState::Reader r) {
  partition_state_msg p;
  auto tp = read_tp(r.getTopicPartition());
  if (!tp) return tp.err();
  p.tp = std::move(*tp);
  auto id = read_id(r.getTopicId());
  if (!id) return id.err();
  p.id = *id;
  p.leader = node_id{r.getLeader()};
  p.epoch = leader_epoch{r.getLeaderEpoch()};
  p.partition_epoch = r.getPartitionEpoch();
  auto isr = read_nodes(r.getIsr(), "an ISR");
  if (!isr) return isr.err();
  auto replicas = read_nodes(r.getReplicas(), "a replica list");
  if (!replicas) return replicas.err();
  auto wiped = read_nodes(r.getWipedReplicas(), "a wiped replica list");
  if (!wiped) return wiped.err();
  p.isr = std::move(*isr);
  p.replicas = std::move(*replicas);
  p.wiped = std::move(*wiped);
  if (p.epoch.value() < 0 || p.partition_epoch < 0)
    return invalid("negative epochs for " + p.tp.first + "-" + std::to_string(p.tp.second));
  return p;
}

void put_endpoint(schema::NodeEndpoint::Builder b, const node_endpoint_msg& e) {
  b.setNodeId(e.node.value());
  b.setHost(e.host);
  b.setClientPort(e.client_port);
  b.setClusterPort(e.cluster_port);
  b.setRack(e.rack);
  b.setKafkaHost(e.kafka_host);
  b.setKafkaPort(e.kafka_port);
}

result<node_endpoint_msg> get_endpoint(schema::NodeEndpoint::Reader r) {
  if (r.getNodeId() < 0) return invalid("endpoint of node " + std::to_string(r.getNodeId()));
  node_endpoint_msg e{node_id{r.getNodeId()}, r.getHost(), r.getClientPort(), r.getClusterPort(), r.getRack(),
                      r.getKafkaHost(), r.getKafkaPort()};
  if (e.host.empty() || e.host.size() > 255) return invalid("bad host for node " + std::to_string(e.node.value()));
  return e;
}

template <class In, class Out, class F>
status read_list(In list, std::vector<Out>& out, F&& get) {
  out.reserve(list.size());
  for (auto x : list) {
    auto v = get(x);
    if (!v) return v.err();
    out.push_back(std::move(*v));
  }
  return {};
}

// All zeros (any) is left out of the frame.
template <class Builder>
void put_target(Builder root, const incarnation_bytes& target) {
  if (auto d = incarnation_data(target); d.size() != 0) root.setTargetIncarnation(d);
}

result<incarnation_bytes> get_target(capnp::Data::Reader d) {
  return read_incarnation(d, "a target incarnation");
}

} // namespace

capnp_frame encode(const leader_and_isr_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::LeaderAndIsr>();
  root.setControllerId(m.controller_id);
  root.setControllerEpoch(m.controller_epoch);
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) put_state(parts[i], m.partitions[i]);
  auto leaders = root.initLeaders(static_cast<unsigned>(m.leaders.size()));
  for (unsigned i = 0; i < leaders.size(); ++i) put_endpoint(leaders[i], m.leaders[i]);
  root.setSequence(m.sequence);
  put_target(root, m.target);
  return capnp_frame::from_builder(b);
}

result<leader_and_isr_msg> decode_leader_and_isr(const capnp_frame& frame) {
  return decode<schema::LeaderAndIsr>(frame, [](schema::LeaderAndIsr::Reader r) -> result<leader_and_isr_msg> {
    leader_and_isr_msg m;
    m.controller_id = r.getControllerId();
    m.controller_epoch = r.getControllerEpoch();
    if (auto s = check_count(r.getPartitions(), "LeaderAndIsr"); !s) return s.err();
    if (auto s = read_list(r.getPartitions(), m.partitions, get_state); !s) return s.err();
    if (auto s = check_count(r.getLeaders(), "LeaderAndIsr"); !s) return s.err();
    if (auto s = read_list(r.getLeaders(), m.leaders, get_endpoint); !s) return s.err();
    m.sequence = r.getSequence();
    if (m.sequence < 0) return invalid("LeaderAndIsr sequence " + std::to_string(m.sequence));
    auto target = get_target(r.getTargetIncarnation());
    if (!target) return target.err();
    m.target = *target;
    return m;
  });
}

capnp_frame encode(const update_metadata_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::UpdateMetadata>();
  root.setControllerId(m.controller_id);
  root.setControllerEpoch(m.controller_epoch);
  root.setClusterId(m.cluster_id);
  auto nodes = root.initNodes(static_cast<unsigned>(m.nodes.size()));
  for (unsigned i = 0; i < nodes.size(); ++i) put_endpoint(nodes[i], m.nodes[i]);
  auto topics = root.initTopics(static_cast<unsigned>(m.topics.size()));
  for (unsigned i = 0; i < topics.size(); ++i) {
    const auto& t = m.topics[i];
    topics[i].setName(t.name);
    topics[i].setTopicId(id_data(t.id));
    topics[i].setInternal(t.internal);
    auto cs = topics[i].initConfigs(static_cast<unsigned>(t.configs.size()));
    unsigned k = 0;
    for (const auto& [name, value] : t.configs) {
      cs[k].setName(name);
      cs[k].setValue(value);
      ++k;
    }
  }
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) put_state(parts[i], m.partitions[i]);
  root.setSequence(m.sequence);
  root.setFull(m.full);
  put_target(root, m.target);
  auto removed = root.initRemovedTopics(static_cast<unsigned>(m.removed_topics.size()));
  for (unsigned i = 0; i < removed.size(); ++i) removed.set(i, id_data(m.removed_topics[i]));
  return capnp_frame::from_builder(b);
}

result<update_metadata_msg> decode_update_metadata(const capnp_frame& frame) {
  return decode<schema::UpdateMetadata>(frame, [](schema::UpdateMetadata::Reader r) -> result<update_metadata_msg> {
    update_metadata_msg m;
    m.controller_id = r.getControllerId();
    m.controller_epoch = r.getControllerEpoch();
    m.cluster_id = r.getClusterId();
    if (auto s = check_count(r.getNodes(), "UpdateMetadata"); !s) return s.err();
    if (auto s = read_list(r.getNodes(), m.nodes, get_endpoint); !s) return s.err();
    if (auto s = check_count(r.getTopics(), "UpdateMetadata"); !s) return s.err();
    for (auto t : r.getTopics()) {
      topic_config_msg tc;
      tc.name = t.getName();
      if (auto s = validate_topic_name(tc.name); !s) return s.err();
      auto id = read_id(t.getTopicId());
      if (!id) return id.err();
      tc.id = *id;
      tc.internal = t.getInternal();
      for (auto c : t.getConfigs()) tc.configs[c.getName()] = c.getValue();
      m.topics.push_back(std::move(tc));
    }
    if (auto s = check_count(r.getPartitions(), "UpdateMetadata"); !s) return s.err();
    if (auto s = read_list(r.getPartitions(), m.partitions, get_state); !s) return s.err();
    m.sequence = r.getSequence();
    if (m.sequence < 0) return invalid("UpdateMetadata sequence " + std::to_string(m.sequence));
    auto target = get_target(r.getTargetIncarnation());
    if (!target) return target.err();
    m.target = *target;
    m.full = r.getFull();
    if (auto s = check_count(r.getRemovedTopics(), "UpdateMetadata"); !s) return s.err();
    if (m.full && r.getRemovedTopics().size() != 0)
      return invalid("a full UpdateMetadata names removed topics");
    for (auto removed : r.getRemovedTopics()) {
      auto id = read_id(removed);
      if (!id) return id.err();
      m.removed_topics.push_back(*id);
    }
    return m;
  });
}

capnp_frame encode(const stop_replica_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::StopReplica>();
  root.setControllerId(m.controller_id);
  root.setControllerEpoch(m.controller_epoch);
  root.setDeletePartitions(m.delete_partitions);
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    set_tp(parts[i].initTopicPartition(), m.partitions[i].tp);
    parts[i].setTopicId(id_data(m.partitions[i].id));
    parts[i].setLeaderEpoch(m.partitions[i].epoch.value());
  }
  root.setSequence(m.sequence);
  put_target(root, m.target);
  return capnp_frame::from_builder(b);
}

result<stop_replica_msg> decode_stop_replica(const capnp_frame& frame) {
  return decode<schema::StopReplica>(frame, [](schema::StopReplica::Reader r) -> result<stop_replica_msg> {
    stop_replica_msg m;
    m.controller_id = r.getControllerId();
    m.controller_epoch = r.getControllerEpoch();
    m.delete_partitions = r.getDeletePartitions();
    if (auto s = check_count(r.getPartitions(), "StopReplica"); !s) return s.err();
    for (auto p : r.getPartitions()) {
      auto tp = read_tp(p.getTopicPartition());
      if (!tp) return tp.err();
      auto id = read_id(p.getTopicId());
      if (!id) return id.err();
      m.partitions.push_back(stop_partition_msg{std::move(*tp), *id, leader_epoch{p.getLeaderEpoch()}});
    }
    m.sequence = r.getSequence();
    if (m.sequence < 0) return invalid("StopReplica sequence " + std::to_string(m.sequence));
    auto target = get_target(r.getTargetIncarnation());
    if (!target) return target.err();
    m.target = *target;
    return m;
  });
}

namespace {

template <class Root>
void put_response(Root root, const control_response_msg& m) {
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    set_tp(parts[i].initTopicPartition(), m.partitions[i].tp);
    parts[i].setErrorCode(static_cast<uint8_t>(m.partitions[i].error));
    if (!m.partitions[i].message.empty()) parts[i].setErrorMessage(m.partitions[i].message);
  }
}

template <class Reader>
result<control_response_msg> get_response(Reader r) {
  control_response_msg m;
  m.error = errc_from_code(r.getErrorCode());
  m.message = r.getErrorMessage();
  if (auto s = check_count(r.getPartitions(), "a control response"); !s) return s.err();
  for (auto p : r.getPartitions()) {
    auto tp = read_tp(p.getTopicPartition());
    if (!tp) return tp.err();
    m.partitions.push_back(partition_error_msg{std::move(*tp), errc_from_code(p.getErrorCode()), p.getErrorMessage()});
  }
  return m;
}

} // namespace

capnp_frame encode(const control_response_msg& m, bool stop) {
  capnp::MallocMessageBuilder b;
  if (stop) put_response(b.initRoot<schema::StopReplicaResponse>(), m);
  else put_response(b.initRoot<schema::LeaderAndIsrResponse>(), m);
  return capnp_frame::from_builder(b);
}

result<control_response_msg> decode_control_response(const capnp_frame& frame, bool stop) {
  if (stop)
    return decode<schema::StopReplicaResponse>(
      frame, [](schema::StopReplicaResponse::Reader r) { return get_response(r); });
  return decode<schema::LeaderAndIsrResponse>(
    frame, [](schema::LeaderAndIsrResponse::Reader r) { return get_response(r); });
}

capnp_frame encode(const alter_partition_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AlterPartition>();
  root.setBrokerId(m.broker.value());
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    const auto& p = m.partitions[i];
    set_tp(parts[i].initTopicPartition(), p.tp);
    parts[i].setTopicId(id_data(p.id));
    parts[i].setLeaderEpoch(p.epoch.value());
    parts[i].setPartitionEpoch(p.partition_epoch);
    set_nodes(parts[i].initNewIsr(static_cast<unsigned>(p.new_isr.size())), p.new_isr);
    auto ids = parts[i].initNewIsrIncarnations(static_cast<unsigned>(p.new_isr_incarnations.size()));
    for (unsigned j = 0; j < ids.size(); ++j) ids.set(j, incarnation_data(p.new_isr_incarnations[j]));
  }
  return capnp_frame::from_builder(b);
}

result<alter_partition_msg> decode_alter_partition(const capnp_frame& frame) {
  return decode<schema::AlterPartition>(frame, [](schema::AlterPartition::Reader r) -> result<alter_partition_msg> {
    alter_partition_msg m;
    if (r.getBrokerId() < 0) return invalid("AlterPartition from broker " + std::to_string(r.getBrokerId()));
    m.broker = node_id{r.getBrokerId()};
    if (auto s = check_count(r.getPartitions(), "AlterPartition"); !s) return s.err();
    for (auto p : r.getPartitions()) {
      alter_partition_item item;
      auto tp = read_tp(p.getTopicPartition());
      if (!tp) return tp.err();
      item.tp = std::move(*tp);
      auto id = read_id(p.getTopicId());
      if (!id) return id.err();
      item.id = *id;
      item.epoch = leader_epoch{p.getLeaderEpoch()};
      item.partition_epoch = p.getPartitionEpoch();
      if (item.epoch.value() < 0 || item.partition_epoch < 0)
        return invalid("AlterPartition with negative epochs for " + item.tp.first + "-" +
                       std::to_string(item.tp.second));
      auto isr = read_nodes(p.getNewIsr(), "a proposed ISR");
      if (!isr) return isr.err();
      item.new_isr = std::move(*isr);
      auto ids = p.getNewIsrIncarnations();
      if (ids.size() != 0 && ids.size() != item.new_isr.size())
        return invalid("AlterPartition for " + item.tp.first + "-" + std::to_string(item.tp.second) +
                       " names " + std::to_string(ids.size()) + " incarnations for an ISR of " +
                       std::to_string(item.new_isr.size()));
      for (auto d : ids) {
        auto id = read_incarnation(d, "an ISR member's incarnation");
        if (!id) return id.err();
        item.new_isr_incarnations.push_back(*id);
      }
      m.partitions.push_back(std::move(item));
    }
    return m;
  });
}

capnp_frame encode(const alter_partition_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AlterPartitionResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  auto parts = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < parts.size(); ++i) {
    const auto& p = m.partitions[i];
    set_tp(parts[i].initTopicPartition(), p.tp);
    parts[i].setErrorCode(static_cast<uint8_t>(p.error));
    if (!p.message.empty()) parts[i].setErrorMessage(p.message);
    parts[i].setLeader(p.leader.value());
    parts[i].setLeaderEpoch(p.epoch.value());
    set_nodes(parts[i].initIsr(static_cast<unsigned>(p.isr.size())), p.isr);
    parts[i].setPartitionEpoch(p.partition_epoch);
  }
  return capnp_frame::from_builder(b);
}

result<alter_partition_response_msg> decode_alter_partition_response(const capnp_frame& frame) {
  return decode<schema::AlterPartitionResponse>(
    frame, [](schema::AlterPartitionResponse::Reader r) -> result<alter_partition_response_msg> {
      alter_partition_response_msg m;
      m.error = errc_from_code(r.getErrorCode());
      m.message = r.getErrorMessage();
      if (auto s = check_count(r.getPartitions(), "AlterPartitionResponse"); !s) return s.err();
      for (auto p : r.getPartitions()) {
        alter_partition_result_item item;
        auto tp = read_tp(p.getTopicPartition());
        if (!tp) return tp.err();
        item.tp = std::move(*tp);
        item.error = errc_from_code(p.getErrorCode());
        item.message = p.getErrorMessage();
        item.leader = node_id{p.getLeader()};
        item.epoch = leader_epoch{p.getLeaderEpoch()};
        auto isr = read_nodes(p.getIsr(), "a committed ISR");
        if (!isr) return isr.err();
        item.isr = std::move(*isr);
        item.partition_epoch = p.getPartitionEpoch();
        m.partitions.push_back(std::move(item));
      }
      return m;
    });
}

} // namespace capstan
