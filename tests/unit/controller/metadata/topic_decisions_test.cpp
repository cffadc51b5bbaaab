// Topic decisions: creation (validation reused from topic_validation, Kafka's placement over the
// unfenced nodes), adding partitions, deletion and config changes, every refusal by name.

#include <catch2/catch.hpp>

#include <random>

#include "actors/controller/metadata/replica_placement.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const decision_options defaults;

metadata_image three_nodes() { return image_builder().nodes({1, 2, 3}).image(); }

std::vector<partition_record> partitions_of(const decision& d) {
  std::vector<partition_record> out;
  for (const auto& r : d.records)
    if (auto p = std::get_if<partition_record>(&r)) out.push_back(*p);
  return out;
}

} // namespace

TEST_CASE("a created topic is placed as Kafka places it, from the generator passed in",
          "[controller][topics]") {
  const auto image = image_builder().nodes({1, 2, 3}).node(4, {}, true).image();
  std::mt19937_64 rng(3);
  auto d = create_topic(image, topic_spec{"orders", 6, 2, {{"retention.ms", "60000"}}}, defaults,
                        rng);
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 7);
  const auto& t = std::get<topic_record>(d->records[0]);
  CHECK(t.name == "orders");
  CHECK(t.id != topic_id{});
  CHECK_FALSE(t.internal);
  CHECK(t.configs == std::map<std::string, std::string>{{"retention.ms", "60000"}});

  // The same seed draws the topic id first (two words), then start and shift; node 4 is fenced.
  std::mt19937_64 replay(3);
  replay();
  replay();
  const auto expected = assign_replicas(
    {placement_broker{node_id{1}, {}}, placement_broker{node_id{2}, {}},
     placement_broker{node_id{3}, {}}},
    6, 2, replay);
  const auto partitions = partitions_of(*d);
  REQUIRE(partitions.size() == 6);
  for (size_t i = 0; i < partitions.size(); ++i) {
    INFO("partition " << i);
    const auto& p = partitions[i];
    CHECK(p.topic == t.id);
    CHECK(p.partition == partition_id{static_cast<int32_t>(i)});
    CHECK(p.replicas == expected[i]);
    CHECK(p.isr == p.replicas);
    CHECK(p.leader == p.replicas.front());
    CHECK(p.leader_epoch == leader_epoch{0});
    CHECK(p.partition_epoch == partition_epoch{0});
  }
  const auto after = applied(image, d->records);
  CHECK(after.topic_by_name("orders")->partitions.size() == 6);
}

TEST_CASE("topic creation takes the defaults for -1 and marks the node's own topics internal",
          "[controller][topics]") {
  decision_options options;
  options.default_partitions = 4;
  options.default_replication_factor = 3;
  std::mt19937_64 rng(1);
  auto d = create_topic(three_nodes(), topic_spec{"__consumer_offsets", -1, -1, {}}, options, rng);
  REQUIRE(d.ok());
  CHECK(std::get<topic_record>(d->records[0]).internal);
  const auto partitions = partitions_of(*d);
  REQUIRE(partitions.size() == 4);
  CHECK(partitions[0].replicas.size() == 3);
}

TEST_CASE("topic creation refusals are named", "[controller][topics]") {
  const auto image = image_builder().nodes({1, 2}).node(3, {}, true).topic("a.b", 9, {ids({1})}).image();
  std::mt19937_64 rng(1);
  decision_options tight;
  tight.max_broker_partitions = 3;
  struct row {
    topic_spec spec;
    decision_options options;
    errc expected;
  };
  const std::vector<row> rows = {
    {{"bad name!", 1, 1, {}}, defaults, errc::invalid_topic_exception},
    {{"a_b", 1, 1, {}}, defaults, errc::invalid_topic_exception}, // collides with a.b
    {{"a.b", 1, 1, {}}, defaults, errc::topic_already_exists},
    {{"t", 0, 1, {}}, defaults, errc::invalid_partitions},
    {{"t", 10001, 1, {}}, defaults, errc::policy_violation},
    {{"t", 1, 3, {}}, defaults, errc::invalid_replication_factor}, // node 3 is fenced
    {{"t", 1, 0, {}}, defaults, errc::invalid_replication_factor},
    {{"t", 1, 1, {{"no.such.config", "1"}}}, defaults, errc::invalid_config},
    {{"t", 1, 1, {{"unclean.leader.election.enable", "maybe"}}}, defaults, errc::invalid_config},
    {{"t", 3, 2, {}}, tight, errc::policy_violation}, // 1 hosts a.b-0 already
  };
  for (const auto& r : rows) {
    INFO(r.spec.name << " " << r.spec.partitions << "x" << r.spec.replication_factor);
    auto d = create_topic(image, r.spec, r.options, rng);
    CHECK(d.code() == r.expected);
  }
  CHECK(create_topic(image, topic_spec{"t", 2, 2, {{"unclean.leader.election.enable", "true"}}},
                     tight, rng)
          .ok());
  CHECK(create_topic(metadata_image(test_cluster_id), topic_spec{"t", 1, 1, {}}, defaults, rng)
          .code() == errc::invalid_replication_factor);
}

