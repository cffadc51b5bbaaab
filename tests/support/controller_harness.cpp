#include "tests/support/controller_harness.hpp"

#include <thread>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <catch2/catch.hpp>

#include "runtime/cluster/link_faults.hpp"
#include "tests/support/eventually.hpp"

namespace capstan::test {

namespace {

constexpr caf::timespan request_timeout = std::chrono::seconds(10);

} // namespace

controller_harness::controller_harness(controller_harness_options options) : opts_(options) {
  link_faults::instance().clear_all();
  std::vector<node_id> voters;
  for (int i = 1; i <= opts_.nodes; ++i) voters.push_back(node_id{i});
  for (int i = 1; i <= opts_.nodes; ++i) {
    auto n = std::make_unique<controller_node>();
    n->id = node_id{i};
    n->data_dir = dir_.path() / ("node-" + std::to_string(i));
    n->system = std::make_unique<threaded_system>();
    n->routes = std::make_shared<routing_registry>();
    auto& sys = n->system->sys();

    peer_directory_options po;
    po.node = n->id;
    n->directory = spawn_peer_directory(sys, po);
    n->system->track(n->directory);

    quorum_options qo;
    qo.node = n->id;
    qo.voters = voters;
    qo.dir = n->data_dir / "controller";
    qo.cluster_id = cluster_id;
    qo.peers = n->directory;
    qo.tick_interval = std::chrono::milliseconds(20);
    qo.election_timeout = std::chrono::milliseconds(400);
    qo.heartbeat_interval = std::chrono::milliseconds(100);
    auto q = spawn_quorum_actor(sys, qo);
    if (!q) FAIL("controller " << i << ": " << q.err().to_string());
    n->quorum = *q;
    n->system->track(n->quorum);

    controller_options co;
    co.node = n->id;
    co.quorum = n->quorum;
    co.peers = n->directory;
    co.session_timeout = opts_.session_timeout;
    co.poll_interval = std::chrono::milliseconds(50);
    co.request_timeout = std::chrono::milliseconds(2000);
    co.propose_timeout = std::chrono::milliseconds(5000);
    co.decisions.default_replication_factor = 3;
    co.decisions.min_insync_replicas = opts_.min_insync_replicas;
    co.seed = static_cast<uint64_t>(i);
    n->controller = spawn_controller_actor(sys, co);
    n->system->track(n->controller);

    replica_manager_options ro;
    ro.node = n->id;
    ro.data_dir = n->data_dir / "data";
    ro.min_insync_replicas = opts_.min_insync_replicas;
    ro.replica_lag_time_max_ms = opts_.replica_lag_time_max_ms;
    ro.schedule_background_work = false;
    ro.checkpoint_interval_ms = 0;
    ro.fetcher_config.max_wait_ms = 200;
    ro.fetcher_config.backoff_ms = 50;
    ro.fetcher_config.request_timeout_ms = 2000;
    ro.offline_registry = n->offline;
    ro.leaderless_registry = n->leaderless;
    // The node's incarnation, chosen here so that its replica manager knows which registration
    // control messages must be for (as `capstan node` does).
    n->incarnation.fill(static_cast<uint8_t>(i));
    ro.incarnation = n->incarnation;
    auto rm = spawn_replica_manager(sys, ro, n->routes);
    if (!rm) FAIL("node " << i << ": " << rm.err().to_string());
    n->replicas = *rm;
    n->system->track(n->replicas);

    node_endpoint_options eo;
    eo.node = n->id;
    eo.routes = [r = n->routes] { return r->current(); };
    eo.control = n->replicas;
    eo.raft = n->quorum;
    eo.controller = n->controller;
    n->endpoint = spawn_node_endpoint(sys, eo);
    auto port = n->system->publish(n->endpoint);
    if (!port) FAIL("cannot publish node " << i << ": " << caf::to_string(port.error()));
    n->port = *port;
    caf::anon_send(n->controller, endpoint_atom_v, n->endpoint);
    nodes_.push_back(std::move(n));
  }
  std::vector<peer_address> addresses;
  for (auto& n : nodes_) addresses.push_back(peer_address{n->id, "127.0.0.1", n->port});
  for (auto& n : nodes_) {
    broker_lifecycle_options lo;
    lo.node = n->id;
    lo.cluster_id = cluster_id;
    lo.client_host = "127.0.0.1";
    lo.client_port = n->port;
    lo.cluster_host = "127.0.0.1";
    lo.cluster_port = n->port;
    lo.voters = addresses;
    lo.peers = n->directory;
    lo.self_endpoint = n->endpoint;
    lo.timing.heartbeat_interval = opts_.heartbeat_interval;
    lo.timing.min_backoff = std::chrono::milliseconds(50);
    lo.timing.max_backoff = std::chrono::milliseconds(400);
    lo.request_timeout = std::chrono::milliseconds(1000);
    lo.offline = n->offline;
    lo.leaderless = n->leaderless;
    lo.incarnation = n->incarnation;
    n->lifecycle = spawn_broker_lifecycle(n->system->sys(), lo);
    n->system->track(n->lifecycle);
  }
}

controller_harness::~controller_harness() {
  link_faults::instance().clear_all();
  // Every node's actors go first: a fetch session on one node waits for news of a fetcher on
  // another, so no system may be torn down while another still runs.
  for (auto& n : nodes_) {
    if (!n->system) continue;
    for (auto hdl :
         {caf::actor_cast<caf::actor>(n->lifecycle), caf::actor_cast<caf::actor>(n->controller),
          caf::actor_cast<caf::actor>(n->replicas), caf::actor_cast<caf::actor>(n->endpoint)})
      caf::anon_send_exit(hdl, caf::exit_reason::kill);
  }
  for (int i = 1; i <= opts_.nodes; ++i) stop(i);
}

void controller_harness::stop(int id) {
  auto& n = node(id);
  if (!n.system) return;
  // A detached actor's thread (the quorum member's) ends only once nothing references it.
  n.directory = nullptr;
  n.quorum = nullptr;
  n.controller = nullptr;
  n.replicas = nullptr;
  n.endpoint = nullptr;
  n.lifecycle = nullptr;
  n.system.reset();
}

bool controller_harness::shut_down(int id) {
  auto& n = node(id);
  if (!n.system) return false;
  auto confirmed = n.system->request<bool>(n.lifecycle, std::chrono::seconds(10), stop_atom_v);
  stop(id);
  return confirmed && *confirmed;
}

int controller_harness::quorum_leader() {
  int best = 0;
  uint64_t best_term = 0;
  for (int i = 1; i <= opts_.nodes; ++i) {
    if (!running(i)) continue;
    auto s = node(i).system->request<controller::quorum_status>(node(i).quorum, request_timeout,
                                                                status_atom_v);
    if (s && s->role == raft::role::leader && s->term.value() > best_term) {
      best = i;
      best_term = s->term.value();
    }
  }
  return best;
}

caf::expected<controller::metadata_image> controller_harness::image(int id) {
  return node(id).system->request<controller::metadata_image>(node(id).quorum, request_timeout,
                                                              image_atom_v);
}

controller::metadata_image controller_harness::await_image(
    const std::function<bool(const controller::metadata_image&)>& pred) {
  std::optional<controller::metadata_image> last;
  const bool ok = eventually([&] {
    const int l = quorum_leader();
    if (l == 0) return false;
    auto img = image(l);
    if (!img) return false;
    last = std::move(*img);
    return pred(*last);
  });
  if (!ok) FAIL("the committed image never reached the expected state");
  return *last;
}

topic_response_msg controller_harness::create_topic(const topic_spec& spec) {
  const auto frame = encode(spec);
  topic_response_msg last{errc::not_controller, "no voter answered", {}, -1};
  const bool answered = eventually([&] {
    for (int i = 1; i <= opts_.nodes; ++i) {
      if (!running(i)) continue;
      auto r = node(i).system->request<capnp_frame>(node(i).endpoint, request_timeout,
                                                    mktopic_atom_v, frame);
      if (!r) continue;
      auto d = decode_topic_response(*r);
      if (!d) FAIL("a malformed CreateTopic answer: " << d.err().to_string());
      last = *d;
      if (last.error != errc::not_controller) return true;
    }
    return false;
  });
  if (!answered) FAIL("no active controller answered CreateTopic: " << last.message);
  return last;
}

topic_response_msg controller_harness::create_partitions(const create_partitions_msg& request) {
  const auto frame = encode(request);
  topic_response_msg last{errc::not_controller, "no voter answered", {}, -1};
  const bool answered = eventually([&] {
    for (int i = 1; i <= opts_.nodes; ++i) {
      if (!running(i)) continue;
      auto r = node(i).system->request<capnp_frame>(node(i).endpoint, request_timeout,
                                                    mkparts_atom_v, frame);
      if (!r) continue;
      auto d = decode_topic_response(*r);
      if (!d) FAIL("a malformed CreatePartitions answer: " << d.err().to_string());
      last = *d;
      if (last.error != errc::not_controller) return true;
    }
    return false;
  });
  if (!answered) FAIL("no active controller answered CreatePartitions: " << last.message);
  return last;
}

elect_leaders_response_msg controller_harness::elect_leaders(const elect_leaders_msg& request) {
  const auto frame = encode(request);
  elect_leaders_response_msg last{errc::not_controller, "no voter answered", -1, {}};
  const bool answered = eventually([&] {
    for (int i = 1; i <= opts_.nodes; ++i) {
      if (!running(i)) continue;
      auto r = node(i).system->request<capnp_frame>(node(i).endpoint, request_timeout, elect_atom_v,
                                                    frame);
      if (!r) continue;
      auto d = decode_elect_leaders_response(*r);
      if (!d) FAIL("a malformed ElectLeaders answer: " << d.err().to_string());
      last = *d;
      if (last.error != errc::not_controller) return true;
    }
    return false;
  });
  if (!answered) FAIL("no active controller answered ElectLeaders: " << last.message);
  return last;
}

allocate_producer_ids_response_msg controller_harness::allocate_producer_ids(int for_node) {
  const auto frame = encode(allocate_producer_ids_msg{node_id{for_node}});
  allocate_producer_ids_response_msg last{errc::not_controller, "no voter answered", 0, 0, -1};
  const bool answered = eventually([&] {
    for (int i = 1; i <= opts_.nodes; ++i) {
      if (!running(i)) continue;
      auto r = node(i).system->request<capnp_frame>(node(i).endpoint, request_timeout,
                                                    allocpid_atom_v, frame);
      if (!r) continue;
      auto d = decode_allocate_producer_ids_response(*r);
      if (!d) FAIL("a malformed AllocateProducerIds answer: " << d.err().to_string());
      last = *d;
      if (last.error != errc::not_controller) return true;
    }
    return false;
  });
  if (!answered) FAIL("no active controller answered AllocateProducerIds: " << last.message);
  return last;
}

broker_registration_response_msg
controller_harness::register_at(int via, const controller::broker_registration_request& r) {
  auto answer = node(via).system->request<capnp_frame>(node(via).endpoint, request_timeout,
                                                       brokerreg_atom_v, encode(r));
  if (!answer)
    FAIL("registration at node " << via << " failed: " << caf::to_string(answer.error()));
  auto d = decode_broker_registration_response(*answer);
  if (!d) FAIL("a malformed registration answer: " << d.err().to_string());
  return *d;
}

controller::broker_registration_request controller_harness::registration_of(int id,
                                                                            uint8_t incarnation) {
  controller::broker_registration_request r;
  r.node = node_id{id};
  r.incarnation.fill(incarnation);
  r.cluster_id = cluster_id;
  r.client_host = "127.0.0.1";
  r.client_port = node(id).port;
  r.cluster_host = "127.0.0.1";
  r.cluster_port = node(id).port;
  return r;
}

bool controller_harness::hosts(int id, const topic_partition& tp) {
  auto table = node(id).routes->current();
  return table->find(tp) != table->end();
}

partition_replica_actor controller_harness::replica(int id, const topic_partition& tp) {
  auto table = node(id).routes->current();
  auto it = table->find(tp);
  if (it == table->end())
    FAIL("node " << id << " has no replica of " << tp.first << "-" << tp.second);
  return it->second;
}

caf::expected<produce_result> controller_harness::produce(int id, const topic_partition& tp,
                                                          bytes batch, int16_t acks) {
  return node(id).system->request<produce_result>(
      replica(id, tp), request_timeout, produce_atom_v,
      produce_request{batch_buffer::of(std::move(batch)), acks, 10000});
}

caf::expected<fetch_result> controller_harness::fetch(int id, const topic_partition& tp,
                                                      offset from) {
  fetch_request req;
  req.from = from;
  req.max_wait_ms = 0;
  return node(id).system->request<fetch_result>(replica(id, tp), request_timeout, fetch_atom_v,
                                                req);
}

caf::expected<replica_status> controller_harness::status(int id, const topic_partition& tp) {
  if (!hosts(id, tp)) return caf::make_error(caf::sec::invalid_argument, "no such replica");
  return node(id).system->request<replica_status>(replica(id, tp), request_timeout, status_atom_v);
}

bool controller_harness::eventually(const std::function<bool()>& pred,
                                    std::chrono::milliseconds limit) {
  return test::eventually(pred, limit);
}

} // namespace capstan::test
