// A capstan node in one process. Start-up order: data dir (lock, meta.properties), actor system,
// replica manager, metadata actor (its stored snapshot applied before anything serves), the node
// endpoint published on the cluster port (a controller's LeaderAndIsr and other nodes' fetchers
// reach the node only once its own partitions are open), __consumer_offsets, group coordinator,
// client RPC server, metrics endpoint. stop() undoes it in the reverse order of dependence: no
// new requests first (clients, then controller and peers), then flush and checkpoint, then the
// actors, then the actor system (which would otherwise wait forever for a live actor).

#include "actors/node/node.hpp"

#include <atomic>
#include <optional>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/metadata_actor_spawn.hpp"
#include "actors/gateway/metrics_server.hpp"
#include "actors/gateway/rpc_server.hpp"
#include "actors/group/group_coordinator.hpp"
#include "actors/node/data_dir.hpp"
#include "actors/node/listen_address.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/metrics/metrics_registry.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace {

namespace fs = std::filesystem;

// Opening every partition log of a large data dir may take a while (recovery re-reads segments).
constexpr auto apply_timeout = std::chrono::minutes(10);
constexpr auto request_timeout = std::chrono::seconds(60);
constexpr auto metrics_refresh_interval = std::chrono::seconds(5);

// Only a quorum of this node alone is supported: "", or "ID@HOST:PORT" with ID = this node.
status check_quorum(const node_config& c) {
  if (c.controller_quorum.empty()) return {};
  auto at = c.controller_quorum.find('@');
  if (c.controller_quorum.find(',') == std::string::npos && at != std::string::npos &&
      c.controller_quorum.substr(0, at) == std::to_string(c.node_id)) {
    if (auto a = parse_listen_address(c.controller_quorum.substr(at + 1), "controller quorum"); !a)
      return a.err();
    return {};
  }
  return make_error(errc::invalid_config,
                    "controller quorum '" + c.controller_quorum +
                      "': only a quorum of this node alone (" + std::to_string(c.node_id) +
                      "@HOST:PORT) is supported so far");
}

} // namespace

struct node::impl {
  node_config config;
  listen_address rpc_address;
  listen_address cluster_address;
  listen_address metrics_address;
  std::optional<data_dir_lock> lock;
  std::unique_ptr<actor_config> actor_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<routing_registry> routes = std::make_shared<routing_registry>();
  // The controller's UpdateMetadata as the replica manager last accepted it; the gateway answers
  // clients from it once there is one.
  std::shared_ptr<metadata_cache_registry> controller_metadata = std::make_shared<metadata_cache_registry>();
  std::shared_ptr<metrics_registry> metrics = std::make_shared<metrics_registry>();
  // The client listener's port once bound; the metadata actor reads it for every snapshot.
  std::shared_ptr<std::atomic<uint16_t>> advertised_port = std::make_shared<std::atomic<uint16_t>>(0);
  replica_manager_actor replicas;
  node_endpoint_actor endpoint;
  metadata_actor metadata;
  group_coordinator_actor groups;
  caf::actor metrics_refresher;
  std::unique_ptr<rpc_server> rpc;
  std::unique_ptr<metrics_server> metrics_http;
  uint16_t cluster_port = 0;
  // Set once start() succeeded: a failed start removes the lock file it created.
  bool started = false;
  bool stopped = false;

  status start();
  status start_actors();
  status publish_endpoint();
  status ensure_offsets_topic(caf::scoped_actor& self, const metadata_snapshot& snap,
                              int32_t& partitions);
  void stop();
};

status node::impl::start() {
  if (auto s = check_quorum(config); !s) return s;
  auto rpc_addr = parse_listen_address(config.listen, "listen");
  if (!rpc_addr) return rpc_addr.err();
  rpc_address = *rpc_addr;
  auto metrics_addr = parse_listen_address(config.metrics_listen, "metrics listen");
  if (!metrics_addr) return metrics_addr.err();
  metrics_address = *metrics_addr;
  if (!config.cluster_listen.empty()) {
    auto cluster_addr = parse_listen_address(config.cluster_listen, "cluster listen");
    if (!cluster_addr) return cluster_addr.err();
    cluster_address = *cluster_addr;
  }

  if (auto made = make_directories(config.data_dir); !made) return made.err();
  auto claimed_lock = data_dir_lock::acquire(config.data_dir);
  if (!claimed_lock) return claimed_lock.err();
  lock.emplace(std::move(*claimed_lock));
  auto meta = claim_data_dir(config.data_dir, config.node_id, config.cluster_id);
  if (!meta) return meta.err();
  config.cluster_id = meta->cluster_id;

  actor_config_options options;
  options.max_threads = config.scheduler_threads;
  actor_cfg = std::make_unique<actor_config>(options);
  sys = std::make_unique<caf::actor_system>(*actor_cfg);
  return start_actors();
}

