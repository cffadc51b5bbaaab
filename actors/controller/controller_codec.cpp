#include "actors/controller/controller_codec.hpp"

#include <cstring>
#include <limits>

#include <capnp/message.h>

#include "actors/controller/raft/voter_set.hpp"
#include "actors/controller/voter_validation.hpp"
#include "schema/controller.capnp.h"

namespace capstan {

namespace {

error invalid(std::string what) {
  return make_error(errc::invalid_request, std::move(what));
}

template <class T, class F>
auto decode(const capnp_frame& frame, F&& f) -> decltype(f(std::declval<typename T::Reader>())) {
  auto r = frame.try_read<T>(std::forward<F>(f));
  if (!r) return r.err();
  return std::move(*r);
}

template <size_t N>
capnp::Data::Reader data_of(const std::array<uint8_t, N>& bytes) {
  return capnp::Data::Reader(bytes.data(), bytes.size());
}

// 16 bytes, or all zeros when `optional` and absent.
result<std::array<uint8_t, 16>> read_id16(capnp::Data::Reader d, bool optional, const char* what) {
  std::array<uint8_t, 16> id{};
  if (d.size() == 0 && optional) return id;
  if (d.size() != id.size())
    return invalid(std::string(what) + " has 16 bytes, not " + std::to_string(d.size()));
  std::memcpy(id.data(), d.begin(), id.size());
  return id;
}

} // namespace

capnp_frame encode(const controller::broker_registration_request& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::BrokerRegistration>();
  root.setNodeId(m.node.value());
  root.setIncarnationId(data_of(m.incarnation));
  root.setClusterId(m.cluster_id);
  root.setClientHost(m.client_host);
  root.setClientPort(m.client_port);
  root.setClusterHost(m.cluster_host);
  root.setClusterPort(m.cluster_port);
  root.setRack(m.rack);
  if (m.previous_incarnation != controller::incarnation_id{})
    root.setPreviousIncarnationId(data_of(m.previous_incarnation));
  root.setPreviousCleanShutdown(m.previous_clean_shutdown);
  root.setKafkaHost(m.kafka_host);
  root.setKafkaPort(m.kafka_port);
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const broker_registration_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::BrokerRegistrationResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  root.setBrokerEpoch(m.broker_epoch);
  root.setLeaderHint(m.leader_hint);
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const broker_heartbeat_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::BrokerHeartbeat>();
  root.setNodeId(m.node.value());
  root.setBrokerEpoch(m.broker_epoch);
  root.setWantFence(m.want_fence);
  root.setWantShutDown(m.want_shut_down);
  auto offline = root.initOfflineReplicas(static_cast<unsigned>(m.offline.size()));
  for (unsigned i = 0; i < offline.size(); ++i) {
    offline[i].setTopicId(data_of(m.offline[i].topic));
    offline[i].setPartition(m.offline[i].partition);
  }
  auto logs = root.initLeaderlessReplicas(static_cast<unsigned>(m.leaderless.size()));
  for (unsigned i = 0; i < logs.size(); ++i) {
    const auto& l = m.leaderless[i];
    logs[i].setTopicId(data_of(l.topic));
    logs[i].setPartition(l.partition);
    logs[i].setLastWrittenEpoch(l.last_written_epoch);
    logs[i].setLogEnd(l.log_end);
    logs[i].setLeaderEpoch(l.leader_epoch);
  }
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const broker_heartbeat_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::BrokerHeartbeatResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  root.setIsFenced(m.is_fenced);
  root.setLeaderHint(m.leader_hint);
  root.setShouldShutDown(m.should_shut_down);
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const topic_spec& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::CreateTopic>();
  root.setName(m.name);
  root.setNodeId(from.value());
  root.setPartitions(m.partitions);
  root.setReplicationFactor(m.replication_factor);
  auto configs = root.initConfigs(static_cast<unsigned>(m.configs.size()));
  unsigned i = 0;
  for (const auto& [k, v] : m.configs) {
    configs[i].setName(k);
    configs[i].setValue(v);
    ++i;
  }
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const delete_topic_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::DeleteTopic>();
  root.setName(m.name);
  root.setNodeId(from.value());
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const alter_configs_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AlterConfigs>();
  root.setName(m.name);
  root.setNodeId(from.value());
  auto configs = root.initConfigs(static_cast<unsigned>(m.configs.size()));
  unsigned i = 0;
  for (const auto& [k, v] : m.configs) {
    configs[i].setName(k);
    configs[i].setValue(v);
    ++i;
  }
  auto deleted = root.initDeleted(static_cast<unsigned>(m.deleted.size()));
  for (unsigned j = 0; j < deleted.size(); ++j) deleted.set(j, m.deleted[j]);
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const topic_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::TopicResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  if (m.error == errc::none) root.setTopicId(data_of(m.id));
  root.setLeaderHint(m.leader_hint);
  return capnp_frame::from_builder(b);
}

result<controller::broker_registration_request>
decode_broker_registration(const capnp_frame& frame) {
  return decode<schema::BrokerRegistration>(
      frame,
      [](schema::BrokerRegistration::Reader r) -> result<controller::broker_registration_request> {
        controller::broker_registration_request m;
        if (r.getNodeId() < 0)
          return invalid("registration of node " + std::to_string(r.getNodeId()));
        m.node = node_id{r.getNodeId()};
        auto inc = read_id16(r.getIncarnationId(), false, "an incarnation id");
        if (!inc) return inc.err();
        m.incarnation = *inc;
        m.cluster_id = r.getClusterId();
        m.client_host = r.getClientHost();
        m.client_port = r.getClientPort();
        m.cluster_host = r.getClusterHost();
        m.cluster_port = r.getClusterPort();
        m.rack = r.getRack();
        auto previous = read_id16(r.getPreviousIncarnationId(), true, "a previous incarnation id");
        if (!previous) return previous.err();
        m.previous_incarnation = *previous;
        m.previous_clean_shutdown = r.getPreviousCleanShutdown();
        m.kafka_host = r.getKafkaHost();
        m.kafka_port = r.getKafkaPort();
        return m;
      });
}

result<broker_registration_response_msg>
decode_broker_registration_response(const capnp_frame& frame) {
  return decode<schema::BrokerRegistrationResponse>(
      frame,
      [](schema::BrokerRegistrationResponse::Reader r) -> result<broker_registration_response_msg> {
        broker_registration_response_msg m;
        m.error = errc_from_code(r.getErrorCode());
        m.message = r.getErrorMessage();
        m.broker_epoch = r.getBrokerEpoch();
        m.leader_hint = r.getLeaderHint();
        return m;
      });
}

result<broker_heartbeat_msg> decode_broker_heartbeat(const capnp_frame& frame) {
  return decode<schema::BrokerHeartbeat>(
      frame, [](schema::BrokerHeartbeat::Reader r) -> result<broker_heartbeat_msg> {
        if (r.getNodeId() < 0) return invalid("heartbeat of node " + std::to_string(r.getNodeId()));
        broker_heartbeat_msg m{
            node_id{r.getNodeId()}, r.getBrokerEpoch(), r.getWantFence(), {}, r.getWantShutDown()};
        for (auto o : r.getOfflineReplicas()) {
          auto id = read_id16(o.getTopicId(), false, "an offline replica's topic id");
          if (!id) return id.err();
          if (o.getPartition() < 0)
            return invalid("offline replica of partition " + std::to_string(o.getPartition()));
          m.offline.push_back(offline_replica{*id, o.getPartition()});
        }
        for (auto l : r.getLeaderlessReplicas()) {
          auto id = read_id16(l.getTopicId(), false, "a leaderless replica's topic id");
          if (!id) return id.err();
          if (l.getPartition() < 0 || l.getLastWrittenEpoch() < -1 || l.getLogEnd() < 0 ||
              l.getLeaderEpoch() < 0)
            return invalid("leaderless replica of partition " + std::to_string(l.getPartition()) +
                           " at epoch " + std::to_string(l.getLastWrittenEpoch()) + ", log end " +
                           std::to_string(l.getLogEnd()));
          m.leaderless.push_back(replica_log_info{*id, l.getPartition(), l.getLastWrittenEpoch(),
                                                  l.getLogEnd(), l.getLeaderEpoch()});
        }
        return m;
      });
}

result<broker_heartbeat_response_msg> decode_broker_heartbeat_response(const capnp_frame& frame) {
  return decode<schema::BrokerHeartbeatResponse>(
      frame,
      [](schema::BrokerHeartbeatResponse::Reader r) -> result<broker_heartbeat_response_msg> {
        return broker_heartbeat_response_msg{errc_from_code(r.getErrorCode()), r.getErrorMessage(),
                                             r.getIsFenced(), r.getLeaderHint(),
                                             r.getShouldShutDown()};
      });
}

result<topic_spec> decode_create_topic(const capnp_frame& frame) {
  return decode<schema::CreateTopic>(
      frame, [](schema::CreateTopic::Reader r) -> result<topic_spec> {
        topic_spec m;
        m.name = r.getName();
        m.partitions = r.getPartitions();
        m.replication_factor = r.getReplicationFactor();
        for (auto c : r.getConfigs()) {
          std::string name = c.getName();
          if (!m.configs.emplace(name, c.getValue()).second)
            return invalid("CreateTopic names config '" + name + "' twice");
        }
        return m;
      });
}

result<delete_topic_msg> decode_delete_topic(const capnp_frame& frame) {
  return decode<schema::DeleteTopic>(frame,
                                     [](schema::DeleteTopic::Reader r) -> result<delete_topic_msg> {
                                       return delete_topic_msg{r.getName()};
                                     });
}

result<alter_configs_msg> decode_alter_configs(const capnp_frame& frame) {
  return decode<schema::AlterConfigs>(
      frame, [](schema::AlterConfigs::Reader r) -> result<alter_configs_msg> {
        alter_configs_msg m;
        m.name = r.getName();
        for (auto c : r.getConfigs()) {
          std::string name = c.getName();
          if (!m.configs.emplace(name, c.getValue()).second)
            return invalid("AlterConfigs names config '" + name + "' twice");
        }
        for (auto name : r.getDeleted()) m.deleted.emplace_back(name);
        return m;
      });
}

result<topic_response_msg> decode_topic_response(const capnp_frame& frame) {
  return decode<schema::TopicResponse>(
      frame, [](schema::TopicResponse::Reader r) -> result<topic_response_msg> {
        topic_response_msg m;
        m.error = errc_from_code(r.getErrorCode());
        m.message = r.getErrorMessage();
        auto id = read_id16(r.getTopicId(), true, "a topic id");
        if (!id) return id.err();
        m.id = *id;
        m.leader_hint = r.getLeaderHint();
        return m;
      });
}

capnp_frame encode(const voter_state& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::VoterState>();
  root.setNodeId(m.node);
  root.setRole(m.role);
  root.setTerm(m.term);
  root.setCommitIndex(m.commit_index);
  root.setLeaderId(m.leader);
  root.setActive(m.active);
  auto nodes = root.initNodes(static_cast<unsigned>(m.nodes.size()));
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    auto n = nodes[static_cast<unsigned>(i)];
    n.setNodeId(m.nodes[i].node);
    n.setFenced(m.nodes[i].fenced);
    n.setBrokerEpoch(m.nodes[i].broker_epoch);
    n.setIncarnationId(data_of(m.nodes[i].incarnation));
  }
  auto voters = root.initVoters(static_cast<unsigned>(m.voters.size()));
  for (unsigned i = 0; i < voters.size(); ++i) voters.set(i, m.voters[i]);
  return capnp_frame::from_builder(b);
}

