// The Cap'n Proto service's metadata and topic calls: translation to and from handlers/.

#include "actors/gateway/capstan_service.hpp"

#include <string>
#include <vector>

#include "actors/gateway/capnp_answers.hpp"
#include "actors/gateway/handlers/alter_configs_handler.hpp"
#include "actors/gateway/handlers/create_partitions_handler.hpp"
#include "actors/gateway/handlers/create_topic_handler.hpp"
#include "actors/gateway/handlers/delete_topic_handler.hpp"
#include "actors/gateway/handlers/describe_configs_handler.hpp"
#include "actors/gateway/handlers/metadata_handler.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

config_map read_configs(capnp::List<rpc::ConfigEntry>::Reader entries) {
  config_map out;
  for (auto e : entries) out[e.getName()] = e.getValue();
  return out;
}

void fill_topic(rpc::TopicInfo::Builder out, const topic_metadata& t,
                const std::vector<broker_info>& brokers) {
  out.setName(t.name);
  out.setTopicId(capnp::Data::Reader(t.id.data(), t.id.size()));
  out.setInternal(t.internal);
  auto configs = out.initConfigs(static_cast<unsigned>(t.configs.size()));
  unsigned c = 0;
  for (const auto& [k, v] : t.configs) {
    configs[c].setName(k);
    configs[c].setValue(v);
    ++c;
  }
  auto parts = out.initPartitions(static_cast<unsigned>(t.partitions.size()));
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const auto& p = t.partitions[i];
    auto b = parts[static_cast<unsigned>(i)];
    std::vector<int32_t> offline;
    for (auto r : p.replicas)
      if (!broker_live(brokers, r)) offline.push_back(r);
    b.setPartition(p.partition);
    b.setLeader(p.leader >= 0 && broker_live(brokers, p.leader) ? p.leader : -1);
    b.setLeaderEpoch(p.leader_epoch);
    auto put = [](auto list, const std::vector<int32_t>& v) {
      for (size_t k = 0; k < v.size(); ++k) list.set(static_cast<unsigned>(k), v[k]);
    };
    put(b.initReplicas(static_cast<unsigned>(p.replicas.size())), p.replicas);
    put(b.initIsr(static_cast<unsigned>(p.isr.size())), p.isr);
    put(b.initOffline(static_cast<unsigned>(offline.size())), offline);
    put(b.initWiped(static_cast<unsigned>(p.wiped.size())), p.wiped);
  }
}

void fill_metadata(rpc::Capstan::MetadataResults::Builder results, const cluster_metadata& md,
                   const std::vector<std::string>& wanted, bool all) {
  auto brokers = results.initBrokers(static_cast<unsigned>(md.brokers.size()));
  for (size_t i = 0; i < md.brokers.size(); ++i) {
    auto b = brokers[static_cast<unsigned>(i)];
    b.setNodeId(md.brokers[i].node_id);
    b.setHost(md.brokers[i].host);
    b.setPort(md.brokers[i].port);
  }
  results.setControllerId(md.controller_id);
  results.setClusterId(md.cluster_id);
  if (all) {
    auto topics = results.initTopics(static_cast<unsigned>(md.topics.size()));
    unsigned i = 0;
    for (const auto& [name, t] : md.topics) fill_topic(topics[i++], t, md.brokers);
    return;
  }
  auto topics = results.initTopics(static_cast<unsigned>(wanted.size()));
  for (size_t i = 0; i < wanted.size(); ++i) {
    auto out = topics[static_cast<unsigned>(i)];
    auto it = md.topics.find(wanted[i]);
    if (it != md.topics.end()) {
      fill_topic(out, it->second, md.brokers);
      continue;
    }
    out.setName(wanted[i]);
    auto missing = missing_topic_error(wanted[i]);
    out.setErrorCode(static_cast<uint8_t>(missing.code));
    out.setErrorMessage(missing.message);
  }
}

} // namespace