status node::impl::publish_endpoint() {
  node_endpoint_options eo;
  eo.node = node_id{config.node_id};
  eo.routes = [r = routes] { return r->current(); };
  eo.control = replicas;
  endpoint = spawn_node_endpoint(*sys, eo);
  if (config.cluster_listen.empty()) return {};
  auto port = sys->middleman().publish(endpoint, cluster_address.port, cluster_address.host.c_str(), true);
  if (!port) return listen_failure("cluster listener", cluster_address, caf::to_string(port.error()));
  cluster_port = *port;
  return {};
}

status node::impl::start_actors() {
  replica_manager_options rm;
  rm.node = node_id{config.node_id};
  rm.data_dir = config.data_dir;
  rm.log_defaults = config.log_defaults;
  rm.min_insync_replicas = config.min_insync_replicas;
  rm.checkpoint_interval_ms = config.checkpoint_interval_ms;
  rm.io_workers = config.io_workers;
  rm.replica_lag_time_max_ms = config.replica_lag_time_max_ms;
  rm.num_replica_fetchers = config.num_replica_fetchers;
  rm.fetcher_config = config.replica_fetcher;
  rm.metadata_registry = controller_metadata;
  // rm.endpoint stays empty: the endpoint hands controller requests to this manager, so it can
  // only be spawned after it. The manager's peer directory would use it only for a follower
  // whose leader is this node, which LeaderAndIsr never makes (the leader leads).
  auto spawned_replicas = spawn_replica_manager(*sys, rm, routes);
  if (!spawned_replicas) return spawned_replicas.err();
  replicas = *spawned_replicas;

  metadata_actor_options mo;
  mo.store_file = config.data_dir / metadata_store_file;
  mo.cluster_id = config.cluster_id;
  mo.node_id = config.node_id;
  mo.log_defaults = config.log_defaults;
  mo.min_insync_replicas = config.min_insync_replicas;
  mo.default_partitions = config.default_partitions;
  mo.default_replication_factor = config.default_replication_factor;
  mo.max_broker_partitions = config.max_broker_partitions;
  mo.live_brokers = [id = config.node_id, host = rpc_address.host, port = advertised_port] {
    return std::vector<broker_info>{broker_info{id, host, port->load()}};
  };
  auto spawned_metadata = spawn_metadata_actor(*sys, mo, replicas);
  if (!spawned_metadata) return spawned_metadata.err();
  metadata = *spawned_metadata;

  // Apply the stored metadata once, before anything serves.
  caf::scoped_actor self{*sys};
  metadata_snapshot snap;
  caf::error failure;
  self->request(metadata, request_timeout, snapshot_atom_v)
    .receive([&](metadata_snapshot& s) { snap = std::move(s); }, [&](caf::error& e) { failure = e; });
  if (failure) return from_caf_error(failure);
  self->request(replicas, apply_timeout, apply_atom_v, snap)
    .receive([](const std::vector<topic_partition>&) {}, [&](caf::error& e) { failure = e; });
  if (failure) return from_caf_error(failure);
  size_t partitions = 0;
  for (const auto& [name, t] : snap->topics) partitions += t.partitions.size();
  std::error_code ec;
  const auto absolute = fs::absolute(config.data_dir, ec);
  const auto data_dir_text = (ec ? config.data_dir : absolute).string();
  spdlog::info("node {} (cluster {}) recovered {} topics with {} partitions; serving {} partition "
               "logs from {}",
               config.node_id, config.cluster_id, snap->topics.size(), partitions,
               routes->current()->size(), data_dir_text);
  if (auto s = publish_endpoint(); !s) return s;

  int32_t offsets_partitions = config.offsets_topic_partitions;
  if (auto s = ensure_offsets_topic(self, snap, offsets_partitions); !s) return s;
  group_coordinator_options go;
  go.replicas = replicas;
  go.offsets_partitions = offsets_partitions;
  groups = spawn_group_coordinator(*sys, go);

  rpc_targets targets;
  targets.metadata = metadata;
  targets.groups = groups;
  targets.routes = [r = routes] { return r->current(); };
  targets.controller_metadata = [m = controller_metadata] { return m->current(); };
  targets.metrics = metrics;
  auto server =
    rpc_server::start(*sys, targets, rpc_address.host, rpc_address.port, config.client_limits);
  if (!server) return listen_failure("client listener", rpc_address, server.err().message);
  rpc = std::move(*server);
  advertised_port->store(rpc->port());

  auto http = metrics_server::start(metrics, metrics_address.host, metrics_address.port);
  if (!http) return listen_failure("metrics listener", metrics_address, http.err().message);
  metrics_http = std::move(*http);
  metrics_refresher =
    spawn_partition_metrics_refresher(*sys, targets.routes, metrics, metrics_refresh_interval,
                                      caf::actor_cast<caf::actor>(metadata), config.node_id);
  spdlog::info("node {} listening: client RPC on {}:{}, cluster on {}, metrics on http://{}:{}/metrics",
               config.node_id, rpc_address.host, rpc->port(),
               config.cluster_listen.empty() ? std::string("(off)")
                                             : cluster_address.host + ":" + std::to_string(cluster_port),
               metrics_address.host, metrics_http->port());
  return {};
}