result<voter_state> decode_voter_state(const capnp_frame& frame) {
  return decode<schema::VoterState>(frame, [](schema::VoterState::Reader r) -> result<voter_state> {
    voter_state m;
    m.node = r.getNodeId();
    m.role = r.getRole();
    m.term = r.getTerm();
    m.commit_index = r.getCommitIndex();
    m.leader = r.getLeaderId();
    m.active = r.getActive();
    for (auto n : r.getNodes()) {
      auto id = read_id16(n.getIncarnationId(), true, "an incarnation id");
      if (!id) return id.err();
      m.nodes.push_back(registered_node{n.getNodeId(), n.getFenced(), n.getBrokerEpoch(), *id});
    }
    if (r.getVoters().size() > raft::max_voters)
      return invalid("a voter state lists " + std::to_string(r.getVoters().size()) +
                     " voters, more than " + std::to_string(raft::max_voters));
    for (auto v : r.getVoters()) m.voters.push_back(v);
    return m;
  });
}

capnp_frame encode(const unregister_broker_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::UnregisterBroker>();
  root.setBrokerId(m.node.value());
  root.setNodeId(from.value());
  return capnp_frame::from_builder(b);
}

result<unregister_broker_msg> decode_unregister_broker(const capnp_frame& frame) {
  return decode<schema::UnregisterBroker>(
      frame, [](schema::UnregisterBroker::Reader r) -> result<unregister_broker_msg> {
        return unregister_broker_msg{node_id{r.getBrokerId()}};
      });
}

