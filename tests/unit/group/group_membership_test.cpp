#include <catch2/catch.hpp>

#include "actors/group/group_membership.hpp"
#include "runtime/group/consumer_protocol.hpp"

using namespace capstan;

namespace {

constexpr int32_t session_ms = 10000;
constexpr int32_t rebalance_ms = 30000;

group_protocol proto(const std::string& name, const std::string& metadata = "m") {
  return group_protocol{name, bytes(metadata.begin(), metadata.end())};
}

bytes data(const std::string& s) { return bytes(s.begin(), s.end()); }

// A group and the requests its members send, with member ids "<client>-<n>".
struct group_fixture {
  explicit group_fixture(group_limits limits = no_delay())
    : group("g", limits, [this](const std::string& client) {
        return client + "-" + std::to_string(++ids);
      }) {}

  static group_limits no_delay() {
    group_limits l;
    l.initial_rebalance_delay_ms = 0;
    return l;
  }

  join_group_request request(const std::string& member, const std::string& client,
                             std::vector<group_protocol> protocols = {proto("range")},
                             const std::string& instance = {}) const {
    join_group_request r;
    r.member_id = member;
    r.group_instance_id = instance;
    r.client_id = client;
    r.session_timeout_ms = session_ms;
    r.rebalance_timeout_ms = rebalance_ms;
    r.protocol_type = "consumer";
    r.protocols = std::move(protocols);
    return r;
  }

  group_membership::outcome join(const join_group_request& r) { return group.join(++reply, r, now); }

  // A dynamic member's first join and the join with the id it was given: the answer to that
  // second join (parked or not) is reply `last_reply()`.
  std::string join_new(const std::string& client, std::vector<group_protocol> protocols = {proto("range")},
                       group_membership::outcome* second = nullptr) {
    auto first = join(request("", client, protocols));
    REQUIRE(first.joins.size() == 1);
    REQUIRE(first.joins[0].response.error == errc::member_id_required);
    const auto id = first.joins[0].response.member_id;
    auto out = join(request(id, client, protocols));
    if (second) *second = out;
    return id;
  }

  const join_group_response* answer_to(const group_membership::outcome& out, group_membership::reply_id to) {
    for (const auto& j : out.joins)
      if (j.to == to) return &j.response;
    return nullptr;
  }

  const sync_group_response* sync_answer(const group_membership::outcome& out, group_membership::reply_id to) {
    for (const auto& s : out.syncs)
      if (s.to == to) return &s.response;
    return nullptr;
  }

  group_membership::outcome sync(const std::string& member, std::vector<member_assignment> a = {}) {
    return group.sync(++reply, sync_group_request{member, {}, group.generation(), std::move(a)}, now);
  }

  // a and b joined in generation 2, led by a, neither synced yet (CompletingRebalance).
  std::pair<std::string, std::string> join_two() {
    const auto a = join_new("a");
    group_membership::outcome parked;
    const auto b = join_new("b", {proto("range")}, &parked);
    REQUIRE(join(request(a, "a")).joins.size() == 2);
    return {a, b};
  }

  // Brings `members` (all joined and answered in the current generation) to Stable with
  // assignment "<member>-assignment" each.
  void stabilize(const std::string& leader, const std::vector<std::string>& members) {
    std::vector<member_assignment> a;
    for (const auto& m : members) a.push_back({m, data(m + "-assignment")});
    for (const auto& m : members)
      if (m != leader) REQUIRE(sync(m).syncs.empty());
    auto out = sync(leader, a);
    REQUIRE(out.syncs.size() == members.size());
    REQUIRE(group.state() == group_state::stable);
  }

  int ids = 0;
  group_membership::reply_id reply = 0;
  timestamp_ms now = 1000;
  group_membership group;
};

} // namespace

