// The blocking admin calls, each at the admin address (the bootstrap address that answered):
// topics and their configs, partitions and leaders, the cluster's nodes and its fault switches.

#include "runtime/client/rpc_cluster_client.hpp"

#include <algorithm>

namespace capstan::client {

namespace {

// The per-partition results of electLeaders and reassignPartitions, or the request's error.
template <class Response>
result<std::vector<election_result>> per_partition_outcomes(Response& response) {
  if (response.getErrorCode() != 0)
    return from_code(response.getErrorCode(), response.getErrorMessage());
  std::vector<election_result> out;
  for (auto r : response.getResults())
    out.push_back(election_result{r.getTopic(), r.getPartition(), errc_from_code(r.getErrorCode()),
                                  r.getErrorMessage()});
  return out;
}

} // namespace

// Sends the request `build` makes (on the RPC thread) and reads its answer's errorCode and
// errorMessage, the answer of every admin call that returns nothing else.
template <class Build>
status rpc_cluster_client::run_status(Build build) {
  auto r = run_sync<bool>([this, build] {
    auto req = build();
    return with_timeout(req.send().then([](auto response) -> result<bool> {
      if (response.getErrorCode() != 0)
        return from_code(response.getErrorCode(), response.getErrorMessage());
      return true;
    }));
  });
  if (!r) return r.err();
  return {};
}

capnp_cap rpc_cluster_client::admin_cap() {
  std::string address;
  {
    std::lock_guard lock(mu_);
    address = admin_address_.empty() ? config_.bootstrap.front() : admin_address_;
  }
  return connections_->connection(address).cap;
}

result<cluster_metadata> rpc_cluster_client::metadata(const std::vector<std::string>& topics) {
  return run_sync<cluster_metadata>([this, topics] { return refresh_metadata(topics); });
}

result<topic_metadata> rpc_cluster_client::create_topic(const topic_spec& spec) {
  auto created = run_sync<topic_id>([this, spec] {
    auto req = admin_cap().createTopicRequest();
    req.setName(spec.name);
    req.setPartitions(spec.partitions);
    req.setReplicationFactor(spec.replication_factor);
    auto configs = req.initConfigs(static_cast<unsigned>(spec.configs.size()));
    unsigned i = 0;
    for (const auto& [k, v] : spec.configs) {
      configs[i].setName(k);
      configs[i].setValue(v);
      ++i;
    }
    return with_timeout(req.send().then([](auto response) -> result<topic_id> {
      if (response.getErrorCode() != 0)
        return from_code(response.getErrorCode(), response.getErrorMessage());
      topic_id id{};
      auto data = response.getTopicId();
      std::copy_n(data.begin(), std::min<size_t>(data.size(), id.size()), id.begin());
      return id;
    }));
  });
  if (!created) return created.err();
  auto md = metadata({spec.name});
  if (md) {
    if (auto it = md->topics.find(spec.name); it != md->topics.end()) return it->second;
  }
  topic_metadata t;
  t.name = spec.name;
  t.id = *created;
  return t;
}

status rpc_cluster_client::delete_topic(const std::string& name) {
  return run_status([this, name] {
    auto req = admin_cap().deleteTopicRequest();
    req.setName(name);
    return req;
  });
}

result<std::vector<std::string>> rpc_cluster_client::list_topics() {
  return run_sync<std::vector<std::string>>([this] {
    return with_timeout(admin_cap().listTopicsRequest().send().then(
        [](auto response) -> result<std::vector<std::string>> {
          std::vector<std::string> out;
          for (auto t : response.getTopics()) out.emplace_back(t.cStr());
          return out;
        }));
  });
}

result<std::map<std::string, std::string>>
rpc_cluster_client::describe_configs(const std::string& topic) {
  using config_map = std::map<std::string, std::string>;
  // Every node answers from its metadata cache, so any reachable one will do.
  return run_sync<config_map>([this, topic] {
    return at_first_reachable<config_map>(addresses_to_ask(), 0, [topic](capnp_cap cap) {
      auto req = cap.describeConfigsRequest();
      req.setTopic(topic);
      return req.send().then([](auto response) -> result<config_map> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        config_map out;
        for (auto c : response.getConfigs()) out[c.getName()] = c.getValue();
        return out;
      });
    });
  });
}

status rpc_cluster_client::alter_configs(const std::string& topic,
                                         const std::map<std::string, std::string>& configs,
                                         const std::vector<std::string>& deleted) {
  return run_status([this, topic, configs, deleted] {
    auto req = admin_cap().alterConfigsRequest();
    req.setTopic(topic);
    auto list = req.initConfigs(static_cast<unsigned>(configs.size()));
    unsigned i = 0;
    for (const auto& [k, v] : configs) {
      list[i].setName(k);
      list[i].setValue(v);
      ++i;
    }
    auto keys = req.initDeleted(static_cast<unsigned>(deleted.size()));
    for (unsigned j = 0; j < keys.size(); ++j) keys.set(j, deleted[j]);
    return req;
  });
}

status rpc_cluster_client::create_partitions(const std::string& topic, int32_t total) {
  return run_status([this, topic, total] {
    auto req = admin_cap().createPartitionsRequest();
    req.setTopic(topic);
    req.setTotalCount(total);
    return req;
  });
}

