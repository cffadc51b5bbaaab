// Consumer-group membership across a cluster (docs/groups.md, "Membership"): real `capstan node`
// processes (tests/support/node_cluster) and the client library's joinGroup, syncGroup,
// heartbeat and leaveGroup, each member bootstrapped from another node, as Kafka consumers that
// find their group's coordinator do.

#include <catch2/catch.hpp>

#include <future>
#include <string>

#include "runtime/client/cluster_client.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

const std::string binary = CAPSTAN_BINARY;
const std::string group = "workers";

std::unique_ptr<client::cluster_client> connect_to(const node_process& n) {
  client::client_config cfg;
  cfg.bootstrap = {n.bootstrap()};
  cfg.request_timeout_ms = 60000;
  auto c = client::cluster_client::connect(cfg);
  if (!c) FAIL("cannot connect to node " << n.id() << ": " << c.err().to_string());
  return std::move(*c);
}

bytes text(const std::string& s) { return bytes(s.begin(), s.end()); }

join_group_request join_of(const std::string& client) {
  join_group_request r;
  r.client_id = client;
  r.session_timeout_ms = 6000;
  r.rebalance_timeout_ms = 20000;
  r.protocol_type = "consumer";
  r.protocols = {group_protocol{"range", text(client + " subscribes to jobs")}};
  return r;
}

// The member id the coordinator hands out to a first join.
std::string member_id_for(client::cluster_client& c, join_group_request& req) {
  auto first = c.join_group(group, req);
  REQUIRE(first);
  REQUIRE(first->error == errc::member_id_required);
  REQUIRE(first->member_id.rfind(req.client_id + "-", 0) == 0);
  req.member_id = first->member_id;
  return first->member_id;
}

struct joined_pair {
  join_group_response a;
  join_group_response b;
};

// `a` and `b` join (each join waits for the other's) and both answers are for one generation.
joined_pair join_both(client::cluster_client& a, const join_group_request& ja,
                      client::cluster_client& b, const join_group_request& jb) {
  auto a_joined = std::async(std::launch::async, [&] { return a.join_group(group, ja); });
  auto b_joined = b.join_group(group, jb);
  auto a_done = a_joined.get();
  REQUIRE(a_done);
  REQUIRE(b_joined);
  INFO(a_done->message << " / " << b_joined->message);
  REQUIRE(a_done->error == errc::none);
  REQUIRE(b_joined->error == errc::none);
  CHECK(a_done->generation == b_joined->generation);
  CHECK(a_done->leader == b_joined->leader);
  CHECK(a_done->protocol_name == "range");
  return {*a_done, *b_joined};
}

std::vector<client::committed_offset> commit_of(int64_t at) {
  return {client::committed_offset{"jobs", 0, at, {}, errc::none, -1}};
}

errc commit_error(client::cluster_client& c, int64_t at, const group_member_ref& member) {
  auto r = c.commit_offsets(group, commit_of(at), member);
  REQUIRE(r);
  REQUIRE(r->size() == 1);
  return (*r)[0].error;
}

// Three nodes, a topic "jobs" and two members, a and b, each bootstrapped from another node;
// with `beside_coordinator`, the group's commits exist and neither member's node is its
// coordinator.
struct two_members {
  explicit two_members(bool beside_coordinator) : c(binary, 0, "group.initial.rebalance.delay.ms = 0\n") {
    // Replication factor 3: taken once all three nodes are registered, so that the first group
    // call below creates __consumer_offsets on all three (with a node still registering it gets
    // two replicas, and the kill -9 tests then leave its partition below min.insync.replicas).
    c.create_topic("jobs", 3, c.node(1));
    int a_node = 1;
    int b_node = 3;
    if (beside_coordinator) {
      auto probe = connect_to(c.node(1));
      REQUIRE(probe->commit_offsets(group, commit_of(3), {}));
      coordinator = c.await_full_isr("__consumer_offsets", c.node(1)).leader;
      a_node = coordinator % 3 + 1;
      b_node = a_node % 3 + 1;
    }
    a = connect_to(c.node(a_node));
    b = connect_to(c.node(b_node));
    a_id = member_id_for(*a, ja);
    b_id = member_id_for(*b, jb);
  }