TEST_CASE("group membership: a first join gets MEMBER_ID_REQUIRED, the join with the id opens "
          "generation 1 led by that member, and its sync makes the group Stable",
          "[group][membership]") {
  group_fixture f;
  CHECK(f.group.state() == group_state::empty);
  group_membership::outcome joined;
  const auto id = f.join_new("c", {proto("range")}, &joined);
  CHECK(id == "c-1");
  REQUIRE(joined.joins.size() == 1);
  const auto& r = joined.joins[0].response;
  CHECK(r.error == errc::none);
  CHECK(r.generation == 1);
  CHECK(r.leader == id);
  CHECK(r.member_id == id);
  CHECK(r.protocol_name == "range");
  REQUIRE(r.members.size() == 1);
  CHECK(r.members[0].metadata == data("m"));
  CHECK(f.group.state() == group_state::completing_rebalance);
  CHECK(f.group.heartbeat({id, {}, 1}, f.now) == errc::none);

  auto synced = f.sync(id, {{id, data("p0,p1")}});
  REQUIRE(synced.syncs.size() == 1);
  CHECK(synced.syncs[0].response.error == errc::none);
  CHECK(synced.syncs[0].response.assignment == data("p0,p1"));
  CHECK(f.group.state() == group_state::stable);
  // A sync again in Stable gets the same assignment at once.
  auto again = f.sync(id);
  REQUIRE(again.syncs.size() == 1);
  CHECK(again.syncs[0].response.assignment == data("p0,p1"));
}

TEST_CASE("group membership: a second member's join rebalances, both get generation 2, the "
          "leader alone gets the members, and followers' syncs wait for the leader's",
          "[group][membership]") {
  group_fixture f;
  const auto a = f.join_new("a");
  f.stabilize(a, {a});
  group_membership::outcome joined_b;
  const auto b = f.join_new("b", {proto("range")}, &joined_b);
  CHECK(joined_b.joins.empty()); // parked until a rejoins
  CHECK(f.group.state() == group_state::preparing_rebalance);
  CHECK(f.group.heartbeat({a, {}, 1}, f.now) == errc::rebalance_in_progress);
  // A sync of the old generation is refused while the group rebalances.
  CHECK(f.group.sync(99, {a, {}, 1, {}}, f.now).syncs[0].response.error == errc::rebalance_in_progress);

  const auto b_reply = f.reply;
  auto joined_a = f.join(f.request(a, "a"));
  REQUIRE(joined_a.joins.size() == 2);
  const auto* ra = f.answer_to(joined_a, f.reply);
  const auto* rb = f.answer_to(joined_a, b_reply);
  REQUIRE(ra);
  REQUIRE(rb);
  CHECK(ra->generation == 2);
  CHECK(rb->generation == 2);
  CHECK(ra->leader == a);
  CHECK(rb->leader == a);
  CHECK(ra->members.size() == 2);
  CHECK(rb->members.empty());

  auto follower_sync = f.sync(b);
  CHECK(follower_sync.syncs.empty());
  const auto b_sync = f.reply;
  auto leader_sync = f.sync(a, {{a, data("p0")}, {b, data("p1")}});
  REQUIRE(leader_sync.syncs.size() == 2);
  CHECK(f.sync_answer(leader_sync, b_sync)->assignment == data("p1"));
  CHECK(f.sync_answer(leader_sync, f.reply)->assignment == data("p0"));
  CHECK(f.group.state() == group_state::stable);
  CHECK(f.group.heartbeat({a, {}, 1}, f.now) == errc::illegal_generation);
  CHECK(f.group.heartbeat({b, {}, 2}, f.now) == errc::none);
}

TEST_CASE("group membership: an empty group's first rebalance waits the initial delay, each new "
          "member extending it",
          "[group][membership]") {
  group_limits limits;
  limits.initial_rebalance_delay_ms = 3000;
  group_fixture f(limits);
  group_membership::outcome out;
  const auto a = f.join_new("a", {proto("range")}, &out);
  CHECK(out.joins.empty());
  const auto a_reply = f.reply;
  CHECK(f.group.next_deadline() == f.now + 3000);
  f.now += 1000;
  CHECK(f.group.tick(f.now).joins.empty());
  f.join_new("b", {proto("range")}, &out);
  CHECK(out.joins.empty());
  f.now += 2999;
  CHECK(f.group.tick(f.now).joins.empty());
  f.now += 1;
  auto done = f.group.tick(f.now);
  REQUIRE(done.joins.size() == 2);
  CHECK(f.answer_to(done, a_reply)->generation == 1);
  CHECK(f.answer_to(done, a_reply)->members.size() == 2);
  CHECK(f.group.state() == group_state::completing_rebalance);
  (void) a;
}

