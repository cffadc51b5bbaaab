// cluster_client over Cap'n Proto RPC: one kj event-loop thread owns every connection, the
// metadata cache and every in-flight call. Other threads hand it work through a queue woken by a
// cross-thread fulfiller (never blocking the loop); blocking calls wait on a std::future that the
// loop completes. Every call is bounded by request.timeout.ms; routed calls (produce, fetch,
// listOffsets) retry retriable errors after a metadata refresh until their deadline.

// GCC 12 reports std::variant (inside capstan::result) held in kj::Maybe inside kj promise nodes
// as maybe-uninitialized; kj only destroys the value it constructed (false positive).
#if defined(__GNUC__) && !defined(__clang__) // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "runtime/client/cluster_client.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <kj/debug.h>

#include "schema/client.capnp.h"

namespace capstan::client {

namespace {

using capnp_cap = rpc::Capstan::Client;
using steady = std::chrono::steady_clock;

// Large fetch responses (fetch.max.bytes up to hundreds of MiB) exceed capnp's default 64 MiB
// traversal limit.
constexpr uint64_t traversal_limit_words = uint64_t{1} << 28; // 2 GiB

// A capstan node answers the Cap'n Proto bootstrap from its RPC thread at once, without an actor
// in the way, so a peer that sends something else or stays silent this long after the TCP
// connection is up is not a client port: the cluster port speaks CAF's BASP, the metrics port
// HTTP (which waits for a request it never gets). Bounded by request.timeout.ms as well.
constexpr int64_t handshake_timeout_ms = 2000;

error from_exception(const kj::Exception& e) {
  std::string text(e.getDescription().cStr());
  if (e.getType() == kj::Exception::Type::DISCONNECTED)
    return make_error(errc::network_exception,
                      text.rfind("cannot connect", 0) == 0 ? text : "connection lost: " + text);
  return make_error(errc::unknown_server_error, text);
}

// A response's errorCode as the broker named it; a code this client does not know (a newer
// broker's) is UNKNOWN_SERVER_ERROR with the number kept in the text.
error from_code(uint8_t code, capnp::Text::Reader message) {
  if (code > static_cast<uint8_t>(last_errc))
    return make_error(errc::unknown_server_error,
                      "error code " + std::to_string(code) +
                          " (unknown to this client): " + message.cStr());
  return make_error(errc_from_code(code), std::string(message.cStr()));
}

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

bool retriable(errc code) {
  return code == errc::not_leader_or_follower || code == errc::unknown_topic_or_partition ||
         code == errc::network_exception || code == errc::not_enough_replicas ||
         code == errc::fenced_leader_epoch || code == errc::unknown_leader_epoch ||
         code == errc::kafka_storage_error;
}

result<std::pair<std::string, uint16_t>> parse_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error(errc::invalid_config, "address '" + address + "' is not HOST:PORT");
  unsigned port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc{} || ptr != end || port == 0 || port > 65535)
    return make_error(errc::invalid_config, "address '" + address + "' has no valid port");
  return std::pair{address.substr(0, colon), static_cast<uint16_t>(port)};
}

std::vector<int32_t> to_vector(capnp::List<int32_t>::Reader list) {
  std::vector<int32_t> out;
  out.reserve(list.size());
  for (auto v : list) out.push_back(v);
  return out;
}

topic_metadata to_topic(rpc::TopicInfo::Reader t) {
  topic_metadata out;
  out.name = t.getName();
  auto id = t.getTopicId();
  std::copy_n(id.begin(), std::min<size_t>(id.size(), out.id.size()), out.id.begin());
  out.internal = t.getInternal();
  for (auto c : t.getConfigs()) out.configs[c.getName()] = c.getValue();
  for (auto p : t.getPartitions()) {
    partition_assignment a;
    a.partition = p.getPartition();
    a.leader = p.getLeader();
    a.leader_epoch = p.getLeaderEpoch();
    a.replicas = to_vector(p.getReplicas());
    a.isr = to_vector(p.getIsr());
    a.wiped = to_vector(p.getWiped());
    out.partitions.push_back(std::move(a));
  }
  return out;
}

} // namespace

// One broker connection. Calls made before the TCP connection is up queue in the promise
// capability and go out once it resolves. Members are declared in the order they depend on one
// another, so destruction runs from the capability down to the stream.
struct broker_connection {
  std::string address;
  uint64_t id = 0; // tells this connection from a later one to the same address
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyVatNetwork> network;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc;
  capnp_cap cap = nullptr;
};

class rpc_cluster_client final : public cluster_client, private kj::TaskSet::ErrorHandler {
public:
  explicit rpc_cluster_client(client_config config) : cluster_client(std::move(config)) {
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread([this, &started] { run(started); });
    ready.wait();
  }

