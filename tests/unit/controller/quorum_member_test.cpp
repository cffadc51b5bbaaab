// quorum_member: three members joined by an in-memory network (frames delivered in order; lost
// only to and from an isolated member) elect a leader, commit proposals into every image, answer
// each proposal once, refuse what they must, and restart from their directories.

#include "actors/controller/quorum_member.hpp"

#include <deque>
#include <memory>
#include <set>
#include <utility>

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::controller;

namespace {

const std::string cluster = "quorum-member-test";

std::vector<metadata_record> ids(int64_t first, int64_t size) {
  return {producer_ids_record{first, size}};
}

class network {
public:
  network() {
    for (int i = 1; i <= 3; ++i) open(i);
  }

  void open(int i) {
    quorum_member_config c;
    c.raft.id = node_id{i};
    c.raft.voters = {node_id{1}, node_id{2}, node_id{3}};
    c.raft.seed = static_cast<uint64_t>(i);
    c.raft.snapshot_entries = 4;
    c.dir = dir / ("member-" + std::to_string(i));
    c.cluster_id = cluster;
    c.new_directory[0] = static_cast<uint8_t>(i);
    auto m = quorum_member::open(c);
    REQUIRE(m.ok());
    members[i] = std::make_unique<quorum_member>(std::move(*m));
  }

  void drain(int i) {
    auto out = members.at(i)->drain([this, i](node_id to, capnp_frame f) {
      if (!isolated.count(i) && !isolated.count(to.value()))
        wire.emplace_back(to.value(), std::move(f));
    });
    REQUIRE(out.ok());
    for (auto& o : *out) outcomes.push_back(o);
  }

  // Ticks every member and delivers everything in flight, until `pred` or a bound.
  bool run_until(const std::function<bool()>& pred, int max_ticks = 2000) {
    for (int t = 0; t < max_ticks; ++t) {
      if (pred()) return true;
      for (auto& [i, m] : members)
        if (m) {
          m->tick();
          drain(i);
        }
      deliver();
    }
    return pred();
  }

  void deliver() {
    while (!wire.empty()) {
      auto [to, frame] = std::move(wire.front());
      wire.pop_front();
      if (!members.at(to)) continue;
      REQUIRE(members.at(to)->receive(frame).ok());
      drain(to);
    }
  }

  int leader() {
    for (auto& [i, m] : members)
      if (m && m->status_now().role == raft::role::leader) return i;
    return 0;
  }

  test::temp_dir dir{"quorum-member"};
  std::map<int, std::unique_ptr<quorum_member>> members;
  std::deque<std::pair<int, capnp_frame>> wire;
  std::vector<proposal_outcome> outcomes;
  std::set<int> isolated;
};

} // namespace

TEST_CASE("quorum members commit proposals into every image, in order", "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  const int l = net.leader();
  for (int64_t k = 0; k < 10; ++k) {
    auto p = net.members[l]->propose(static_cast<uint64_t>(k + 1), ids(k * 10, 10));
    REQUIRE(p.ok());
    net.drain(l);
  }
  net.deliver();
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 100) return false;
    return true;
  }));
  REQUIRE(net.outcomes.size() == 10);
  for (size_t k = 0; k < net.outcomes.size(); ++k) {
    CHECK(net.outcomes[k].token == k + 1);
    CHECK(net.outcomes[k].code == errc::none);
  }
  // snapshot_entries = 4: every member compacted its log into a snapshot of the image.
  for (auto& [i, m] : net.members) CHECK(m->status_now().snapshot_index.value() > 0);
}

TEST_CASE("a quorum member that does not lead refuses proposals and names the leader",
          "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] {
    return net.leader() != 0 && net.members[net.leader() % 3 + 1]->status_now().leader.has_value();
  }));
  const int follower = net.leader() % 3 + 1;
  auto p = net.members[follower]->propose(1, ids(0, 1));
  CHECK(p.code == errc::not_controller);
  REQUIRE(p.leader.has_value());
  CHECK(p.leader->value() == net.leader());
  CHECK(net.members[net.leader()]->propose(2, {}).code == errc::invalid_request);
}

