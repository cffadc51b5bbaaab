#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/group/group_coordinator.hpp"
#include "actors/replica/control_codec.hpp"
#include "actors/replica/metadata_cache.hpp"
#include "actors/replica/replica_manager_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr caf::timespan timeout = 30s;

errc code_of(const caf::error& e) {
  return from_caf_error(e).code;
}

metadata_snapshot offsets_topic_snapshot(int32_t partitions) {
  topic_metadata t;
  t.name = consumer_offsets_topic;
  t.id[0] = 42;
  t.internal = true;
  t.configs = {{"cleanup.policy", "compact"}};
  for (int32_t p = 0; p < partitions; ++p)
    t.partitions.push_back(partition_assignment{p, {1}, 1, 0, {1}, {}});
  auto m = std::make_shared<cluster_metadata>();
  m->cluster_id = "test";
  m->topics.emplace(t.name, t);
  return m;
}

// The metadata cache of node 1 as the controller's UpdateMetadata builds it: __consumer_offsets
// (as offsets_topic_snapshot) with every partition led by `leader` at `epoch`; no topic when
// `partitions` is 0.
metadata_cache_ptr offsets_cache(int32_t partitions, int32_t leader = 1, int32_t epoch = 0) {
  update_metadata_msg u;
  u.cluster_id = "test";
  u.nodes = {node_endpoint_msg{node_id{1}, "127.0.0.1", 9092, 9093, {}},
             node_endpoint_msg{node_id{2}, "127.0.0.1", 9094, 9095, {}}};
  if (partitions > 0) {
    topic_id id{};
    id[0] = 42;
    u.topics.push_back(topic_config_msg{consumer_offsets_topic, id, true, {}});
    for (int32_t p = 0; p < partitions; ++p)
      u.partitions.push_back(partition_state_msg{{consumer_offsets_topic, p},
                                                 id,
                                                 node_id{leader},
                                                 leader_epoch{epoch},
                                                 {node_id{leader}},
                                                 0,
                                                 {node_id{leader}},
                                                 {}});
  }
  return std::make_shared<const metadata_cache>(u, std::map<std::string, std::string>{});
}

// A node's replica side and group coordinator over one data dir; restartable.
struct group_fixture {
  temp_dir dir{"groups"};
  int32_t partitions;
  // What the coordinator's metadata cache says; tests replace it to move the leadership.
  std::shared_ptr<metadata_cache_ptr> cache = std::make_shared<metadata_cache_ptr>();
  std::unique_ptr<threaded_system> sys;
  replica_manager_actor manager;
  group_coordinator_actor groups;

  // The wall clock commits are stamped with and expire by, when a test sets `retention`.
  std::shared_ptr<std::atomic<int64_t>> wall = std::make_shared<std::atomic<int64_t>>(1000000);
  std::optional<std::chrono::milliseconds> retention;

  explicit group_fixture(int32_t partitions = 3, std::optional<std::chrono::milliseconds> retention = {})
      : partitions(partitions), retention(retention) {
    start();
  }

  void start() {
    sys = std::make_unique<threaded_system>();
    replica_manager_options opts;
    opts.data_dir = dir.path();
    opts.schedule_background_work = false;
    auto m = spawn_replica_manager(sys->sys(), opts, nullptr);
    if (!m) FAIL("spawn failed: " << m.err().to_string());
    manager = *m;
    sys->track(manager);
    auto applied = sys->request<std::vector<topic_partition>>(manager, timeout, apply_atom_v,
                                                              offsets_topic_snapshot(partitions));
    REQUIRE(applied);
    REQUIRE(applied->empty());
    *cache = offsets_cache(partitions);
    group_coordinator_options go;
    go.replicas = manager;
    go.node = node_id{1};
    go.cache = [c = cache] { return std::atomic_load(&*c); };
    go.limits = group_limits{6000, 1800000, 0, INT32_MAX};
    if (retention) {
      go.clock = [w = wall] { return w->load(); };
      go.offsets_retention = *retention;
      go.offsets_retention_check_interval = std::chrono::milliseconds(50);
    }
    groups = spawn_group_coordinator(sys->sys(), go);
    sys->track(groups);
  }
  void stop() {
    caf::anon_send_exit(groups, caf::exit_reason::user_shutdown);
    REQUIRE(sys->request<bool>(manager, timeout, stop_atom_v));
    sys.reset();
  }