capnp_frame encode(const add_voter_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AddVoter>();
  root.setVoterId(m.voter.value());
  root.setEndpoint(m.endpoint);
  root.setNodeId(from.value());
  return capnp_frame::from_builder(b);
}

result<add_voter_msg> decode_add_voter(const capnp_frame& frame) {
  return decode<schema::AddVoter>(frame, [](schema::AddVoter::Reader r) -> result<add_voter_msg> {
    if (auto s = validate_voter_id(r.getVoterId()); !s) return s.err();
    std::string endpoint = r.getEndpoint();
    if (auto s = validate_voter_endpoint(endpoint); !s) return s.err();
    return add_voter_msg{node_id{r.getVoterId()}, std::move(endpoint)};
  });
}

capnp_frame encode(const remove_voter_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::RemoveVoter>();
  root.setVoterId(m.voter.value());
  root.setNodeId(from.value());
  return capnp_frame::from_builder(b);
}

result<remove_voter_msg> decode_remove_voter(const capnp_frame& frame) {
  return decode<schema::RemoveVoter>(
      frame, [](schema::RemoveVoter::Reader r) -> result<remove_voter_msg> {
        if (auto s = validate_voter_id(r.getVoterId()); !s) return s.err();
        return remove_voter_msg{node_id{r.getVoterId()}};
      });
}

