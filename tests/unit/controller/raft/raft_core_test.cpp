// raft_core one rule at a time, on a tiny hand-driven cluster: elections with pre-vote,
// check-quorum, leader stickiness, commitment of the current term only, replication repair,
// snapshots, restarts, and the ready/persist contract. The seeded simulation
// (raft_simulation_test.cpp) covers the same rules under random faults.

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "actors/controller/raft/raft_core.hpp"

namespace capstan::raft {
namespace {

bytes b(const std::string& s) {
  return bytes(s.begin(), s.end());
}

// Voters 1..n and `spares` nodes after them that are no voters at first, with in-memory disks;
// messages queue in send order until delivered.
class cluster {
public:
  explicit cluster(int n, uint64_t snapshot_entries = 1024, int spares = 0)
      : snapshot_entries_(snapshot_entries) {
    for (int i = 1; i <= n; ++i) voters_.push_back(node_id{i});
    for (int i = 1; i <= n + spares; ++i) nodes_.push_back(node_id{i});
    // A spare's directory id is known, as raft_storage gives every directory one: the leader
    // adds the incarnation it heard from.
    for (int i = n + 1; i <= n + spares; ++i) dirs_[node_id{i}][0] = static_cast<uint8_t>(i);
    for (node_id id : nodes_) start(id);
  }

  raft_core& at(int i) { return *cores_.at(node_id{i}); }
  durable_state& disk(int i) { return disks_[node_id{i}]; }
  // Node i's directory id; give it a new one before restarting it on a lost disk.
  directory_id& dir(int i) { return dirs_[node_id{i}]; }
  std::vector<bytes>& applied(int i) { return applied_[node_id{i}]; }
  // Every voter change that ended, on any node, in order.
  std::vector<voter_change_end>& changes() { return changes_; }
  std::deque<message>& network() { return network_; }

  void start(node_id id) {
    raft_config c;
    c.id = id;
    c.voters = voters_;
    c.election_timeout_ticks = 10;
    c.heartbeat_ticks = 2;
    c.seed = static_cast<uint64_t>(id.value());
    c.snapshot_entries = snapshot_entries_;
    c.directory = dirs_[id];
    cores_.erase(id);
    cores_.emplace(id, std::make_unique<raft_core>(c, disks_[id]));
    applied_[id] = {};
  }
  void crash(int i) { cores_.erase(node_id{i}); }
  void restart(int i) { start(node_id{i}); }
  bool up(int i) const { return cores_.count(node_id{i}) != 0; }

  // Runs the driver loop of raft_ready.hpp on node i; returns the readies taken.
  std::vector<ready> drain(int i) {
    std::vector<ready> taken;
    auto& core = at(i);
    auto& d = disks_[node_id{i}];
    while (core.has_ready()) {
      ready rd = core.take_ready();
      if (rd.hard_state) d.hard = *rd.hard_state;
      if (rd.truncate_from) d.truncate_from(*rd.truncate_from);
      if (rd.snapshot) d.save_snapshot(*rd.snapshot);
      d.append(rd.entries);
      for (const auto& m : rd.messages)
        if (!isolated_.count(m.from) && !isolated_.count(m.to)) network_.push_back(m);
      auto& app = applied_[node_id{i}];
      if (rd.apply_snapshot) app.assign(rd.snapshot->meta.index.value(), b("<snap>"));
      for (const auto& e : rd.committed) app.push_back(e.data);
      if (rd.voter_change) changes_.push_back(*rd.voter_change);
      core.advance();
      taken.push_back(std::move(rd));
    }
    return taken;
  }

  void drain_all() {
    for (node_id id : nodes_)
      if (up(id.value())) drain(id.value());
  }

  // Delivers queued messages (and what they cause) in order until the network is quiet.
  size_t settle(size_t limit = 10000) {
    size_t delivered = 0;
    drain_all();
    while (!network_.empty() && delivered < limit) {
      message m = network_.front();
      network_.pop_front();
      ++delivered;
      if (!up(m.to.value())) continue;
      at(m.to.value()).step(m);
      drain(m.to.value());
    }
    return delivered;
  }

  void tick(int i, int times = 1) {
    for (int k = 0; k < times; ++k) {
      at(i).tick();
      drain(i);
    }
  }

  // Ticks node i until it leads (at most `limit` ticks), settling after each tick.
  void elect(int i, int limit = 100) {
    for (int k = 0; k < limit && at(i).role() != role::leader; ++k) {
      at(i).tick();
      settle();
    }
    REQUIRE(at(i).role() == role::leader);
  }

  // Messages from or to an isolated node are lost.
  void isolate(int i) { isolated_.insert(node_id{i}); }
  void heal() { isolated_.clear(); }

