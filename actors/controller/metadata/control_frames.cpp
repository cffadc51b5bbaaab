#include "actors/controller/metadata/control_frames.hpp"

#include <algorithm>
#include <string>

#include <capnp/message.h>

#include "schema/replication.capnp.h"

namespace capstan::controller {

namespace {

capnp::Text::Reader text(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }

capnp::Data::Reader data(const topic_id& id) { return capnp::Data::Reader(id.data(), id.size()); }

void set_nodes(capnp::List<int32_t>::Builder out, const std::vector<node_id>& nodes) {
  for (unsigned i = 0; i < nodes.size(); ++i) out.set(i, nodes[i].value());
}

template <class Builder>
void set_topic_partition(Builder b, const std::string& topic, partition_id p) {
  b.setTopic(text(topic));
  b.setPartition(p.value());
}

void set_state(schema::PartitionState::Builder b, const partition_control_state& s) {
  set_topic_partition(b.initTopicPartition(), s.topic, s.partition);
  b.setTopicId(data(s.id));
  b.setLeader(s.leader.value());
  b.setLeaderEpoch(s.leader_epoch.value());
  set_nodes(b.initIsr(static_cast<unsigned>(s.isr.size())), s.isr);
  b.setPartitionEpoch(s.partition_epoch.value());
  set_nodes(b.initReplicas(static_cast<unsigned>(s.replicas.size())), s.replicas);
}

void set_endpoint(schema::NodeEndpoint::Builder b, const node_endpoint& e) {
  b.setNodeId(e.id.value());
  b.setHost(text(e.host));
  b.setClientPort(e.client_port);
  b.setClusterPort(e.cluster_port);
  b.setRack(text(e.rack));
}

error corrupt(const std::string& what) {
  return make_error(errc::corrupt_message, "AlterPartition: " + what);
}

} // namespace

capnp_frame leader_and_isr_frame(const node_control& control, controller_stamp stamp) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::LeaderAndIsr>();
  root.setControllerId(stamp.controller.value());
  root.setControllerEpoch(stamp.epoch);
  auto partitions = root.initPartitions(static_cast<unsigned>(control.leader_and_isr.size()));
  for (unsigned i = 0; i < control.leader_and_isr.size(); ++i)
    set_state(partitions[i], control.leader_and_isr[i]);
  auto leaders = root.initLeaders(static_cast<unsigned>(control.leaders.size()));
  for (unsigned i = 0; i < control.leaders.size(); ++i) set_endpoint(leaders[i], control.leaders[i]);
  return capnp_frame::from_builder(builder);
}

capnp_frame stop_replica_frame(const node_control& control, controller_stamp stamp) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::StopReplica>();
  root.setControllerId(stamp.controller.value());
  root.setControllerEpoch(stamp.epoch);
  root.setDeletePartitions(true);
  auto partitions = root.initPartitions(static_cast<unsigned>(control.stop_and_delete.size()));
  for (unsigned i = 0; i < control.stop_and_delete.size(); ++i) {
    const auto& s = control.stop_and_delete[i];
    set_topic_partition(partitions[i].initTopicPartition(), s.topic, s.partition);
    partitions[i].setTopicId(data(s.id));
    partitions[i].setLeaderEpoch(s.leader_epoch.value());
  }
  return capnp_frame::from_builder(builder);
}