TEST_CASE("partitions are added continuing partition 0's stripe", "[controller][topics]") {
  // orders has 2 partitions on nodes 1,2,3 with partition 0 led by 2: Kafka starts at the
  // position of node 2 (index 1), start = shift = 1, from partition 2. By hand: p2 leads at
  // (2 + 1) % 3 = 0 (node 1), follower 1 + (1 + 0) % 2 = 2 places on (node 3); p3 is a multiple
  // of 3, so the shift becomes 2: leader (3 + 1) % 3 = 1 (node 2), follower 1 place on (node 3).
  const auto image =
    image_builder().nodes({1, 2, 3}).topic("orders", 1, {ids({2, 3}), ids({3, 1})}).image();
  auto d = create_partitions(image, "orders", 4, defaults);
  REQUIRE(d.ok());
  const auto partitions = partitions_of(*d);
  REQUIRE(partitions.size() == 2);
  CHECK(partitions[0].partition == partition_id{2});
  CHECK(partitions[0].replicas == ids({1, 3}));
  CHECK(partitions[1].partition == partition_id{3});
  CHECK(partitions[1].replicas == ids({2, 3}));
  CHECK(partitions[1].isr == ids({2, 3}));
  CHECK(partitions[1].leader == node_id{2});
  CHECK(applied(image, d->records).topic_by_name("orders")->partitions.size() == 4);
}

TEST_CASE("adding partitions refusals are named", "[controller][topics]") {
  const auto image = image_builder()
                       .nodes({1, 2})
                       .node(3, {}, true)
                       .topic("orders", 1, {ids({1, 2})})
                       .topic("wide", 2, {ids({1, 2, 3})})
                       .image();
  decision_options tight;
  tight.max_broker_partitions = 2;
  CHECK(create_partitions(image, "nope", 3, defaults).code() == errc::unknown_topic_or_partition);
  CHECK(create_partitions(image, "orders", 1, defaults).code() == errc::invalid_partitions);
  CHECK(create_partitions(image, "orders", 0, defaults).code() == errc::invalid_partitions);
  CHECK(create_partitions(image, "orders", 10001, defaults).code() == errc::policy_violation);
  CHECK(create_partitions(image, "wide", 2, defaults).code() == errc::invalid_replication_factor);
  CHECK(create_partitions(image, "orders", 2, tight).code() == errc::policy_violation);
}

TEST_CASE("deleting a topic removes it, internal topics stay", "[controller][topics]") {
  std::mt19937_64 rng(1);
  auto image = three_nodes();
  image = applied(image, create_topic(image, topic_spec{"__consumer_offsets", 1, 1, {}}, defaults,
                                      rng)->records);
  image = applied(image, create_topic(image, topic_spec{"orders", 1, 1, {}}, defaults, rng)->records);
  auto d = delete_topic(image, "orders");
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 1);
  CHECK(std::get<remove_topic_record>(d->records[0]).topic == image.topic_by_name("orders")->id);
  CHECK(applied(image, d->records).topic_by_name("orders") == nullptr);
  CHECK(delete_topic(image, "nope").code() == errc::unknown_topic_or_partition);
  CHECK(delete_topic(image, "__consumer_offsets").code() == errc::policy_violation);
}

TEST_CASE("config changes merge over the overrides", "[controller][topics]") {
  const auto image =
    image_builder().nodes({1}).topic("orders", 1, {ids({1})}, {{"retention.ms", "1000"}}).image();
  auto d = alter_configs(image, "orders", {{"cleanup.policy", "compact"}}, {});
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 1);
  const auto& r = std::get<topic_config_record>(d->records[0]);
  CHECK(r.configs == std::map<std::string, std::string>{{"cleanup.policy", "compact"},
                                                        {"retention.ms", "1000"}});
  CHECK(alter_configs(image, "orders", {{"retention.ms", "1000"}}, {})->records.empty());
  CHECK(alter_configs(image, "orders", {{"retention.ms", "soon"}}, {}).code() ==
        errc::invalid_config);
  CHECK(alter_configs(image, "nope", {}, {}).code() == errc::unknown_topic_or_partition);
}

TEST_CASE("a deleted config is overridden no more", "[controller][topics]") {
  const auto image = image_builder()
                       .nodes({1})
                       .topic("orders", 1, {ids({1})},
                              {{"retention.ms", "1000"}, {"min.insync.replicas", "2"}})
                       .image();
  auto d = alter_configs(image, "orders", {{"cleanup.policy", "compact"}}, {"retention.ms"});
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 1);
  CHECK(std::get<topic_config_record>(d->records[0]).configs ==
        std::map<std::string, std::string>{{"cleanup.policy", "compact"},
                                           {"min.insync.replicas", "2"}});
  // A key the topic does not override: nothing to remove, nothing to record.
  CHECK(alter_configs(image, "orders", {}, {"segment.bytes"})->records.empty());
  // Kafka refuses these as INVALID_CONFIG too.
  CHECK(alter_configs(image, "orders", {{"retention.ms", "5"}}, {"retention.ms"}).code() ==
        errc::invalid_config);
  CHECK(alter_configs(image, "orders", {}, {"no.such.config"}).code() == errc::invalid_config);
  CHECK(alter_configs(image, "orders", {}, {"retention.ms", "retention.ms"}).code() ==
        errc::invalid_config);
}