TEST_CASE("group membership: a member that does not rejoin within the rebalance timeout leaves "
          "the group, and the others get the next generation",
          "[group][membership]") {
  group_fixture f;
  const auto [a, b] = f.join_two();
  f.stabilize(a, {a, b});
  group_membership::outcome out;

  const auto c = f.join_new("c", {proto("range")}, &out);
  const auto c_reply = f.reply;
  CHECK(f.join(f.request(a, "a")).joins.empty());
  const auto a_reply = f.reply;
  // b keeps its session alive (each heartbeat answered REBALANCE_IN_PROGRESS) but never rejoins.
  const auto rebalance_began = f.now;
  while (f.now + session_ms / 2 < rebalance_began + rebalance_ms) {
    f.now += session_ms / 2;
    CHECK(f.group.heartbeat({b, {}, 2}, f.now) == errc::rebalance_in_progress);
    CHECK(f.group.tick(f.now).joins.empty());
  }
  f.now = rebalance_began + rebalance_ms;
  auto done = f.group.tick(f.now);
  REQUIRE(done.joins.size() == 2);
  CHECK(f.answer_to(done, a_reply)->generation == 3);
  CHECK(f.answer_to(done, c_reply)->generation == 3);
  CHECK(f.answer_to(done, a_reply)->members.size() == 2);
  CHECK(f.group.heartbeat({b, {}, 3}, f.now) == errc::unknown_member_id);
  CHECK(f.group.snapshot(0).members.size() == 2);
}

TEST_CASE("group membership: a member whose session expires leaves, the rest rebalance without it",
          "[group][membership]") {
  group_fixture f;
  const auto [a, b] = f.join_two();
  f.stabilize(a, {a, b});

  f.now += session_ms - 1;
  CHECK(f.group.heartbeat({a, {}, 2}, f.now) == errc::none);
  CHECK(f.group.tick(f.now).joins.empty());
  CHECK(f.group.state() == group_state::stable);
  f.now += 1; // b's session ends; a's runs until now + session_ms - 1
  CHECK(f.group.next_deadline() <= f.now);
  f.group.tick(f.now);
  CHECK(f.group.state() == group_state::preparing_rebalance);
  CHECK(f.group.heartbeat({a, {}, 2}, f.now) == errc::rebalance_in_progress);
  auto rejoined = f.join(f.request(a, "a"));
  REQUIRE(rejoined.joins.size() == 1);
  CHECK(rejoined.joins[0].response.generation == 3);
  CHECK(rejoined.joins[0].response.members.size() == 1);
}

TEST_CASE("group membership: a member's leave rebalances at once, and the last one's leaves the "
          "group Empty in a new generation",
          "[group][membership]") {
  group_fixture f;
  const auto [a, b] = f.join_two();
  f.stabilize(a, {a, b});

  auto [code, left] = f.group.leave({a, {}, -1}, f.now);
  CHECK(code == errc::none);
  CHECK(f.group.state() == group_state::preparing_rebalance);
  // The leader left: b leads the next generation.
  auto rejoined = f.join(f.request(b, "b"));
  REQUIRE(rejoined.joins.size() == 1);
  CHECK(rejoined.joins[0].response.leader == b);
  CHECK(rejoined.joins[0].response.generation == 3);
  f.stabilize(b, {b});
  CHECK(f.group.leave({a, {}, -1}, f.now).first == errc::unknown_member_id);
  CHECK(f.group.leave({b, {}, -1}, f.now).first == errc::none);
  CHECK(f.group.state() == group_state::empty);
  CHECK(f.group.generation() == 4);
  CHECK(f.group.snapshot(0).members.empty());
}

TEST_CASE("group membership: a rebalance during CompletingRebalance answers parked syncs "
          "REBALANCE_IN_PROGRESS and voids the assignment",
          "[group][membership]") {
  group_fixture f;
  const auto [a, b] = f.join_two();
  REQUIRE(f.group.state() == group_state::completing_rebalance);
  CHECK(f.sync(b).syncs.empty());
  const auto b_sync = f.reply;
  CHECK(f.group.check_commit({b, {}, 2}) == errc::rebalance_in_progress);
  // A new member comes before the leader synced.
  auto first = f.join(f.request("", "c"));
  auto joined_c = f.join(f.request(first.joins[0].response.member_id, "c"));
  REQUIRE(f.sync_answer(joined_c, b_sync));
  CHECK(f.sync_answer(joined_c, b_sync)->error == errc::rebalance_in_progress);
  CHECK(f.group.state() == group_state::preparing_rebalance);
}