  ~rpc_cluster_client() noexcept override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake();
    thread_.join();
  }

  rpc_cluster_client(const rpc_cluster_client&) = delete;
  rpc_cluster_client& operator=(const rpc_cluster_client&) = delete;

  // Tries the bootstrap addresses in order; the first that completes the handshake and answers
  // a metadata request becomes the address for admin calls.
  status bootstrap() {
    if (config_.bootstrap.empty()) return make_error(errc::invalid_config, "empty bootstrap list");
    error last = make_error(errc::network_exception, "no bootstrap address answered");
    for (const auto& address : config_.bootstrap) {
      if (auto parsed = parse_host_port(address); !parsed) return parsed.err();
      auto r = run_sync<cluster_metadata>([this, address] {
        return with_timeout(handshake(address).then(
            [this, address](result<bool>&& shook) -> kj::Promise<result<cluster_metadata>> {
              if (!shook) return result<cluster_metadata>(shook.err());
              return metadata_call(connection(address).cap, {}, true);
            }));
      });
      if (r) {
        std::lock_guard lock(mu_);
        admin_address_ = address;
        return {};
      }
      last = r.err().message.rfind(address, 0) == 0
                 ? r.err()
                 : make_error(r.err().code, address + ": " + r.err().message);
    }
    return last;
  }

  result<cluster_metadata> metadata(const std::vector<std::string>& topics) override {
    return run_sync<cluster_metadata>([this, topics] { return refresh_metadata(topics); });
  }

  result<topic_metadata> create_topic(const topic_spec& spec) override {
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

  status delete_topic(const std::string& name) override {
    return run_status([this, name] {
      auto req = admin_cap().deleteTopicRequest();
      req.setName(name);
      return req;
    });
  }

  result<std::vector<std::string>> list_topics() override {
    return run_sync<std::vector<std::string>>([this] {
      return with_timeout(admin_cap().listTopicsRequest().send().then(
          [](auto response) -> result<std::vector<std::string>> {
            std::vector<std::string> out;
            for (auto t : response.getTopics()) out.emplace_back(t.cStr());
            return out;
          }));
    });
  }

  result<std::map<std::string, std::string>> describe_configs(const std::string& topic) override {
    using config_map = std::map<std::string, std::string>;
    return run_sync<config_map>([this, topic] {
      auto req = admin_cap().describeConfigsRequest();
      req.setTopic(topic);
      return with_timeout(req.send().then([](auto response) -> result<config_map> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        config_map out;
        for (auto c : response.getConfigs()) out[c.getName()] = c.getValue();
        return out;
      }));
    });
  }

  status alter_configs(const std::string& topic, const std::map<std::string, std::string>& configs,
                       const std::vector<std::string>& deleted) override {
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

  status create_partitions(const std::string& topic, int32_t total) override {
    return run_status([this, topic, total] {
      auto req = admin_cap().createPartitionsRequest();
      req.setTopic(topic);
      req.setTotalCount(total);
      return req;
    });
  }

  result<std::vector<election_result>>
  elect_leaders(const std::vector<std::pair<std::string, int32_t>>& partitions) override {
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
  reassign_partitions(const std::vector<reassignment_request>& partitions) override {
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

  status unregister_node(int32_t node) override {
    return run_status([this, node] {
      auto req = admin_cap().unregisterNodeRequest();
      req.setNodeId(node);
      return req;
    });
  }

  result<producer_identity> init_producer_id() override {
    return run_sync<producer_identity>([this] {
      return with_timeout(admin_cap().initProducerIdRequest().send().then(
          [](auto response) -> result<producer_identity> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            return producer_identity{response.getProducerId(), response.getProducerEpoch()};
          }));
    });
  }

  result<cluster_description> describe_cluster() override {
    return run_sync<cluster_description>([this] {
      return with_timeout(admin_cap().describeClusterRequest().send().then(
          [](auto response) -> result<cluster_description> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            cluster_description d;
            d.active_controller = response.getActiveControllerId();
            for (auto m : response.getMembers())
              d.members.push_back(quorum_member_state{m.getNodeId(), m.getReachable(),
                                                      m.getFailure(), m.getRole(), m.getTerm(),
                                                      m.getCommitIndex(), m.getLeaderId()});
            d.nodes_known = response.getNodesKnown();
            for (auto n : response.getNodes()) {
              registered_node r{n.getNodeId(), n.getFenced(), n.getBrokerEpoch(), {}};
              auto id = n.getIncarnationId();
              std::copy_n(id.begin(), std::min<size_t>(id.size(), r.incarnation.size()),
                          r.incarnation.begin());
              d.nodes.push_back(r);
            }
            return d;
          }));
    });
  }

  status inject_fault(const fault_request& fault) override {
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

  void produce(const std::string& topic, int32_t partition, int16_t acks,
               std::shared_ptr<const bytes> data,
               std::function<void(result<produce_response>)> done) override {
    auto timeout = static_cast<int32_t>(config_.request_timeout_ms);
    auto call = [data, acks, timeout, topic, partition](capnp_cap& cap) {
      const auto words = data->size() / sizeof(capnp::word) + 32;
      auto req = cap.produceRequest(capnp::MessageSize{words, 0});
      req.setTopic(topic);
      req.setPartition(partition);
      req.setAcks(acks);
      req.setTimeoutMs(timeout);
      req.setRecords(capnp::Data::Reader(data->data(), data->size()));
      return req.send().then([](auto response) -> result<produce_response> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        return produce_response{offset{response.getBaseOffset()}, response.getLogAppendTime(),
                                offset{response.getLogStartOffset()}};
      });
    };
    start_routed<produce_response>(topic, partition, config_.delivery_timeout_ms, std::move(call),
                                   std::move(done));
  }

  void fetch(const std::string& topic, int32_t partition, offset from,
             leader_epoch last_fetched_epoch, int32_t max_bytes, int32_t min_bytes,
             int32_t max_wait_ms, steady::time_point retry_until,
             std::function<void(result<fetch_response>)> done) override {
    auto call = [=, this](capnp_cap& cap) {
      auto req = cap.fetchRequest();
      req.setTopic(topic);
      req.setPartition(partition);
      req.setOffset(from.value());
      req.setMaxBytes(max_bytes);
      req.setMinBytes(min_bytes);
      req.setMaxWaitMs(max_wait_ms);
      // Each attempt names the leadership it routes to: a leader the metadata no longer names
      // refuses it (KIP-320), and the retry follows the refreshed metadata.
      req.setCurrentLeaderEpoch(leader_epoch_of(topic, partition));
      req.setLastFetchedEpoch(last_fetched_epoch.value());
      return req.send().then([](auto response) -> result<fetch_response> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        auto records = response.getRecords();
        return fetch_response{offset{response.getHighWatermark()},
                              offset{response.getLogStartOffset()},
                              bytes(records.begin(), records.end()),
                              leader_epoch{response.getDivergingEpoch()},
                              offset{response.getDivergingEndOffset()}};
      });
    };
    start_routed<fetch_response>(topic, partition, config_.request_timeout_ms + max_wait_ms,
                                 std::move(call), std::move(done), retry_until);
  }

  result<int64_t> list_offsets(const std::string& topic, int32_t partition,
                               int64_t timestamp) override {
    auto call = [=](capnp_cap& cap) {
      auto req = cap.listOffsetsRequest();
      req.setTopic(topic);
      req.setPartition(partition);
      req.setTimestamp(timestamp);
      return req.send().then([](auto response) -> result<int64_t> {
        if (response.getErrorCode() != 0)
          return from_code(response.getErrorCode(), response.getErrorMessage());
        return static_cast<int64_t>(response.getOffset());
      });
    };
    auto p = std::make_shared<std::promise<result<int64_t>>>();
    auto f = p->get_future();
    start_routed<int64_t>(topic, partition, config_.request_timeout_ms, std::move(call),
                          [p](result<int64_t> r) { p->set_value(std::move(r)); });
    return f.get();
  }

  result<std::vector<committed_offset>>
  commit_offsets(const std::string& group, const std::vector<committed_offset>& offsets,
                 const group_member_ref& member) override {
    using answer = std::vector<committed_offset>;
    return run_sync<answer>([this, group, offsets, member] {
      return at_coordinator<answer>(
          group,
          [group, offsets, member](capnp_cap cap) {
            auto req = cap.commitOffsetsRequest();
            req.setGroup(group);
            req.setMemberId(member.member_id);
            req.setGroupInstanceId(member.group_instance_id);
            req.setGeneration(member.generation);
            auto list = req.initOffsets(static_cast<unsigned>(offsets.size()));
            for (unsigned i = 0; i < offsets.size(); ++i) {
              list[i].setTopic(offsets[i].topic);
              list[i].setPartition(offsets[i].partition);
              list[i].setOffset(offsets[i].offset);
              list[i].setMetadata(offsets[i].metadata);
              list[i].setLeaderEpoch(offsets[i].leader_epoch);
            }
            return req.send().then([](auto response) -> result<answer> {
              if (response.getErrorCode() != 0)
                return from_code(response.getErrorCode(), response.getErrorMessage());
              return to_offsets(response.getResults());
            });
          },
          steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
    });
  }

  result<std::vector<committed_offset>>
  fetch_offsets(const std::string& group,
                const std::vector<std::pair<std::string, int32_t>>& partitions) override {
    using answer = std::vector<committed_offset>;
    return run_sync<answer>([this, group, partitions] {
      return at_coordinator<answer>(
          group,
          [group, partitions](capnp_cap cap) {
            auto req = cap.fetchOffsetsRequest();
            req.setGroup(group);
            auto list = req.initPartitions(static_cast<unsigned>(partitions.size()));
            for (unsigned i = 0; i < partitions.size(); ++i) {
              list[i].setTopic(partitions[i].first);
              list[i].setPartition(partitions[i].second);
            }
            return req.send().then([](auto response) -> result<answer> {
              if (response.getErrorCode() != 0)
                return from_code(response.getErrorCode(), response.getErrorMessage());
              return to_offsets(response.getOffsets());
            });
          },
          steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
    });
  }

  result<join_group_response> join_group(const std::string& group,
                                         const join_group_request& join) override {
    const int64_t wait_ms = config_.request_timeout_ms + std::max(join.rebalance_timeout_ms, 0);
    return run_sync<join_group_response>([this, group, join, wait_ms] {
      return at_coordinator<join_group_response>(
          group,
          [group, join](capnp_cap cap) {
            auto req = cap.joinGroupRequest();
            req.setGroup(group);
            req.setMemberId(join.member_id);
            req.setGroupInstanceId(join.group_instance_id);
            req.setClientId(join.client_id);
            req.setSessionTimeoutMs(join.session_timeout_ms);
            req.setRebalanceTimeoutMs(join.rebalance_timeout_ms);
            req.setProtocolType(join.protocol_type);
            auto protocols = req.initProtocols(static_cast<unsigned>(join.protocols.size()));
            for (unsigned i = 0; i < protocols.size(); ++i) {
              protocols[i].setName(join.protocols[i].name);
              protocols[i].setMetadata(capnp::Data::Reader(join.protocols[i].metadata.data(),
                                                           join.protocols[i].metadata.size()));
            }
            return req.send().then([](auto response) -> result<join_group_response> {
              join_group_response r;
              r.error = errc_from_code(response.getErrorCode());
              r.message = response.getErrorMessage();
              if (coordinator_retriable(r.error)) return make_error(r.error, r.message);
              r.member_id = response.getMemberId();
              r.generation = response.getGeneration();
              r.protocol_name = response.getProtocolName();
              r.leader = response.getLeader();
              for (auto m : response.getMembers()) {
                auto metadata = m.getMetadata();
                r.members.push_back(group_member_metadata{m.getMemberId(), m.getGroupInstanceId(),
                                                          bytes(metadata.begin(), metadata.end())});
              }
              return r;
            });
          },
          steady::now() + std::chrono::milliseconds(wait_ms), wait_ms);
    });
  }

  result<sync_group_response> sync_group(const std::string& group,
                                         const sync_group_request& sync) override {
    // A follower's answer waits for the leader's sync.
    const int64_t wait_ms = 2 * config_.request_timeout_ms;
    return run_sync<sync_group_response>([this, group, sync, wait_ms] {
      return at_coordinator<sync_group_response>(
          group,
          [group, sync](capnp_cap cap) {
            auto req = cap.syncGroupRequest();
            req.setGroup(group);
            req.setMemberId(sync.member_id);
            req.setGroupInstanceId(sync.group_instance_id);
            req.setGeneration(sync.generation);
            auto list = req.initAssignments(static_cast<unsigned>(sync.assignments.size()));
            for (unsigned i = 0; i < list.size(); ++i) {
              list[i].setMemberId(sync.assignments[i].member_id);
              list[i].setAssignment(capnp::Data::Reader(sync.assignments[i].assignment.data(),
                                                        sync.assignments[i].assignment.size()));
            }
            return req.send().then([](auto response) -> result<sync_group_response> {
              sync_group_response r;
              r.error = errc_from_code(response.getErrorCode());
              r.message = response.getErrorMessage();
              if (coordinator_retriable(r.error)) return make_error(r.error, r.message);
              auto data = response.getAssignment();
              r.assignment.assign(data.begin(), data.end());
              return r;
            });
          },
          steady::now() + std::chrono::milliseconds(wait_ms), wait_ms);
    });
  }

  status heartbeat(const std::string& group, const group_member_ref& member) override {
    return member_call(group, member, false);
  }

  status leave_group(const std::string& group, const group_member_ref& member) override {
    return member_call(group, member, true);
  }

  status delete_group(const std::string& group) override {
    auto r = run_sync<bool>([this, group] {
      return at_coordinator<bool>(
          group,
          [group](capnp_cap cap) -> kj::Promise<result<bool>> {
            auto req = cap.deleteGroupRequest();
            req.setGroup(group);
            return req.send().then([](auto response) -> result<bool> {
              if (response.getErrorCode() != 0)
                return from_code(response.getErrorCode(), response.getErrorMessage());
              return true;
            });
          },
          steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
    });
    if (!r) return r.err();
    return {};
  }

  result<group_summary> describe_group(const std::string& group) override {
    return run_sync<group_summary>([this, group] {
      return at_coordinator<group_summary>(
          group,
          [group](capnp_cap cap) {
            auto req = cap.describeGroupRequest();
            req.setGroup(group);
            return req.send().then([](auto response) -> result<group_summary> {
              if (response.getErrorCode() != 0)
                return from_code(response.getErrorCode(), response.getErrorMessage());
              group_summary g;
              g.state = response.getState();
              g.protocol_type = response.getProtocolType();
              g.protocol_name = response.getProtocolName();
              g.generation = response.getGeneration();
              g.leader = response.getLeader();
              for (auto m : response.getMembers()) {
                auto assignment = m.getAssignment();
                g.members.push_back(group_member_summary{m.getMemberId(), m.getGroupInstanceId(),
                                                         m.getClientId(),
                                                         bytes(assignment.begin(), assignment.end())});
              }
              return g;
            });
          },
          steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
    });
  }

  result<std::vector<std::string>> list_groups() override {
    using answer = std::vector<std::string>;
    return run_sync<answer>([this] {
      const auto deadline = steady::now() + std::chrono::milliseconds(config_.request_timeout_ms);
      return refresh_metadata({}).then(
          [this, deadline](result<cluster_metadata>&& md) -> kj::Promise<result<answer>> {
            if (!md) return result<answer>(md.err());
            std::vector<std::string> nodes;
            for (const auto& b : md->brokers)
              nodes.push_back(b.host + ":" + std::to_string(b.port));
            return list_groups_at(std::move(nodes), 0, {}, deadline);
          });
    });
  }

private:
  // A heartbeat (`leave` false) or a LeaveGroup at the coordinator.
  status member_call(const std::string& group, const group_member_ref& member, bool leave) {
    auto r = run_sync<bool>([this, group, member, leave] {
      return at_coordinator<bool>(
          group,
          [group, member, leave](capnp_cap cap) -> kj::Promise<result<bool>> {
            auto answer = [](auto response) -> result<bool> {
              if (response.getErrorCode() != 0)
                return from_code(response.getErrorCode(), response.getErrorMessage());
              return true;
            };
            if (leave) {
              auto req = cap.leaveGroupRequest();
              req.setGroup(group);
              req.setMemberId(member.member_id);
              req.setGroupInstanceId(member.group_instance_id);
              return req.send().then(answer);
            }
            auto req = cap.heartbeatRequest();
            req.setGroup(group);
            req.setMemberId(member.member_id);
            req.setGroupInstanceId(member.group_instance_id);
            req.setGeneration(member.generation);
            return req.send().then(answer);
          },
          steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
    });
    if (!r) return r.err();
    return {};
  }

  // Asks nodes[i..] for the groups they coordinate and merges the answers into `found`; a node
  // still loading its groups (or not answering yet) is asked again, retry.backoff.ms apart, until
  // `deadline`.
  kj::Promise<result<std::vector<std::string>>> list_groups_at(std::vector<std::string> nodes,
                                                               size_t i,
                                                               std::vector<std::string> found,
                                                               steady::time_point deadline) {
    if (i >= nodes.size()) {
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      return result<std::vector<std::string>>(std::move(found));
    }
    const auto address = nodes[i];
    auto& conn = connection(address);
    auto attempt =
        with_timeout(conn.cap.listGroupsRequest().send().then(
                         [](auto response) -> result<std::vector<std::string>> {
                           if (response.getErrorCode() != 0)
                             return from_code(response.getErrorCode(), response.getErrorMessage());
                           std::vector<std::string> out;
                           for (auto g : response.getGroups()) out.emplace_back(g.cStr());
                           return out;
                         }))
            .catch_([](kj::Exception&& e) {
              return result<std::vector<std::string>>(from_exception(e));
            });
    return attempt.then([this, nodes = std::move(nodes), i, found = std::move(found), deadline,
                         address, id = conn.id](result<std::vector<std::string>>&& r) mutable
                        -> kj::Promise<result<std::vector<std::string>>> {
      if (r) {
        found.insert(found.end(), r->begin(), r->end());
        return list_groups_at(std::move(nodes), i + 1, std::move(found), deadline);
      }
      if (!coordinator_retriable(r.code())) return kj::mv(r);
      if (r.code() == errc::network_exception || r.code() == errc::request_timed_out)
        forget_connection(address, id);
      const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
      if (steady::now() + backoff >= deadline) return kj::mv(r);
      return io_->provider->getTimer()
          .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
          .then([this, nodes = std::move(nodes), i, found = std::move(found), deadline]() mutable {
            return list_groups_at(std::move(nodes), i, std::move(found), deadline);
          });
    });
  }

  static std::vector<committed_offset> to_offsets(capnp::List<rpc::GroupOffset>::Reader list) {
    std::vector<committed_offset> out;
    for (auto o : list) {
      committed_offset c;
      c.topic = o.getTopic();
      c.partition = o.getPartition();
      c.offset = o.getOffset();
      c.metadata = o.getMetadata();
      c.error = errc_from_code(o.getErrorCode());
      c.leader_epoch = o.getLeaderEpoch();
      out.push_back(std::move(c));
    }
    return out;
  }

  // ---- the loop thread ----

  void run(std::promise<void>& started) {
    auto io = kj::setupAsyncIo();
    kj::TaskSet tasks(*this);
    io_ = &io;
    tasks_ = &tasks;
    loop_thread_ = std::this_thread::get_id();
    started.set_value();
    for (;;) {
      std::vector<std::function<void()>> jobs;
      bool stop = false;
      {
        std::unique_lock lock(mu_);
        if (queue_.empty() && !stopping_) {
          auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
          wake_ = kj::mv(paf.fulfiller);
          lock.unlock();
          paf.promise.wait(io.waitScope);
          lock.lock();
        }
        wake_ = nullptr;
        jobs.swap(queue_);
        stop = stopping_;
      }
      for (auto& job : jobs) job();
      if (stop) break;
    }
    connections_.clear();
    graveyard_.clear();
    tasks_ = nullptr;
    io_ = nullptr;
  }

  void taskFailed(kj::Exception&& exception) override {
    KJ_LOG(WARNING, "capstan client task failed", exception);
  }

  void wake() {
    kj::Own<kj::CrossThreadPromiseFulfiller<void>> w;
    {
      std::lock_guard lock(mu_);
      w = kj::mv(wake_);
    }
    if (w) w->fulfill();
  }

  // Runs `job` on the loop thread: at once when called there, else queued.
  void on_loop(std::function<void()> job) {
    if (std::this_thread::get_id() == loop_thread_) {
      job();
      return;
    }
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(job));
    }
    wake();
  }

  // Sends the request `build` makes (on the RPC thread) and reads its answer's errorCode and
  // errorMessage, the answer of every admin call that returns nothing else.
  template <class Build>
  status run_status(Build build) {
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

  // REQUIRES: not called on the loop thread (it would wait for itself).
  template <class T>
  result<T> run_sync(std::function<kj::Promise<result<T>>()> start) {
    auto p = std::make_shared<std::promise<result<T>>>();
    auto f = p->get_future();
    on_loop([this, start = std::move(start), p] {
      tasks_->add(
          kj::evalNow(start).then([p](result<T>&& r) { p->set_value(std::move(r)); },
                                  [p](kj::Exception&& e) { p->set_value(from_exception(e)); }));
    });
    return f.get();
  }

  template <class T>
  kj::Promise<result<T>> with_timeout(kj::Promise<result<T>> p, int64_t ms = -1) {
    if (ms < 0) ms = config_.request_timeout_ms;
    return p.exclusiveJoin(io_->provider->getTimer().afterDelay(ms * kj::MILLISECONDS).then([ms]() {
      return result<T>(
          make_error(errc::request_timed_out, "no response within " + std::to_string(ms) + " ms"));
    }));
  }

  capnp::ReaderOptions reader_options() const {
    capnp::ReaderOptions o;
    o.traversalLimitInWords = traversal_limit_words;
    return o;
  }

  broker_connection& connection(const std::string& address) {
    auto it = connections_.find(address);
    if (it != connections_.end()) return *it->second;
    auto conn = std::make_unique<broker_connection>();
    conn->address = address;
    conn->id = ++last_connection_id_;
    broker_connection* c = conn.get();
    auto parsed = parse_host_port(address);
    kj::Promise<capnp::Capability::Client> ready = nullptr;
    if (!parsed) {
      ready = KJ_EXCEPTION(FAILED, parsed.err().message);
    } else {
      ready = io_->provider->getNetwork()
                  .parseAddress(parsed->first, parsed->second)
                  .then([](kj::Own<kj::NetworkAddress> addr) {
                    return addr->connect().attach(kj::mv(addr));
                  })
                  .then(
                      [this, c](kj::Own<kj::AsyncIoStream> stream) -> capnp::Capability::Client {
                        c->stream = kj::mv(stream);
                        c->network = kj::heap<capnp::TwoPartyVatNetwork>(
                            *c->stream, capnp::rpc::twoparty::Side::CLIENT, reader_options());
                        c->rpc = kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(
                            capnp::makeRpcClient(*c->network));
                        // A connection the broker closed (a node that stopped or restarted) is
                        // dropped as soon as the loop reads its end, as Kafka's NetworkClient
                        // does: the next call connects again instead of failing on the dead
                        // one and waiting retry.backoff.ms. The promise is also fulfilled when
                        // the client destroys the connection itself (forgotten after an error):
                        // the id keeps that from dropping a newer one.
                        tasks_->add(c->network->onDisconnect().then(
                            [this, address = c->address, id = c->id] {
                              forget_connection(address, id);
                            },
                            [](kj::Exception&&) {}));
                        capnp::word scratch[4]{};
                        capnp::MallocMessageBuilder message(scratch);
                        auto vat = message.getRoot<capnp::rpc::twoparty::VatId>();
                        vat.setSide(capnp::rpc::twoparty::Side::SERVER);
                        return c->rpc->bootstrap(vat);
                      },
                      [](kj::Exception&& e) -> capnp::Capability::Client {
                        // A refused connection is a network error, as a lost one is.
                        kj::throwFatalException(
                            kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                                          kj::str("cannot connect: ", e.getDescription())));
                      });
    }
    conn->cap = capnp::Capability::Client(kj::mv(ready)).castAs<rpc::Capstan>();
    auto& ref = *conn;
    connections_.emplace(address, std::move(conn));
    return ref;
  }

  // Drops the connection `id` after a network error so the next call reconnects; a later
  // connection to the same address (a call saw the old one fail after another reconnected)
  // stays. The connection is destroyed on a later turn of the loop, not inside the
  // continuation that saw the error.
  void forget_connection(const std::string& address, uint64_t id) {
    auto it = connections_.find(address);
    if (it == connections_.end() || it->second->id != id) return;
    graveyard_.push_back(std::move(it->second));
    connections_.erase(it);
    tasks_->add(kj::evalLater([this] { graveyard_.clear(); }));
  }

  // Waits for the peer's answer to the Cap'n Proto bootstrap on a new connection to `address`.
  // A refused connection stays the network error it is; anything else that is not that answer
  // becomes NETWORK_EXCEPTION "ADDRESS is not a capstan client port".
  kj::Promise<result<bool>> handshake(const std::string& address) {
    auto not_client_port = [address](const std::string& why) {
      return result<bool>(make_error(errc::network_exception,
                                     address + " is not a capstan client port (" + why + ")"));
    };
    auto answered = connection(address).cap.whenResolved().then(
        [] { return result<bool>(true); },
        [not_client_port](kj::Exception&& e) {
          auto failure = from_exception(e);
          if (failure.message.rfind("cannot connect", 0) == 0) return result<bool>(failure);
          return not_client_port(e.getType() == kj::Exception::Type::DISCONNECTED
                                     ? "the connection closed before a Cap'n Proto RPC answer"
                                     : "its answer is not Cap'n Proto RPC");
        });
    const auto limit = std::min(handshake_timeout_ms, config_.request_timeout_ms);
    auto silent = io_->provider->getTimer()
                      .afterDelay(limit * kj::MILLISECONDS)
                      .then([this, address, limit, not_client_port]() -> kj::Promise<result<bool>> {
                        auto it = connections_.find(address);
                        // Still connecting: the request timeout decides, as for any unreachable
                        // address.
                        if (it == connections_.end() || !it->second->stream) return kj::NEVER_DONE;
                        return not_client_port("no Cap'n Proto answer within " +
                                               std::to_string(limit) + " ms");
                      });
    return answered.exclusiveJoin(kj::mv(silent));
  }

  capnp_cap admin_cap() {
    std::string address;
    {
      std::lock_guard lock(mu_);
      address = admin_address_.empty() ? config_.bootstrap.front() : admin_address_;
    }
    return connection(address).cap;
  }

  kj::Promise<result<cluster_metadata>> metadata_call(capnp_cap cap,
                                                      std::vector<std::string> topics, bool all) {
    auto req = cap.metadataRequest();
    auto list = req.initTopics(static_cast<unsigned>(topics.size()));
    for (unsigned i = 0; i < topics.size(); ++i) list.set(i, topics[i]);
    req.setAllTopics(all);
    return req.send().then([this](auto response) -> result<cluster_metadata> {
      cluster_metadata md;
      md.cluster_id = response.getClusterId();
      md.controller_id = response.getControllerId();
      for (auto b : response.getBrokers())
        md.brokers.push_back(broker_info{b.getNodeId(), b.getHost(), b.getPort()});
      std::optional<error> topic_error;
      for (auto t : response.getTopics()) {
        if (t.getErrorCode() != 0) {
          auto e = from_code(t.getErrorCode(), t.getErrorMessage());
          if (e.message.empty()) e.message = "topic '" + std::string(t.getName().cStr()) + "'";
          forget_topic(t.getName());
          if (!topic_error) topic_error = std::move(e);
          continue;
        }
        auto topic = to_topic(t);
        cache_.topics[topic.name] = topic;
        md.topics.emplace(topic.name, std::move(topic));
      }
      cache_.cluster_id = md.cluster_id;
      cache_.controller_id = md.controller_id;
      cache_.brokers = md.brokers;
      if (topic_error) return *topic_error;
      return md;
    });
  }

  void forget_topic(const std::string& topic) { cache_.topics.erase(topic); }

  // Metadata from `first` (when given), else the admin address, else any other known broker or
  // bootstrap address: the first that answers.
  kj::Promise<result<cluster_metadata>> refresh_metadata(std::vector<std::string> topics,
                                                         std::optional<std::string> first = {}) {
    return try_metadata(std::move(topics), addresses_to_ask(std::move(first)), 0);
  }

  // `first` (when given), the admin address, every known broker and the bootstrap addresses,
  // each once in this order: one that failed is not asked again further down.
  std::vector<std::string> addresses_to_ask(std::optional<std::string> first = {}) {
    std::vector<std::string> candidates;
    if (first) candidates.push_back(std::move(*first));
    {
      std::lock_guard lock(mu_);
      if (!admin_address_.empty()) candidates.push_back(admin_address_);
    }
    for (const auto& b : cache_.brokers)
      candidates.push_back(b.host + ":" + std::to_string(b.port));
    for (const auto& a : config_.bootstrap) candidates.push_back(a);
    std::vector<std::string> unique;
    for (auto& a : candidates)
      if (std::find(unique.begin(), unique.end(), a) == unique.end())
        unique.push_back(std::move(a));
    return unique;
  }

  kj::Promise<result<cluster_metadata>>
  try_metadata(std::vector<std::string> topics, std::vector<std::string> candidates, size_t i) {
    const auto address = candidates[i];
    auto& conn = connection(address);
    auto attempt =
        with_timeout(metadata_call(conn.cap, topics, topics.empty())).catch_([](kj::Exception&& e) {
          return result<cluster_metadata>(from_exception(e));
        });
    return attempt.then([this, topics = std::move(topics), candidates = std::move(candidates), i,
                         address, id = conn.id](result<cluster_metadata>&& r) mutable
                        -> kj::Promise<result<cluster_metadata>> {
      if (r || (r.code() != errc::network_exception && r.code() != errc::request_timed_out))
        return kj::mv(r);
      forget_connection(address, id);
      if (i + 1 >= candidates.size()) return kj::mv(r);
      return try_metadata(std::move(topics), std::move(candidates), i + 1);
    });
  }

  // Runs `call` at the coordinator of `group` (docs/groups.md), found with findCoordinator at
  // the admin address or any other node known, and found again after NOT_COORDINATOR,
  // COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or a failed connection, as Kafka's
  // consumer does, retry.backoff.ms apart, until `deadline`; then the last error.
  template <class T>
  kj::Promise<result<T>> at_coordinator(std::string group,
                                        std::function<kj::Promise<result<T>>(capnp_cap)> call,
                                        steady::time_point deadline, int64_t call_timeout_ms = -1) {
    auto known = coordinators_.find(group);
    auto where = known != coordinators_.end()
                     ? kj::Promise<result<std::string>>(result<std::string>(known->second))
                     : find_coordinator(group);
    return where.then([this, group = std::move(group), call = std::move(call), deadline,
                       call_timeout_ms](result<std::string>&& address) mutable -> kj::Promise<result<T>> {
      if (!address)
        return coordinator_retry<T>(std::move(group), std::move(call), deadline, address.err(),
                                    call_timeout_ms);
      coordinators_[group] = *address;
      auto& conn = connection(*address);
      auto attempt = with_timeout(call(conn.cap), call_timeout_ms).catch_([](kj::Exception&& e) {
        return result<T>(from_exception(e));
      });
      return attempt.then([this, group = std::move(group), call = std::move(call), deadline,
                           call_timeout_ms, address = *address,
                           id = conn.id](result<T>&& r) mutable -> kj::Promise<result<T>> {
        if (r || !coordinator_retriable(r.code())) return kj::mv(r);
        coordinators_.erase(group);
        if (r.code() == errc::network_exception || r.code() == errc::request_timed_out)
          forget_connection(address, id);
        return coordinator_retry<T>(std::move(group), std::move(call), deadline, r.err(),
                                    call_timeout_ms);
      });
    });
  }

  static bool coordinator_retriable(errc code) {
    return code == errc::not_coordinator || code == errc::coordinator_not_available ||
           code == errc::coordinator_load_in_progress || code == errc::network_exception ||
           code == errc::request_timed_out;
  }

  template <class T>
  kj::Promise<result<T>> coordinator_retry(std::string group,
                                           std::function<kj::Promise<result<T>>(capnp_cap)> call,
                                           steady::time_point deadline, error last,
                                           int64_t call_timeout_ms) {
    const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
    if (steady::now() + backoff >= deadline) return result<T>(std::move(last));
    return io_->provider->getTimer()
        .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
        .then([this, group = std::move(group), call = std::move(call), deadline,
               call_timeout_ms]() mutable {
          return at_coordinator<T>(std::move(group), std::move(call), deadline, call_timeout_ms);
        });
  }

  // The client address of `group`'s coordinator, from the first of the admin address, the known
  // nodes and the bootstrap addresses that answers.
  kj::Promise<result<std::string>> find_coordinator(std::string group) {
    return try_find_coordinator(std::move(group), addresses_to_ask(), 0);
  }

  kj::Promise<result<std::string>> try_find_coordinator(std::string group,
                                                        std::vector<std::string> candidates,
                                                        size_t i) {
    const auto address = candidates[i];
    auto& conn = connection(address);
    auto req = conn.cap.findCoordinatorRequest();
    req.setGroup(group);
    auto attempt = with_timeout(req.send().then([](auto response) -> result<std::string> {
                     if (response.getErrorCode() != 0)
                       return from_code(response.getErrorCode(), response.getErrorMessage());
                     return std::string(response.getHost().cStr()) + ":" +
                            std::to_string(response.getPort());
                   })).catch_([](kj::Exception&& e) { return result<std::string>(from_exception(e)); });
    return attempt.then([this, group = std::move(group), candidates = std::move(candidates), i,
                         address, id = conn.id](result<std::string>&& r) mutable
                        -> kj::Promise<result<std::string>> {
      if (r || (r.code() != errc::network_exception && r.code() != errc::request_timed_out))
        return kj::mv(r);
      forget_connection(address, id);
      if (i + 1 >= candidates.size()) return kj::mv(r);
      return try_find_coordinator(std::move(group), std::move(candidates), i + 1);
    });
  }

  // The leader epoch the cached metadata names for the partition; -1 when it names none.
  int32_t leader_epoch_of(const std::string& topic, int32_t partition) const {
    auto t = cache_.topics.find(topic);
    if (t == cache_.topics.end()) return -1;
    for (const auto& p : t->second.partitions)
      if (p.partition == partition) return p.leader_epoch;
    return -1;
  }

  // Whether the cached metadata names another replica than the leader for the partition: one the
  // controller can move the leadership to when the leader's log dir fails. With none (a single
  // node, replication factor 1) KAFKA_STORAGE_ERROR lasts until the node is repaired, and
  // retrying it would only hold the caller up until its deadline.
  bool leadership_can_move(const std::string& topic, int32_t partition) const {
    auto t = cache_.topics.find(topic);
    if (t == cache_.topics.end()) return false;
    for (const auto& p : t->second.partitions)
      if (p.partition == partition) return p.replicas.size() > 1;
    return false;
  }

  std::optional<std::string> leader_address(const std::string& topic, int32_t partition) const {
    auto t = cache_.topics.find(topic);
    if (t == cache_.topics.end()) return std::nullopt;
    for (const auto& p : t->second.partitions) {
      if (p.partition != partition) continue;
      if (p.leader < 0) return std::nullopt;
      for (const auto& b : cache_.brokers)
        if (b.node_id == p.leader) return b.host + ":" + std::to_string(b.port);
      return std::nullopt;
    }
    return std::nullopt;
  }

  template <class T>
  struct routed_call {
    std::string topic;
    int32_t partition = 0;
    steady::time_point deadline;
    // No retry starts after this (the caller's own bound); an attempt in flight keeps `deadline`.
    steady::time_point retry_until = steady::time_point::max();
    std::function<kj::Promise<result<T>>(capnp_cap&)> call;
    std::function<void(result<T>)> done;
    std::optional<error> last;
    // Asked for metadata at once after a NOT_LEADER_OR_FOLLOWER or a lost connection (and
    // retried at a moved leader without the back-off) once: never again, so two nodes that each
    // name the other while metadata settles are not asked in a tight loop.
    bool followed_move = false;
  };

  // A failed metadata refresh is the error to report, unless it only says the topic is unknown
  // (the call's own error says more).
  template <class T>
  static void keep_refresh_error(routed_call<T>& state, const result<cluster_metadata>& md) {
    if (!md && md.code() != errc::unknown_topic_or_partition) state.last = md.err();
  }

  template <class T>
  void start_routed(const std::string& topic, int32_t partition, int64_t budget_ms,
                    std::function<kj::Promise<result<T>>(capnp_cap&)> call,
                    std::function<void(result<T>)> done,
                    steady::time_point retry_until = steady::time_point::max()) {
    auto state = std::make_shared<routed_call<T>>();
    state->topic = topic;
    state->partition = partition;
    state->deadline = steady::now() + std::chrono::milliseconds(budget_ms);
    state->retry_until = retry_until;
    state->call = std::move(call);
    state->done = std::move(done);
    on_loop([this, state] {
      tasks_->add(
          attempt(state).then([state](result<T>&& r) { state->done(std::move(r)); },
                              [state](kj::Exception&& e) { state->done(from_exception(e)); }));
    });
  }

  template <class T>
  kj::Promise<result<T>> attempt(std::shared_ptr<routed_call<T>> state) {
    auto address = leader_address(state->topic, state->partition);
    if (!address) {
      if (!state->last) {
        // First miss: the cache may just not know the topic yet.
        state->last = make_error(errc::unknown_topic_or_partition,
                                 "no leader known for " + state->topic + "-" +
                                     std::to_string(state->partition));
        return refresh_metadata({state->topic}).then([this, state](result<cluster_metadata>&& md) {
          keep_refresh_error(*state, md);
          return attempt(state);
        });
      }
      return retry_later(state);
    }
    auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(state->deadline - steady::now())
            .count();
    auto timeout = std::max<int64_t>(1, std::min<int64_t>(config_.request_timeout_ms, remaining));
    auto& conn = connection(*address);
    // Judged by the metadata this attempt was routed with: an answer to another request of the
    // topic may have dropped the topic from the cache by the time this one's answer arrives.
    const bool can_move = leadership_can_move(state->topic, state->partition);
    return with_timeout(state->call(conn.cap), timeout)
        .catch_([](kj::Exception&& e) { return result<T>(from_exception(e)); })
        .then([this, state, address = *address, id = conn.id, can_move,
               clipped =
                   timeout < config_.request_timeout_ms](result<T>&& r) -> kj::Promise<result<T>> {
          // An attempt cut short by the caller's deadline says nothing new about the broker:
          // the caller gets the error that made it retry.
          if (!r && clipped && r.code() == errc::request_timed_out && state->last)
            return result<T>(*state->last);
          if (r || !retriable(r.code())) return kj::mv(r);
          if (r.code() == errc::kafka_storage_error && !can_move) return kj::mv(r);
          if (r.code() == errc::network_exception) forget_connection(address, id);
          forget_topic(state->topic);
          state->last = r.err();
          const bool may_have_moved =
              r.code() == errc::not_leader_or_follower || r.code() == errc::network_exception;
          if (may_have_moved && !state->followed_move) return retry_at_moved_leader(state, address);
          return retry_later(state);
        });
  }

  // NOT_LEADER_OR_FOLLOWER mostly means the leadership moved (a controlled shutdown, an
  // election) and the metadata already says where: asks at once and, if it names another node,
  // retries there without the back-off, as Kafka's client does since KIP-951 (which carries the
  // new leader in the response instead). So does a lost connection: a node that stops cleanly
  // moves its leaderships first and then closes its connections, often with a produce in
  // flight. After NOT_LEADER_OR_FOLLOWER the Metadata comes from the node that refused first:
  // it has just applied the change (a node takes UpdateMetadata before LeaderAndIsr), while
  // another node's may not have arrived yet (KIP-951's reason to carry the leader in the
  // response). Metadata that still names the node that refused (not updated yet, a killed node,
  // no leader) leaves the usual back-off, and so does every later refusal of the call.
  template <class T>
  kj::Promise<result<T>> retry_at_moved_leader(std::shared_ptr<routed_call<T>> state,
                                               std::string refused) {
    state->followed_move = true;
    std::optional<std::string> ask_first;
    if (state->last && state->last->code == errc::not_leader_or_follower) ask_first = refused;
    return follow_move(state, std::move(refused), std::move(ask_first));
  }

  // One Metadata refresh, from `ask_first` first when given. A leader other than `refused`: tries
  // there at once. Otherwise, after asking `ask_first`, refreshes once more the usual way (the
  // node that refused may not know the new leader either: its LeaderAndIsr never came), else
  // backs off.
  template <class T>
  kj::Promise<result<T>> follow_move(std::shared_ptr<routed_call<T>> state, std::string refused,
                                     std::optional<std::string> ask_first) {
    const auto within_bounds = [state] {
      const auto now = steady::now();
      return now < state->deadline && now < state->retry_until;
    };
    if (!within_bounds()) return result<T>(*state->last);
    const bool asked_refuser = ask_first.has_value();
    return refresh_metadata({state->topic}, std::move(ask_first))
        .then([this, state, refused = std::move(refused), within_bounds,
               asked_refuser](result<cluster_metadata>&& md) mutable -> kj::Promise<result<T>> {
          keep_refresh_error(*state, md);
          // The refresh took time of its own: a retry starts only within the bounds.
          if (!within_bounds()) return result<T>(*state->last);
          const auto moved = leader_address(state->topic, state->partition);
          if (moved && *moved != refused) return attempt(state);
          if (asked_refuser) return follow_move(state, std::move(refused), std::nullopt);
          return retry_later(state);
        });
  }

  // Waits retry.backoff.ms, refreshes the topic's metadata and tries again, or gives up with the
  // last error once the deadline or the caller's retry bound would pass.
  template <class T>
  kj::Promise<result<T>> retry_later(std::shared_ptr<routed_call<T>> state) {
    const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
    const auto next = steady::now() + backoff;
    if (next >= state->deadline || next >= state->retry_until) return result<T>(*state->last);
    return io_->provider->getTimer()
        .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
        .then([this, state] { return refresh_metadata({state->topic}); })
        .then([this, state](result<cluster_metadata>&& md) {
          keep_refresh_error(*state, md);
          return attempt(state);
        });
  }

  std::thread thread_;
  std::thread::id loop_thread_;

  std::mutex mu_; // guards the fields below up to loop-only state
  std::vector<std::function<void()>> queue_;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> wake_;
  bool stopping_ = false;
  std::string admin_address_;

  // Loop-thread only.
  kj::AsyncIoContext* io_ = nullptr;
  kj::TaskSet* tasks_ = nullptr;
  std::map<std::string, std::unique_ptr<broker_connection>> connections_;
  std::vector<std::unique_ptr<broker_connection>> graveyard_;
  uint64_t last_connection_id_ = 0;
  cluster_metadata cache_;
  // Each group's coordinator as last found (its client address).
  std::map<std::string, std::string> coordinators_;
};

result<std::unique_ptr<cluster_client>> cluster_client::connect(const client_config& config) {
  auto client = std::make_unique<rpc_cluster_client>(config);
  if (auto s = client->bootstrap(); !s) return s.err();
  return std::unique_ptr<cluster_client>(std::move(client));
}

result<produce_response> cluster_client::produce_sync(const std::string& topic, int32_t partition,
                                                      int16_t acks, bytes batch) {
  auto p = std::make_shared<std::promise<result<produce_response>>>();
  auto f = p->get_future();
  produce(topic, partition, acks, std::make_shared<const bytes>(std::move(batch)),
          [p](result<produce_response> r) { p->set_value(std::move(r)); });
  return f.get();
}

result<fetch_response> cluster_client::fetch_sync(const std::string& topic, int32_t partition,
                                                  offset from, int32_t max_bytes, int32_t min_bytes,
                                                  int32_t max_wait_ms) {
  auto p = std::make_shared<std::promise<result<fetch_response>>>();
  auto f = p->get_future();
  fetch(topic, partition, from, leader_epoch{-1}, max_bytes, min_bytes, max_wait_ms,
        std::chrono::steady_clock::time_point::max(),
        [p](result<fetch_response> r) { p->set_value(std::move(r)); });
  return f.get();
}

} // namespace capstan::client