capnp_frame encode(const allocate_producer_ids_msg& m) {
  capnp::MallocMessageBuilder b;
  b.initRoot<schema::AllocateProducerIds>().setNodeId(m.node.value());
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const allocate_producer_ids_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AllocateProducerIdsResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  root.setFirstId(m.first_id);
  root.setSize(m.size);
  root.setLeaderHint(m.leader_hint);
  return capnp_frame::from_builder(b);
}

result<allocate_producer_ids_msg> decode_allocate_producer_ids(const capnp_frame& frame) {
  return decode<schema::AllocateProducerIds>(
      frame, [](schema::AllocateProducerIds::Reader r) -> result<allocate_producer_ids_msg> {
        if (r.getNodeId() < 0)
          return invalid("AllocateProducerIds from node " + std::to_string(r.getNodeId()));
        return allocate_producer_ids_msg{node_id{r.getNodeId()}};
      });
}

result<allocate_producer_ids_response_msg>
decode_allocate_producer_ids_response(const capnp_frame& frame) {
  return decode<schema::AllocateProducerIdsResponse>(
      frame,
      [](schema::AllocateProducerIdsResponse::Reader r)
          -> result<allocate_producer_ids_response_msg> {
        allocate_producer_ids_response_msg m;
        m.error = errc_from_code(r.getErrorCode());
        m.message = r.getErrorMessage();
        m.first_id = r.getFirstId();
        m.size = r.getSize();
        m.leader_hint = r.getLeaderHint();
        if (m.error == errc::none && (m.first_id < 0 || m.size <= 0 ||
                                      m.first_id > std::numeric_limits<int64_t>::max() - m.size))
          return invalid("producer id block [" + std::to_string(m.first_id) + ", +" +
                         std::to_string(m.size) + ") is empty, negative or overflows");
        return m;
      });
}

