// A capstan node in one process. Start-up order: data dir (lock, meta.properties), actor system,
// replica manager, metadata actor (its stored snapshot applied before anything serves), the node
// endpoint published on the cluster port (a controller's LeaderAndIsr and other nodes' fetchers
// reach the node only once its own partitions are open), __consumer_offsets, group coordinator,
// client RPC server, metrics endpoint. A voter (a node alone is the quorum of itself) also runs
// its quorum member and the controller actor (both reached through the endpoint, so spawned
// before it), and every node registers with the active controller once its client listener is
// bound;
// the controller's LeaderAndIsr then opens the partitions of the cluster's topics, and its
// UpdateMetadata answers clients' Metadata. The metadata actor stays the node's own: it holds
// only __consumer_offsets there (group offsets are node-local). stop() undoes it in the reverse
// order of dependence: no new requests first (clients, then controller and peers), then flush
// and checkpoint, then the actors, then the actor system (which would otherwise wait forever for
// a live actor).

#include "actors/node/node.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/broker_lifecycle_actor.hpp"
#include "actors/controller/controller_actor.hpp"
#include "actors/controller/controller_client_actor.hpp"
#include "actors/controller/metadata_actor_spawn.hpp"
#include "actors/controller/quorum_actor.hpp"
#include "actors/gateway/metrics_refresher.hpp"
#include "actors/gateway/metrics_server.hpp"
#include "actors/gateway/rpc_server.hpp"
#include "actors/group/group_coordinator.hpp"
#include "actors/node/controller_quorum.hpp"
#include "actors/node/data_dir.hpp"
#include "actors/node/listen_address.hpp"
#include "actors/node/single_node_import.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/clean_shutdown.hpp"
#include "runtime/cluster/incarnation_file.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/metrics/metrics_registry.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace {

namespace fs = std::filesystem;

// Opening every partition log of a large data dir may take a while (recovery re-reads segments).
constexpr auto apply_timeout = std::chrono::minutes(10);
constexpr auto request_timeout = std::chrono::seconds(60);
// The lifecycle answers within 4 s, retries included (broker_lifecycle_actor.cpp).
constexpr auto controlled_shutdown_timeout = std::chrono::seconds(5);
// How long a node alone may take to elect itself and register with itself.
constexpr auto alone_ready_timeout = std::chrono::seconds(30);
constexpr auto metrics_refresh_interval = std::chrono::seconds(5);

// A node of a quorum of several: every node of the cluster must share one cluster id, so a new
// data dir takes the one it is given rather than a random one of its own.
status check_cluster_id(const node_config& c) {
  if (!c.cluster_id.empty()) return {};
  auto meta = read_meta_properties(c.data_dir);
  if (!meta) return meta.err();
  if (*meta) return {};
  return make_error(errc::invalid_config,
                    "--cluster-id (cluster.id) is required to create the data dir " +
                        c.data_dir.string() + " of a node of controller quorum '" +
                        c.controller_quorum + "'; give every node of the cluster the same one");
}

std::vector<peer_address> voter_addresses(const std::vector<quorum_voter>& voters) {
  std::vector<peer_address> out;
  for (const auto& v : voters)
    out.push_back(peer_address{node_id{v.id}, v.address.host, v.address.port});
  return out;
}

} // namespace

// Why the node must stop (the cluster refuses it, or its Raft files failed): set on the thread
// of the actor that found out, read on the one that runs the node. The first reason stays.
class stop_reason_slot {
public:
  void set(const error& e) {
    std::lock_guard<std::mutex> guard{mu_};
    if (!value_) value_ = e;
  }
  std::optional<error> get() const {
    std::lock_guard<std::mutex> guard{mu_};
    return value_;
  }

private:
  mutable std::mutex mu_;
  std::optional<error> value_;
};

// The Kafka listener address the node advertises: written once the listener is bound, read by
// the metadata actor's snapshots on any thread.
class advertised_address {
public:
  listen_address get() const {
    std::lock_guard<std::mutex> guard{mu_};
    return value_;
  }
  void set(listen_address a) {
    std::lock_guard<std::mutex> guard{mu_};
    value_ = std::move(a);
  }

private:
  mutable std::mutex mu_;
  listen_address value_;
};