  caf::expected<group_offsets> commit(const std::string& group, group_offsets entries) {
    return sys->request<group_offsets>(groups, timeout, commit_atom_v, group, group_member_ref{}, std::move(entries));
  }
  caf::expected<group_offsets> fetch(const std::string& group, group_offsets wanted = {}) {
    return sys->request<group_offsets>(groups, timeout, fetch_atom_v, group, std::move(wanted));
  }
  caf::expected<bool> remove(const std::string& group) {
    return sys->request<bool>(groups, timeout, delgrp_atom_v, group);
  }
};

group_offset entry(std::string topic, int32_t partition, int64_t off = -1, std::string meta = {},
                   int32_t leader_epoch = -1) {
  return group_offset{std::move(topic), partition, off, std::move(meta), errc::none, leader_epoch};
}

} // namespace

TEST_CASE("committed offsets are fetched back, unknown ones are -1", "[group]") {
  group_fixture f;
  auto c = f.commit("g1", {entry("orders", 0, 10, "m0"), entry("orders", 1, 20)});
  REQUIRE(c);
  REQUIRE(c->size() == 2);
  CHECK((*c)[0].error == errc::none);
  CHECK((*c)[1].error == errc::none);

  auto r = f.fetch("g1", {entry("orders", 0), entry("orders", 1), entry("orders", 2)});
  REQUIRE(r);
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].offset == 10);
  CHECK((*r)[0].metadata == "m0");
  CHECK((*r)[1].offset == 20);
  CHECK((*r)[2].offset == -1);

  auto other = f.fetch("g2", {entry("orders", 0)});
  REQUIRE(other);
  CHECK((*other)[0].offset == -1);
}

TEST_CASE("a later commit replaces an earlier one, and an empty fetch list returns all",
          "[group]") {
  group_fixture f;
  REQUIRE(f.commit("g", {entry("a", 0, 1), entry("b", 3, 7)}));
  REQUIRE(f.commit("g", {entry("a", 0, 5)}));
  auto all = f.fetch("g");
  REQUIRE(all);
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].topic == "a");
  CHECK((*all)[0].offset == 5);
  CHECK((*all)[1].topic == "b");
  CHECK((*all)[1].partition == 3);
  CHECK((*all)[1].offset == 7);
}

TEST_CASE("an empty group id is INVALID_CONFIG, bad entries fail alone", "[group]") {
  group_fixture f;
  auto c = f.commit("", {entry("a", 0, 1)});
  REQUIRE_FALSE(c);
  CHECK(code_of(c.error()) == errc::invalid_request);
  auto fe = f.fetch("");
  REQUIRE_FALSE(fe);
  CHECK(code_of(fe.error()) == errc::invalid_request);

  auto mixed = f.commit("g", {entry("a", 0, -5), entry("", 0, 1), entry("a", -1, 1),
                              entry("a", 1, 1, std::string(5000, 'm')), entry("a", 2, 3)});
  REQUIRE(mixed);
  REQUIRE(mixed->size() == 5);
  CHECK((*mixed)[0].error == errc::offset_out_of_range);
  CHECK((*mixed)[1].error == errc::invalid_topic_exception);
  CHECK((*mixed)[2].error == errc::unknown_topic_or_partition);
  CHECK((*mixed)[3].error == errc::message_too_large);
  CHECK((*mixed)[4].error == errc::none);
  auto all = f.fetch("g");
  REQUIRE(all);
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].partition == 2);
}

TEST_CASE("commits survive a restart of the node's actors on the same data dir, leader epochs "
          "included",
          "[group]") {
  group_fixture f(3);
  for (int i = 0; i < 10; ++i) {
    const std::string g = "group-" + std::to_string(i);
    REQUIRE(
        f.commit(g, {entry("t", 0, i), entry("t", 1, 100 + i, "meta-" + std::to_string(i), i)}));
  }
  REQUIRE(f.commit("group-3", {entry("t", 0, 33)}));
  f.stop();
  f.start();
  for (int i = 0; i < 10; ++i) {
    const std::string g = "group-" + std::to_string(i);
    auto r = f.fetch(g);
    REQUIRE(r);
    REQUIRE(r->size() == 2);
    CHECK((*r)[0].offset == (i == 3 ? 33 : i));
    CHECK((*r)[0].leader_epoch == -1);
    CHECK((*r)[1].offset == 100 + i);
    CHECK((*r)[1].metadata == "meta-" + std::to_string(i));
    CHECK((*r)[1].leader_epoch == i);
  }
}

