#include "actors/controller/metadata/metadata_record_codec.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "runtime/messages/capnp_frame.hpp"
#include "schema/metadata.capnp.h"

namespace capstan::controller {

namespace {

using wire = schema::MetadataRecord;

capnp::Text::Reader text(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }

capnp::Data::Reader data(const topic_id& id) { return capnp::Data::Reader(id.data(), id.size()); }

void set_nodes(capnp::List<int32_t>::Builder out, const std::vector<node_id>& nodes) {
  for (unsigned i = 0; i < nodes.size(); ++i) out.set(i, nodes[i].value());
}

template <class Builder>
void set_configs(Builder b, const std::map<std::string, std::string>& configs) {
  auto list = b.initConfigs(static_cast<unsigned>(configs.size()));
  unsigned i = 0;
  for (const auto& [name, value] : configs) {
    list[i].setName(text(name));
    list[i].setValue(text(value));
    ++i;
  }
}

template <class Builder>
void set_reassignment(Builder b, const reassignment_state& r) {
  set_nodes(b.initAddingReplicas(static_cast<unsigned>(r.adding.size())), r.adding);
  set_nodes(b.initRemovingReplicas(static_cast<unsigned>(r.removing.size())), r.removing);
}

struct writer {
  wire::Builder out;

  void operator()(const register_broker_record& r) {
    auto b = out.initRegisterBroker();
    b.setNodeId(r.node.value());
    b.setIncarnationId(capnp::Data::Reader(r.incarnation.data(), r.incarnation.size()));
    b.setClusterId(text(r.cluster_id));
    b.setClientHost(text(r.client_host));
    b.setClientPort(r.client_port);
    b.setClusterHost(text(r.cluster_host));
    b.setClusterPort(r.cluster_port);
    b.setRack(text(r.rack));
    b.setBrokerEpoch(r.epoch.value());
    b.setNewDataDir(r.new_data_dir);
    b.setKafkaHost(text(r.kafka_host));
    b.setKafkaPort(r.kafka_port);
  }
  void operator()(const fence_broker_record& r) {
    auto b = out.initFenceBroker();
    b.setNodeId(r.node.value());
    b.setBrokerEpoch(r.epoch.value());
  }
  void operator()(const unfence_broker_record& r) {
    auto b = out.initUnfenceBroker();
    b.setNodeId(r.node.value());
    b.setBrokerEpoch(r.epoch.value());
  }
  void operator()(const unregister_broker_record& r) {
    auto b = out.initUnregisterBroker();
    b.setNodeId(r.node.value());
    b.setBrokerEpoch(r.epoch.value());
  }
  void operator()(const topic_record& r) {
    auto b = out.initTopic();
    b.setName(text(r.name));
    b.setTopicId(data(r.id));
    b.setInternal(r.internal);
    set_configs(b, r.configs);
  }
  void operator()(const partition_record& r) {
    auto b = out.initPartition();
    b.setTopicId(data(r.topic));
    b.setPartition(r.partition.value());
    set_nodes(b.initReplicas(static_cast<unsigned>(r.replicas.size())), r.replicas);
    set_nodes(b.initIsr(static_cast<unsigned>(r.isr.size())), r.isr);
    b.setLeader(r.leader.value());
    b.setLeaderEpoch(r.leader_epoch.value());
    b.setPartitionEpoch(r.partition_epoch.value());
    set_reassignment(b, r.reassignment);
    set_nodes(b.initWipedReplicas(static_cast<unsigned>(r.wiped.size())), r.wiped);
  }
  void operator()(const partition_change_record& r) {
    auto b = out.initPartitionChange();
    b.setTopicId(data(r.topic));
    b.setPartition(r.partition.value());
    b.setHasLeader(r.leader.has_value());
    if (r.leader) b.setLeader(r.leader->value());
    b.setHasIsr(r.isr.has_value());
    if (r.isr) set_nodes(b.initIsr(static_cast<unsigned>(r.isr->size())), *r.isr);
    b.setHasReplicas(r.replicas.has_value());
    if (r.replicas)
      set_nodes(b.initReplicas(static_cast<unsigned>(r.replicas->size())), *r.replicas);
    b.setLeaderEpoch(r.leader_epoch.value());
    b.setPartitionEpoch(r.partition_epoch.value());
    b.setHasReassignment(r.reassignment.has_value());
    if (r.reassignment) set_reassignment(b, *r.reassignment);
  }
  void operator()(const remove_topic_record& r) { out.initRemoveTopic().setTopicId(data(r.topic)); }
  void operator()(const topic_config_record& r) {
    auto b = out.initTopicConfig();
    b.setTopicId(data(r.topic));
    set_configs(b, r.configs);
  }
  void operator()(const producer_ids_record& r) {
    auto b = out.initProducerIds();
    b.setFirstId(r.first_id);
    b.setSize(r.size);
  }
};

void write_records(capnp::List<wire>::Builder list, const std::vector<metadata_record>& records) {
  for (unsigned i = 0; i < records.size(); ++i) std::visit(writer{list[i]}, records[i]);
}

bytes to_bytes(capnp::MessageBuilder& builder) {
  auto words = capnp::messageToFlatArray(builder);
  auto raw = words.asBytes();
  return bytes(raw.begin(), raw.end());
}

// Reads fields, keeping the first field that is out of range; later reads still return a value
// (a default) so a decoder reads straight through and checks failed() once at the end.
class field_reader {
public:
  explicit field_reader(std::string record) : record_(std::move(record)) {}