struct node::impl {
  node_config config;
  // fault.injection.enable: the storage env every file operation of the process goes through
  // while this node runs, so its fault switch can fill the disk (null when off). Declared before
  // the actor system, so it outlives every actor that does I/O.
  std::unique_ptr<fault_injection_env> storage_faults;
  std::optional<scoped_storage_env> storage_faults_installed;
  listen_address rpc_address;
  listen_address cluster_address;
  listen_address metrics_address;
  // The Kafka listener's bind address, if the node has one, and what it advertises (the port
  // is the bound one when advertised.listeners does not say).
  std::optional<listen_address> kafka_address;
  std::shared_ptr<advertised_address> kafka_advertised = std::make_shared<advertised_address>();
  std::optional<data_dir_lock> lock;
  std::unique_ptr<actor_config> actor_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<routing_registry> routes = std::make_shared<routing_registry>();
  // The controller's UpdateMetadata as the replica manager last accepted it; the gateway answers
  // clients from it once there is one.
  std::shared_ptr<metadata_cache_registry> controller_metadata = std::make_shared<metadata_cache_registry>();
  // What the replica manager cannot serve, and the logs of its replicas without a leader, for the
  // heartbeats.
  std::shared_ptr<offline_replica_registry> offline = std::make_shared<offline_replica_registry>();
  std::shared_ptr<leaderless_replica_registry> leaderless =
      std::make_shared<leaderless_replica_registry>();
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
  // The controller quorum (controller_quorum.hpp): its voters, this node alone when none are
  // given, and whether this node is one.
  std::vector<quorum_voter> voters;
  bool voter = false;
  // Whether this node runs a quorum member and a controller: every bootstrap voter, and a node
  // started with process.roles "broker,controller" (one `cluster add-voter` can add).
  bool controller_role = false;
  // Reaches the voters' endpoints for the quorum member, the controller, the lifecycle and the
  // controller client (other nodes' endpoints for the controller's control messages too).
  peer_directory_actor controller_peers;
  quorum_actor quorum;
  controller_actor controller;
  broker_lifecycle_actor lifecycle;
  controller_client_actor controller_client;
  // fault.injection.enable: the switch injectFault sets (null when off).
  std::shared_ptr<node_fault_switch> faults;
  // The incarnation this data dir last registered with (node.incarnation; zeros: none), and
  // whether that process stopped cleanly (runtime/cluster/clean_shutdown.hpp).
  controller::incarnation_id previous_incarnation{};
  bool previous_clean_shutdown = false;
  // This process's incarnation: it registers with it, and
  // its replica manager refuses control messages addressed to another.
  controller::incarnation_id incarnation{};
  // Why the cluster refuses this node for good, once it does (the lifecycle's thread sets it).
  std::shared_ptr<stop_reason_slot> refusal = std::make_shared<stop_reason_slot>();
  // Why the node must stop on its own account: its quorum member could not write its Raft files.
  std::shared_ptr<stop_reason_slot> failure = std::make_shared<stop_reason_slot>();
  // Set once start() succeeded: a failed start removes the lock file it created.
  bool started = false;
  bool stopped = false;

  status start();
  status start_actors();
  status publish_endpoint();
  status check_voter_listener() const;
  status check_voter_port() const;
  status start_controller();
  void join_cluster();
  // A quorum of this node alone: the whole cluster is this process.
  bool alone() const { return voters.size() == 1 && voter; }
  status await_serving(caf::scoped_actor& self, const std::vector<std::string>& topics = {});
  bool serves_what_it_leads(const std::vector<std::string>& topics) const;
  // single_node_import.hpp: the store's topics of a single node from before it ran a quorum.
  std::optional<controller::import_topics_msg> pending_import;
  status import_single_node_topics(caf::scoped_actor& self);
  void stop();
};