capnp_frame encode(const create_partitions_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::CreatePartitions>();
  root.setName(m.name);
  root.setNodeId(from.value());
  root.setTotalCount(m.total);
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const elect_leaders_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::ElectLeaders>();
  root.setNodeId(from.value());
  auto list = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < list.size(); ++i) {
    list[i].setTopic(m.partitions[i].topic);
    list[i].setPartition(m.partitions[i].partition);
  }
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const reassign_partitions_msg& m, node_id from) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::AlterPartitionReassignments>();
  root.setNodeId(from.value());
  auto list = root.initPartitions(static_cast<unsigned>(m.partitions.size()));
  for (unsigned i = 0; i < list.size(); ++i) {
    const auto& p = m.partitions[i];
    list[i].setTopic(p.topic);
    list[i].setPartition(p.partition);
    list[i].setCancel(p.cancel);
    auto replicas = list[i].initReplicas(static_cast<unsigned>(p.replicas.size()));
    for (unsigned j = 0; j < replicas.size(); ++j) replicas.set(j, p.replicas[j]);
  }
  return capnp_frame::from_builder(b);
}

capnp_frame encode(const elect_leaders_response_msg& m) {
  capnp::MallocMessageBuilder b;
  auto root = b.initRoot<schema::ElectLeadersResponse>();
  root.setErrorCode(static_cast<uint8_t>(m.error));
  if (!m.message.empty()) root.setErrorMessage(m.message);
  root.setLeaderHint(m.leader_hint);
  auto list = root.initResults(static_cast<unsigned>(m.results.size()));
  for (unsigned i = 0; i < list.size(); ++i) {
    const auto& r = m.results[i];
    list[i].setTopic(r.topic);
    list[i].setPartition(r.partition);
    list[i].setErrorCode(static_cast<uint8_t>(r.error));
    if (!r.message.empty()) list[i].setErrorMessage(r.message);
  }
  return capnp_frame::from_builder(b);
}

result<create_partitions_msg> decode_create_partitions(const capnp_frame& frame) {
  return decode<schema::CreatePartitions>(
      frame, [](schema::CreatePartitions::Reader r) -> result<create_partitions_msg> {
        return create_partitions_msg{r.getName(), r.getTotalCount()};
      });
}

result<elect_leaders_msg> decode_elect_leaders(const capnp_frame& frame) {
  return decode<schema::ElectLeaders>(
      frame, [](schema::ElectLeaders::Reader r) -> result<elect_leaders_msg> {
        elect_leaders_msg m;
        for (auto p : r.getPartitions())
          m.partitions.push_back(election_target{p.getTopic(), p.getPartition()});
        return m;
      });
}

result<reassign_partitions_msg> decode_reassign_partitions(const capnp_frame& frame) {
  return decode<schema::AlterPartitionReassignments>(
      frame, [](schema::AlterPartitionReassignments::Reader r) -> result<reassign_partitions_msg> {
        reassign_partitions_msg m;
        for (auto p : r.getPartitions()) {
          reassignment_item item{p.getTopic(), p.getPartition(), p.getCancel(), {}};
          for (auto n : p.getReplicas()) item.replicas.push_back(n);
          m.partitions.push_back(std::move(item));
        }
        return m;
      });
}

result<elect_leaders_response_msg> decode_elect_leaders_response(const capnp_frame& frame) {
  return decode<schema::ElectLeadersResponse>(
      frame, [](schema::ElectLeadersResponse::Reader r) -> result<elect_leaders_response_msg> {
        elect_leaders_response_msg m;
        m.error = errc_from_code(r.getErrorCode());
        m.message = r.getErrorMessage();
        m.leader_hint = r.getLeaderHint();
        for (auto x : r.getResults())
          m.results.push_back(election_outcome{x.getTopic(), x.getPartition(),
                                               errc_from_code(x.getErrorCode()),
                                               x.getErrorMessage()});
        return m;
      });
}

} // namespace capstan