  log_index propose(int i, const std::string& data) {
    auto p = at(i).propose(b(data));
    REQUIRE(p.ok());
    settle();
    return p.index;
  }

private:
  uint64_t snapshot_entries_;
  std::vector<node_id> voters_;
  std::vector<node_id> nodes_;
  std::map<node_id, std::unique_ptr<raft_core>> cores_;
  std::map<node_id, durable_state> disks_;
  std::map<node_id, directory_id> dirs_;
  std::map<node_id, std::vector<bytes>> applied_;
  std::deque<message> network_;
  std::set<node_id> isolated_;
  std::vector<voter_change_end> changes_;
};

std::vector<int> voter_ids(const raft_core& core) {
  std::vector<int> ids;
  for (const auto& v : core.voters()) ids.push_back(v.id.value());
  return ids;
}

voter spare(int id) {
  voter v;
  v.id = node_id{id};
  v.endpoint = "127.0.0.1:" + std::to_string(9000 + id);
  return v;
}

} // namespace

TEST_CASE("a single node elects itself and commits what it is given", "[raft][core]") {
  cluster c(1);
  // At its first tick: a quorum of one has nobody to wait an election timeout for.
  c.tick(1);
  REQUIRE(c.at(1).role() == role::leader);
  CHECK(c.at(1).term() == raft_term{1});
  CHECK(c.at(1).leader() == node_id{1});
  const auto i = c.propose(1, "topic-a");
  c.drain(1);
  CHECK(c.at(1).commit_index() == i);
  // The no-op of the new leader, then the record.
  REQUIRE(c.applied(1).size() == 2);
  CHECK(c.applied(1)[0].empty());
  CHECK(c.applied(1)[1] == b("topic-a"));
}

TEST_CASE("three nodes elect one leader and replicate to all", "[raft][core]") {
  cluster c(3);
  c.elect(1);
  CHECK(c.at(2).role() == role::follower);
  CHECK(c.at(2).leader() == node_id{1});
  CHECK(c.at(3).term() == c.at(1).term());
  const auto i = c.propose(1, "r1");
  c.tick(1, 2); // a heartbeat carries the new commit index
  c.settle();
  for (int n = 1; n <= 3; ++n) {
    INFO("node " << n);
    CHECK(c.at(n).commit_index() == i);
    REQUIRE(c.applied(n).size() == i.value());
    CHECK(c.applied(n).back() == b("r1"));
  }
}

TEST_CASE("a proposal to a follower is refused with the leader's id", "[raft][core]") {
  cluster c(3);
  SECTION("no leader known yet") {
    auto p = c.at(2).propose(b("x"));
    CHECK(p.code == errc::not_leader_or_follower);
    CHECK_FALSE(p.leader);
  }
  SECTION("the leader is known") {
    c.elect(1);
    auto p = c.at(2).propose(b("x"));
    CHECK(p.code == errc::not_leader_or_follower);
    CHECK(p.leader == node_id{1});
  }
  SECTION("empty data is the leader's no-op and cannot be proposed") {
    c.elect(1);
    CHECK(c.at(1).propose({}).code == errc::invalid_request);
  }
}

TEST_CASE("a vote leaves only in a ready that also persists it", "[raft][core]") {
  cluster c(3);
  c.at(2).step(message{node_id{1}, node_id{2}, vote{raft_term{1}, log_index{}, raft_term{}}});
  auto rd = c.at(2).take_ready();
  REQUIRE(rd.hard_state);
  CHECK(rd.hard_state->term == raft_term{1});
  CHECK(rd.hard_state->voted_for == node_id{1});
  REQUIRE(rd.messages.size() == 1);
  const auto* r = std::get_if<vote_response>(&rd.messages[0].body);
  REQUIRE(r != nullptr);
  CHECK(r->granted);
  c.at(2).advance();
}

TEST_CASE("a restarted node keeps its term and its vote", "[raft][core]") {
  cluster c(3);
  c.at(2).step(message{node_id{1}, node_id{2}, vote{raft_term{5}, log_index{}, raft_term{}}});
  c.drain(2);
  c.network().clear();
  c.crash(2);
  c.restart(2);
  CHECK(c.at(2).term() == raft_term{5});
  CHECK(c.at(2).voted_for() == node_id{1});
  c.at(2).step(message{node_id{3}, node_id{2}, vote{raft_term{5}, log_index{}, raft_term{}}});
  auto rd = c.drain(2);
  REQUIRE(rd.size() == 1);
  REQUIRE(rd[0].messages.size() == 1);
  CHECK_FALSE(std::get<vote_response>(rd[0].messages[0].body).granted);
}

TEST_CASE("pre-vote: a node that was partitioned away does not disturb the leader",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  const raft_term term = c.at(1).term();
  c.isolate(3);
  // Alone, node 3 times out again and again; with pre-vote its term does not move.
  c.tick(3, 100);
  CHECK(c.at(3).term() == term);
  c.heal();
  c.tick(3, 30);
  c.settle();
  CHECK(c.at(1).role() == role::leader);
  CHECK(c.at(1).term() == term);
}

TEST_CASE("a node that hears from its leader refuses pre-votes and ignores higher-term votes",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  const raft_term term = c.at(1).term();
  c.at(2).step(
      message{node_id{3}, node_id{2}, pre_vote{term.next(), c.at(2).last_index() + 5, term}});
  auto rd = c.drain(2);
  REQUIRE(rd.size() == 1);
  CHECK_FALSE(std::get<pre_vote_response>(rd[0].messages.at(0).body).granted);

  c.at(2).step(message{node_id{3}, node_id{2}, vote{term.next(), c.at(2).last_index() + 5, term}});
  CHECK(c.at(2).term() == term);
  CHECK_FALSE(c.at(2).has_ready());
}

TEST_CASE("leadership transfer: the follower with the whole log leads without a timeout",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  c.propose(1, "a");
  const raft_term term = c.at(1).term();
  c.at(1).transfer_leadership();
  // Refused until the transfer is over: the next leader is not known yet.
  const auto refused = c.at(1).propose(b("during"));
  CHECK(refused.code == errc::not_leader_or_follower);
  CHECK_FALSE(refused.leader);
  // No tick: node 3 grants node 2's vote although it heard from node 1 just now.
  c.settle();
  CHECK(c.at(2).role() == role::leader);
  CHECK(c.at(2).term() == term.next());
  CHECK(c.at(1).role() == role::follower);
  CHECK(c.at(1).leader() == node_id{2});
  c.propose(2, "after");
  c.tick(2, 2);
  c.settle();
  for (int i = 1; i <= 3; ++i) CHECK(c.applied(i).back() == b("after"));
}

TEST_CASE("leadership transfer: a follower that is behind is caught up before it is told",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  for (int k = 0; k < 3; ++k) REQUIRE(c.at(1).propose(b("x" + std::to_string(k))).ok());
  const log_index last = c.at(1).last_index();
  c.at(1).transfer_leadership();
  REQUIRE(c.at(1).transferee() == node_id{2});
  for (const auto& rd : c.drain(1))
    for (const auto& m : rd.messages) CHECK_FALSE(std::holds_alternative<timeout_now>(m.body));
  CHECK_FALSE(c.at(1).transferee_told());
  c.settle();
  CHECK(c.at(2).role() == role::leader);
  // The new leader's log holds the old one's whole log, then its own no-op.
  CHECK(c.at(2).last_index() == last + 1);
}

TEST_CASE("leadership transfer: a leader whose transferee never takes over leads on",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  const raft_term term = c.at(1).term();
  c.at(1).transfer_leadership();
  c.drain(1);
  CHECK(c.at(1).transferee_told());
  c.network().clear();           // the timeout_now is lost
  for (int k = 0; k < 10; ++k) { // one election timeout, the followers answering heartbeats
    c.tick(1);
    c.settle();
  }
  CHECK_FALSE(c.at(1).transferee());
  CHECK(c.at(1).role() == role::leader);
  CHECK(c.at(1).term() == term);
  c.propose(1, "again");
  CHECK(c.at(2).applied_index() == c.at(1).commit_index());
}

TEST_CASE("leadership transfer: a follower that stopped answering is passed over", "[raft][core]") {
  cluster c(3);
  c.elect(1);
  c.propose(1, "a");
  // Node 2 has the whole log too (and the lower id) but answers nothing for an election timeout.
  c.isolate(2);
  for (int k = 0; k < 10; ++k) {
    c.tick(1);
    c.settle();
  }
  REQUIRE(c.at(1).role() == role::leader);
  c.at(1).transfer_leadership();
  CHECK(c.at(1).transferee() == node_id{3});
}

TEST_CASE("leadership transfer: nothing to hand over without other voters", "[raft][core]") {
  cluster c(1);
  c.elect(1);
  c.at(1).transfer_leadership();
  CHECK_FALSE(c.at(1).transferee());
  CHECK(c.at(1).propose(b("still")).ok());
}

TEST_CASE("check-quorum: a leader that hears from no majority steps down", "[raft][core]") {
  cluster c(3);
  c.elect(1);
  c.isolate(1);
  // Answers heard in the current window count for it: the step-down comes at the end of the
  // first full election timeout without a majority.
  c.tick(1, 20);
  c.settle();
  CHECK(c.at(1).role() == role::follower);
  CHECK_FALSE(c.at(1).leader());
}

TEST_CASE("a new leader commits entries of older terms only through one of its own",
          "[raft][core]") {
  // Every node holds three entries of term 1 that never committed (Raft §5.4.2, figure 8).
  cluster c(3);
  for (int n = 1; n <= 3; ++n) c.crash(n);
  durable_state old;
  old.hard.term = raft_term{1};
  for (uint64_t i = 1; i <= 3; ++i)
    old.entries.push_back(entry{raft_term{1}, log_index{i}, b("old")});
  for (int n = 1; n <= 3; ++n) c.disk(n) = old;
  for (int n = 1; n <= 3; ++n) c.restart(n);

  // Node 1 campaigns; its no-op (index 4, term 2) has not reached anyone yet.
  for (int k = 0; k < 100 && c.at(1).role() != role::leader; ++k) {
    c.at(1).tick();
    c.drain(1);
    while (!c.network().empty() && c.at(1).role() != role::leader) {
      auto m = c.network().front();
      c.network().pop_front();
      if (std::holds_alternative<append_entries>(m.body)) continue;
      c.at(m.to.value()).step(m);
      c.drain(m.to.value());
    }
  }
  REQUIRE(c.at(1).role() == role::leader);
  c.network().clear();
  const raft_term t = c.at(1).term();

  // A follower reports that it matches through index 3: a majority holds the old entries...
  c.at(1).step(message{node_id{2}, node_id{1},
                       append_entries_response{t, true, log_index{3}, log_index{3}, {}, {}}});
  c.drain(1);
  CHECK(c.at(1).commit_index() == log_index{0});
  // ...but only the current term's no-op commits them, all at once.
  c.at(1).step(message{node_id{2}, node_id{1},
                       append_entries_response{t, true, log_index{4}, log_index{4}, {}, {}}});
  c.drain(1);
  CHECK(c.at(1).commit_index() == log_index{4});
}

TEST_CASE("a follower with a diverged tail is repaired in few round trips", "[raft][core]") {
  cluster c(3);
  c.elect(1);
  // The leader takes 30 proposals that nobody else sees, then loses its leadership.
  c.isolate(1);
  for (int k = 0; k < 30; ++k) REQUIRE(c.at(1).propose(b("lost" + std::to_string(k))).ok());
  c.drain(1);
  // The others elect node 2 (once node 3 stopped hearing from node 1), which commits 5
  // entries of its own.
  c.tick(3, 10);
  c.elect(2);
  for (int k = 0; k < 5; ++k) c.propose(2, "kept" + std::to_string(k));
  c.heal();
  c.tick(1, 20); // its heartbeats meet the higher term: node 1 steps down
  c.network().clear();
  const size_t delivered = c.settle();
  c.tick(2, 2);
  c.settle();
  CHECK(c.at(1).last_index() == c.at(2).last_index());
  CHECK(c.at(1).commit_index() == c.at(2).commit_index());
  CHECK(c.applied(1).back() == b("kept4"));
  // Without the conflict hint the leader would walk back one entry per round trip.
  CHECK(delivered < 20);
}

TEST_CASE("a truncation reaches storage before the entries that replace it", "[raft][core]") {
  cluster c(3);
  c.elect(1);
  c.isolate(1);
  for (int k = 0; k < 3; ++k) REQUIRE(c.at(1).propose(b("lost")).ok());
  c.drain(1);
  const log_index diverged = c.at(1).commit_index() + 1;
  c.tick(3, 10);
  c.elect(2);
  c.propose(2, "kept");
  c.heal();
  c.tick(1, 20);
  c.network().clear();
  c.tick(2, 2); // heartbeat -> probe -> repair
  std::optional<log_index> truncated;
  for (int k = 0; k < 20 && !c.network().empty(); ++k) {
    auto m = c.network().front();
    c.network().pop_front();
    c.at(m.to.value()).step(m);
    for (auto& rd : c.drain(m.to.value()))
      if (m.to == node_id{1} && rd.truncate_from) truncated = rd.truncate_from;
  }
  REQUIRE(truncated);
  CHECK(*truncated == diverged);
  CHECK(c.disk(1).entries.back().data != b("lost"));
}

TEST_CASE("a follower behind the leader's snapshot gets it whole", "[raft][core]") {
  cluster c(3, 4);
  c.elect(1);
  c.isolate(3);
  for (int k = 0; k < 10; ++k) c.propose(1, "e" + std::to_string(k));
  c.tick(1, 2);
  c.settle();
  // The leader snapshots its applied state.
  REQUIRE(c.at(1).compact(c.at(1).applied_index(), b("state")).ok());
  c.drain(1);
  const log_index snap = c.at(1).log().snapshot_index();
  REQUIRE(snap > log_index{4});
  c.heal();
  c.tick(1, 2);
  c.settle();
  c.tick(1, 2);
  c.settle();
  CHECK(c.at(3).log().snapshot_index() == snap);
  CHECK(c.disk(3).snap.data == b("state"));
  CHECK(c.at(3).commit_index() == c.at(1).commit_index());
  CHECK(c.applied(3).size() == c.at(1).applied_index().value());
}

TEST_CASE("the driver learns when to snapshot, and compaction checks its index", "[raft][core]") {
  cluster c(1, 3);
  c.elect(1);
  c.propose(1, "a");
  c.propose(1, "b");
  auto p = c.at(1).propose(b("c"));
  REQUIRE(p.ok());
  auto readies = c.drain(1);
  bool due = false;
  for (const auto& rd : readies) due = due || rd.snapshot_due;
  CHECK(due);
  CHECK(c.at(1).compact(c.at(1).applied_index() + 1, b("s")).code() == errc::invalid_request);
  REQUIRE(c.at(1).compact(c.at(1).applied_index(), b("s")).ok());
  CHECK(c.at(1).compact(c.at(1).applied_index(), b("s")).code() == errc::invalid_request);
  auto after = c.drain(1);
  REQUIRE(after.size() == 1);
  REQUIRE(after[0].snapshot);
  CHECK_FALSE(after[0].apply_snapshot);
  CHECK(c.disk(1).snap.meta.index == c.at(1).applied_index());
  CHECK(c.disk(1).entries.empty());
}

TEST_CASE("messages for another node or from itself are ignored", "[raft][core]") {
  cluster c(3);
  c.at(1).step(message{node_id{2}, node_id{3}, vote{raft_term{9}, log_index{}, raft_term{}}});
  c.at(1).step(message{node_id{1}, node_id{1}, vote{raft_term{9}, log_index{}, raft_term{}}});
  CHECK(c.at(1).term() == raft_term{0});
  CHECK_FALSE(c.at(1).has_ready());
}

TEST_CASE("an append lost on the way is sent again although the follower answers heartbeats",
          "[raft][core]") {
  cluster c(3);
  c.elect(1);
  c.propose(1, "a");
  c.tick(1, 2);
  c.settle();
  // The next entry's append to node 3 is lost; node 3 keeps answering the leader's heartbeats.
  REQUIRE(c.at(1).propose(b("b")).ok());
  c.drain(1);
  std::erase_if(c.network(), [](const message& m) {
    const auto* ae = std::get_if<append_entries>(&m.body);
    return m.to == node_id{3} && ae != nullptr && !ae->entries.empty();
  });
  for (int k = 0; k < 10; ++k) {
    c.tick(1);
    c.settle();
  }
  CHECK(c.at(3).last_index() == c.at(1).last_index());
}

// Every node on its own directory, as raft_storage gives one; `catching_up`: new ones.
void give_directories(cluster& c, int n, bool catching_up) {
  for (int i = 1; i <= n; ++i) {
    c.crash(i);
    c.disk(i).hard.catching_up = catching_up;
    c.dir(i) = directory_id{static_cast<uint8_t>(i)};
    c.restart(i);
  }
}

// What raft_storage makes of a lost disk: nothing, under a new directory id, catching up.
void lose_disk(cluster& c, int i) {
  c.crash(i);
  c.disk(i) = durable_state{};
  c.disk(i).hard.catching_up = true;
  c.dir(i) = directory_id{static_cast<uint8_t>(i), 0xdd};
  c.restart(i);
}

TEST_CASE("a quorum of new directories is whole once every voter answered fresh",
          "[raft][core][identity]") {
  cluster c(3);
  give_directories(c, 3, true);
  c.isolate(3);
  for (int k = 0; k < 50; ++k) {
    c.tick(1);
    c.tick(2);
    c.settle();
  }
  // Node 3 has not answered: 1 and 2 cannot tell a new quorum from one whose third voter lost
  // its disk after they elected a leader.
  CHECK(c.at(1).catching_up());
  CHECK(c.at(2).catching_up());
  CHECK(c.at(1).role() == role::follower);
  CHECK(c.at(1).term() == raft_term{0});
  c.heal();
  auto whole = [&] {
    for (int i = 1; i <= 3; ++i)
      if (c.at(i).catching_up() || c.disk(i).hard.catching_up) return false;
    return true;
  };
  for (int k = 0; k < 100 && !whole(); ++k) {
    for (int i = 1; i <= 3; ++i) c.tick(i);
    c.settle();
  }
  REQUIRE(whole());
  c.elect(1);
}

TEST_CASE("a voter alone is whole at once", "[raft][core][identity]") {
  cluster c(1);
  c.crash(1);
  c.disk(1).hard.catching_up = true;
  c.restart(1);
  CHECK_FALSE(c.at(1).catching_up());
  c.drain(1);
  CHECK_FALSE(c.disk(1).hard.catching_up);
  c.elect(1);
}

TEST_CASE("a voter on a lost disk neither votes nor counts until its rejoin entry commits",
          "[raft][core][identity]") {
  cluster c(3);
  give_directories(c, 3, false);
  c.elect(1);
  c.propose(1, "before");
  lose_disk(c, 3);
  // It refuses a vote it may already have given before it lost its disk.
  c.at(3).step(message{node_id{2}, node_id{3}, vote{c.at(1).term(), log_index{9}, raft_term{9}}});
  auto refused = c.drain(3);
  REQUIRE(refused.size() == 1);
  REQUIRE(refused[0].messages.size() == 1);
  CHECK_FALSE(std::get<vote_response>(refused[0].messages[0].body).granted);
  // With node 2 cut off, node 3's acknowledgements alone commit nothing: neither the rejoin
  // entry the leader appends once node 3 told it who it is now (the leader's frames are for its
  // lost incarnation until then), nor what is proposed.
  c.isolate(2);
  const auto commit = c.at(1).commit_index();
  c.tick(3, 20);
  c.settle();
  const auto i = c.propose(1, "while-catching-up");
  c.tick(1, 4);
  c.settle();
  CHECK(c.at(3).last_index() >= i);
  CHECK(c.at(1).commit_index() == commit);
  CHECK(c.at(3).catching_up());
  // Node 2 back: the rejoin entry commits and node 3 is whole again, durably.
  c.heal();
  c.tick(1, 4);
  c.settle();
  c.tick(1, 2);
  c.settle();
  CHECK(c.at(1).commit_index() >= i);
  CHECK_FALSE(c.at(3).catching_up());
  CHECK_FALSE(c.disk(3).hard.catching_up);
}

TEST_CASE("a frame from another incarnation of a follower starts the leader's view of it afresh",
          "[raft][core][identity]") {
  cluster c(3);
  give_directories(c, 3, false);
  c.elect(1);
  c.propose(1, "a");
  c.tick(1, 2);
  c.settle();
  // Frames for node 3 name its directory; its next incarnation refuses them.
  const auto sent_to_3 = [&] {
    for (const auto& m : c.network())
      if (m.to == node_id{3}) return m.to_directory;
    return directory_id{};
  };
  c.tick(1, 2);
  CHECK(sent_to_3() == c.dir(3));
  c.settle();
  lose_disk(c, 3);
  c.isolate(2);
  c.tick(1, 2);
  c.settle();
  // Until node 3 says who it is now, the leader's frames are for the lost incarnation.
  CHECK(c.at(3).last_index() == log_index{0});
  c.tick(3, 20);
  c.settle();
  c.tick(1, 2);
  c.settle();
  CHECK(c.at(3).last_index() == c.at(1).last_index());
  CHECK(c.at(3).catching_up());
}

// Found by the controller simulation (seed 36324, five voters): two voters that both took new
// directory ids while each knew the other's old one refused each other's frames for ever, since a
// refused frame taught nothing. It still names its sender's current directory id.
TEST_CASE("a frame for an earlier directory id of its receiver is ignored but teaches who sent it",
          "[raft][core][identity]") {
  cluster c(3);
  give_directories(c, 3, false);
  c.elect(1);
  c.propose(1, "a");
  const directory_id old_dir_2{9, 9};
  const directory_id new_dir_1{1, 0xee};
  const auto term = c.at(2).term();
  c.at(2).step(message{node_id{1}, node_id{2}, pre_vote_response{term, false}, new_dir_1,
                       old_dir_2, false});
  c.drain(2);
  c.network().clear();
  // Node 2 hears no leader now (nothing is delivered), and asks for pre-votes.
  c.tick(2, 40);
  bool named = false;
  for (const auto& m : c.network())
    if (m.from == node_id{2} && m.to == node_id{1}) {
      CHECK(m.to_directory == new_dir_1);
      named = true;
    }
  CHECK(named);
}


// --- voter changes (docs/controller.md, "Voter changes") ---------------------------------------

TEST_CASE("a node that is no voter follows and never campaigns", "[raft][core][voters]") {
  cluster c(3, 1024, 1);
  c.tick(4, 100);
  c.settle();
  CHECK(c.at(4).role() == role::follower);
  CHECK(c.at(4).term() == raft_term{0});
  CHECK_FALSE(c.at(4).is_voter(node_id{4}));
  c.elect(1);
  CHECK(c.at(1).voters().size() == 3);
}

TEST_CASE("a voter is added once it caught up and then counts towards commitment",
          "[raft][core][voters]") {
  cluster c(3, 1024, 1);
  c.elect(1);
  c.propose(1, "before");
  auto p = c.at(1).add_voter(spare(4));
  REQUIRE(p.ok());
  CHECK(c.at(1).changing_voter() == node_id{4});
  c.settle();
  c.tick(1, 4);
  c.settle();
  REQUIRE(c.changes().size() == 1);
  CHECK(c.changes()[0].node == node_id{4});
  CHECK(c.changes()[0].add);
  CHECK(c.changes()[0].code == errc::none);
  CHECK_FALSE(c.at(1).changing_voter());
  for (int n = 1; n <= 4; ++n) {
    INFO("node " << n);
    CHECK(voter_ids(c.at(n)) == std::vector<int>{1, 2, 3, 4});
  }
  // The entry names the incarnation that caught up, and where it listens.
  const auto& added = c.at(1).voters().back();
  CHECK(added.directory == c.dir(4));
  CHECK(added.endpoint == "127.0.0.1:9004");
  CHECK(c.applied(4).size() >= 2);

  // Four voters: with two of them cut off nothing commits, with one it does.
  c.isolate(2);
  c.isolate(3);
  auto stalled = c.at(1).propose(b("needs three"));
  REQUIRE(stalled.ok());
  c.settle();
  CHECK(c.at(1).commit_index() < stalled.index);
  c.heal();
  c.isolate(2);
  c.tick(1, 2);
  c.settle();
  CHECK(c.at(1).commit_index() >= stalled.index);
}

TEST_CASE("a node to add that is catching up becomes a voter only once it is whole",
          "[raft][core][voters]") {
  cluster c(3, 1024, 1);
  c.crash(4);
  c.disk(4).hard.catching_up = true; // a new directory, as raft_storage makes one
  c.restart(4);
  c.elect(1);
  c.propose(1, "before");
  c.crash(3);
  REQUIRE(c.at(1).add_voter(spare(4)).ok());
  for (int k = 0; k < 50 && c.changes().empty(); ++k) {
    c.tick(1);
    c.settle();
    // Never a voter while it cannot vote: with node 3 down, {1, 2, 3, 4} would need it.
    if (c.at(4).catching_up()) CHECK_FALSE(c.at(1).is_voter(node_id{4}));
  }
  REQUIRE(c.changes().size() == 1);
  CHECK(c.changes()[0].code == errc::none);
  CHECK_FALSE(c.at(4).catching_up());
  const auto i = c.propose(1, "three of four");
  CHECK(c.at(1).commit_index() >= i);
}

TEST_CASE("a removed voter no longer counts and the rest commit without it",
          "[raft][core][voters]") {
  cluster c(3);
  c.elect(1);
  auto p = c.at(1).remove_voter(node_id{3});
  REQUIRE(p.ok());
  CHECK(p.index != log_index{});
  c.settle();
  c.tick(1, 2);
  c.settle();
  REQUIRE(c.changes().size() == 1);
  CHECK_FALSE(c.changes()[0].add);
  CHECK(c.changes()[0].code == errc::none);
  CHECK(voter_ids(c.at(1)) == std::vector<int>{1, 2});
  CHECK(voter_ids(c.at(3)) == std::vector<int>{1, 2});
  c.crash(3);
  const auto i = c.propose(1, "two of two");
  CHECK(c.at(1).commit_index() >= i);
}

TEST_CASE("a removed voter that comes back cannot depose the leader", "[raft][core][voters]") {
  cluster c(3);
  c.elect(1);
  REQUIRE(c.at(1).remove_voter(node_id{3}).ok());
  c.settle();
  c.tick(1, 2);
  c.settle();
  const auto term = c.at(1).term();
  for (int k = 0; k < 10; ++k) {
    c.tick(3, 10);
    c.tick(1, 2);
    c.settle();
  }
  CHECK(c.at(1).role() == role::leader);
  CHECK(c.at(1).term() == term);
  CHECK(c.at(3).role() != role::leader);
}

TEST_CASE("a leader that removes itself leads until the change commits, then hands over",
          "[raft][core][voters]") {
  cluster c(3);
  c.elect(1);
  REQUIRE(c.at(1).remove_voter(node_id{1}).ok());
  for (int k = 0; k < 20 && c.at(1).role() == role::leader; ++k) {
    c.tick(1);
    c.settle();
  }
  REQUIRE(c.changes().size() == 1);
  CHECK(c.changes()[0].code == errc::none);
  CHECK(c.at(1).role() == role::follower);
  CHECK_FALSE(c.at(1).is_voter(node_id{1}));
  // The transferee was told to campaign: one of the two others leads, without waiting for an
  // election timeout.
  const int next = c.at(2).role() == role::leader ? 2 : 3;
  REQUIRE(c.at(next).role() == role::leader);
  CHECK(voter_ids(c.at(next)) == std::vector<int>{2, 3});
  const auto i = c.propose(next, "after");
  CHECK(c.at(next).commit_index() >= i);
  // The removed node never campaigns again.
  c.tick(1, 100);
  c.settle();
  CHECK(c.at(1).role() == role::follower);
}

TEST_CASE("voter changes are refused with a named error when they cannot start",
          "[raft][core][voters]") {
  SECTION("at a follower") {
    cluster c(3, 1024, 1);
    c.elect(1);
    auto p = c.at(2).add_voter(spare(4));
    CHECK(p.code == errc::not_leader_or_follower);
    CHECK(p.leader == node_id{1});
    CHECK(c.at(2).remove_voter(node_id{3}).code == errc::not_leader_or_follower);
  }
  SECTION("a voter already, or no voter") {
    cluster c(3);
    c.elect(1);
    CHECK(c.at(1).add_voter(spare(2)).code == errc::duplicate_voter);
    CHECK(c.at(1).remove_voter(node_id{7}).code == errc::voter_not_found);
  }
  SECTION("the last voter") {
    cluster c(1);
    c.tick(1);
    c.settle();
    CHECK(c.at(1).remove_voter(node_id{1}).code == errc::invalid_request);
  }
  SECTION("one change at a time") {
    cluster c(3, 1024, 1);
    c.elect(1);
    c.isolate(3);
    REQUIRE(c.at(1).remove_voter(node_id{2}).ok());
    // Not committed yet (node 2 has it, but nobody answered): a second change waits.
    CHECK(c.at(1).add_voter(spare(4)).code == errc::request_timed_out);
    CHECK(c.at(1).remove_voter(node_id{3}).code == errc::request_timed_out);
  }
  SECTION("a set that would have no live majority") {
    cluster c(3);
    c.elect(1);
    c.crash(3);
    c.tick(1, 12);
    c.settle();
    // {1, 3} with node 3 down could never commit its own entry.
    CHECK(c.at(1).remove_voter(node_id{2}).code == errc::request_timed_out);
    CHECK(voter_ids(c.at(1)) == std::vector<int>{1, 2, 3});
  }
}

TEST_CASE("a node to add that never catches up times out and nothing changes",
          "[raft][core][voters]") {
  cluster c(3);
  c.elect(1);
  // Node 4 does not run.
  REQUIRE(c.at(1).add_voter(spare(4)).ok());
  for (int k = 0; k < 400 && c.changes().empty(); ++k) {
    c.tick(1);
    c.settle();
  }
  REQUIRE(c.changes().size() == 1);
  CHECK(c.changes()[0].code == errc::request_timed_out);
  CHECK(c.changes()[0].index == log_index{});
  CHECK(voter_ids(c.at(1)) == std::vector<int>{1, 2, 3});
  CHECK(c.at(1).add_voter(spare(5)).ok()); // the next change may start
}

TEST_CASE("a voter set outlives restarts and snapshots, and a truncated one is undone",
          "[raft][core][voters]") {
  cluster c(3, 1024, 1);
  c.elect(1);
  REQUIRE(c.at(1).add_voter(spare(4)).ok());
  c.settle();
  c.tick(1, 4);
  c.settle();
  REQUIRE(voter_ids(c.at(1)) == std::vector<int>{1, 2, 3, 4});
  c.propose(1, "x");
  REQUIRE(c.at(2).compact(c.at(2).applied_index(), b("image")).ok());
  c.drain(2);
  REQUIRE(c.disk(2).snap.voters.size() == 4);
  for (int n = 1; n <= 4; ++n) {
    c.crash(n);
    c.restart(n);
    INFO("node " << n);
    CHECK(voter_ids(c.at(n)) == std::vector<int>{1, 2, 3, 4});
  }

  // A leader cut off appends a removal nobody else gets; the others elect a leader whose entries
  // replace it, and the old leader's voter set is the old one again.
  c.elect(1);
  c.isolate(1);
  REQUIRE(c.at(1).remove_voter(node_id{4}).ok());
  c.drain(1);
  CHECK(voter_ids(c.at(1)) == std::vector<int>{1, 2, 3});
  int next = 0;
  for (int k = 0; k < 200 && next == 0; ++k) {
    for (int n = 2; n <= 4; ++n) c.tick(n);
    c.settle();
    for (int n = 2; n <= 4; ++n)
      if (c.at(n).role() == role::leader) next = n;
  }
  REQUIRE(next != 0);
  c.propose(next, "y");
  c.heal();
  c.tick(next, 2);
  c.settle();
  CHECK(c.at(1).role() == role::follower);
  CHECK(voter_ids(c.at(1)) == std::vector<int>{1, 2, 3, 4});
  REQUIRE(!c.changes().empty());
  CHECK(c.changes().back().code == errc::not_leader_or_follower);
}

} // namespace capstan::raft