status node::impl::start() {
  if (!config.controller_quorum.empty()) {
    auto parsed = parse_controller_quorum(config.controller_quorum);
    if (!parsed) return parsed.err();
    voters = std::move(*parsed);
  }
  if (voters.empty()) voters.push_back(quorum_voter{config.node_id, {}});
  for (const auto& v : voters) voter = voter || v.id == config.node_id;
  controller_role = voter;
  if (!config.process_roles.empty()) {
    auto roles = parse_process_roles(config.process_roles);
    if (!roles) return roles.err();
    if (voter && !*roles)
      return make_error(errc::invalid_config,
                        "process.roles '" + config.process_roles + "': node " +
                            std::to_string(config.node_id) + " is a voter of controller quorum '" +
                            config.controller_quorum + "' and must run the controller");
    controller_role = *roles;
  }
  auto rpc_addr = parse_listen_address(config.listen, "listen");
  if (!rpc_addr) return rpc_addr.err();
  rpc_address = *rpc_addr;
  auto metrics_addr = parse_listen_address(config.metrics_listen, "metrics listen");
  if (!metrics_addr) return metrics_addr.err();
  metrics_address = *metrics_addr;
  if (!config.kafka_listen.empty()) {
    auto kafka_addr = parse_listen_address(config.kafka_listen, "Kafka listen");
    if (!kafka_addr) return kafka_addr.err();
    kafka_address = *kafka_addr;
  }
  if (!config.kafka_advertised.empty()) {
    auto advertised = parse_listen_address(config.kafka_advertised, "advertised.listeners");
    if (!advertised) return advertised.err();
    if (advertised->port == 0)
      return make_error(errc::invalid_config, "advertised.listeners: port 0 cannot be reached");
    kafka_advertised->set(*advertised);
  }
  if (auto s = check_voter_listener(); !s) return s;
  auto cluster_addr = parse_listen_address(config.cluster_listen, "cluster listen");
  if (!cluster_addr) return cluster_addr.err();
  cluster_address = *cluster_addr;
  if (auto s = check_voter_port(); !s) return s;

  if (config.fault_injection_enable) {
    // Wraps what is installed (the POSIX env, or a test's); without rules every call passes.
    storage_faults = std::make_unique<fault_injection_env>(storage_env::current());
    storage_faults_installed.emplace(*storage_faults);
  }
  if (auto made = make_directories(config.data_dir); !made) return made.err();
  auto claimed_lock = data_dir_lock::acquire(config.data_dir);
  if (!claimed_lock) return claimed_lock.err();
  lock.emplace(std::move(*claimed_lock));
  if (voters.size() > 1)
    if (auto s = check_cluster_id(config); !s) return s;
  auto meta = claim_data_dir(config.data_dir, config.node_id, config.cluster_id);
  if (!meta) return meta.err();
  config.cluster_id = meta->cluster_id;
  if (alone()) {
    auto staged = stage_single_node_import(config.data_dir, node_id{config.node_id});
    if (!staged) return staged.err();
    pending_import = std::move(*staged);
  } else if (auto s = refuse_node_local_offsets(config.data_dir, node_id{config.node_id}); !s) {
    return s;
  }
  // Unreadable: the next registration names no predecessor, and waits out its session.
  if (auto previous = read_incarnation_file(config.data_dir); !previous)
    spdlog::warn("node {}: {}", config.node_id, previous.err().to_string());
  else if (*previous)
    previous_incarnation = **previous;
  std::random_device rd;
  for (auto& b : incarnation) b = static_cast<uint8_t>(rd());
  // Taken away before anything is written: this process's crash must not pass for a clean stop.
  auto clean = take_clean_shutdown_marker(config.data_dir);
  if (!clean) return clean.err();
  previous_clean_shutdown = *clean;

  actor_config_options options;
  options.max_threads = config.scheduler_threads;
  options.policy = config.scheduler_sharing ? actor_config_options::scheduler_policy::sharing
                                            : actor_config_options::scheduler_policy::work_stealing;
  actor_cfg = std::make_unique<actor_config>(options);
  sys = std::make_unique<caf::actor_system>(*actor_cfg);
  return start_actors();
}

status node::impl::publish_endpoint() {
  node_endpoint_options eo;
  eo.node = node_id{config.node_id};
  eo.routes = [r = routes] { return r->current(); };
  eo.control = replicas;
  eo.raft = quorum;
  eo.controller = controller;
  eo.directory = controller_peers;
  endpoint = spawn_node_endpoint(*sys, eo);
  if (controller) caf::anon_send(controller, endpoint_atom_v, endpoint);
  auto port = sys->middleman().publish(endpoint, cluster_address.port, cluster_address.host.c_str(), true);
  if (!port) return listen_failure("cluster listener", cluster_address, caf::to_string(port.error()));
  cluster_port = *port;
  return {};
}