kj::Promise<void> capstan_service::metadata(MetadataContext call) {
  static constexpr const char* method = "metadata";
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getTopics().size(), "topics"); !s) {
    count_unread(*session_.ctx, method, s.err());
    fail_call(s.err().to_string());
  }
  std::vector<std::string> wanted;
  for (auto t : params.getTopics()) wanted.emplace_back(t);
  const bool all = params.getAllTopics() || wanted.empty();
  call.releaseParams();
  return handle_metadata(session_, method)
      .then([call, wanted = std::move(wanted), all](answer<metadata_snapshot>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) fail_call("metadata unavailable: " + a.err.to_string());
        fill_metadata(results, *a.value, wanted, all);
      });
}

kj::Promise<void> capstan_service::listTopics(ListTopicsContext call) {
  return handle_metadata(session_, "listTopics")
      .then([call](answer<metadata_snapshot>&& a) mutable {
        if (!a.ok()) fail_call("metadata unavailable: " + a.err.to_string());
        const auto& topics = a.value->topics;
        auto out =
            call.getResults(results_size_hint).initTopics(static_cast<unsigned>(topics.size()));
        unsigned i = 0;
        for (const auto& [name, t] : topics) out.set(i++, name);
      });
}

kj::Promise<void> capstan_service::describeConfigs(DescribeConfigsContext call) {
  std::string topic = call.getParams().getTopic();
  call.releaseParams();
  return handle_describe_configs(session_, std::move(topic))
      .then([call](answer<config_map>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        auto out = results.initConfigs(static_cast<unsigned>(a.value.size()));
        unsigned i = 0;
        for (const auto& [k, v] : a.value) {
          out[i].setName(k);
          out[i].setValue(v);
          ++i;
        }
      });
}

kj::Promise<void> capstan_service::alterConfigs(AlterConfigsContext call) {
  static constexpr const char* method = "alterConfigs";
  auto params = call.getParams();
  for (auto [length, what] : {std::pair{params.getConfigs().size(), "configs"},
                              std::pair{params.getDeleted().size(), "deleted"}}) {
    if (auto s = validate_list_length(length, what); !s) {
      count_unread(*session_.ctx, method, s.err());
      set_error(call.getResults(), s.err());
      return kj::READY_NOW;
    }
  }
  std::string topic = params.getTopic();
  auto configs = read_configs(params.getConfigs());
  std::vector<std::string> deleted;
  for (auto key : params.getDeleted()) deleted.emplace_back(key);
  call.releaseParams();
  return handle_alter_configs(session_, std::move(topic), std::move(configs), std::move(deleted))
      .then([call](answer<bool>&& a) mutable {
        if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
      });
}

kj::Promise<void> capstan_service::createTopic(CreateTopicContext call) {
  static constexpr const char* method = "createTopic";
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getConfigs().size(), "configs"); !s) {
    count_unread(*session_.ctx, method, s.err());
    set_error(call.getResults(), s.err());
    return kj::READY_NOW;
  }
  topic_spec spec;
  spec.name = params.getName();
  spec.partitions = params.getPartitions();
  spec.replication_factor = params.getReplicationFactor();
  spec.configs = read_configs(params.getConfigs());
  call.releaseParams();
  return handle_create_topic(session_, std::move(spec))
      .then([call](answer<topic_metadata>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        results.setTopicId(capnp::Data::Reader(a.value.id.data(), a.value.id.size()));
      });
}

kj::Promise<void> capstan_service::deleteTopic(DeleteTopicContext call) {
  std::string name = call.getParams().getName();
  call.releaseParams();
  return handle_delete_topic(session_, std::move(name)).then([call](answer<bool>&& a) mutable {
    if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
  });
}

kj::Promise<void> capstan_service::createPartitions(CreatePartitionsContext call) {
  std::string topic = call.getParams().getTopic();
  const int32_t total = call.getParams().getTotalCount();
  call.releaseParams();
  return handle_create_partitions(session_, std::move(topic), total)
      .then([call](answer<bool>&& a) mutable {
        if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
      });
}

} // namespace capstan
