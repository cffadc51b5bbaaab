// The metadata actor: validates topic changes, persists them in the metadata store, then applies
// the new snapshot to the replica manager and answers once it has (so a created topic is usable
// when createTopic returns). Protocol: actors/controller/metadata_actor.hpp.

#include "actors/controller/metadata_actor_spawn.hpp"

#include <algorithm>
#include <random>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/log/io_worker_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/cluster/topic_validation.hpp"

namespace capstan {

namespace {

struct metadata_state {
  static inline const char* name = "capstan.metadata";

  metadata_actor_options opts;
  replica_manager_actor replicas;
  // Writes the store, off the scheduler's threads.
  io_worker_actor worker;
  // Cluster id and topics as persisted; brokers are filled in per snapshot.
  cluster_metadata current;
  // The last snapshot handed out; rebuilt after a change or when the live brokers change.
  metadata_snapshot cached;
  std::mt19937_64 rng{std::random_device{}()};
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

// Replication factor replicas per partition over the brokers, round-robin by partition; the first
// replica is the preferred leader. REQUIRES: 1 <= replication_factor <= brokers.size().
std::vector<partition_assignment> assign_partitions(int32_t partitions, int16_t replication_factor,
                                                    const std::vector<broker_info>& brokers) {
  std::vector<partition_assignment> out;
  out.reserve(static_cast<size_t>(partitions));
  for (int32_t p = 0; p < partitions; ++p) {
    partition_assignment a;
    a.partition = p;
    for (int16_t r = 0; r < replication_factor; ++r)
      a.replicas.push_back(brokers[(static_cast<size_t>(p) + static_cast<size_t>(r)) % brokers.size()].node_id);
    a.leader = a.replicas.front();
    a.leader_epoch = 0;
    a.isr = a.replicas;
    out.push_back(std::move(a));
  }
  return out;
}

// A random id, never the all-zero id (Kafka's "no id") nor one in use.
topic_id new_topic_id(metadata_state& st) {
  for (;;) {
    topic_id id{};
    for (size_t i = 0; i < id.size(); i += 8) {
      uint64_t r = st.rng();
      for (size_t j = 0; j < 8; ++j) id[i + j] = static_cast<uint8_t>(r >> (8 * j));
    }
    bool taken = id == topic_id{};
    for (const auto& [name, t] : st.current.topics) taken = taken || t.id == id;
    if (!taken) return id;
  }
}

// Persists `next` on the actor's I/O worker (the store write fsyncs the file and the directory,
// which must not hold a scheduler thread), then makes it current and calls `done`; on failure
// nothing changes and `done` gets the error. The actor awaits the write, handling nothing else
// meanwhile, so each change is validated against the one before it. Not bounded by a timeout: a
// write that timed out could still land, and the store must never differ from `current`.
void commit_then(self_ptr self, cluster_metadata next, std::function<void(status)> done) {
  auto& st = self->state;
  auto written = std::make_shared<status>();
  auto staged = std::make_shared<cluster_metadata>(std::move(next));
  self->request(st.worker, caf::infinite, run_atom_v,
                io_task{[written, staged, file = st.opts.store_file] {
                  *written = write_metadata_store(file, *staged);
                }})
    .await(
      [self, written, staged, done](bool) {
        if (!*written) {
          spdlog::error("metadata: cannot persist: {}", written->err().to_string());
          return done(*written);
        }
        self->state.current = std::move(*staged);
        self->state.cached.reset();
        done({});
      },
      [done](caf::error& e) { done(from_caf_error(e)); });
}

// The partitions of `topic` among those the replica manager reported not serving.
std::vector<int32_t> unserved_partitions(const topic_metadata& topic,
                                         const std::vector<topic_partition>& unserved) {
  std::vector<int32_t> out;
  for (const auto& tp : unserved)
    if (tp.first == topic.name) out.push_back(tp.second);
  return out;
}

std::string join(const std::vector<int32_t>& xs) {
  std::string out;
  for (auto x : xs) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

// A created topic whose partitions did not all open is removed again (persisted, then applied,
// which closes and deletes the partitions that did open), so the metadata never lists a topic
// that this node claims to lead but cannot serve. The caller gets KAFKA_STORAGE_ERROR naming the
// partitions either way.
void roll_back_create(self_ptr self, caf::typed_response_promise<topic_metadata> rp,
                      const topic_metadata& topic, const std::string& why) {
  auto& st = self->state;
  auto fail = [rp](const std::string& message) mutable {
    rp.deliver(to_caf_error(make_error(errc::kafka_storage_error, message)));
  };
  auto next = st.current;
  if (auto it = next.topics.find(topic.name); it != next.topics.end() && it->second.id == topic.id)
    next.topics.erase(it);
  commit_then(self, std::move(next), [self, fail, why, name = topic.name](status s) mutable {
    if (!s)
      return fail(why + "; removing the topic again failed (" + s.err().message +
                  "), so it stays with those partitions offline");
    spdlog::warn("metadata: {}; removed topic {} again", why, name);
    auto& st = self->state;
    self->request(st.replicas, st.opts.apply_timeout, apply_atom_v, snapshot(st))
      .then([fail, why](const std::vector<topic_partition>&) mutable { fail(why + "; the topic was not created"); },
            [fail, why](caf::error& e) mutable {
              fail(why + "; the topic was removed, but closing its other partitions failed: " +
                   caf::to_string(e));
            });
  });
}

// Applies a new topic to the replica manager, then answers with it, or rolls it back when some
// of its partitions did not open.
void apply_created(self_ptr self, caf::typed_response_promise<topic_metadata> rp,
                   topic_metadata topic) {
  auto& st = self->state;
  self->request(st.replicas, st.opts.apply_timeout, apply_atom_v, snapshot(st))
    .then(
      [self, rp, topic = std::move(topic)](const std::vector<topic_partition>& unserved) mutable {
        // Other topics' partitions that still do not serve do not fail this one.
        auto failed = unserved_partitions(topic, unserved);
        if (failed.empty()) {
          rp.deliver(std::move(topic));
          return;
        }
        roll_back_create(self, rp, topic,
                         "partition(s) " + join(failed) + " of topic '" + topic.name +
                           "' could not be opened on node " +
                           std::to_string(self->state.opts.node_id) + " (see its log)");
      },
      [rp](caf::error& e) mutable {
        spdlog::error("metadata: applying the change failed: {}", caf::to_string(e));
        rp.deliver(std::move(e));
      });
}

std::map<std::string, std::string> effective_configs(const metadata_state& st,
                                                     const topic_metadata& topic) {
  auto out = st.opts.log_defaults.to_map();
  out[min_insync_replicas_key] = std::to_string(st.opts.min_insync_replicas);
  for (const auto& [k, v] : topic.configs) out[k] = v;
  return out;
}

metadata_actor::behavior_type metadata_behavior(self_ptr self, metadata_actor_options opts,
                                                replica_manager_actor replicas,
                                                cluster_metadata loaded) {
  self->state.opts = std::move(opts);
  self->state.replicas = std::move(replicas);
  self->state.current = std::move(loaded);
  self->state.worker = spawn_io_worker(self->system());
  self->link_to(self->state.worker);
  return {
    [self](create_atom, topic_spec spec) -> caf::result<topic_metadata> {
      auto& st = self->state;
      if (spec.partitions == -1) spec.partitions = st.opts.default_partitions;
      if (spec.replication_factor == -1) spec.replication_factor = st.opts.default_replication_factor;
      auto brokers = live_brokers(st);
      if (auto s = validate_topic_spec(spec, brokers.size()); !s) return to_caf_error(s.err());
      if (st.current.topics.count(spec.name) != 0)
        return to_caf_error(make_error(errc::topic_already_exists,
                                       "topic '" + spec.name + "' already exists"));
      std::vector<std::string> names;
      for (const auto& [name, t] : st.current.topics) names.push_back(name);
      if (auto s = check_topic_collision(spec.name, names); !s) return to_caf_error(s.err());
      topic_metadata topic;
      topic.name = spec.name;
      topic.id = new_topic_id(st);
      topic.internal = is_internal_topic(spec.name);
      topic.partitions = assign_partitions(spec.partitions, spec.replication_factor, brokers);
      if (auto s = check_broker_partition_limit(st.current.topics, topic.partitions,
                                                st.opts.max_broker_partitions);
          !s)
        return to_caf_error(s.err());
      topic.configs = spec.configs;
      auto next = st.current;
      next.topics.emplace(spec.name, topic);
      auto rp = self->make_response_promise<topic_metadata>();
      commit_then(self, std::move(next), [self, rp, spec, topic = std::move(topic)](status s) mutable {
        if (!s) {
          rp.deliver(to_caf_error(s.err()));
          return;
        }
        spdlog::info("metadata: created topic {} (id {}, {} partitions, replication factor {})",
                     spec.name, to_base64_uuid(topic.id), spec.partitions, spec.replication_factor);
        apply_created(self, rp, std::move(topic));
      });
      return rp;
    },
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

result<metadata_actor> spawn_metadata_actor(caf::actor_system& sys, metadata_actor_options options,
                                            replica_manager_actor replicas) {
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
  return sys.spawn(metadata_behavior, std::move(options), std::move(replicas),
                   std::move(*loaded));
}

} // namespace capstan
