// Quorum identity (docs/controller.md, "Quorum identity"): a voter whose stored Raft state was
// lost or damaged must not vote or count as a copy until it has caught up, so that no committed
// metadata is lost and no term gets two leaders; and frames of another cluster, another voter set
// or for an earlier incarnation of the receiver are refused. Three quorum members over in-memory
// disks (memory_raft_files) and an in-memory network whose links a test cuts.

#include <deque>
#include <map>
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "actors/controller/quorum_member.hpp"
#include "actors/controller/raft/raft_codec.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"
#include "tests/unit/controller/memory_raft_files.hpp"

using namespace capstan;
using namespace capstan::controller;

namespace {

const std::string cluster = "identity-test";

std::vector<metadata_record> ids(int64_t first, int64_t size) {
  return {producer_ids_record{first, size}};
}

std::vector<node_id> three() {
  return {node_id{1}, node_id{2}, node_id{3}};
}

class network {
public:
  network() {
    for (int i = 1; i <= 3; ++i) open(i);
  }

  void open(int i, std::vector<node_id> voters = three(), std::string cluster_id = cluster) {
    quorum_member_config c;
    c.raft.id = node_id{i};
    c.raft.voters = std::move(voters);
    c.raft.seed = static_cast<uint64_t>(i) * 7919;
    c.cluster_id = std::move(cluster_id);
    c.new_directory[0] = static_cast<uint8_t>(i);
    c.new_directory[1] = static_cast<uint8_t>(++opened);
    disks[i].reopen();
    auto m = quorum_member::open(c, disks[i].open("disk-" + std::to_string(i)));
    REQUIRE(m.ok());
    members[i] = std::make_unique<quorum_member>(std::move(*m));
  }

  void crash(int i) { members[i].reset(); }

  bool linked(int a, int b) const { return !isolated.count(a) && !isolated.count(b); }

  void drain(int i) {
    auto out = members.at(i)->drain([this, i](node_id to, capnp_frame f) {
      wire.push_back({i, to.value(), std::move(f)});
    });
    REQUIRE(out.ok());
    for (auto& o : *out) outcomes.push_back(o);
    observe();
  }

  void deliver() {
    while (!wire.empty()) {
      auto [from, to, frame] = std::move(wire.front());
      wire.pop_front();
      if (!members[to] || !linked(from, to)) continue;
      if (auto s = members[to]->receive(frame); !s) {
        refusals.push_back(s.code());
        continue;
      }
      drain(to);
    }
  }

  bool run_until(const std::function<bool()>& pred, int max_ticks = 3000) {
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

  // Records who leads which term (a term with two leaders fails the test at once).
  void observe() {
    for (auto& [i, m] : members) {
      if (!m) continue;
      const auto st = m->status_now();
      if (st.role != raft::role::leader) continue;
      auto [it, fresh] = leaders.emplace(st.term.value(), i);
      INFO("term " << st.term.value());
      CHECK(it->second == i);
    }
  }

  int leader() {
    for (auto& [i, m] : members)
      if (m && m->status_now().role == raft::role::leader) return i;
    return 0;
  }

  bool all_whole() {
    for (auto& [i, m] : members)
      if (!m || m->status_now().catching_up) return false;
    return true;
  }

  std::map<int, controller::test::memory_disk> disks;
  std::map<int, std::unique_ptr<quorum_member>> members;
  struct in_flight {
    int from;
    int to;
    capnp_frame frame;
  };
  std::deque<in_flight> wire;
  std::set<int> isolated;
  std::vector<proposal_outcome> outcomes;
  std::vector<errc> refusals;
  std::map<uint64_t, int> leaders;
  int opened = 0;
};

} // namespace

TEST_CASE("a quorum whose voters all start on new directories finds out and elects a leader",
          "[controller][quorum][identity]") {
  network net;
  for (auto& [i, m] : net.members) CHECK(m->status_now().catching_up);
  REQUIRE(net.run_until([&] { return net.leader() != 0 && net.all_whole(); }));
}

TEST_CASE("a new quorum waits for every voter before it starts", "[controller][quorum][identity]") {
  network net;
  net.crash(3);
  // Two of three could elect a leader, but nothing tells them that the third is new too: it may
  // be a voter that lost its disk after they elected one.
  CHECK_FALSE(net.run_until([&] { return net.leader() != 0; }, 300));
  net.open(3);
  REQUIRE(net.run_until([&] { return net.leader() != 0 && net.all_whole(); }));
}

TEST_CASE("a voter restarted on an empty disk does not vote again in a term it voted in",
          "[controller][quorum][identity]") {
  network net;
  REQUIRE(net.run_until([&] { return net.all_whole(); }));
  // Node 3 hears nothing more: its term stays where the new quorum began.
  net.isolated.insert(3);
  REQUIRE(net.run_until([&] { return net.leader() != 0; }));
  const int leader = net.leader();
  const int voter = leader == 1 ? 2 : 1;
  REQUIRE(
      net.run_until([&] { return net.members[voter]->status_now().commit_index.value() >= 1; }));
  // The voter that elected the leader loses its disk; the leader is cut off; node 3 comes back.
  net.crash(voter);
  net.disks[voter].files.clear();
  net.open(voter);
  CHECK(net.members[voter]->status_now().catching_up);
  net.isolated = {leader};
  // Node 3 asks the empty voter for the votes it already gave the leader. It must not get them:
  // node 3 would lead a term the cut-off leader leads too, without the leader's entries.
  CHECK_FALSE(net.run_until([&] { return net.leader() == 3; }, 400));
  // Once the leader is back, the empty voter catches up from it and votes again.
  net.isolated.clear();
  REQUIRE(net.run_until([&] { return net.all_whole(); }));
  const int l = net.leader();
  REQUIRE(l != 0);
  REQUIRE(net.members[l]->propose(1, ids(0, 5)).ok());
  net.drain(l);
  REQUIRE(net.run_until([&] {
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 5) return false;
    return true;
  }));
}