TEST_CASE("group membership: bad joins, syncs and heartbeats get Kafka's errors", "[group][membership]") {
  group_fixture f;
  auto bad = f.request("", "c");
  bad.session_timeout_ms = 10;
  CHECK(f.join(bad).joins[0].response.error == errc::invalid_session_timeout);
  bad = f.request("", "c");
  bad.protocols.clear();
  CHECK(f.join(bad).joins[0].response.error == errc::inconsistent_group_protocol);
  CHECK(f.join(f.request("nobody", "c")).joins[0].response.error == errc::unknown_member_id);

  const auto a = f.join_new("a", {proto("range"), proto("roundrobin")});
  auto other_type = f.request("", "b");
  other_type.protocol_type = "connect";
  CHECK(f.join(other_type).joins[0].response.error == errc::inconsistent_group_protocol);
  CHECK(f.join(f.request("", "b", {proto("sticky")})).joins[0].response.error ==
        errc::inconsistent_group_protocol);
  CHECK(f.group.heartbeat({"nobody", {}, 1}, f.now) == errc::unknown_member_id);
  CHECK(f.group.heartbeat({a, {}, 7}, f.now) == errc::illegal_generation);
  CHECK(f.group.sync(99, {a, {}, 7, {}}, f.now).syncs[0].response.error == errc::illegal_generation);
  CHECK(f.group.sync(99, {"nobody", {}, 1, {}}, f.now).syncs[0].response.error == errc::unknown_member_id);
}

TEST_CASE("group membership: group.max.size refuses a member past it", "[group][membership]") {
  auto limits = group_fixture::no_delay();
  limits.max_size = 1;
  group_fixture f(limits);
  f.join_new("a");
  auto first = f.join(f.request("", "b"));
  CHECK(first.joins[0].response.error == errc::group_max_size_reached);
  auto static_b = f.join(f.request("", "b", {proto("range")}, "instance-b"));
  CHECK(static_b.joins[0].response.error == errc::group_max_size_reached);
}

TEST_CASE("group membership: the protocol is the one most members prefer among those all support, "
          "the leader's order breaking ties",
          "[group][membership]") {
  group_fixture f;
  const auto a = f.join_new("a", {proto("range"), proto("roundrobin")});
  group_membership::outcome out;
  f.join_new("b", {proto("roundrobin"), proto("range")}, &out);
  auto joined = f.join(f.request(a, "a", {proto("range"), proto("roundrobin")}));
  REQUIRE(joined.joins.size() == 2);
  CHECK(joined.joins[0].response.protocol_name == "range");

  f.join_new("c", {proto("roundrobin")}, &out);
  // a and b must rejoin; c's single protocol settles it
  f.join(f.request(a, "a", {proto("range"), proto("roundrobin")}));
  auto done = f.join(f.request("b-2", "b", {proto("roundrobin"), proto("range")}));
  REQUIRE(done.joins.size() == 3);
  CHECK(done.joins[0].response.protocol_name == "roundrobin");
}

TEST_CASE("group membership: a static member that restarts within its session timeout keeps its "
          "assignment with no rebalance, and its old id is fenced",
          "[group][membership]") {
  group_fixture f;
  auto joined = f.join(f.request("", "a", {proto("range")}, "instance-a"));
  REQUIRE(joined.joins.size() == 1); // no MEMBER_ID_REQUIRED for a static member
  const auto old_id = joined.joins[0].response.member_id;
  CHECK(joined.joins[0].response.error == errc::none);
  f.stabilize(old_id, {old_id});
  const auto generation = f.group.generation();

  auto back = f.join(f.request("", "a", {proto("range")}, "instance-a"));
  REQUIRE(back.joins.size() == 1);
  const auto& r = back.joins[0].response;
  CHECK(r.error == errc::none);
  CHECK(r.member_id != old_id);
  CHECK(r.generation == generation);
  CHECK(r.leader == r.member_id);
  CHECK(f.group.state() == group_state::stable);
  auto synced = f.group.sync(++f.reply, {r.member_id, "instance-a", generation, {}}, f.now);
  CHECK(synced.syncs[0].response.assignment == data(old_id + "-assignment"));
  CHECK(f.group.heartbeat({old_id, "instance-a", generation}, f.now) == errc::fenced_instance_id);
  CHECK(f.group.check_commit({old_id, "instance-a", generation}) == errc::fenced_instance_id);
  CHECK(f.group.check_commit({r.member_id, "instance-a", generation}) == errc::none);
  CHECK(f.join(f.request(old_id, "a", {proto("range")}, "instance-a")).joins[0].response.error ==
        errc::fenced_instance_id);
}