// Every node, even alone, registers its cluster listener with its controller, where other nodes
// reach it.
status node::impl::check_voter_listener() const {
  if (config.cluster_listen.empty())
    return make_error(errc::invalid_config,
                      "node " + std::to_string(config.node_id) + " needs a cluster listener");
  return {};
}

// A voter of a multi-node quorum listens where the quorum's entry for it says.
status node::impl::check_voter_port() const {
  if (alone()) return {};
  for (const auto& v : voters)
    if (v.id == config.node_id && v.address.port != cluster_address.port)
      return make_error(errc::invalid_config,
                        "voter " + std::to_string(v.id) + " listens on cluster port " +
                            std::to_string(cluster_address.port) + ", but controller quorum '" +
                            config.controller_quorum + "' names port " +
                            std::to_string(v.address.port));
  return {};
}

// A voter's quorum member (Raft files in __cluster_metadata-0, Kafka's directory name) and the
// controller actor beside it; with the directory every node has.
status node::impl::start_controller() {
  peer_directory_options po;
  po.node = node_id{config.node_id};
  for (const auto& p : voter_addresses(voters))
    if (p.node.value() != config.node_id) po.peers.push_back(p);
  controller_peers = spawn_peer_directory(*sys, po);
  if (!controller_role) return {};
  quorum_options qo;
  qo.node = node_id{config.node_id};
  for (const auto& v : voters) qo.voters.push_back(node_id{v.id});
  qo.dir = config.data_dir / cluster_metadata_dir;
  qo.cluster_id = config.cluster_id;
  qo.peers = controller_peers;
  qo.election_timeout = std::chrono::milliseconds(config.controller_quorum_election_timeout_ms);
  // Several heartbeats per election timeout, so one lost message starts no election.
  qo.heartbeat_interval = std::max(qo.tick_interval, qo.election_timeout / 4);
  qo.on_storage_failure = [slot = failure](const error& why) { slot->set(why); };
  auto q = spawn_quorum_actor(*sys, qo);
  if (!q) return q.err();
  quorum = *q;

  controller_options co;
  co.node = node_id{config.node_id};
  co.quorum = quorum;
  co.peers = controller_peers;
  co.session_timeout = std::chrono::milliseconds(config.broker_session_timeout_ms);
  co.decisions.default_partitions = config.default_partitions;
  co.decisions.default_replication_factor = config.default_replication_factor;
  co.decisions.max_broker_partitions = config.max_broker_partitions;
  co.decisions.min_insync_replicas = config.min_insync_replicas;
  co.rebalance_interval.reset();
  if (config.auto_leader_rebalance_enable)
    co.rebalance_interval = std::chrono::seconds(config.leader_imbalance_check_interval_seconds);
  co.imbalance_percentage = config.leader_imbalance_per_broker_percentage;
  controller = spawn_controller_actor(*sys, co);
  spdlog::info("node {}: controller quorum member of {} voters, Raft files in {}", config.node_id,
               voters.size(), qo.dir.string());
  return {};
}