capnp_frame update_metadata_frame(const metadata_image& image, controller_stamp stamp) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::UpdateMetadata>();
  root.setControllerId(stamp.controller.value());
  root.setControllerEpoch(stamp.epoch);
  root.setClusterId(text(image.cluster_id()));

  std::vector<node_endpoint> nodes;
  for (const auto& [id, b] : image.brokers())
    if (!b.fenced)
      nodes.push_back(node_endpoint{id, b.client_host, b.client_port, b.cluster_port, b.rack});
  auto node_list = root.initNodes(static_cast<unsigned>(nodes.size()));
  for (unsigned i = 0; i < nodes.size(); ++i) set_endpoint(node_list[i], nodes[i]);

  size_t partition_count = 0;
  for (const auto& [id, t] : image.topics()) partition_count += t.partitions.size();
  auto topics = root.initTopics(static_cast<unsigned>(image.topics().size()));
  auto partitions = root.initPartitions(static_cast<unsigned>(partition_count));
  unsigned ti = 0;
  unsigned pi = 0;
  for (const auto& [id, t] : image.topics()) {
    auto tb = topics[ti++];
    tb.setName(text(t.name));
    tb.setTopicId(data(t.id));
    tb.setInternal(t.internal);
    auto configs = tb.initConfigs(static_cast<unsigned>(t.configs.size()));
    unsigned ci = 0;
    for (const auto& [k, v] : t.configs) {
      configs[ci].setName(text(k));
      configs[ci].setValue(text(v));
      ++ci;
    }
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      set_state(partitions[pi++],
                partition_control_state{t.name, t.id, partition_id{static_cast<int32_t>(i)},
                                        p.leader, p.leader_epoch, p.isr, p.partition_epoch,
                                        p.replicas});
    }
  }
  return capnp_frame::from_builder(builder);
}

result<alter_partition_request> decode_alter_partition(const capnp_frame& frame) {
  if (frame.empty()) return corrupt("empty frame");
  auto decoded = frame.try_read<schema::AlterPartition>(
    [](schema::AlterPartition::Reader r) -> result<alter_partition_request> {
      alter_partition_request out;
      if (r.getBrokerId() < 0) return corrupt("broker id " + std::to_string(r.getBrokerId()));
      out.broker = node_id{r.getBrokerId()};
      for (auto p : r.getPartitions()) {
        alter_partition_item item;
        auto tp = p.getTopicPartition();
        item.topic = std::string(tp.getTopic().cStr(), tp.getTopic().size());
        if (tp.getPartition() < 0 || p.getLeaderEpoch() < 0 || p.getPartitionEpoch() < 0)
          return corrupt("partition " + item.topic + "-" + std::to_string(tp.getPartition()) +
                         " with leader epoch " + std::to_string(p.getLeaderEpoch()) +
                         " and partition epoch " + std::to_string(p.getPartitionEpoch()));
        item.partition = partition_id{tp.getPartition()};
        auto id = p.getTopicId();
        if (id.size() == item.id.size()) std::copy(id.begin(), id.end(), item.id.begin());
        else if (id.size() != 0)
          return corrupt("topic id of " + std::to_string(id.size()) + " bytes");
        item.leader_epoch = leader_epoch{p.getLeaderEpoch()};
        item.partition_epoch = partition_epoch{p.getPartitionEpoch()};
        for (int32_t n : p.getNewIsr()) {
          if (n < 0) return corrupt("ISR member " + std::to_string(n));
          item.new_isr.push_back(node_id{n});
        }
        out.partitions.push_back(std::move(item));
      }
      return out;
    });
  if (!decoded) return decoded.err();
  return std::move(*decoded);
}

capnp_frame alter_partition_response_frame(const std::vector<alter_partition_result>& results) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::AlterPartitionResponse>();
  auto list = root.initPartitions(static_cast<unsigned>(results.size()));
  for (unsigned i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    auto b = list[i];
    set_topic_partition(b.initTopicPartition(), r.topic, r.partition);
    b.setErrorCode(static_cast<uint8_t>(r.outcome.code));
    b.setErrorMessage(text(r.outcome.message));
    if (r.outcome.code != errc::none) {
      b.setLeader(no_leader.value());
      continue;
    }
    b.setLeader(r.leader.value());
    b.setLeaderEpoch(r.leader_epoch.value());
    set_nodes(b.initIsr(static_cast<unsigned>(r.isr.size())), r.isr);
    b.setPartitionEpoch(r.partition_epoch.value());
  }
  return capnp_frame::from_builder(builder);
}

} // namespace capstan::controller