  bool failed() const { return failure_.has_value(); }
  const error& failure() const { return *failure_; }

  void fail(const std::string& what) {
    if (!failure_)
      failure_ = make_error(errc::corrupt_message, "metadata record " + record_ + ": " + what);
  }

  node_id node(int32_t v, const char* field) {
    if (v < 0) fail(std::string(field) + " is " + std::to_string(v));
    return node_id{v};
  }
  node_id leader(int32_t v) {
    if (v < no_leader.value()) fail("leader is " + std::to_string(v));
    return node_id{v};
  }
  partition_id partition(int32_t v) {
    if (v < 0) fail("partition is " + std::to_string(v));
    return partition_id{v};
  }
  int32_t epoch32(int32_t v, const char* field) {
    if (v < 0 || v >= max_partition_epochs) fail(std::string(field) + " is " + std::to_string(v));
    return v;
  }
  broker_epoch broker_epoch_of(int64_t v) {
    if (v < 0 || v >= max_broker_epochs) fail("broker epoch is " + std::to_string(v));
    return broker_epoch{v};
  }
  template <size_t N>
  std::array<uint8_t, N> fixed_bytes(capnp::Data::Reader d, const char* field) {
    std::array<uint8_t, N> out{};
    if (d.size() != N) {
      fail(std::string(field) + " has " + std::to_string(d.size()) + " bytes, not " +
           std::to_string(N));
      return out;
    }
    std::copy(d.begin(), d.end(), out.begin());
    return out;
  }
  topic_id topic(capnp::Data::Reader d) {
    auto id = fixed_bytes<16>(d, "topic id");
    if (!failed() && id == topic_id{}) fail("topic id is all zeros");
    return id;
  }
  template <class Reader>
  reassignment_state reassignment(Reader b) {
    return reassignment_state{nodes(b.getAddingReplicas(), "adding replicas"),
                              nodes(b.getRemovingReplicas(), "removing replicas")};
  }