// Registers with the active controller and heartbeats it from now on, and opens the gateway's
// way to it. REQUIRES: the client listener and the endpoint are up (their ports are registered).
void node::impl::join_cluster() {
  broker_lifecycle_options lo;
  lo.node = node_id{config.node_id};
  lo.cluster_id = config.cluster_id;
  lo.client_host = rpc_address.host;
  lo.client_port = rpc->port();
  const auto kafka_at = kafka_advertised->get();
  lo.kafka_host = kafka_at.host;
  lo.kafka_port = kafka_at.port;
  lo.cluster_host = cluster_address.host;
  lo.cluster_port = cluster_port;
  lo.voters = voter_addresses(voters);
  lo.peers = controller_peers;
  if (controller_role) lo.self_endpoint = endpoint;
  lo.timing.heartbeat_interval = std::chrono::milliseconds(config.broker_heartbeat_interval_ms);
  lo.timing.duplicate_patience = 2 * std::chrono::milliseconds(config.broker_session_timeout_ms);
  lo.offline = offline;
  lo.leaderless = leaderless;
  lo.incarnation = incarnation;
  lo.previous_incarnation = previous_incarnation;
  lo.previous_clean_shutdown = previous_clean_shutdown;
  lo.data_dir = config.data_dir;
  lo.on_refused = [slot = refusal](const error& why) { slot->set(why); };
  lifecycle = spawn_broker_lifecycle(*sys, lo);
  if (alone())
    spdlog::info("node {}: registering with its own controller", config.node_id);
  else
    spdlog::info("node {}: registering with the controller quorum {} as {}", config.node_id,
                 config.controller_quorum,
                 voter ? "a voter" : controller_role ? "a quorum member that is no voter" : "a broker only");
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
  rm.offline_registry = offline;
  rm.leaderless_registry = leaderless;
  rm.incarnation = incarnation;
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
  mo.live_brokers = [id = config.node_id, host = rpc_address.host, port = advertised_port,
                     kafka = kafka_advertised] {
    const auto at = kafka->get();
    return std::vector<broker_info>{broker_info{id, host, port->load(), at.host, at.port}};
  };
  auto spawned_metadata = spawn_metadata_actor(*sys, mo);
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
  spdlog::info("node {} (cluster {}) recovered {} node-local topics with {} partitions from {}",
               config.node_id, config.cluster_id, snap->topics.size(), partitions, data_dir_text);
  if (auto s = start_controller(); !s) return s;
  if (auto s = publish_endpoint(); !s) return s;

  group_coordinator_options go;
  go.replicas = replicas;
  go.node = node_id{config.node_id};
  go.cache = [m = controller_metadata] { return m->current(); };
  go.limits = config.group_membership_limits;
  go.metrics = metrics;
  go.offsets_retention = std::chrono::minutes(config.offsets_retention_minutes);
  go.offsets_retention_check_interval = std::chrono::milliseconds(config.offsets_retention_check_interval_ms);
  groups = spawn_group_coordinator(*sys, go);

  rpc_targets targets;
  targets.metadata = metadata;
  targets.groups = groups;
  targets.routes = [r = routes] { return r->current(); };
  targets.controller_metadata = [m = controller_metadata] { return m->current(); };
  targets.metrics = metrics;
  targets.node = config.node_id;
  targets.offsets_partitions = config.offsets_topic_partitions;
  targets.offsets_replication_factor = config.offsets_topic_replication_factor;
  targets.broker_configs = config.broker_configs();
  if (config.fault_injection_enable) {
    faults = std::make_shared<node_fault_switch>(node_id{config.node_id}, *storage_faults,
                                                 config.data_dir.string());
    targets.faults = faults;
    spdlog::warn("node {}: fault injection is enabled (fault.injection.enable): clients may cut "
                 "this node off, drop its produce responses or fail its disk",
                 config.node_id);
  }
  controller_client_options cc;
  cc.node = node_id{config.node_id};
  cc.voters = voter_addresses(voters);
  cc.peers = controller_peers;
  if (controller_role) cc.self_endpoint = endpoint;
  // Within the gateway's own wait for the answer, so the client hears why.
  cc.request_timeout = std::chrono::seconds(25);
  controller_client = spawn_controller_client(*sys, cc);
  targets.controller = controller_client;
  std::optional<kafka_listen_address> kafka;
  if (kafka_address) kafka = kafka_listen_address{kafka_address->host, kafka_address->port};
  auto server = rpc_server::start(*sys, targets, rpc_address.host, rpc_address.port,
                                  config.client_limits, kafka);
  if (!server) {
    if (kafka_address && kafka_address->port != 0 && address_in_use(*kafka_address))
      return listen_failure("Kafka listener", *kafka_address, server.err().message);
    return listen_failure("client listener", rpc_address, server.err().message);
  }
  rpc = std::move(*server);
  advertised_port->store(rpc->port());
  // Set before the metadata actor or the registration reads it: both come after the bind.
  if (kafka_address && kafka_advertised->get().port == 0)
    kafka_advertised->set(listen_address{kafka_address->host, rpc->kafka_port()});
  join_cluster();
  if (alone()) {
    if (auto s = await_serving(self); !s) return s;
    if (auto s = import_single_node_topics(self); !s) return s;
    spdlog::info("node {} serves {} partition logs", config.node_id, routes->current()->size());
  }

  auto http = metrics_server::start(metrics, metrics_address.host, metrics_address.port);
  if (!http) return listen_failure("metrics listener", metrics_address, http.err().message);
  metrics_http = std::move(*http);
  // The controller gauges come from the node's controller actor, none on a broker-only node.
  controller_gauge_source gauges;
  gauges.controller = controller;
  metrics_refresher = spawn_partition_metrics_refresher(
    *sys, targets.routes, metrics, metrics_refresh_interval, gauges);
  spdlog::info("node {} listening: client RPC on {}:{}, cluster on {}, metrics on "
               "http://{}:{}/metrics, Kafka on {}",
               config.node_id, rpc_address.host, rpc->port(),
               cluster_address.host + ":" + std::to_string(cluster_port),
               metrics_address.host, metrics_http->port(),
               kafka_address ? kafka_address->host + ":" + std::to_string(rpc->kafka_port())
                             : std::string{"none"});
  return {};
}

