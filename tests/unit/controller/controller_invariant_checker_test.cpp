// controller_invariant_checker on hand-made histories: each invariant the controller simulation
// relies on is broken once on purpose and must be reported, and a history that keeps them passes.

#include <catch2/catch.hpp>

#include "tests/unit/controller/controller_invariant_checker.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

namespace capstan::controller::test {
namespace {

using raft::log_index;

// Topic "t" (id seed 7): one partition, replicas 1, 2, 3, led by 1, ISR `isr`.
metadata_image with_isr(std::vector<node_id> isr) {
  image_builder b;
  b.nodes({1, 2, 3}).topic("t", 7, {ids({1, 2, 3})});
  const auto& p = b.image().topic_by_name("t")->partitions[0];
  if (isr != p.isr)
    b.apply(partition_change_record{make_topic_id(7), partition_id{0}, std::nullopt, isr,
                                    std::nullopt, p.leader_epoch, next(p.partition_epoch), {}});
  return b.image();
}

partition_change_record change(const metadata_image& image, std::optional<node_id> leader,
                               std::vector<node_id> isr) {
  const auto& p = image.topic_by_name("t")->partitions[0];
  return partition_change_record{
      make_topic_id(7),       partition_id{0}, leader,
      std::move(isr),         std::nullopt,    leader ? next(p.leader_epoch) : p.leader_epoch,
      next(p.partition_epoch), {}};
}

// Node 1, the last ISR member, left the ISR empty, and node 2 came back on a new data dir (its
// replica marked wiped) and is unfenced.
metadata_image leaderless_with_node_2_wiped() {
  const auto last = with_isr(ids({1}));
  auto image = applied(last, {change(last, no_leader, {})});
  auto back = registration(2, next(image.max_broker_epoch()), {}, 2);
  back.new_data_dir = true;
  return applied(image, {back, unfence_broker_record{node_id{2}, back.epoch}});
}

bool reports(const std::optional<std::string>& v, const std::string& invariant) {
  INFO((v ? *v : std::string("nothing reported")));
  return v && v->rfind(invariant, 0) == 0;
}

} // namespace

TEST_CASE("the controller checker passes a history that keeps every invariant",
          "[controller][simulation-checker]") {
  controller_invariant_checker c;
  const auto before = with_isr(ids({1}));
  c.on_caught_up(make_topic_id(7), partition_id{0}, node_id{2},
                 before.topic_by_name("t")->partitions[0].partition_epoch);
  const auto after = applied(before, {change(before, std::nullopt, ids({1, 2}))});
  CHECK_FALSE(c.on_applied(node_id{1}, log_index{5}, before, after, {}));
  CHECK_FALSE(c.on_applied(node_id{2}, log_index{5}, before, after, {}));
  CHECK_FALSE(c.on_loaded(node_id{3}, log_index{5}, after));
  // Last replica standing: a replica not wiped leads, alone in the ISR.
  const auto leaderless = leaderless_with_node_2_wiped();
  const auto recovery = change(leaderless, node_id{3}, ids({3}));
  c.on_recovery_decided(recovery.topic, recovery.partition, recovery.leader_epoch, node_id{3});
  const auto recovered = applied(leaderless, {recovery});
  CHECK_FALSE(c.on_applied(node_id{1}, log_index{9}, leaderless, recovered, {}));
}

TEST_CASE("the controller checker reports each broken invariant",
          "[controller][simulation-checker]") {
  controller_invariant_checker c;
  const auto base = with_isr(ids({1, 2, 3}));
  SECTION("equal images") {
    REQUIRE_FALSE(c.on_loaded(node_id{1}, log_index{4}, base));
    CHECK(reports(c.on_loaded(node_id{2}, log_index{4}, with_isr(ids({1, 2}))), "equal images"));
  }
  SECTION("partition state: a fenced leader") {
    const auto fenced = applied(base, {fence_broker_record{node_id{1}, broker_epoch{1}}});
    CHECK(reports(c.on_loaded(node_id{1}, log_index{4}, fenced), "partition state"));
  }
  SECTION("one leader per leader epoch") {
    REQUIRE_FALSE(c.on_loaded(node_id{1}, log_index{4}, base));
    // Another history: node 2 led the same partition in the same leader epoch.
    image_builder other;
    other.nodes({1, 2, 3}).topic("t", 7, {ids({2, 1, 3})});
    CHECK(reports(c.on_loaded(node_id{2}, log_index{9}, other.image()), "one leader"));
  }
  SECTION("clean election") {
    const auto narrow = with_isr(ids({1, 2}));
    const auto after = applied(narrow, {change(narrow, node_id{3}, ids({3}))});
    CHECK(reports(c.on_applied(node_id{1}, log_index{6}, narrow, after, {}), "clean election"));
  }
  SECTION("clean election: recovery on a wiped replica") {
    const auto leaderless = leaderless_with_node_2_wiped();
    const auto recovery = change(leaderless, node_id{2}, ids({2}));
    c.on_recovery_decided(recovery.topic, recovery.partition, recovery.leader_epoch, node_id{2});
    const auto after = applied(leaderless, {recovery});
    CHECK(reports(c.on_applied(node_id{1}, log_index{9}, leaderless, after, {}), "clean election"));
  }
  SECTION("ISR expansion without catching up at the epoch it builds on") {
    const auto before = with_isr(ids({1}));
    // Caught up at an older partition epoch only: the one a stale AlterPartition names.
    c.on_caught_up(make_topic_id(7), partition_id{0}, node_id{2}, partition_epoch{0});
    const auto after = applied(before, {change(before, std::nullopt, ids({1, 2}))});
    CHECK(reports(c.on_applied(node_id{1}, log_index{6}, before, after, {}), "ISR expansion"));
  }
  SECTION("batches apply") {
    CHECK(reports(
        c.on_applied(node_id{1}, log_index{6}, base, base, make_error(errc::invalid_request, "no")),
        "batches apply"));
  }
}

} // namespace capstan::controller::test
