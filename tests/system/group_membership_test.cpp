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

} // namespace

TEST_CASE("two members bootstrapped from different nodes join one generation at the coordinator, "
          "get the leader's assignment, commit only in it, and a leave rebalances the other",
          "[system][cluster][groups]") {
  node_cluster c(binary, 0, "group.initial.rebalance.delay.ms = 0\n");
  c.create_topic("jobs", 2, c.node(1));
  auto a = connect_to(c.node(1));
  auto b = connect_to(c.node(3));
  auto ja = join_of("consumer-a");
  auto jb = join_of("consumer-b");
  const auto a_id = member_id_for(*a, ja);
  const auto b_id = member_id_for(*b, jb);

  auto joined = join_both(*a, ja, *b, jb);
  const auto generation = joined.a.generation;
  const bool a_leads = joined.a.leader == a_id;
  CHECK((a_leads || joined.a.leader == b_id));
  auto& leader_answer = a_leads ? joined.a : joined.b;
  auto& follower_answer = a_leads ? joined.b : joined.a;
  REQUIRE(leader_answer.members.size() == 2);
  CHECK(follower_answer.members.empty());
  for (const auto& m : leader_answer.members)
    CHECK(m.metadata == text((m.member_id == a_id ? "consumer-a" : "consumer-b") +
                             std::string(" subscribes to jobs")));

  // The follower's sync waits for the leader's, which carries both assignments.
  auto& leader = a_leads ? *a : *b;
  auto& follower = a_leads ? *b : *a;
  const auto leader_id = a_leads ? a_id : b_id;
  const auto follower_id = a_leads ? b_id : a_id;
  auto follower_sync = std::async(std::launch::async, [&] {
    return follower.sync_group(group, sync_group_request{follower_id, {}, generation, {}});
  });
  auto leader_sync = leader.sync_group(
      group, sync_group_request{leader_id, {}, generation,
                                {{leader_id, text("jobs-0")}, {follower_id, text("jobs-1")}}});
  auto follower_synced = follower_sync.get();
  REQUIRE(leader_sync);
  REQUIRE(follower_synced);
  CHECK(leader_sync->error == errc::none);
  CHECK(leader_sync->assignment == text("jobs-0"));
  CHECK(follower_synced->error == errc::none);
  CHECK(follower_synced->assignment == text("jobs-1"));
  CHECK(a->heartbeat(group, {a_id, {}, generation}));

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
  auto alone = a->join_group(group, ja);
  REQUIRE(alone);
  CHECK(alone->error == errc::none);
  CHECK(alone->generation == generation + 1);
  CHECK(alone->leader == a_id);
  CHECK(alone->members.size() == 1);
  CHECK(commit_error(*a, 6, {a_id, {}, generation}) == errc::illegal_generation);
}

// The coordinator keeps membership in memory (docs/groups.md): a member of a group whose
// coordinator died is unknown to the next one, and joins it again from scratch, while the
// group's commits survive in __consumer_offsets.
TEST_CASE("after a kill -9 of the coordinator's node the members find the new coordinator, are "
          "told they are unknown, join again, and the group's commits are still there",
          "[system][cluster][groups]") {
  node_cluster c(binary, 0, "group.initial.rebalance.delay.ms = 0\n");
  c.create_topic("jobs", 2, c.node(1));
  auto probe = connect_to(c.node(1));
  REQUIRE(probe->commit_offsets(group, commit_of(3), {}));
  const auto offsets = c.await_full_isr("__consumer_offsets", c.node(1));
  const int coordinator = offsets.leader;
  const int a_node = coordinator % 3 + 1;
  const int b_node = a_node % 3 + 1;
  auto a = connect_to(c.node(a_node));
  auto b = connect_to(c.node(b_node));
  auto ja = join_of("consumer-a");
  auto jb = join_of("consumer-b");
  const auto a_id = member_id_for(*a, ja);
  member_id_for(*b, jb);
  auto joined = join_both(*a, ja, *b, jb);
  // A rebalance is under way when the coordinator dies: b has joined again, a has not.
  jb.protocols[0].metadata = text("consumer-b subscribes to jobs and more");
  auto b_rejoin = std::async(std::launch::async, [&] { return b->join_group(group, jb); });
  c.node(coordinator).kill();

  // b's join, waiting at the dead coordinator, is sent again to the new one, which does not
  // know b's id.
  auto b_after = b_rejoin.get();
  REQUIRE(b_after);
  CHECK(b_after->error == errc::unknown_member_id);
  auto beat = a->heartbeat(group, {a_id, {}, joined.a.generation});
  REQUIRE_FALSE(beat);
  CHECK(beat.err().code == errc::unknown_member_id);
  CHECK(commit_error(*a, 4, {a_id, {}, joined.a.generation}) == errc::unknown_member_id);

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