TEST_CASE("a voter whose log was damaged under later appends does not vote until it caught up",
          "[controller][quorum][identity]") {
  network net;
  REQUIRE(net.run_until([&] { return net.leader() != 0 && net.all_whole(); }));
  const int leader = net.leader();
  const int damaged = leader % 3 + 1;
  const int lagging = damaged % 3 + 1;
  REQUIRE(
      net.run_until([&] { return net.members[lagging]->status_now().commit_index.value() >= 1; }));
  // The leader commits four entries with the damaged voter alone; the lagging one hears nothing.
  net.isolated.insert(lagging);
  for (int64_t k = 0; k < 4; ++k) {
    REQUIRE(net.members[leader]->propose(static_cast<uint64_t>(k + 1), ids(k, 1)).ok());
    net.drain(leader);
    REQUIRE(net.run_until([&] { return net.outcomes.size() == static_cast<size_t>(k + 1); }));
  }
  for (const auto& o : net.outcomes) CHECK(o.code == errc::none);
  // Both go down; a byte of the first committed entry's frame rots on the voter's disk, with the
  // frames of three later appends after it.
  net.crash(leader);
  net.crash(damaged);
  auto& log = net.disks[damaged].files.at(std::string(raft::storage_format::log_file));
  REQUIRE(log.size() > 5 * raft::storage_format::frame_header_size);
  log[raft::storage_format::frame_header_size + 8 + 3] ^= 0x40;
  net.open(damaged);
  CHECK(net.members[damaged]->status_now().catching_up);
  net.isolated.clear();
  // The lagging voter lacks every committed entry. It must not get the damaged voter's vote.
  CHECK_FALSE(net.run_until([&] { return net.leader() != 0; }, 400));
  // The old leader returns: it leads again, and everybody ends with all four entries.
  net.open(leader);
  REQUIRE(net.run_until([&] {
    if (!net.all_whole()) return false;
    for (auto& [i, m] : net.members)
      if (m->image().next_producer_id() != 4) return false;
    return true;
  }));
}

TEST_CASE("frames of another voter set, another cluster or another incarnation are refused",
          "[controller][quorum][identity]") {
  SECTION("an edited --controller-quorum") {
    network net;
    REQUIRE(net.run_until([&] { return net.leader() != 0 && net.all_whole(); }));
    // Node 1 restarted with another voter set: its directory was made in {1, 2, 3}.
    net.crash(1);
    quorum_member_config c;
    c.raft.id = node_id{1};
    c.raft.voters = {node_id{1}, node_id{2}};
    c.cluster_id = cluster;
    c.new_directory[0] = 99;
    CHECK(quorum_member::open(c, net.disks[1].open("disk-1")).code() ==
          errc::inconsistent_voter_set);
    // On a new disk it opens, but with node 2's vote alone it would have a majority of {1, 2}:
    // the others refuse its frames and it refuses theirs.
    net.disks[1].files.clear();
    net.open(1, {node_id{1}, node_id{2}});
    REQUIRE(net.run_until([&] { return net.refusals.size() > 10; }));
    for (auto code : net.refusals) CHECK(code == errc::inconsistent_voter_set);
    CHECK(net.leader() != 1);
    CHECK(net.members[1]->status_now().catching_up);
  }
  SECTION("another cluster") {
    network net;
    net.crash(1);
    net.disks[1].files.clear();
    net.open(1, three(), "another-cluster");
    REQUIRE(net.run_until([&] { return !net.refusals.empty(); }));
    for (auto code : net.refusals) CHECK(code == errc::inconsistent_cluster_id);
  }
  SECTION("an earlier incarnation of the receiver") {
    network net;
    REQUIRE(net.run_until([&] { return net.leader() != 0 && net.all_whole(); }));
    const auto st = net.members[2]->status_now();
    raft::message m{node_id{1},
                    node_id{2},
                    raft::timeout_now{st.term},
                    net.members[1]->core().directory(),
                    raft::directory_id{9, 9, 9},
                    false};
    const raft::quorum_identity q{cluster, three()};
    CHECK(net.members[2]->receive(raft::encode(m, q)).code() == errc::inconsistent_voter_set);
    m.to_directory = net.members[2]->core().directory();
    CHECK(net.members[2]->receive(raft::encode(m, q)).ok());
  }
}