TEST_CASE("without the offsets topic in the metadata, requests fail with "
          "COORDINATOR_NOT_AVAILABLE",
          "[group]") {
  temp_dir dir{"groups-missing"};
  threaded_system sys;
  replica_manager_options opts;
  opts.data_dir = dir.path();
  auto m = spawn_replica_manager(sys.sys(), opts, nullptr);
  REQUIRE(m);
  sys.track(*m);
  auto none = offsets_cache(0);
  group_coordinator_options go;
  go.replicas = *m;
  go.node = node_id{1};
  go.cache = [none] { return none; };
  auto groups = spawn_group_coordinator(sys.sys(), go);
  sys.track(groups);
  auto r =
      sys.request<group_offsets>(groups, timeout, fetch_atom_v, std::string{"g"}, group_offsets{});
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::coordinator_not_available);
}

// The coordinator of a group is the leader of its offsets partition: a node that no longer leads
// it answers NOT_COORDINATOR, and one that leads it again at a new leader epoch builds the
// group's offsets afresh from the log, commits made meanwhile (by another leader) included.
TEST_CASE("a node answers for a group only while it leads the group's offsets partition",
          "[group]") {
  group_fixture f{1};
  REQUIRE(f.commit("g", {entry("t", 0, 5)}));
  std::atomic_store(&*f.cache, offsets_cache(1, 2, 1));
  auto refused = f.commit("g", {entry("t", 0, 6)});
  REQUIRE_FALSE(refused);
  CHECK(code_of(refused.error()) == errc::not_coordinator);
  auto fetched = f.fetch("g", {entry("t", 0)});
  REQUIRE_FALSE(fetched);
  CHECK(code_of(fetched.error()) == errc::not_coordinator);

  std::atomic_store(&*f.cache, offsets_cache(1, 1, 2));
  auto again = f.fetch("g", {entry("t", 0)});
  REQUIRE(again);
  CHECK((*again)[0].offset == 5);
  REQUIRE(f.commit("g", {entry("t", 0, 7)}));
  auto last = f.fetch("g", {entry("t", 0)});
  REQUIRE(last);
  CHECK((*last)[0].offset == 7);
}

// As Kafka's coordinator, a node loads a partition of __consumer_offsets when it takes over its
// leadership, not at the first request: listGroups (which loads nothing) finds the group.
TEST_CASE("a node loads the groups of an offsets partition once it leads it, and lists them",
          "[group]") {
  group_fixture f{1};
  REQUIRE(f.commit("g", {entry("t", 0, 5)}));
  const auto listed = [&] {
    return f.sys->request<std::vector<std::string>>(f.groups, timeout, lsgroups_atom_v);
  };
  auto now = listed();
  REQUIRE(now);
  CHECK(*now == std::vector<std::string>{"g"});
  std::atomic_store(&*f.cache, offsets_cache(1, 2, 1));
  now = listed();
  REQUIRE(now);
  CHECK(now->empty());
  std::atomic_store(&*f.cache, offsets_cache(1, 1, 2));
  CHECK(eventually(
      [&] {
        auto r = listed();
        return r && *r == std::vector<std::string>{"g"};
      },
      10s));
}