  std::vector<node_id> nodes(capnp::List<int32_t>::Reader list, const char* field) {
    std::vector<node_id> out;
    out.reserve(list.size());
    for (int32_t v : list) {
      auto n = node(v, field);
      if (std::find(out.begin(), out.end(), n) != out.end())
        fail(std::string(field) + " lists node " + std::to_string(v) + " twice");
      out.push_back(n);
    }
    return out;
  }
  std::map<std::string, std::string> configs(capnp::List<wire::Config>::Reader list) {
    std::map<std::string, std::string> out;
    for (auto c : list) {
      std::string name(c.getName().cStr(), c.getName().size());
      if (name.empty()) fail("a config name is empty");
      if (!out.emplace(name, std::string(c.getValue().cStr(), c.getValue().size())).second)
        fail("config " + name + " is set twice");
    }
    return out;
  }

private:
  std::string record_;
  std::optional<error> failure_;
};

std::string str(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }

result<metadata_record> read_record(wire::Reader r, size_t index) {
  const std::string at = std::to_string(index);
  switch (r.which()) {
  case wire::REGISTER_BROKER: {
    auto b = r.getRegisterBroker();
    field_reader in(at + " (RegisterBroker)");
    register_broker_record out;
    out.node = in.node(b.getNodeId(), "node id");
    out.incarnation = in.fixed_bytes<16>(b.getIncarnationId(), "incarnation id");
    out.cluster_id = str(b.getClusterId());
    out.client_host = str(b.getClientHost());
    out.client_port = b.getClientPort();
    out.cluster_host = str(b.getClusterHost());
    out.cluster_port = b.getClusterPort();
    out.rack = str(b.getRack());
    out.epoch = in.broker_epoch_of(b.getBrokerEpoch());
    out.new_data_dir = b.getNewDataDir();
    out.kafka_host = str(b.getKafkaHost());
    out.kafka_port = b.getKafkaPort();
    if (in.failed()) return in.failure();
    return metadata_record{std::move(out)};
  }
  case wire::FENCE_BROKER:
  case wire::UNFENCE_BROKER:
  case wire::UNREGISTER_BROKER: {
    const auto which = r.which();
    auto b = which == wire::FENCE_BROKER     ? r.getFenceBroker()
             : which == wire::UNFENCE_BROKER ? r.getUnfenceBroker()
                                             : r.getUnregisterBroker();
    field_reader in(at + (which == wire::FENCE_BROKER     ? " (FenceBroker)"
                          : which == wire::UNFENCE_BROKER ? " (UnfenceBroker)"
                                                          : " (UnregisterBroker)"));
    auto node = in.node(b.getNodeId(), "node id");
    auto epoch = in.broker_epoch_of(b.getBrokerEpoch());
    if (in.failed()) return in.failure();
    if (which == wire::FENCE_BROKER) return metadata_record{fence_broker_record{node, epoch}};
    if (which == wire::UNFENCE_BROKER) return metadata_record{unfence_broker_record{node, epoch}};
    return metadata_record{unregister_broker_record{node, epoch}};
  }
  case wire::TOPIC: {
    auto b = r.getTopic();
    field_reader in(at + " (Topic)");
    topic_record out;
    out.name = str(b.getName());
    out.id = in.topic(b.getTopicId());
    out.internal = b.getInternal();
    out.configs = in.configs(b.getConfigs());
    if (out.name.empty()) in.fail("name is empty");
    if (in.failed()) return in.failure();
    return metadata_record{std::move(out)};
  }
  case wire::PARTITION: {
    auto b = r.getPartition();
    field_reader in(at + " (Partition)");
    partition_record out;
    out.topic = in.topic(b.getTopicId());
    out.partition = in.partition(b.getPartition());
    out.replicas = in.nodes(b.getReplicas(), "replicas");
    out.isr = in.nodes(b.getIsr(), "isr");
    out.leader = in.leader(b.getLeader());
    out.leader_epoch = leader_epoch{in.epoch32(b.getLeaderEpoch(), "leader epoch")};
    out.partition_epoch = partition_epoch{in.epoch32(b.getPartitionEpoch(), "partition epoch")};
    out.reassignment = in.reassignment(b);
    out.wiped = in.nodes(b.getWipedReplicas(), "wiped replicas");
    if (in.failed()) return in.failure();
    return metadata_record{std::move(out)};
  }
  case wire::PARTITION_CHANGE: {
    auto b = r.getPartitionChange();
    field_reader in(at + " (PartitionChange)");
    partition_change_record out;
    out.topic = in.topic(b.getTopicId());
    out.partition = in.partition(b.getPartition());
    if (b.getHasLeader()) out.leader = in.leader(b.getLeader());
    if (b.getHasIsr()) out.isr = in.nodes(b.getIsr(), "isr");
    if (b.getHasReplicas()) out.replicas = in.nodes(b.getReplicas(), "replicas");
    out.leader_epoch = leader_epoch{in.epoch32(b.getLeaderEpoch(), "leader epoch")};
    out.partition_epoch = partition_epoch{in.epoch32(b.getPartitionEpoch(), "partition epoch")};
    if (b.getHasReassignment()) out.reassignment = in.reassignment(b);
    if (in.failed()) return in.failure();
    return metadata_record{std::move(out)};
  }
  case wire::REMOVE_TOPIC: {
    field_reader in(at + " (RemoveTopic)");
    remove_topic_record out{in.topic(r.getRemoveTopic().getTopicId())};
    if (in.failed()) return in.failure();
    return metadata_record{out};
  }
  case wire::TOPIC_CONFIG: {
    auto b = r.getTopicConfig();
    field_reader in(at + " (TopicConfig)");
    topic_config_record out;
    out.topic = in.topic(b.getTopicId());
    out.configs = in.configs(b.getConfigs());
    if (in.failed()) return in.failure();
    return metadata_record{std::move(out)};
  }
  case wire::PRODUCER_IDS: {
    auto b = r.getProducerIds();
    field_reader in(at + " (ProducerIds)");
    producer_ids_record out{b.getFirstId(), b.getSize()};
    if (out.first_id < 0 || out.size <= 0 ||
        out.first_id > std::numeric_limits<int64_t>::max() - out.size)
      in.fail("block [" + std::to_string(out.first_id) + ", +" + std::to_string(out.size) +
              ") is empty, negative or overflows");
    if (in.failed()) return in.failure();
    return metadata_record{out};
  }
  }
  return make_error(errc::corrupt_message,
                    "metadata record " + at + ": unknown kind " +
                      std::to_string(static_cast<int>(r.which())));
}

result<std::vector<metadata_record>> read_records(capnp::List<wire>::Reader list) {
  std::vector<metadata_record> out;
  out.reserve(list.size());
  for (unsigned i = 0; i < list.size(); ++i) {
    auto record = read_record(list[i], i);
    if (!record) return record.err();
    out.push_back(std::move(*record));
  }
  return out;
}

result<capnp_frame> frame_of(bytes_view data, const char* what) {
  if (data.empty())
    return make_error(errc::corrupt_message, std::string(what) + " is empty");
  if (data.size() % sizeof(capnp::word) != 0)
    return make_error(errc::corrupt_message, std::string(what) + " of " +
                                               std::to_string(data.size()) +
                                               " bytes is not a whole number of words");
  if (data.size() > max_frame_bytes)
    return make_error(errc::message_too_large,
                      std::string(what) + " of " + std::to_string(data.size()) + " bytes");
  auto words = kj::heapArray<capnp::word>(data.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), data.data(), data.size());
  return capnp_frame::from_words(kj::mv(words));
}

} // namespace