status node::impl::ensure_offsets_topic(caf::scoped_actor& self, const metadata_snapshot& snap,
                                        int32_t& partitions) {
  if (auto it = snap->topics.find(consumer_offsets_topic); it != snap->topics.end()) {
    auto existing = static_cast<int32_t>(it->second.partitions.size());
    if (existing != partitions)
      spdlog::warn("{} has {} partitions, offsets.topic.num.partitions says {}: keeping {}",
                   consumer_offsets_topic, existing, partitions, existing);
    partitions = existing;
    return {};
  }
  topic_spec spec{consumer_offsets_topic, partitions, 1, {{"cleanup.policy", "compact"}}};
  caf::error failure;
  self->request(metadata, apply_timeout, create_atom_v, spec)
    .receive([](topic_metadata&) {}, [&](caf::error& e) { failure = e; });
  if (failure) return from_caf_error(failure);
  spdlog::info("node {} created {} with {} partitions", config.node_id, consumer_offsets_topic,
               partitions);
  return {};
}

void node::impl::stop() {
  if (stopped) return;
  stopped = true;
  if (rpc) rpc->stop();
  if (metrics_http) metrics_http->stop();
  if (sys) {
    // Then the controller and the other nodes: no LeaderAndIsr and no fetch session any more
    // (the sessions are linked to the endpoint and end with it), so nothing reads a replica
    // that is closing. `kill`, because the endpoint traps exit messages (a session that ends
    // must not take it along).
    if (cluster_port != 0) (void) sys->middleman().unpublish(endpoint, cluster_port);
    if (endpoint) caf::anon_send_exit(endpoint, caf::exit_reason::kill);
    if (replicas) {
      caf::scoped_actor self{*sys};
      self->request(replicas, request_timeout, stop_atom_v)
        .receive([](bool) {},
                 [&](caf::error& e) {
                   spdlog::error("node {}: replica manager stop failed: {}", config.node_id,
                                 caf::to_string(e));
                 });
    }
    for (const auto& a : {caf::actor_cast<caf::actor>(metrics_refresher),
                          caf::actor_cast<caf::actor>(groups), caf::actor_cast<caf::actor>(metadata),
                          caf::actor_cast<caf::actor>(replicas)})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  // The servers and handles go before the actor system they refer to.
  rpc.reset();
  metrics_http.reset();
  metrics_refresher = nullptr;
  groups = nullptr;
  metadata = nullptr;
  endpoint = nullptr;
  replicas = nullptr;
  sys.reset();
  actor_cfg.reset();
  if (!started && lock && lock->created_file())
    (void) remove_file(config.data_dir / data_dir_lock_file);
  lock.reset();
}

result<std::unique_ptr<node>> node::start(const node_config& config) {
  auto state = std::make_unique<impl>();
  state->config = config;
  if (auto s = state->start(); !s) {
    state->stop();
    return s.err();
  }
  state->started = true;
  return std::unique_ptr<node>(new node(std::move(state)));
}

node::node(std::unique_ptr<impl> impl) : impl_(std::move(impl)) {}

node::~node() { stop(); }

void node::stop() {
  if (!impl_->stopped) {
    spdlog::info("node {} stopping", impl_->config.node_id);
    impl_->stop();
    spdlog::info("node {} stopped", impl_->config.node_id);
  }
}

uint16_t node::rpc_port() const { return impl_->rpc ? impl_->rpc->port() : impl_->advertised_port->load(); }
uint16_t node::metrics_port() const { return impl_->metrics_http ? impl_->metrics_http->port() : 0; }
uint16_t node::cluster_port() const { return impl_->cluster_port; }

} // namespace capstan