// A node alone is its own controller: it elects itself at once and registers with itself, so it
// says ready only once it serves every partition its controller has it lead, as a single node did
// before it ran a quorum.
status node::impl::await_serving(caf::scoped_actor& self, const std::vector<std::string>& topics) {
  const auto deadline = std::chrono::steady_clock::now() + alone_ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto why = refusal->get()) return *why;
    if (auto why = failure->get()) return *why;
    bool unfenced = false;
    self->request(lifecycle, request_timeout, status_atom_v)
      .receive([&](const broker_lifecycle_status& s) { unfenced = !s.fenced; },
               [](caf::error&) {});
    if (unfenced && serves_what_it_leads(topics)) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return make_error(errc::request_timed_out,
                    "node " + std::to_string(config.node_id) +
                        " did not register with its own controller and open its partitions within " +
                        std::to_string(alone_ready_timeout.count()) + " s");
}

// The controller's metadata arrived with `topics`, and every partition it places on this node is
// open (routed) and led by it, or offline here (damaged: it stays so), so clients are answered from
// the cache and find their partitions. A partition without a leader for a moment (the previous
// process's registration fenced, this one's not yet elected) is waited for.
bool node::impl::serves_what_it_leads(const std::vector<std::string>& topics) const {
  auto cache = controller_metadata->current();
  if (!cache) return false;
  for (const auto& name : topics)
    if (cache->cluster().topics.count(name) == 0) return false;
  auto served = routes->current();
  auto damaged = offline->current();
  const auto is_offline = [&](const topic_id& id, int32_t partition) {
    return std::find(damaged->begin(), damaged->end(), offline_replica{id, partition}) !=
           damaged->end();
  };
  for (const auto& [name, t] : cache->cluster().topics)
    for (const auto& p : t.partitions) {
      if (std::find(p.replicas.begin(), p.replicas.end(), config.node_id) == p.replicas.end())
        continue;
      if (is_offline(t.id, p.partition)) continue;
      if (p.leader != config.node_id || served->count(topic_partition{name, p.partition}) == 0)
        return false;
    }
  return true;
}

status node::impl::import_single_node_topics(caf::scoped_actor& self) {
  if (!pending_import) return {};
  const auto topics = pending_import->topics;
  caf::error lost;
  result<topic_response_msg> answer = make_error(errc::request_timed_out, "no answer");
  self->request(controller, request_timeout, import_atom_v, *pending_import)
    .receive([&](const capnp_frame& f) { answer = decode_topic_response(f); },
             [&](caf::error& e) { lost = e; });
  if (lost) return from_caf_error(lost);
  if (!answer) return answer.err();
  if (answer->error != errc::none)
    return make_error(answer->error, "the topics of " + (config.data_dir / metadata_store_file).string() +
                                       " (staged in " + single_node_import_file +
                                       ") could not move to the controller: " + answer->message);
  if (auto s = finish_single_node_import(config.data_dir); !s) return s;
  size_t partitions = 0;
  for (const auto& t : topics) partitions += t.partitions.size();
  spdlog::info("node {}: moved {} topics with {} partitions from {} to its controller",
               config.node_id, topics.size(), partitions, metadata_store_file);
  pending_import.reset();
  std::vector<std::string> names;
  for (const auto& t : topics) names.push_back(t.name);
  return await_serving(self, names);
}

