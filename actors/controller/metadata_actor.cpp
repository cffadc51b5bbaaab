// The metadata actor: the node's own metadata as its store holds it. Protocol:
// actors/controller/metadata_actor.hpp.

#include "actors/controller/metadata_actor_spawn.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan {

namespace {

struct metadata_state {
  static inline const char* name = "capstan.metadata";

  metadata_actor_options opts;
  // Cluster id and topics as persisted; brokers are filled in per snapshot.
  cluster_metadata current;
  // The last snapshot handed out; rebuilt when the live brokers change.
  metadata_snapshot cached;
};

using self_ptr = metadata_actor::stateful_pointer<metadata_state>;

std::vector<broker_info> live_brokers(const metadata_state& st) {
  std::vector<broker_info> out;
  if (st.opts.live_brokers) out = st.opts.live_brokers();
  else out.push_back(broker_info{st.opts.node_id, "127.0.0.1", 0});
  std::sort(out.begin(), out.end(),
            [](const broker_info& a, const broker_info& b) { return a.node_id < b.node_id; });
  return out;
}

bool same_brokers(const std::vector<broker_info>& a, const std::vector<broker_info>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.node_id == y.node_id && x.host == y.host && x.port == y.port;
  });
}

metadata_snapshot snapshot(metadata_state& st) {
  auto brokers = live_brokers(st);
  if (!st.cached || !same_brokers(st.cached->brokers, brokers)) {
    auto next = std::make_shared<cluster_metadata>(st.current);
    next->brokers = std::move(brokers);
    next->controller_id = st.opts.node_id;
    st.cached = std::move(next);
  }
  return st.cached;
}

std::map<std::string, std::string> effective_configs(const metadata_state& st,
                                                     const topic_metadata& topic) {
  auto out = st.opts.log_defaults.to_map();
  out[min_insync_replicas_key] = std::to_string(st.opts.min_insync_replicas);
  for (const auto& [k, v] : topic.configs) out[k] = v;
  return out;
}

metadata_actor::behavior_type metadata_behavior(self_ptr self, metadata_actor_options opts,
                                                cluster_metadata loaded) {
  self->state.opts = std::move(opts);
  self->state.current = std::move(loaded);
  return {
    [self](snapshot_atom) -> metadata_snapshot { return snapshot(self->state); },
    [self](describe_atom, const std::string& name) -> caf::result<config_map> {
      auto& st = self->state;
      auto it = st.current.topics.find(name);
      if (it == st.current.topics.end())
        return to_caf_error(make_error(errc::unknown_topic_or_partition,
                                       "topic '" + name + "' does not exist"));
      return effective_configs(st, it->second);
    },
  };
}

} // namespace

result<metadata_actor> spawn_metadata_actor(caf::actor_system& sys, metadata_actor_options options) {
  auto loaded = read_metadata_store(options.store_file);
  if (!loaded) return loaded.err();
  // Stores written when every "__" name counted as internal: only the node's own topics are.
  for (auto& [name, t] : loaded->topics) t.internal = is_internal_topic(name);
  if (loaded->cluster_id.empty()) {
    loaded->cluster_id = options.cluster_id;
    if (auto s = write_metadata_store(options.store_file, *loaded); !s) return s.err();
  } else if (loaded->cluster_id != options.cluster_id) {
    return make_error(errc::kafka_storage_error,
                      options.store_file.string() + " belongs to cluster " + loaded->cluster_id +
                        ", but the data dir to cluster " + options.cluster_id);
  }
  return sys.spawn(metadata_behavior, std::move(options), std::move(*loaded));
}

} // namespace capstan
