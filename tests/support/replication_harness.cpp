#include "tests/support/replication_harness.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan::test {

namespace {

constexpr caf::timespan timeout = std::chrono::seconds(30);

std::vector<node_id> ids(const std::vector<int>& v) {
  std::vector<node_id> out;
  for (auto n : v) out.push_back(node_id{n});
  return out;
}

std::string dir_name(const topic_partition& tp) { return tp.first + "-" + std::to_string(tp.second); }

} // namespace

replica_fetcher_config replication_harness::fast_fetcher_config() {
  replica_fetcher_config c;
  c.max_wait_ms = 200;
  c.backoff_ms = 50;
  c.request_timeout_ms = 2000;
  return c;
}

replication_harness::replication_harness(int nodes, replica_fetcher_config config) : config_(config) {
  link_faults::instance().clear_all();
  for (int i = 1; i <= nodes; ++i) {
    auto n = std::make_unique<harness_node>();
    n->id = node_id{i};
    n->data_dir = dir_.path() / ("node-" + std::to_string(i));
    std::filesystem::create_directories(n->data_dir);
    n->system = std::make_unique<threaded_system>();
    n->routes = std::make_shared<routing_registry>();
    node_endpoint_options eo;
    eo.node = n->id;
    eo.routes = [r = n->routes] { return r->current(); };
    n->endpoint = spawn_node_endpoint(n->system->sys(), eo);
    auto port = n->system->publish(n->endpoint);
    if (!port) FAIL("cannot publish node " << i << ": " << caf::to_string(port.error()));
    n->port = *port;
    nodes_.push_back(std::move(n));
  }
  std::vector<peer_address> all;
  for (auto& n : nodes_) all.push_back(peer_address{n->id, "127.0.0.1", n->port});
  for (auto& n : nodes_) {
    peer_directory_options po;
    po.node = n->id;
    po.self_endpoint = n->endpoint;
    po.peers = all;
    n->peers = spawn_peer_directory(n->system->sys(), po);
    n->system->track(n->peers);
    fetcher_manager_options fo;
    fo.node = n->id;
    fo.config = config_;
    fo.sessions = n->peers;
    fo.routes = [r = n->routes] { return r->current(); };
    n->fetchers = spawn_fetcher_manager(n->system->sys(), fo);
    n->system->track(n->fetchers);
  }
}