TEST_CASE("a group without members is deleted with its commits, for good across a restart, and "
          "one with members is GROUP_NOT_EMPTY",
          "[group]") {
  group_fixture f(1);
  REQUIRE(f.commit("g", {entry("t", 0, 5), entry("t", 1, 6)}));
  REQUIRE(f.commit("other", {entry("t", 0, 1)}));
  join_group_request req{"", "", "c", 10000, 10000, "consumer", {group_protocol{"range", {}}}};
  auto first = f.sys->request<join_group_response>(f.groups, timeout, joingrp_atom_v, std::string("busy"), req);
  REQUIRE(first);
  REQUIRE(first->error == errc::member_id_required);
  req.member_id = first->member_id;
  auto joined = f.sys->request<join_group_response>(f.groups, timeout, joingrp_atom_v, std::string("busy"), req);
  REQUIRE(joined);
  REQUIRE(joined->error == errc::none);

  auto busy = f.remove("busy");
  REQUIRE_FALSE(busy);
  CHECK(code_of(busy.error()) == errc::group_not_empty);
  auto nobody = f.remove("nobody");
  REQUIRE_FALSE(nobody);
  CHECK(code_of(nobody.error()) == errc::group_id_not_found);
  auto bad = f.remove("");
  REQUIRE_FALSE(bad);
  CHECK(code_of(bad.error()) == errc::invalid_request);

  REQUIRE(f.remove("g"));
  auto gone = f.fetch("g");
  REQUIRE(gone);
  CHECK(gone->empty());
  auto again = f.remove("g");
  REQUIRE_FALSE(again);
  CHECK(code_of(again.error()) == errc::group_id_not_found);
  auto listed = f.sys->request<std::vector<std::string>>(f.groups, timeout, lsgroups_atom_v);
  REQUIRE(listed);
  CHECK(*listed == std::vector<std::string>{"other"});

  // The tombstones are in the log: a coordinator that loads it does not bring the group back.
  f.stop();
  f.start();
  gone = f.fetch("g");
  REQUIRE(gone);
  CHECK(gone->empty());
  auto kept = f.fetch("other");
  REQUIRE(kept);
  REQUIRE(kept->size() == 1);
  CHECK((*kept)[0].offset == 1);
  // A deleted group's id is free: committing to it starts a new group.
  REQUIRE(f.commit("g", {entry("t", 0, 9)}));
  auto fresh = f.fetch("g");
  REQUIRE(fresh);
  REQUIRE(fresh->size() == 1);
  CHECK((*fresh)[0].offset == 9);
}

TEST_CASE("commits of a group without members expire offsets.retention.minutes after they were "
          "made, for good, and a group with members keeps its commits",
          "[group]") {
  using namespace std::chrono_literals;
  group_fixture f(1, 60s);
  REQUIRE(f.commit("old", {entry("t", 0, 1), entry("t", 1, 2)}));
  REQUIRE(f.commit("live", {entry("t", 0, 7)}));
  f.wall->fetch_add(30000);
  REQUIRE(f.commit("young", {entry("t", 0, 3)}));
  REQUIRE(f.commit("old", {entry("t", 1, 4)}));
  // A group with a member keeps its commits however old.
  join_group_request req{"", "", "c", 60000, 60000, "consumer", {group_protocol{"range", {}}}};
  auto first = f.sys->request<join_group_response>(f.groups, timeout, joingrp_atom_v, std::string("live"), req);
  REQUIRE(first);
  req.member_id = first->member_id;
  REQUIRE(f.sys->request<join_group_response>(f.groups, timeout, joingrp_atom_v, std::string("live"), req));

  auto offsets_of = [&](const std::string& g) {
    auto r = f.fetch(g);
    REQUIRE(r);
    std::map<int32_t, int64_t> out;
    for (const auto& o : *r) out[o.partition] = o.offset;
    return out;
  };
  // 61 s after the first commits: old's t-0 goes, its t-1 (recommitted at 30 s) stays.
  f.wall->fetch_add(31000);
  REQUIRE(eventually([&] { return offsets_of("old") == std::map<int32_t, int64_t>{{1, 4}}; }, 10s));
  CHECK(offsets_of("young") == std::map<int32_t, int64_t>{{0, 3}});
  // 91 s: everything of the member-less groups is gone.
  f.wall->fetch_add(30000);
  REQUIRE(eventually([&] { return offsets_of("old").empty() && offsets_of("young").empty(); }, 10s));
  CHECK(offsets_of("live") == std::map<int32_t, int64_t>{{0, 7}});
  auto listed = f.sys->request<std::vector<std::string>>(f.groups, timeout, lsgroups_atom_v);
  REQUIRE(listed);
  CHECK(*listed == std::vector<std::string>{"live"});
  // The tombstones are in the log.
  f.stop();
  f.start();
  CHECK(offsets_of("old").empty());
  CHECK(offsets_of("young").empty());
}