  // Both join; the generation, and which of them leads, are then known.
  joined_pair join() {
    auto joined = join_both(*a, ja, *b, jb);
    generation = joined.a.generation;
    a_leads = joined.a.leader == a_id;
    return joined;
  }

  client::cluster_client& leader() { return a_leads ? *a : *b; }
  client::cluster_client& follower() { return a_leads ? *b : *a; }
  const std::string& leader_id() const { return a_leads ? a_id : b_id; }
  const std::string& follower_id() const { return a_leads ? b_id : a_id; }

  // The follower's sync waits for the leader's, which assigns it jobs-1 and itself jobs-0:
  // {leader's answer, follower's answer}.
  std::pair<result<sync_group_response>, result<sync_group_response>> sync() {
    auto follower_sync = std::async(std::launch::async, [this] {
      return follower().sync_group(group, sync_group_request{follower_id(), {}, generation, {}});
    });
    auto leader_sync = leader().sync_group(
        group, sync_group_request{leader_id(), {}, generation,
                                  {{leader_id(), text("jobs-0")}, {follower_id(), text("jobs-1")}}});
    return {std::move(leader_sync), follower_sync.get()};
  }

  node_cluster c;
  int coordinator = 0;
  std::unique_ptr<client::cluster_client> a;
  std::unique_ptr<client::cluster_client> b;
  join_group_request ja = join_of("consumer-a");
  join_group_request jb = join_of("consumer-b");
  std::string a_id;
  std::string b_id;
  int32_t generation = -1;
  bool a_leads = false;
};

} // namespace

TEST_CASE("two members bootstrapped from different nodes join one generation at the coordinator, "
          "get the leader's assignment, commit only in it, and a leave rebalances the other",
          "[system][cluster][groups]") {
  two_members m(false);
  auto& a = m.a;
  auto& b = m.b;
  const auto& a_id = m.a_id;
  const auto& b_id = m.b_id;
  auto joined = m.join();
  const auto generation = m.generation;
  CHECK((m.a_leads || joined.a.leader == b_id));
  auto& leader_answer = m.a_leads ? joined.a : joined.b;
  auto& follower_answer = m.a_leads ? joined.b : joined.a;
  REQUIRE(leader_answer.members.size() == 2);
  CHECK(follower_answer.members.empty());
  for (const auto& member : leader_answer.members)
    CHECK(member.metadata == text((member.member_id == a_id ? "consumer-a" : "consumer-b") +
                                  std::string(" subscribes to jobs")));

  auto [leader_sync, follower_synced] = m.sync();
  REQUIRE(leader_sync);
  REQUIRE(follower_synced);
  CHECK(leader_sync->error == errc::none);
  CHECK(leader_sync->assignment == text("jobs-0"));
  CHECK(follower_synced->error == errc::none);
  CHECK(follower_synced->assignment == text("jobs-1"));
  CHECK(a->heartbeat(group, {a_id, {}, generation}));

  // As kafka-consumer-groups: the state and members, and no reset of a group with members.
  std::string out, err;
  REQUIRE(m.c.cli("", {"groups", "describe", group, "--state", "--members"}, m.c.node(2), &out,
                  &err) == 0);
  INFO(out << err);
  CHECK(out.find(group + "\tStable\trange\t" + std::to_string(generation) + "\t" +
                 (m.a_leads ? a_id : b_id) + "\t2\n") != std::string::npos);
  // These assignments are not in the consumer protocol: shown as "-".
  CHECK(out.find(group + "\t" + a_id + "\t-\tconsumer-a\t-\t-\n") != std::string::npos);
  CHECK(out.find(group + "\t" + b_id + "\t-\tconsumer-b\t-\t-\n") != std::string::npos);
  CHECK(m.c.cli("", {"groups", "reset-offsets", group, "--topic", "jobs", "--to-earliest",
                     "--execute"},
                m.c.node(2), &out, &err) == 1);
  CHECK(err.find("its state is Stable") != std::string::npos);

  // Commits are fenced by member and generation; an outsider may not commit for a live group.
  CHECK(commit_error(*a, 5, {a_id, {}, generation}) == errc::none);
  CHECK(commit_error(*a, 6, {a_id, {}, generation - 1}) == errc::illegal_generation);
  CHECK(commit_error(*b, 6, {}) == errc::unknown_member_id);
  auto fetched = b->fetch_offsets(group, {{"jobs", 0}});
  REQUIRE(fetched);
  CHECK((*fetched)[0].offset == 5);

  // b leaves: a is told to rejoin at its next heartbeat and leads the next generation alone.
  REQUIRE(b->leave_group(group, {b_id, {}, -1}));
  auto beat = a->heartbeat(group, {a_id, {}, generation});
  REQUIRE_FALSE(beat);
  CHECK(beat.err().code == errc::rebalance_in_progress);
  auto alone = a->join_group(group, m.ja);
  REQUIRE(alone);
  CHECK(alone->error == errc::none);
  CHECK(alone->generation == generation + 1);
  CHECK(alone->leader == a_id);
  CHECK(alone->members.size() == 1);
  CHECK(commit_error(*a, 6, {a_id, {}, generation}) == errc::illegal_generation);
}