bytes encode_batch(const std::vector<metadata_record>& records) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::MetadataBatch>();
  write_records(root.initRecords(static_cast<unsigned>(records.size())), records);
  return to_bytes(builder);
}

result<std::vector<metadata_record>> decode_batch(bytes_view data) {
  auto frame = frame_of(data, "metadata batch");
  if (!frame) return frame.err();
  auto decoded = frame->try_read<schema::MetadataBatch>(
    [](schema::MetadataBatch::Reader r) { return read_records(r.getRecords()); });
  if (!decoded) return decoded.err();
  return std::move(*decoded);
}

bytes encode_snapshot(const snapshot_contents& contents) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::MetadataSnapshot>();
  root.setVersion(metadata_snapshot_version);
  root.setClusterId(text(contents.cluster_id));
  root.setMaxBrokerEpoch(contents.max_broker_epoch.value());
  write_records(root.initRecords(static_cast<unsigned>(contents.records.size())),
                contents.records);
  return to_bytes(builder);
}

result<snapshot_contents> decode_snapshot(bytes_view data) {
  auto frame = frame_of(data, "metadata snapshot");
  if (!frame) return frame.err();
  auto decoded = frame->try_read<schema::MetadataSnapshot>(
    [](schema::MetadataSnapshot::Reader r) -> result<snapshot_contents> {
      if (r.getVersion() != metadata_snapshot_version)
        return make_error(errc::corrupt_message,
                          "metadata snapshot version " + std::to_string(r.getVersion()) +
                            ", this build reads " + std::to_string(metadata_snapshot_version));
      auto records = read_records(r.getRecords());
      if (!records) return records.err();
      field_reader in("metadata snapshot");
      const auto max_epoch = in.broker_epoch_of(r.getMaxBrokerEpoch());
      if (in.failed()) return in.failure();
      return snapshot_contents{str(r.getClusterId()), std::move(*records), max_epoch};
    });
  if (!decoded) return decoded.err();
  return std::move(*decoded);
}

} // namespace capstan::controller