TEST_CASE("group membership: a static member back with what it owned left out of its subscription "
          "causes no rebalance, one back with other topics does",
          "[group][membership]") {
  group_fixture f;
  auto subscribed = [](std::vector<std::string> topics, topic_partitions owned, int32_t generation) {
    return group_protocol{"range", encode_subscription({std::move(topics), {}, std::move(owned), generation})};
  };
  auto joined = f.join(f.request("", "a", {subscribed({"t"}, {}, -1)}, "instance-a"));
  REQUIRE(joined.joins.size() == 1);
  const auto first_id = joined.joins[0].response.member_id;
  f.stabilize(first_id, {first_id});
  const auto generation = f.group.generation();

  // Its last join had claimed partitions of the generation before; the restarted process owns
  // nothing and knows no generation: the same request for the assignor.
  auto back = f.join(f.request("", "a", {subscribed({"t"}, {}, -1)}, "instance-a"));
  REQUIRE(back.joins.size() == 1);
  CHECK(back.joins[0].response.error == errc::none);
  CHECK(back.joins[0].response.generation == generation);
  CHECK(f.group.state() == group_state::stable);

  auto claimed = f.join(f.request("", "a", {subscribed({"t"}, {{"t", {0, 1}}}, generation)}, "instance-a"));
  REQUIRE(claimed.joins.size() == 1);
  CHECK(claimed.joins[0].response.generation == generation);
  CHECK(f.group.state() == group_state::stable);

  // Other topics: the assignor must run again.
  auto other = f.join(f.request("", "a", {subscribed({"t", "u"}, {}, -1)}, "instance-a"));
  CHECK(f.group.state() != group_state::stable);
  for (const auto& j : other.joins) CHECK(j.response.generation != generation);
}

TEST_CASE("group membership: offset commits are fenced by member and generation, a memberless "
          "commit only while the group is empty",
          "[group][membership]") {
  group_fixture f;
  CHECK(f.group.check_commit({"", {}, -1}) == errc::none);
  const auto a = f.join_new("a");
  f.stabilize(a, {a});
  CHECK(f.group.check_commit({"", {}, -1}) == errc::unknown_member_id);
  CHECK(f.group.check_commit({a, {}, 1}) == errc::none);
  CHECK(f.group.check_commit({a, {}, 0}) == errc::illegal_generation);
  CHECK(f.group.check_commit({"nobody", {}, 1}) == errc::unknown_member_id);
  // During the join phase a member may still commit what it read (commit on revoke).
  group_membership::outcome out;
  f.join_new("b", {proto("range")}, &out);
  CHECK(f.group.state() == group_state::preparing_rebalance);
  CHECK(f.group.check_commit({a, {}, 1}) == errc::none);
}

TEST_CASE("group membership: a coordinator that unloads the group in the middle of a rebalance "
          "answers parked joins and syncs NOT_COORDINATOR",
          "[group][membership]") {
  group_fixture f;
  const auto a = f.join_new("a");
  f.stabilize(a, {a});
  group_membership::outcome out;
  f.join_new("b", {proto("range")}, &out);
  const auto b_reply = f.reply;
  auto unloaded = f.group.unload();
  REQUIRE(f.answer_to(unloaded, b_reply));
  CHECK(f.answer_to(unloaded, b_reply)->error == errc::not_coordinator);
  CHECK(f.group.state() == group_state::dead);
  CHECK(f.join(f.request(a, "a")).joins[0].response.error == errc::coordinator_not_available);
  CHECK(f.group.heartbeat({a, {}, 1}, f.now) == errc::coordinator_not_available);
  CHECK(f.group.check_commit({a, {}, 1}) == errc::coordinator_not_available);
  CHECK_FALSE(f.group.next_deadline());
}

TEST_CASE("group membership: a member id handed out but never joined with expires after the "
          "session timeout and then holds up no rebalance",
          "[group][membership]") {
  group_fixture f;
  const auto a = f.join_new("a");
  f.stabilize(a, {a});
  auto first = f.join(f.request("", "b"));
  const auto b = first.joins[0].response.member_id;
  // A rebalance in which the pending b never joins: a's rejoin alone completes it only once
  // b's id expires.
  auto rejoined = f.join(f.request(a, "a", {proto("range", "new subscription")}));
  CHECK(rejoined.joins.empty());
  f.now += session_ms;
  auto done = f.group.tick(f.now);
  REQUIRE(done.joins.size() == 1);
  CHECK(done.joins[0].response.generation == 2);
  CHECK(f.join(f.request(b, "b")).joins[0].response.error == errc::unknown_member_id);
}