// The coordinator records each Stable generation in __consumer_offsets (docs/groups.md,
// "Membership"): the node that takes over resumes the group, and its members go on.
TEST_CASE("a Stable group outlives a kill -9 of its coordinator's node: its members go on "
          "heartbeating, syncing and committing in their generation at the new coordinator",
          "[system][cluster][groups]") {
  two_members m(true);
  m.join();
  auto [leader_sync, follower_sync] = m.sync();
  REQUIRE(leader_sync);
  REQUIRE(follower_sync);
  auto& a = m.a;
  auto& b = m.b;
  const auto generation = m.generation;

  m.c.node(m.coordinator).kill();
  // Each call finds the new coordinator, which loaded the group's record.
  auto why = [](const status& s) { return s ? std::string() : s.err().to_string(); };
  auto a_beat = a->heartbeat(group, {m.a_id, {}, generation});
  INFO("a: " << why(a_beat));
  CHECK(a_beat);
  auto b_beat = b->heartbeat(group, {m.b_id, {}, generation});
  INFO("b: " << why(b_beat));
  CHECK(b_beat);
  auto again = m.follower().sync_group(group, sync_group_request{m.follower_id(), {}, generation, {}});
  INFO("sync: " << (again ? again->message : again.err().to_string()));
  REQUIRE(again);
  CHECK(again->error == errc::none);
  CHECK(again->assignment == text("jobs-1"));
  CHECK(commit_error(*a, 9, {m.a_id, {}, generation}) == errc::none);
  CHECK(commit_error(*a, 9, {m.a_id, {}, generation + 1}) == errc::illegal_generation);
  auto fetched = b->fetch_offsets(group, {{"jobs", 0}});
  REQUIRE(fetched);
  CHECK((*fetched)[0].offset == 9);
}

// What a coordinator had not recorded dies with it: a member of a rebalance in progress is
// unknown to the next coordinator and joins again from scratch, while the group's commits
// survive in __consumer_offsets.
TEST_CASE("after a kill -9 of the coordinator's node the members find the new coordinator, are "
          "told they are unknown, join again, and the group's commits are still there",
          "[system][cluster][groups]") {
  two_members m(true);
  auto& a = m.a;
  auto& b = m.b;
  auto& ja = m.ja;
  auto& jb = m.jb;
  const auto joined = m.join();
  // A rebalance is under way when the coordinator dies: b has joined again, a has not.
  jb.protocols[0].metadata = text("consumer-b subscribes to jobs and more");
  auto b_rejoin = std::async(std::launch::async, [&] { return b->join_group(group, jb); });
  m.c.node(m.coordinator).kill();

  // b's join, waiting at the dead coordinator, is sent again to the new one, which does not
  // know b's id.
  auto b_after = b_rejoin.get();
  REQUIRE(b_after);
  CHECK(b_after->error == errc::unknown_member_id);
  auto beat = a->heartbeat(group, {m.a_id, {}, joined.a.generation});
  REQUIRE_FALSE(beat);
  CHECK(beat.err().code == errc::unknown_member_id);
  CHECK(commit_error(*a, 4, {m.a_id, {}, joined.a.generation}) == errc::unknown_member_id);

  ja.member_id.clear();
  jb.member_id.clear();
  member_id_for(*a, ja);
  member_id_for(*b, jb);
  auto again = join_both(*a, ja, *b, jb);
  CHECK(again.a.generation == 1);
  auto fetched = a->fetch_offsets(group, {{"jobs", 0}});
  REQUIRE(fetched);
  CHECK((*fetched)[0].offset == 3);
}
