#include "tests/support/replication_harness.hpp"


#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <catch2/catch.hpp>

#include "runtime/cluster/link_faults.hpp"
#include "tests/support/eventually.hpp"

namespace capstan::test {

namespace {

constexpr caf::timespan timeout = std::chrono::seconds(30);

std::string dir_name(const topic_partition& tp) { return tp.first + "-" + std::to_string(tp.second); }

std::string describe(const std::vector<partition_error_msg>& errors) {
  std::string out;
  for (const auto& e : errors)
    out += std::string(to_string(e.error)) + " " + e.tp.first + "-" + std::to_string(e.tp.second) + ": " +
           e.message + "; ";
  return out;
}

} // namespace

replica_fetcher_config harness_options::fast_fetcher_config() {
  replica_fetcher_config c;
  c.max_wait_ms = 200;
  c.backoff_ms = 50;
  c.request_timeout_ms = 2000;
  return c;
}

replication_harness::replication_harness(harness_options options) : opts_(std::move(options)) {
  link_faults::instance().clear_all();
  for (int i = 1; i <= opts_.nodes; ++i) {
    auto n = std::make_unique<harness_node>();
    n->id = node_id{i};
    n->data_dir = dir_.path() / ("node-" + std::to_string(i));
    n->system = std::make_unique<threaded_system>();
    n->routes = std::make_shared<routing_registry>();
    n->metadata = std::make_shared<metadata_cache_registry>();
    replica_manager_options ro;
    ro.metadata_registry = n->metadata;
    ro.node = n->id;
    ro.data_dir = n->data_dir;
    ro.min_insync_replicas = opts_.min_insync_replicas;
    ro.replica_lag_time_max_ms = opts_.replica_lag_time_max_ms;
    ro.fetcher_config = opts_.fetcher;
    ro.schedule_background_work = false;
    ro.checkpoint_interval_ms = 0;
    auto rm = spawn_replica_manager(n->system->sys(), ro, n->routes);
    if (!rm) FAIL("node " << i << ": " << rm.err().to_string());
    n->replicas = *rm;
    n->system->track(n->replicas);
    node_endpoint_options eo;
    eo.node = n->id;
    eo.routes = [r = n->routes] { return r->current(); };
    eo.control = n->replicas;
    n->endpoint = spawn_node_endpoint(n->system->sys(), eo);
    auto port = n->system->publish(n->endpoint);
    if (!port) FAIL("cannot publish node " << i << ": " << caf::to_string(port.error()));
    n->port = *port;
    nodes_.push_back(std::move(n));
  }
  controller_system_ = std::make_unique<threaded_system>();
  controller_ = spawn_test_controller(controller_system_->sys());
  controller_system_->track(controller_);
  connect_nodes(controller_);
}

void replication_harness::connect_nodes(const test_controller_actor& controller) {
  for (auto& n : nodes_) {
    auto endpoint = controller_system_->remote_actor<node_endpoint_actor>(n->port);
    if (!endpoint) FAIL("the controller cannot reach node " << n->id.value() << ": " << caf::to_string(endpoint.error()));
    auto ok = controller_system_->request<bool>(controller, timeout, connect_node_atom::value, n->id.value(),
                                                caf::actor_cast<caf::actor>(*endpoint), n->port, uint16_t{0});
    if (!ok) FAIL("connect_node: " << caf::to_string(ok.error()));
  }
}

replication_harness::~replication_harness() {
  link_faults::instance().clear_all();
  // Every node's actors go first: a fetch session on one node waits for news of a fetcher on
  // another, so no system may be torn down while another still runs.
  caf::anon_send_exit(controller_, caf::exit_reason::kill);
  for (auto& n : nodes_) {
    caf::anon_send_exit(n->replicas, caf::exit_reason::kill);
    caf::anon_send_exit(n->endpoint, caf::exit_reason::kill);
  }
  controller_system_.reset();
  nodes_.clear();
}

void replication_harness::topic(const std::string& name, std::map<std::string, std::string> configs) {
  std::vector<topic_config_msg> topics{topic_config_msg{name, {}, false, std::move(configs)}};
  auto ok = controller_system_->request<bool>(controller_, timeout, topics_atom::value, topics);
  if (!ok) FAIL("UpdateMetadata failed: " << caf::to_string(ok.error()));
}

std::vector<partition_error_msg> replication_harness::try_elect(const topic_partition& tp, int leader,
                                                                int32_t epoch, std::vector<int> replicas,
                                                                std::vector<int> isr, std::vector<int> send_to) {
  election e{tp, leader, epoch, {replicas.begin(), replicas.end()}, {isr.begin(), isr.end()},
             {send_to.begin(), send_to.end()}};
  return send_election(controller_, e);
}

std::vector<partition_error_msg> replication_harness::try_elect_as(int32_t controller_epoch,
                                                                   const topic_partition& tp, int leader,
                                                                   int32_t epoch, std::vector<int> replicas,
                                                                   std::vector<int> isr) {
  auto other = spawn_test_controller(controller_system_->sys(), controller_epoch);
  controller_system_->track(other);
  connect_nodes(other);
  election e{tp, leader, epoch, {replicas.begin(), replicas.end()}, {isr.begin(), isr.end()}, {}};
  auto errors = send_election(other, e);
  caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
  return errors;
}

std::vector<partition_error_msg> replication_harness::send_election(const test_controller_actor& controller,
                                                                    const election& e) {
  auto errors = controller_system_->request<std::vector<partition_error_msg>>(controller, timeout,
                                                                              elect_atom::value, e);
  if (!errors) FAIL("LeaderAndIsr failed: " << caf::to_string(errors.error()));
  return *errors;
}

void replication_harness::elect(const topic_partition& tp, int leader, int32_t epoch,
                                std::vector<int> replicas, std::vector<int> isr, std::vector<int> send_to) {
  auto errors = try_elect(tp, leader, epoch, std::move(replicas), std::move(isr), std::move(send_to));
  if (!errors.empty()) FAIL("LeaderAndIsr refused: " << describe(errors));
}

void replication_harness::stop(int node, const topic_partition& tp) {
  auto ok = controller_system_->request<bool>(controller_, timeout, stopat_atom::value, tp, node);
  if (!ok) FAIL("StopReplica failed: " << caf::to_string(ok.error()));
}

void replication_harness::rejoin(int id, const topic_partition& tp) {
  auto c = committed(tp);
  std::vector<int> replicas, isr;
  for (auto r : c.replicas) replicas.push_back(r.value());
  for (auto r : c.isr) isr.push_back(r.value());
  elect(tp, c.leader.value(), c.epoch.value(), replicas, isr, {id});
}

partition_state_msg replication_harness::committed(const topic_partition& tp) {
  auto s = controller_system_->request<partition_state_msg>(controller_, timeout, state_atom::value, tp);
  if (!s) FAIL("no committed state: " << caf::to_string(s.error()));
  return *s;
}

partition_replica_actor replication_harness::replica(int id, const topic_partition& tp) {
  auto table = node(id).routes->current();
  auto it = table->find(tp);
  if (it == table->end()) FAIL("node " << id << " has no replica of " << dir_name(tp));
  return it->second;
}

caf::expected<produce_result> replication_harness::produce(int id, const topic_partition& tp, bytes batch,
                                                           int16_t acks, int32_t timeout_ms) {
  return node(id).system->request<produce_result>(
    replica(id, tp), timeout, produce_atom_v,
    produce_request{batch_buffer::of(std::move(batch)), acks, timeout_ms});
}

caf::expected<replica_status> replication_harness::status(int id, const topic_partition& tp) {
  return node(id).system->request<replica_status>(replica(id, tp), timeout, status_atom_v);
}

std::vector<read_record> replication_harness::log_records(int id, const topic_partition& tp) {
  return partition_dir_records(node(id).data_dir / dir_name(tp));
}

std::vector<read_record> replication_harness::consumed(int id, const topic_partition& tp) {
  std::vector<read_record> out;
  offset from{0};
  for (int round = 0; round < 100000; ++round) {
    fetch_request req;
    req.from = from;
    req.max_wait_ms = 0;
    auto r = node(id).system->request<fetch_result>(replica(id, tp), timeout, fetch_atom_v, req);
    if (!r) FAIL("consumer fetch failed: " << caf::to_string(r.error()));
    if (r->records.empty()) break;
    auto batch = records_of(r->records.bytes());
    for (auto& rec : batch)
      if (rec.off >= from) out.push_back(rec);
    from = r->records.next_offset;
  }
  return out;
}

bool replication_harness::eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
  return test::eventually(pred, limit);
}

} // namespace capstan::test
