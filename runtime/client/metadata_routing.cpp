// The metadata cache and what routes by it: metadata from the first address that answers, and
// each partition's leader and leader epoch as the cache last heard them.

#include "runtime/client/rpc_cluster_client.hpp"

#include <algorithm>

namespace capstan::client {

namespace {

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

kj::Promise<result<cluster_metadata>>
rpc_cluster_client::metadata_call(capnp_cap cap, std::vector<std::string> topics, bool all) {
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

void rpc_cluster_client::forget_topic(const std::string& topic) {
  cache_.topics.erase(topic);
}

// Metadata from `first` (when given), else the admin address, else any other known broker or
// bootstrap address: the first that answers.
kj::Promise<result<cluster_metadata>>
rpc_cluster_client::refresh_metadata(std::vector<std::string> topics,
                                     std::optional<std::string> first) {
  const bool all = topics.empty();
  return at_first_reachable<cluster_metadata>(
      addresses_to_ask(std::move(first)), 0,
      [this, topics = std::move(topics), all](capnp_cap cap) {
        return metadata_call(cap, topics, all);
      });
}

// `first` (when given), the admin address, every known broker and the bootstrap addresses,
// each once in this order: one that failed is not asked again further down.
std::vector<std::string> rpc_cluster_client::addresses_to_ask(std::optional<std::string> first) {
  std::vector<std::string> candidates;
  if (first) candidates.push_back(std::move(*first));
  {
    std::lock_guard lock(mu_);
    if (!admin_address_.empty()) candidates.push_back(admin_address_);
  }
  for (const auto& b : cache_.brokers) candidates.push_back(b.host + ":" + std::to_string(b.port));
  for (const auto& a : config_.bootstrap) candidates.push_back(a);
  std::vector<std::string> unique;
  for (auto& a : candidates)
    if (std::find(unique.begin(), unique.end(), a) == unique.end()) unique.push_back(std::move(a));
  return unique;
}

template <class T>
kj::Promise<result<T>>
rpc_cluster_client::at_first_reachable(std::vector<std::string> candidates, size_t i,
                                       std::function<kj::Promise<result<T>>(capnp_cap)> call) {
  const auto address = candidates[i];
  auto& conn = connections_->connection(address);
  auto attempt = with_timeout(call(conn.cap)).catch_([](kj::Exception&& e) {
    return result<T>(from_exception(e));
  });
  return attempt.then([this, candidates = std::move(candidates), i, address, id = conn.id,
                       call = std::move(call)](result<T>&& r) mutable -> kj::Promise<result<T>> {
    if (r || (r.code() != errc::network_exception && r.code() != errc::request_timed_out))
      return kj::mv(r);
    connections_->forget(address, id);
    if (i + 1 >= candidates.size()) return kj::mv(r);
    return at_first_reachable(std::move(candidates), i + 1, std::move(call));
  });
}

template kj::Promise<result<cluster_metadata>> rpc_cluster_client::at_first_reachable(
    std::vector<std::string>, size_t,
    std::function<kj::Promise<result<cluster_metadata>>(capnp_cap)>);
template kj::Promise<result<std::map<std::string, std::string>>>
    rpc_cluster_client::at_first_reachable(
        std::vector<std::string>, size_t,
        std::function<kj::Promise<result<std::map<std::string, std::string>>>(capnp_cap)>);

// The leader epoch the cached metadata names for the partition; -1 when it names none.
int32_t rpc_cluster_client::leader_epoch_of(const std::string& topic, int32_t partition) const {
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
bool rpc_cluster_client::leadership_can_move(const std::string& topic, int32_t partition) const {
  auto t = cache_.topics.find(topic);
  if (t == cache_.topics.end()) return false;
  for (const auto& p : t->second.partitions)
    if (p.partition == partition) return p.replicas.size() > 1;
  return false;
}

std::optional<std::string> rpc_cluster_client::leader_address(const std::string& topic,
                                                              int32_t partition) const {
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

} // namespace capstan::client