TEST_CASE("a quorum member drops a frame that does not decode", "[controller][quorum]") {
  network net;
  const auto before = net.members[1]->status_now();
  CHECK(net.members[1]->receive(capnp_frame{}).code() == errc::corrupt_message);
  CHECK(net.members[1]->status_now().term == before.term);
}

TEST_CASE("a failed batch is answered with its error and the members stay in step",
          "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  const int l = net.leader();
  REQUIRE(net.members[l]->propose(1, ids(0, 5)).ok());
  // Not the image's next id when it applies: every member skips it the same way.
  REQUIRE(net.members[l]->propose(2, ids(7, 5)).ok());
  REQUIRE(net.members[l]->propose(3, ids(5, 5)).ok());
  net.drain(l);
  REQUIRE(net.run_until([&] { return net.outcomes.size() == 3; }));
  CHECK(net.outcomes[0].code == errc::none);
  CHECK(net.outcomes[1].code != errc::none);
  CHECK(net.outcomes[2].code == errc::none);
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 10) return false;
    return true;
  }));
}

TEST_CASE("a restarted quorum member keeps its term, vote, log and image", "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  int l = net.leader();
  for (int64_t k = 0; k < 6; ++k)
    REQUIRE(net.members[l]->propose(static_cast<uint64_t>(k + 1), ids(k, 1)).ok());
  net.drain(l);
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 6) return false;
    return true;
  }));
  const int r = l % 3 + 1;
  const auto before = net.members[r]->status_now();
  const auto voted = before.voted_for;
  net.members[r].reset();
  net.open(r);
  const auto after = net.members[r]->status_now();
  CHECK(after.term == before.term);
  CHECK(after.voted_for == voted);
  CHECK(after.last_index == before.last_index);
  // The image comes back from the snapshot at once and from the log once a leader says what is
  // committed.
  REQUIRE(net.run_until([&] { return net.members[r]->image().next_producer_id() == 6; }));
}

TEST_CASE("a proposal whose leader was deposed before it committed is answered NOT_CONTROLLER",
          "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  const int old_leader = net.leader();
  net.isolated.insert(old_leader);
  REQUIRE(net.members[old_leader]->propose(1, ids(0, 1)).ok());
  net.drain(old_leader);
  // The other two elect a leader of a higher term and commit their own entry at that index.
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (i != old_leader && m->status_now().role == raft::role::leader) return true;
    return false;
  }));
  int new_leader = 0;
  for (auto& [i, m] : net.members)
    if (i != old_leader && m->status_now().role == raft::role::leader) new_leader = i;
  REQUIRE(net.members[new_leader]->propose(2, ids(0, 7)).ok());
  net.drain(new_leader);
  net.isolated.clear();
  REQUIRE(net.run_until([&] { return net.outcomes.size() == 2; }));
  for (const auto& o : net.outcomes) {
    if (o.token == 1) CHECK(o.code == errc::not_controller);
    if (o.token == 2) CHECK(o.code == errc::none);
  }
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 7) return false;
    return true;
  }));
}

TEST_CASE("a quorum member refuses a Raft directory of another cluster", "[controller][quorum]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  const int l = net.leader();
  for (int64_t k = 0; k < 6; ++k)
    REQUIRE(net.members[l]->propose(static_cast<uint64_t>(k + 1), ids(k, 1)).ok());
  net.drain(l);
  REQUIRE(net.run_until([&] { return net.members[1]->status_now().snapshot_index.value() > 0; }));
  net.members[1].reset();
  quorum_member_config c;
  c.raft.id = node_id{1};
  c.raft.voters = {node_id{1}, node_id{2}, node_id{3}};
  c.dir = net.dir / "member-1";
  c.cluster_id = "another-cluster";
  c.new_directory[0] = 1;
  CHECK(quorum_member::open(c).code() == errc::inconsistent_cluster_id);
}