void node::impl::stop() {
  if (stopped) return;
  stopped = true;
  // The switch is process-wide (link_faults): a node that stops takes its faults along.
  if (faults) faults->clear();
  // KRaft's controlled shutdown: the active controller moves this node's leaderships and fences
  // it before its replicas close, so clients and followers move on at once and the next process
  // may register without waiting out this one's session. Without a confirmation (no controller
  // reachable) the node stops anyway and is fenced when its session runs out. Clients are still
  // served meanwhile, as Kafka's broker serves until its controlled shutdown is done: a producer
  // then hears NOT_LEADER_OR_FOLLOWER from the moved replica and goes to the new leader, rather
  // than finding the port closed and backing off while every node still names this one.
  if (sys && lifecycle) {
    caf::scoped_actor self{*sys};
    self->request(lifecycle, controlled_shutdown_timeout, stop_atom_v)
        .receive([](bool) {}, [](caf::error&) {});
    caf::anon_send_exit(lifecycle, caf::exit_reason::user_shutdown);
  }
  // Then the controller quorum's leadership, if this node holds it (KRaft's EndQuorumEpoch, as a
  // Raft leadership transfer): the most caught-up voter is told to take over at once, rather than
  // every voter waiting out an election timeout for this one to fall silent. After the controlled
  // shutdown, which the active controller may be this node's. The core gives up after an
  // election timeout, and so does this wait.
  if (sys && quorum) {
    caf::scoped_actor self{*sys};
    const auto timeout = std::chrono::milliseconds(config.controller_quorum_election_timeout_ms) +
                         std::chrono::milliseconds(500);
    self->request(quorum, timeout, resign_atom_v)
        .receive(
            [&](int32_t to) {
              if (to >= 0)
                spdlog::info("node {}: handed the controller quorum's leadership to node {}",
                             config.node_id, to);
            },
            [&](caf::error& e) {
              spdlog::warn("node {}: controller quorum leadership not handed over: {}",
                           config.node_id, caf::to_string(e));
            });
  }
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
        .receive(
            [&](bool) {
              spdlog::info("node {}: every replica closed, checkpoints written", config.node_id);
              // Every log flushed and closed, the checkpoints written: the next process may
              // say so when it registers. Not after a storage failure, which Kafka's broker
              // answers with a halt: what the failed writes left is for recovery to judge.
              if (started && lifecycle && !failure->get())
                if (auto s = write_clean_shutdown_marker(config.data_dir); !s)
                  spdlog::warn("node {}: {}", config.node_id, s.err().to_string());
            },
            [&](caf::error& e) {
              spdlog::error("node {}: replica manager stop failed: {}", config.node_id,
                            caf::to_string(e));
            });
    }
    for (const auto& a :
         {caf::actor_cast<caf::actor>(controller_client), caf::actor_cast<caf::actor>(controller),
          caf::actor_cast<caf::actor>(quorum), caf::actor_cast<caf::actor>(controller_peers),
          caf::actor_cast<caf::actor>(metrics_refresher), caf::actor_cast<caf::actor>(groups),
          caf::actor_cast<caf::actor>(metadata), caf::actor_cast<caf::actor>(replicas)})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  // The servers and handles go before the actor system they refer to.
  rpc.reset();
  metrics_http.reset();
  metrics_refresher = nullptr;
  // The quorum member is detached: its thread ends only once nothing references it.
  lifecycle = nullptr;
  controller_client = nullptr;
  controller = nullptr;
  quorum = nullptr;
  controller_peers = nullptr;
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

std::optional<error> node::refusal() const { return impl_->refusal->get(); }

std::optional<error> node::failure() const { return impl_->failure->get(); }

uint16_t node::kafka_port() const { return impl_->rpc ? impl_->rpc->kafka_port() : 0; }
uint16_t node::rpc_port() const { return impl_->rpc ? impl_->rpc->port() : impl_->advertised_port->load(); }
uint16_t node::metrics_port() const { return impl_->metrics_http ? impl_->metrics_http->port() : 0; }
uint16_t node::cluster_port() const { return impl_->cluster_port; }

} // namespace capstan