replication_harness::~replication_harness() {
  link_faults::instance().clear_all();
  // Every node's actors go first: a fetch session on one node waits for news of a fetcher on
  // another, so no system may be torn down while another still runs.
  for (auto& n : nodes_) {
    for (auto& [tp, r] : n->replicas) caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
    n->replicas.clear();
    n->routes->publish(std::make_shared<routing_table>());
    caf::anon_send_exit(n->fetchers, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(n->peers, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(n->endpoint, caf::exit_reason::kill);
  }
  // Each system's destructor kills its tracked actors and waits for the rest.
  nodes_.clear();
}

partition_replica_actor replication_harness::open(int id, const topic_partition& tp,
                                                  int32_t min_insync_replicas,
                                                  int64_t replica_lag_time_max_ms) {
  auto& n = node(id);
  partition_replica_options opts;
  opts.topic = tp.first;
  opts.partition = tp.second;
  opts.node = n.id;
  opts.dir = n.data_dir / dir_name(tp);
  opts.min_insync_replicas = min_insync_replicas;
  opts.replica_lag_time_max_ms = replica_lag_time_max_ms;
  opts.schedule_background_work = false;
  auto r = spawn_partition_replica(n.system->sys(), opts);
  if (!r) FAIL("cannot open " << dir_name(tp) << " on node " << id << ": " << r.err().to_string());
  n.system->track(*r);
  n.replicas[tp] = *r;
  auto table = std::make_shared<routing_table>(*n.routes->current());
  (*table)[tp] = *r;
  n.routes->publish(std::move(table));
  return *r;
}

void replication_harness::close(int id, const topic_partition& tp) {
  auto& n = node(id);
  stop_fetching(id, tp);
  auto it = n.replicas.find(tp);
  if (it == n.replicas.end()) return;
  auto table = std::make_shared<routing_table>(*n.routes->current());
  table->erase(tp);
  n.routes->publish(std::move(table));
  auto closed = n.system->request<replica_checkpoint>(it->second, timeout, close_atom_v);
  if (!closed) FAIL("closing " << dir_name(tp) << " on node " << id << ": " << caf::to_string(closed.error()));
  n.replicas.erase(it);
}

void replication_harness::become_leader(int id, const topic_partition& tp, int32_t epoch,
                                        std::vector<int> replicas, std::vector<int> isr) {
  auto& n = node(id);
  stop_fetching(id, tp);
  replica_role role{n.id, leader_epoch{epoch}, ids(replicas), ids(isr), epoch};
  auto r = n.system->request<bool>(n.replicas.at(tp), timeout, become_atom_v, role);
  if (!r) FAIL("node " << id << " cannot lead " << dir_name(tp) << ": " << caf::to_string(r.error()));
}

void replication_harness::become_follower(int id, const topic_partition& tp, int leader, int32_t epoch,
                                          std::vector<int> replicas) {
  auto& n = node(id);
  stop_fetching(id, tp);
  replica_role role{node_id{leader}, leader_epoch{epoch}, ids(replicas), {}, epoch};
  auto replica = n.replicas.at(tp);
  auto r = n.system->request<bool>(replica, timeout, become_atom_v, role);
  if (!r) FAIL("node " << id << " cannot follow on " << dir_name(tp) << ": " << caf::to_string(r.error()));
  auto pos = n.system->request<follower_position>(replica, timeout, position_atom_v);
  if (!pos) FAIL("no position: " << caf::to_string(pos.error()));
  std::vector<fetch_assignment> a{fetch_assignment{tp, leader_epoch{epoch}, pos->log_end, true}};
  auto assigned = n.system->request<bool>(n.fetchers, timeout, assign_atom_v, leader, a);
  if (!assigned) FAIL("fetcher assignment failed: " << caf::to_string(assigned.error()));
}

void replication_harness::elect(const topic_partition& tp, int leader, int32_t epoch,
                                std::vector<int> replicas, std::vector<int> isr) {
  // Followers first, as a controller's LeaderAndIsr reaches them in any order; fetchers retry
  // until the leader serves the new epoch.
  for (int r : replicas)
    if (r != leader && node(r).replicas.count(tp)) become_follower(r, tp, leader, epoch, replicas);
  become_leader(leader, tp, epoch, replicas, isr);
}

void replication_harness::stop_fetching(int id, const topic_partition& tp) {
  auto& n = node(id);
  auto r = n.system->request<bool>(n.fetchers, timeout, unassign_atom_v, std::vector<topic_partition>{tp});
  if (!r) FAIL("unassign failed: " << caf::to_string(r.error()));
}

caf::expected<produce_result> replication_harness::produce(int id, const topic_partition& tp, bytes batch,
                                                           int16_t acks, int32_t timeout_ms) {
  auto& n = node(id);
  return n.system->request<produce_result>(n.replicas.at(tp), timeout, produce_atom_v,
                                           produce_request{batch_buffer::of(std::move(batch)), acks, timeout_ms});
}

caf::expected<replica_status> replication_harness::status(int id, const topic_partition& tp) {
  auto& n = node(id);
  return n.system->request<replica_status>(n.replicas.at(tp), timeout, status_atom_v);
}

std::vector<read_record> replication_harness::log_records(int id, const topic_partition& tp) {
  // The segment files as they are on disk (page cache): every whole, valid batch in order.
  const auto dir = node(id).data_dir / dir_name(tp);
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".log") logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  std::vector<read_record> out;
  for (const auto& file : logs) {
    std::ifstream in(file, std::ios::binary);
    bytes data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t pos = 0;
    while (pos + batch_format::header_size <= data.size()) {
      auto view = record_batch_view::parse(bytes_view{data}.subspan(pos), std::numeric_limits<size_t>::max());
      if (!view) break;
      auto batch = records_of(bytes_view{data}.subspan(pos, view->size_bytes()));
      out.insert(out.end(), batch.begin(), batch.end());
      pos = batch_format::align_up(pos + view->size_bytes());
    }
  }
  return out;
}

std::vector<read_record> replication_harness::consumed(int id, const topic_partition& tp) {
  auto& n = node(id);
  std::vector<read_record> out;
  offset from{0};
  for (int round = 0; round < 100000; ++round) {
    fetch_request req;
    req.from = from;
    req.max_wait_ms = 0;
    auto r = n.system->request<fetch_result>(n.replicas.at(tp), timeout, fetch_atom_v, req);
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
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

} // namespace capstan::test
