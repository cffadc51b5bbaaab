#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "runtime/cluster/metadata.hpp"
#include "runtime/cluster/topic_validation.hpp"

using namespace capstan;

TEST_CASE("topic names follow Kafka's rules", "[controller][validation]") {
  struct row {
    std::string name;
    bool ok;
  };
  const std::vector<row> rows = {
    {"orders", true},
    {"a", true},
    {"Orders.v2_x-1", true},
    {"__consumer_offsets", true},
    {std::string(249, 'x'), true},
    {"", false},
    {".", false},
    {"..", false},
    {"...", true},
    {std::string(250, 'x'), false},
    {"with space", false},
    {"slash/", false},
    {"uml\xc3\xa4ut", false},
    {"colon:", false},
    {std::string("nul\0x", 5), false},
  };
  for (const auto& r : rows) {
    INFO("name '" << r.name << "'");
    auto s = validate_topic_name(r.name);
    CHECK(s.ok() == r.ok);
    if (!r.ok) {
      CHECK(s.code() == errc::invalid_topic_exception);
      CHECK_FALSE(s.err().message.empty());
    }
  }
}

TEST_CASE("topic specs are checked for partitions, replication factor and configs",
          "[controller][validation]") {
  struct row {
    topic_spec spec;
    size_t brokers;
    errc expected;
  };
  auto spec = [](std::string name, int32_t partitions, int16_t rf,
                 std::map<std::string, std::string> configs = {}) {
    return topic_spec{std::move(name), partitions, rf, std::move(configs)};
  };
  const std::vector<row> rows = {
    {spec("t", 1, 1), 1, errc::none},
    {spec("t", 10000, 1), 1, errc::none},
    {spec("t", 3, 3), 3, errc::none},
    {spec("bad name", 1, 1), 1, errc::invalid_topic_exception},
    {spec("t", 0, 1), 1, errc::invalid_partitions},
    {spec("t", -4, 1), 1, errc::invalid_partitions},
    {spec("t", 10001, 1), 1, errc::policy_violation},
    {spec("t", 1, 0), 1, errc::invalid_replication_factor},
    {spec("t", 1, -1), 1, errc::invalid_replication_factor},
    {spec("t", 1, 2), 1, errc::invalid_replication_factor},
    {spec("t", 1, 1, {{"cleanup.policy", "compact"}, {"retention.ms", "-1"}}), 1, errc::none},
    {spec("t", 1, 1, {{"min.insync.replicas", "2"}}), 1, errc::none},
    {spec("t", 1, 1, {{"min.insync.replicas", "0"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"min.insync.replicas", "two"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"unclean.leader.election.enable", "true"}}), 1, errc::none},
    {spec("t", 1, 1, {{"unclean.leader.election.enable", "False"}}), 1, errc::none},
    {spec("t", 1, 1, {{"unclean.leader.election.enable", "yes"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"segment.bytes", "1"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"no.such.config", "1"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"segment.bytes", "14"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"segment.ms", "1"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"log.cleaner.backoff.ms", "0"}}), 1, errc::invalid_config},
    {spec("t", 1, 1, {{"message.timestamp.after.max.ms", "0"}}), 1, errc::none},
  };
  for (const auto& r : rows) {
    INFO(r.spec.name << " partitions " << r.spec.partitions << " rf " << r.spec.replication_factor
                     << " configs " << r.spec.configs.size());
    auto s = validate_topic_spec(r.spec, r.brokers);
    CHECK(s.code() == r.expected);
  }
}

TEST_CASE("an invalid config error names the key", "[controller][validation]") {
  auto s = validate_topic_configs({{"no.such.config", "1"}});
  REQUIRE(s.code() == errc::invalid_config);
  CHECK(s.err().message.find("no.such.config") != std::string::npos);
  s = validate_topic_configs({{"min.insync.replicas", "-3"}});
  REQUIRE(s.code() == errc::invalid_config);
  CHECK(s.err().message.find("min.insync.replicas") != std::string::npos);
}

TEST_CASE("names that differ only by '.' versus '_' collide, as in Kafka", "[controller][validation]") {
  const std::vector<std::string> existing = {"a_b", "orders", "x.y_z"};
  auto s = check_topic_collision("a.b", existing);
  REQUIRE_FALSE(s);
  CHECK(s.code() == errc::invalid_topic_exception);
  CHECK(s.err().message == "Topic 'a.b' collides with existing topic: a_b");
  CHECK_FALSE(check_topic_collision("x_y.z", existing));
  CHECK_FALSE(check_topic_collision("x_y_z", existing));
  CHECK(check_topic_collision("a-b", existing));
  CHECK(check_topic_collision("orders", existing)); // the same name is TOPIC_ALREADY_EXISTS, not a collision
  CHECK(check_topic_collision("ab", existing));
}

TEST_CASE("only the node's own topics are internal, not every name starting with __", "[controller][validation]") {
  CHECK(is_internal_topic("__consumer_offsets"));
  CHECK_FALSE(is_internal_topic("__internal"));
  CHECK_FALSE(is_internal_topic("orders"));
}

TEST_CASE("too many partitions for one topic is what Kafka's controller sends: POLICY_VIOLATION",
          "[controller][validation]") {
  auto s = validate_topic_spec(topic_spec{"t", max_topic_partitions + 1, 1, {}}, 1);
  REQUIRE(s.code() == errc::policy_violation);
  CHECK_THAT(s.err().message, Catch::Contains("10000"));
  CHECK(validate_topic_spec(topic_spec{"t", 0, 1, {}}, 1).code() == errc::invalid_partitions);
}

TEST_CASE("the default partition cap is what the open-file limit can hold",
          "[controller][validation]") {
  CHECK(max_broker_partitions_for(1024) == 1024 - 256);
  CHECK(max_broker_partitions_for(20000) == 20000 - 256);
  CHECK(max_broker_partitions_for(0) == 1);
  CHECK(max_broker_partitions_for(256) == 1);
  CHECK(max_broker_partitions_for(uint64_t{1} << 40) == std::numeric_limits<int32_t>::max());
  CHECK(default_max_broker_partitions() >= 1);
}

TEST_CASE("a topic that would put more partitions on a node than max.broker.partitions is refused",
          "[controller][validation]") {
  auto assignments = [](std::vector<std::vector<int32_t>> replicas) {
    std::vector<partition_assignment> out;
    for (size_t p = 0; p < replicas.size(); ++p)
      out.push_back(partition_assignment{static_cast<int32_t>(p), replicas[p], replicas[p][0], 0,
                                         replicas[p], {}});
    return out;
  };
  std::map<std::string, topic_metadata> topics;
  topics["a"].partitions = assignments({{1, 2}, {2, 1}, {1, 2}});
  // Nodes 1 and 2 host 3 each.
  CHECK(check_broker_partition_limit(topics, assignments({{1}, {1}}), 5));
  auto s = check_broker_partition_limit(topics, assignments({{1, 2}, {2, 1}, {2, 1}}), 5);
  REQUIRE(s.code() == errc::policy_violation);
  CHECK_THAT(s.err().message, Catch::Contains("max.broker.partitions") && Catch::Contains("node 1"));
  CHECK(check_broker_partition_limit(topics, assignments({{3}, {3}, {3}, {3}, {3}}), 5));
  CHECK(check_broker_partition_limit(topics, assignments({{3}, {3}, {3}, {3}, {3}, {3}}), 5).code() ==
        errc::policy_violation);
}
