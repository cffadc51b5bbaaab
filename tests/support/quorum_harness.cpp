#include "tests/support/quorum_harness.hpp"

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

quorum_harness::quorum_harness(quorum_harness_options options) : opts_(options) {
  link_faults::instance().clear_all();
  for (int i = 1; i <= opts_.members; ++i) {
    auto m = std::make_unique<quorum_member_node>();
    m->id = node_id{i};
    m->dir = dir_.path() / ("controller-" + std::to_string(i));
    members_.push_back(std::move(m));
  }
  for (int i = 1; i <= opts_.members; ++i) start(i);
}

quorum_harness::~quorum_harness() {
  link_faults::instance().clear_all();
  for (int i = 1; i <= opts_.members; ++i) stop(i);
}

bool quorum_harness::running(int id) const {
  return members_.at(static_cast<size_t>(id - 1))->system != nullptr;
}

void quorum_harness::start(int id) {
  auto& m = member(id);
  REQUIRE(!m.system);
  m.system = std::make_unique<threaded_system>();
  auto& sys = m.system->sys();
  peer_directory_options po;
  po.node = m.id;
  const int voters = opts_.voters > 0 ? opts_.voters : opts_.members;
  const auto known = [&](const quorum_member_node& other) {
    return !opts_.bootstrap_addresses_only || other.id.value() <= voters;
  };
  for (auto& other : members_)
    if (other->port != 0 && other->id != m.id && known(*other))
      po.peers.push_back(peer_address{other->id, "127.0.0.1", other->port});
  m.directory = spawn_peer_directory(sys, po);
  m.system->track(m.directory);
  quorum_options qo;
  qo.node = m.id;
  for (int i = 1; i <= voters; ++i) qo.voters.push_back(node_id{i});
  qo.dir = m.dir;
  qo.cluster_id = cluster_id;
  qo.peers = m.directory;
  qo.tick_interval = opts_.tick_interval;
  qo.election_timeout = opts_.election_timeout;
  qo.heartbeat_interval = opts_.heartbeat_interval;
  qo.snapshot_entries = opts_.snapshot_entries;
  auto q = spawn_quorum_actor(sys, qo);
  if (!q) FAIL("controller " << id << ": " << q.err().to_string());
  m.quorum = *q;
  m.system->track(m.quorum);
  node_endpoint_options eo;
  eo.node = m.id;
  eo.raft = m.quorum;
  eo.directory = m.directory;
  m.endpoint = spawn_node_endpoint(sys, eo);
  // A restarted member listens where it did, as a restarted node does: its voter set entry names
  // that endpoint, and a member that read it from its log at start would otherwise keep looking
  // for the member at the address it had before.
  auto port = m.system->publish(m.endpoint, m.port);
  if (!port) FAIL("cannot publish controller " << id << ": " << caf::to_string(port.error()));
  m.port = *port;
  for (auto& other : members_)
    if (other->system && other->id != m.id && known(m))
      caf::anon_send(other->directory, peers_atom_v,
                     std::vector<peer_address>{{m.id, "127.0.0.1", m.port}});
}

void quorum_harness::stop(int id) {
  auto& m = member(id);
  if (!m.system) return;
  // ~threaded_system kills every tracked actor and waits for them all. The handles go first: a
  // detached actor's thread ends only once nothing references the actor.
  m.directory = nullptr;
  m.quorum = nullptr;
  m.endpoint = nullptr;
  m.system.reset();
}

caf::expected<propose_reply>
quorum_harness::propose(int id, std::vector<controller::metadata_record> records) {
  auto& m = member(id);
  return m.system->request<propose_reply>(m.quorum, request_timeout, propose_atom_v,
                                          std::move(records));
}

caf::expected<controller::quorum_status> quorum_harness::status(int id) {
  auto& m = member(id);
  return m.system->request<controller::quorum_status>(m.quorum, request_timeout, status_atom_v);
}

caf::expected<int32_t> quorum_harness::resign(int id) {
  auto& m = member(id);
  return m.system->request<int32_t>(m.quorum, request_timeout, resign_atom_v);
}

caf::expected<propose_reply> quorum_harness::add_voter(int at, int id) {
  auto& m = member(at);
  return m.system->request<propose_reply>(m.quorum, request_timeout, add_voter_atom_v,
                                          static_cast<int32_t>(id),
                                          "127.0.0.1:" + std::to_string(member(id).port));
}

caf::expected<propose_reply> quorum_harness::remove_voter(int at, int id) {
  auto& m = member(at);
  return m.system->request<propose_reply>(m.quorum, request_timeout, remove_voter_atom_v,
                                          static_cast<int32_t>(id));
}

caf::expected<controller::metadata_image> quorum_harness::image(int id) {
  auto& m = member(id);
  return m.system->request<controller::metadata_image>(m.quorum, request_timeout, image_atom_v);
}

int quorum_harness::leader() {
  int best = 0;
  uint64_t best_term = 0;
  for (int i = 1; i <= opts_.members; ++i) {
    if (!running(i)) continue;
    auto s = status(i);
    if (s && s->role == raft::role::leader && s->term.value() > best_term) {
      best = i;
      best_term = s->term.value();
    }
  }
  return best;
}

uint64_t quorum_harness::commit(std::vector<controller::metadata_record> records) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string last = "no leader";
  while (std::chrono::steady_clock::now() < deadline) {
    const int l = leader();
    if (l == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    auto r = propose(l, records);
    if (!r) FAIL("proposal to controller " << l << " failed: " << caf::to_string(r.error()));
    if (r->code == errc::none) return r->index;
    // NOT_CONTROLLER: the entry never took its index (or another term's entry did), so
    // proposing again cannot apply it twice.
    if (r->code != errc::not_controller)
      FAIL("controller " << l << " refused a proposal: " << to_string(r->code) << ": "
                         << r->message);
    last = r->message;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("no proposal committed within 30 s: " << last);
  return 0;
}

bool quorum_harness::eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
  return test::eventually(pred, limit);
}

} // namespace capstan::test