result<std::vector<election_result>>
rpc_cluster_client::elect_leaders(const std::vector<std::pair<std::string, int32_t>>& partitions) {
  using results = std::vector<election_result>;
  return run_sync<results>([this, partitions] {
    auto req = admin_cap().electLeadersRequest();
    auto list = req.initPartitions(static_cast<unsigned>(partitions.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      list[i].setTopic(partitions[i].first);
      list[i].setPartition(partitions[i].second);
    }
    return with_timeout(
        req.send().then([](auto response) { return per_partition_outcomes(response); }));
  });
}

result<std::vector<election_result>>
rpc_cluster_client::reassign_partitions(const std::vector<reassignment_request>& partitions) {
  using results = std::vector<election_result>;
  return run_sync<results>([this, partitions] {
    auto req = admin_cap().reassignPartitionsRequest();
    auto list = req.initPartitions(static_cast<unsigned>(partitions.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      const auto& p = partitions[i];
      list[i].setTopic(p.topic);
      list[i].setPartition(p.partition);
      list[i].setCancel(p.replicas.empty());
      auto replicas = list[i].initReplicas(static_cast<unsigned>(p.replicas.size()));
      for (unsigned j = 0; j < replicas.size(); ++j) replicas.set(j, p.replicas[j]);
    }
    return with_timeout(
        req.send().then([](auto response) { return per_partition_outcomes(response); }));
  });
}

status rpc_cluster_client::unregister_node(int32_t node) {
  return run_status([this, node] {
    auto req = admin_cap().unregisterNodeRequest();
    req.setNodeId(node);
    return req;
  });
}

status rpc_cluster_client::add_voter(int32_t node, const std::string& endpoint) {
  return run_status([this, node, endpoint] {
    auto req = admin_cap().addVoterRequest();
    req.setNodeId(node);
    req.setEndpoint(endpoint);
    return req;
  });
}

status rpc_cluster_client::remove_voter(int32_t node) {
  return run_status([this, node] {
    auto req = admin_cap().removeVoterRequest();
    req.setNodeId(node);
    return req;
  });
}

result<producer_identity> rpc_cluster_client::init_producer_id() {
  return run_sync<producer_identity>([this] {
    return with_timeout(admin_cap().initProducerIdRequest().send().then(
        [](auto response) -> result<producer_identity> {
          if (response.getErrorCode() != 0)
            return from_code(response.getErrorCode(), response.getErrorMessage());
          return producer_identity{response.getProducerId(), response.getProducerEpoch()};
        }));
  });
}

result<cluster_description> rpc_cluster_client::describe_cluster() {
  return run_sync<cluster_description>([this] {
    return with_timeout(admin_cap().describeClusterRequest().send().then(
        [](auto response) -> result<cluster_description> {
          if (response.getErrorCode() != 0)
            return from_code(response.getErrorCode(), response.getErrorMessage());
          cluster_description d;
          d.active_controller = response.getActiveControllerId();
          for (auto m : response.getMembers())
            d.members.push_back(quorum_member_state{m.getNodeId(), m.getReachable(), m.getFailure(),
                                                    m.getRole(), m.getTerm(), m.getCommitIndex(),
                                                    m.getLeaderId()});
          d.nodes_known = response.getNodesKnown();
          for (auto n : response.getNodes()) {
            registered_node r{n.getNodeId(), n.getFenced(), n.getBrokerEpoch(), {}};
            auto id = n.getIncarnationId();
            std::copy_n(id.begin(), std::min<size_t>(id.size(), r.incarnation.size()),
                        r.incarnation.begin());
            d.nodes.push_back(r);
          }
          for (auto v : response.getVoters()) d.voters.push_back(v);
          return d;
        }));
  });
}

status rpc_cluster_client::inject_fault(const fault_request& fault) {
  return run_status([this, fault] {
    auto req = admin_cap().injectFaultRequest();
    switch (fault.kind) {
    case fault_kind::clear:
      req.setFault(rpc::FaultKind::CLEAR);
      break;
    case fault_kind::isolate:
      req.setFault(rpc::FaultKind::ISOLATE);
      break;
    case fault_kind::drop_outgoing:
      req.setFault(rpc::FaultKind::DROP_OUTGOING);
      break;
    case fault_kind::drop_incoming:
      req.setFault(rpc::FaultKind::DROP_INCOMING);
      break;
    case fault_kind::drop_produce_responses:
      req.setFault(rpc::FaultKind::DROP_PRODUCE_RESPONSES);
      break;
    case fault_kind::drop_control:
      req.setFault(rpc::FaultKind::DROP_CONTROL);
      break;
    case fault_kind::delay_control:
      req.setFault(rpc::FaultKind::DELAY_CONTROL);
      break;
    case fault_kind::disk_full:
      req.setFault(rpc::FaultKind::DISK_FULL);
      break;
    case fault_kind::disk_read_only:
      req.setFault(rpc::FaultKind::DISK_READ_ONLY);
      break;
    case fault_kind::disk_io_error:
      req.setFault(rpc::FaultKind::DISK_IO_ERROR);
      break;
    }
    auto list = req.initPeers(static_cast<unsigned>(fault.peers.size()));
    for (size_t i = 0; i < fault.peers.size(); ++i)
      list.set(static_cast<unsigned>(i), fault.peers[i]);
    req.setCount(fault.count);
    req.setProbability(fault.probability);
    req.setDelayMs(fault.delay_ms);
    return req;
  });
}

} // namespace capstan::client
