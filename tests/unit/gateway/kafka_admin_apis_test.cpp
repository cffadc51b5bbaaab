// The Kafka listener's admin APIs (actors/gateway/kafka/kafka_create_topics to
// kafka_offsets_for_leader_epoch): a request encoded and decoded as the listener reads it gives
// the handlers the fields the client sent; a handler's answer becomes a response that decodes
// back to the same values, with Kafka's error codes, at each offered version.

#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_create_partitions.hpp"
#include "actors/gateway/kafka/kafka_create_topics.hpp"
#include "actors/gateway/kafka/kafka_delete_topics.hpp"
#include "actors/gateway/kafka/kafka_describe_configs.hpp"
#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_offsets_for_leader_epoch.hpp"
#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "tests/support/kafka_round_trip.hpp"

using namespace capstan;
using namespace capstan::test;
using kafka::struct_value;
using kafka::value;

namespace {

// Kafka's error codes these APIs answer.
constexpr int16_t unknown_topic_or_partition = 3;
constexpr int16_t not_leader_or_follower = 6;
constexpr int16_t topic_already_exists = 36;
constexpr int16_t invalid_replica_assignment = 39;
constexpr int16_t invalid_request = 42;
constexpr int16_t fenced_leader_epoch = 74;
constexpr int16_t unknown_leader_epoch = 75;
constexpr int16_t unknown_topic_id = 100;

cluster_metadata one_topic_cluster(const std::string& name, size_t partitions) {
  cluster_metadata md;
  broker_info b;
  b.node_id = 1;
  md.brokers.push_back(b);
  topic_metadata t;
  t.name = name;
  for (size_t p = 0; p < partitions; ++p) {
    partition_assignment a;
    a.partition = static_cast<int32_t>(p);
    a.replicas = {1};
    a.leader = 1;
    t.partitions.push_back(a);
  }
  md.topics[name] = t;
  return md;
}

} // namespace

TEST_CASE("CreateTopics passes counts and configs and answers each topic with its code",
          "[gateway][kafka]") {
  for (int16_t version = 2; version <= 7; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::create_topics_api);
    value::array_type topics;
    auto t1 = element_of(body, "Topics");
    t1["Name"] = value("t1");
    t1["NumPartitions"] = value(int64_t{-1});
    t1["ReplicationFactor"] = value(int64_t{-1});
    value::array_type configs;
    auto retention = element_of(t1, "Configs");
    retention["Name"] = value("retention.ms");
    retention["Value"] = value("1000");
    configs.emplace_back(std::move(retention));
    auto unset = element_of(t1, "Configs");
    unset["Name"] = value("segment.bytes");
    unset["Value"] = value(kafka::null_value{});
    configs.emplace_back(std::move(unset));
    t1["Configs"] = value(std::move(configs));
    topics.emplace_back(std::move(t1));
    auto t2 = element_of(body, "Topics");
    t2["Name"] = value("t2");
    t2["NumPartitions"] = value(int64_t{-1});
    t2["ReplicationFactor"] = value(int64_t{-1});
    auto assignment = element_of(t2, "Assignments");
    assignment["PartitionIndex"] = value(int64_t{0});
    assignment["BrokerIds"] = value(value::array_type{value(int64_t{1})});
    t2["Assignments"] = value(value::array_type{value(std::move(assignment))});
    topics.emplace_back(std::move(t2));
    body["Topics"] = value(std::move(topics));
    auto req = sent(kafka::create_topics_api, version, body);

    const auto calls = create_topics_calls(req.body);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].spec.name == "t1");
    CHECK(calls[0].spec.partitions == -1);
    CHECK(calls[0].spec.replication_factor == -1);
    CHECK(calls[0].spec.configs == std::map<std::string, std::string>{{"retention.ms", "1000"}});
    CHECK(calls[0].refused.code == errc::none);
    CHECK(calls[1].refused.code == errc::invalid_replica_assignment);

    topic_metadata created = one_topic_cluster("t1", 3).topics["t1"];
    created.configs = {{"retention.ms", "1000"}};
    std::vector<answer<topic_metadata>> results{answer<topic_metadata>{created, {}},
                                                failed<topic_metadata>(errc::topic_already_exists)};
    auto out = received(kafka::create_topics_api, req, create_topics_response_body(results, req));
    const auto& answered = out["Topics"].as_array();
    REQUIRE(answered.size() == 2);
    const auto& ok = answered[0].as_struct();
    CHECK(ok["Name"].as_string() == "t1");
    CHECK(code_of(ok["ErrorCode"]) == 0);
    const auto& refused = answered[1].as_struct();
    CHECK(refused["Name"].as_string() == "t2");
    CHECK(code_of(refused["ErrorCode"]) == topic_already_exists);
    CHECK(refused["ErrorMessage"].as_string() == "refused");
    if (version >= 5) {
      CHECK(ok["NumPartitions"].as_int() == 3);
      CHECK(ok["ReplicationFactor"].as_int() == 1);
      REQUIRE(ok["Configs"].as_array().size() == 1);
      CHECK(ok["Configs"].as_array()[0].as_struct()["Name"].as_string() == "retention.ms");
      CHECK(refused["NumPartitions"].as_int() == -1);
    }
  }
}

TEST_CASE("CreateTopics answers a created topic with the id the controller gave it and the "
          "partitions this node's metadata shows",
          "[gateway][kafka]") {
  auto md = one_topic_cluster("made", 4);
  md.topics["made"].id = topic_id{5, 6};
  md.topics["made"].configs = {{"cleanup.policy", "compact"}};
  // As the controller answers: name and id alone.
  topic_metadata made;
  made.name = "made";
  made.id = topic_id{5, 6};
  topic_metadata replaced = made;
  replaced.name = "gone";
  md.topics["gone"] = md.topics["made"];
  md.topics["gone"].name = "gone";
  md.topics["gone"].id = topic_id{8};
  std::vector<answer<topic_metadata>> results{answer<topic_metadata>{made, {}},
                                              answer<topic_metadata>{replaced, {}}};
  complete_created_topics(results, md);
  CHECK(results[0].value.partitions.size() == 4);
  CHECK(results[0].value.configs == md.topics["made"].configs);
  // The name now belongs to a topic with another id: nothing of it is taken.
  CHECK(results[1].value.partitions.empty());

  for (int16_t version = 5; version <= 7; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::create_topics_api);
    value::array_type topics;
    for (auto name : {"made", "gone"}) {
      auto t = element_of(body, "Topics");
      t["Name"] = value(name);
      topics.emplace_back(std::move(t));
    }
    body["Topics"] = value(std::move(topics));
    auto req = sent(kafka::create_topics_api, version, body);
    auto out = received(kafka::create_topics_api, req, create_topics_response_body(results, req));
    const auto& answered = out["Topics"].as_array();
    REQUIRE(answered.size() == 2);
    CHECK(answered[0].as_struct()["NumPartitions"].as_int() == 4);
    CHECK(answered[1].as_struct()["NumPartitions"].as_int() == -1);
    if (version >= 7) {
      CHECK(answered[0].as_struct()["TopicId"] == value(kafka::uuid_bytes{5, 6}));
      CHECK(answered[1].as_struct()["TopicId"] == value(kafka::uuid_bytes{5, 6}));
    }
  }
}

TEST_CASE("CreateTopics validateOnly refuses what creating would refuse", "[gateway][kafka]") {
  const auto md = one_topic_cluster("taken", 1);
  topic_spec spec;
  spec.name = "fresh";
  spec.partitions = -1;
  spec.replication_factor = -1;
  CHECK(validate_create_topic(spec, md).code == errc::none);
  spec.name = "taken";
  CHECK(validate_create_topic(spec, md).code == errc::topic_already_exists);
  spec.name = "bad/name";
  CHECK(validate_create_topic(spec, md).code == errc::invalid_topic_exception);
  spec.name = "fresh";
  spec.replication_factor = 3;
  CHECK(validate_create_topic(spec, md).code == errc::invalid_replication_factor);
  spec.replication_factor = 1;
  spec.partitions = 0;
  CHECK(validate_create_topic(spec, md).code == errc::invalid_partitions);
  spec.partitions = 2;
  spec.configs["retention.ms"] = "not a number";
  CHECK(validate_create_topic(spec, md).code == errc::invalid_config);
}

TEST_CASE("DeleteTopics deletes by name and answers each name with its code", "[gateway][kafka]") {
  for (int16_t version = 1; version <= 6; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::delete_topics_api);
    if (version >= 6) {
      value::array_type topics;
      for (auto name : {"a", "b"}) {
        auto t = element_of(body, "Topics");
        t["Name"] = value(name);
        topics.emplace_back(std::move(t));
      }
      body["Topics"] = value(std::move(topics));
    } else {
      body["TopicNames"] = value(value::array_type{value("a"), value("b")});
    }
    auto req = sent(kafka::delete_topics_api, version, body);
    auto md = one_topic_cluster("a", 1);
    md.topics["a"].id = topic_id{7};
    const auto calls = delete_topics_calls(req, &md);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].name == "a");
    CHECK(calls[1].name == "b");
    CHECK(calls[0].refused.code == errc::none);
    CHECK(calls[1].refused.code == errc::none);

    std::vector<answer<bool>> results{answer<bool>{true, {}},
                                      failed<bool>(errc::unknown_topic_or_partition)};
    auto out =
        received(kafka::delete_topics_api, req, delete_topics_response_body(calls, results, req));
    const auto& answered = out["Responses"].as_array();
    REQUIRE(answered.size() == 2);
    CHECK(answered[0].as_struct()["Name"].as_string() == "a");
    CHECK(code_of(answered[0].as_struct()["ErrorCode"]) == 0);
    CHECK(answered[1].as_struct()["Name"].as_string() == "b");
    CHECK(code_of(answered[1].as_struct()["ErrorCode"]) == unknown_topic_or_partition);
    if (version >= 6) {
      // A topic deleted by name is answered with its id, as Kafka's controller answers.
      CHECK(answered[0].as_struct()["TopicId"] == value(kafka::uuid_bytes{7}));
      CHECK(answered[1].as_struct()["TopicId"] == value(kafka::uuid_bytes{}));
    }
  }
}

TEST_CASE("DeleteTopics v6 deletes a topic named by its id alone by the name this node knows",
          "[gateway][kafka]") {
  auto md = one_topic_cluster("known", 1);
  md.topics["known"].id = topic_id{1, 2, 3};
  auto body = request_body(kafka::delete_topics_api);
  value::array_type topics;
  auto entry = [&](kafka::value name, topic_id id) {
    auto t = element_of(body, "Topics");
    t["Name"] = std::move(name);
    t["TopicId"] = value(kafka::uuid_bytes(id));
    topics.emplace_back(std::move(t));
  };
  entry(value(kafka::null_value{}), topic_id{1, 2, 3}); // known id
  entry(value(kafka::null_value{}), topic_id{9});       // unknown id
  entry(value("known"), topic_id{1, 2, 3});             // both: refused as Kafka does
  entry(value(kafka::null_value{}), topic_id{});        // neither
  body["Topics"] = value(std::move(topics));
  auto req = sent(kafka::delete_topics_api, 6, body);

  const auto calls = delete_topics_calls(req, &md);
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].name == "known");
  CHECK(calls[0].refused.code == errc::none);
  CHECK(!calls[1].name);
  CHECK(calls[1].refused.code == errc::unknown_topic_id);
  CHECK(calls[2].refused.code == errc::invalid_request);
  CHECK(calls[3].refused.code == errc::invalid_request);
  // This node could not read its metadata: an id alone is answered with why.
  const auto blind = delete_topics_calls(req, nullptr, make_error(errc::request_timed_out, "x"));
  CHECK(blind[0].refused.code == errc::request_timed_out);
  CHECK(blind[2].refused.code == errc::invalid_request);

  std::vector<answer<bool>> results{answer<bool>{true, {}}};
  for (size_t i = 1; i < calls.size(); ++i) results.push_back({false, calls[i].refused});
  auto out =
      received(kafka::delete_topics_api, req, delete_topics_response_body(calls, results, req));
  const auto& answered = out["Responses"].as_array();
  REQUIRE(answered.size() == 4);
  CHECK(answered[0].as_struct()["Name"].as_string() == "known");
  CHECK(answered[0].as_struct()["TopicId"] == value(kafka::uuid_bytes{1, 2, 3}));
  CHECK(code_of(answered[0].as_struct()["ErrorCode"]) == 0);
  CHECK(answered[1].as_struct()["Name"].is_null());
  CHECK(answered[1].as_struct()["TopicId"] == value(kafka::uuid_bytes{9}));
  CHECK(code_of(answered[1].as_struct()["ErrorCode"]) == unknown_topic_id);
  CHECK(answered[2].as_struct()["Name"].as_string() == "known");
  CHECK(answered[2].as_struct()["TopicId"] == value(kafka::uuid_bytes{1, 2, 3}));
  CHECK(code_of(answered[2].as_struct()["ErrorCode"]) == invalid_request);
  CHECK(answered[3].as_struct()["Name"].is_null());
  CHECK(code_of(answered[3].as_struct()["ErrorCode"]) == invalid_request);
}

TEST_CASE("CreatePartitions answers each topic and validates only growth", "[gateway][kafka]") {
  for (int16_t version = 0; version <= 3; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::create_partitions_api);
    value::array_type topics;
    for (auto name : {"grown", "missing"}) {
      auto t = element_of(body, "Topics");
      t["Name"] = value(name);
      t["Count"] = value(int64_t{5});
      t["Assignments"] = value(kafka::null_value{});
      topics.emplace_back(std::move(t));
    }
    body["Topics"] = value(std::move(topics));
    auto req = sent(kafka::create_partitions_api, version, body);
    CHECK(req.body["Topics"].as_array()[0].as_struct()["Count"].as_int() == 5);
    std::vector<answer<bool>> results{answer<bool>{true, {}},
                                      failed<bool>(errc::unknown_topic_or_partition)};
    auto out =
        received(kafka::create_partitions_api, req, create_partitions_response_body(results, req));
    const auto& answered = out["Results"].as_array();
    REQUIRE(answered.size() == 2);
    CHECK(answered[0].as_struct()["Name"].as_string() == "grown");
    CHECK(code_of(answered[0].as_struct()["ErrorCode"]) == 0);
    CHECK(code_of(answered[1].as_struct()["ErrorCode"]) == unknown_topic_or_partition);
  }
  const auto md = one_topic_cluster("t", 3);
  CHECK(validate_create_partitions("t", 5, md).code == errc::none);
  CHECK(validate_create_partitions("t", 3, md).code == errc::invalid_partitions);
  CHECK(validate_create_partitions("other", 5, md).code == errc::unknown_topic_or_partition);
  CHECK(kafka_error_code(errc::invalid_replica_assignment) == invalid_replica_assignment);
}

TEST_CASE("DescribeConfigs answers a topic's configs with their source and narrows to keys",
          "[gateway][kafka]") {
  for (int16_t version = 1; version <= 4; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::describe_configs_api);
    value::array_type resources;
    auto all = element_of(body, "Resources");
    all["ResourceType"] = value(int64_t{kafka_topic_resource});
    all["ResourceName"] = value("t");
    all["ConfigurationKeys"] = value(kafka::null_value{});
    resources.emplace_back(std::move(all));
    auto one = element_of(body, "Resources");
    one["ResourceType"] = value(int64_t{kafka_topic_resource});
    one["ResourceName"] = value("t");
    one["ConfigurationKeys"] = value(value::array_type{value("retention.ms")});
    resources.emplace_back(std::move(one));
    auto broker = element_of(body, "Resources");
    broker["ResourceType"] = value(int64_t{4});
    broker["ResourceName"] = value("1");
    broker["ConfigurationKeys"] = value(kafka::null_value{});
    resources.emplace_back(std::move(broker));
    body["Resources"] = value(std::move(resources));
    auto req = sent(kafka::describe_configs_api, version, body);

    const std::map<std::string, std::string> effective{{"cleanup.policy", "delete"},
                                                       {"retention.ms", "1000"}};
    const std::map<std::string, std::string> overrides{{"retention.ms", "1000"}};
    auto topic = topic_config_resource({effective, {}}, overrides);
    auto refused = topic_config_resource(
        failed<std::map<std::string, std::string>>(errc::invalid_request), {});
    std::vector<kafka_config_resource> results{topic, topic, refused};
    auto out =
        received(kafka::describe_configs_api, req, describe_configs_response_body(results, req));
    const auto& answered = out["Results"].as_array();
    REQUIRE(answered.size() == 3);
    const auto& first = answered[0].as_struct();
    CHECK(code_of(first["ErrorCode"]) == 0);
    CHECK(first["ResourceType"].as_int() == kafka_topic_resource);
    CHECK(first["ResourceName"].as_string() == "t");
    const auto& configs = first["Configs"].as_array();
    REQUIRE(configs.size() == 2);
    CHECK(configs[0].as_struct()["Name"].as_string() == "cleanup.policy");
    CHECK(configs[0].as_struct()["ConfigSource"].as_int() == 5);
    CHECK(configs[1].as_struct()["Value"].as_string() == "1000");
    CHECK(configs[1].as_struct()["ConfigSource"].as_int() == 1);
    const auto& narrowed = answered[1].as_struct()["Configs"].as_array();
    REQUIRE(narrowed.size() == 1);
    CHECK(narrowed[0].as_struct()["Name"].as_string() == "retention.ms");
    CHECK(code_of(answered[2].as_struct()["ErrorCode"]) == invalid_request);
    CHECK(answered[2].as_struct()["Configs"].as_array().empty());
  }
}

TEST_CASE("DescribeConfigs answers a broker resource naming this node with its configs, read-only",
          "[gateway][kafka]") {
  const std::vector<broker_config_entry> node_configs{
      {"advertised.listeners", std::nullopt, broker_config_source::default_config},
      {"min.insync.replicas", "2", broker_config_source::static_broker_config},
      {"num.partitions", "1", broker_config_source::default_config}};
  for (int16_t version = 1; version <= 4; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::describe_configs_api);
    value::array_type resources;
    auto add = [&](const std::string& name, value keys) {
      auto r = element_of(body, "Resources");
      r["ResourceType"] = value(int64_t{kafka_broker_resource});
      r["ResourceName"] = value(name);
      r["ConfigurationKeys"] = std::move(keys);
      resources.emplace_back(std::move(r));
    };
    add("3", value(kafka::null_value{}));
    add("3", value(value::array_type{value("num.partitions"), value("no.such.key")}));
    add("", value(kafka::null_value{}));
    add("4", value(kafka::null_value{}));
    add("three", value(kafka::null_value{}));
    body["Resources"] = value(std::move(resources));
    auto req = sent(kafka::describe_configs_api, version, body);

    std::vector<kafka_config_resource> results;
    for (const auto& r : req.body["Resources"].as_array())
      results.push_back(broker_config_resource(r.as_struct()["ResourceName"].as_string(), 3,
                                               node_configs));
    auto out =
        received(kafka::describe_configs_api, req, describe_configs_response_body(results, req));
    const auto& answered = out["Results"].as_array();
    REQUIRE(answered.size() == 5);
    const auto& all = answered[0].as_struct();
    CHECK(code_of(all["ErrorCode"]) == 0);
    CHECK(all["ResourceType"].as_int() == kafka_broker_resource);
    CHECK(all["ResourceName"].as_string() == "3");
    const auto& configs = all["Configs"].as_array();
    REQUIRE(configs.size() == 3);
    CHECK(configs[0].as_struct()["Name"].as_string() == "advertised.listeners");
    CHECK(configs[0].as_struct()["Value"].is_null());
    CHECK(configs[0].as_struct()["ConfigSource"].as_int() == 5);
    CHECK(configs[1].as_struct()["Value"].as_string() == "2");
    CHECK(configs[1].as_struct()["ConfigSource"].as_int() == 4);
    for (const auto& c : configs) {
      CHECK(c.as_struct()["ReadOnly"].as_bool());
      CHECK_FALSE(c.as_struct()["IsSensitive"].as_bool());
    }
    const auto& narrowed = answered[1].as_struct()["Configs"].as_array();
    REQUIRE(narrowed.size() == 1);
    CHECK(narrowed[0].as_struct()["Name"].as_string() == "num.partitions");
    // An empty name asks for the cluster-wide dynamic defaults: there are none.
    CHECK(code_of(answered[2].as_struct()["ErrorCode"]) == 0);
    CHECK(answered[2].as_struct()["Configs"].as_array().empty());
    for (size_t i = 3; i < 5; ++i) {
      INFO("resource " << i);
      CHECK(code_of(answered[i].as_struct()["ErrorCode"]) == invalid_request);
      CHECK_FALSE(answered[i].as_struct()["ErrorMessage"].is_null());
      CHECK(answered[i].as_struct()["Configs"].as_array().empty());
    }
  }
}

TEST_CASE("a broker resource's name is read as Kafka reads a broker id", "[gateway][kafka]") {
  const std::vector<broker_config_entry> node_configs{
      {"num.partitions", "1", broker_config_source::default_config}};
  for (const auto* name : {"3", "+3", "03"}) {
    INFO(name);
    CHECK(broker_config_resource(name, 3, node_configs).ok());
  }
  for (const auto* name : {"3 ", "-3", "+", "+-3", "3x", "99999999999"}) {
    INFO(name);
    CHECK(broker_config_resource(name, 3, node_configs).err.code == errc::invalid_request);
  }
}

TEST_CASE("OffsetForLeaderEpoch answers each partition's epoch end or the replica's refusal",
          "[gateway][kafka]") {
  for (int16_t version = 2; version <= 4; ++version) {
    INFO("version " << version);
    auto body = request_body(kafka::offset_for_leader_epoch_api);
    auto topic = element_of(body, "Topics");
    topic["Topic"] = value("t");
    value::array_type parts;
    for (int64_t p = 0; p < 4; ++p) {
      auto part = element_of(topic, "Partitions");
      part["Partition"] = value(p);
      part["CurrentLeaderEpoch"] = value(int64_t{3});
      part["LeaderEpoch"] = value(int64_t{2});
      parts.emplace_back(std::move(part));
    }
    topic["Partitions"] = value(std::move(parts));
    body["Topics"] = value(value::array_type{value(std::move(topic))});
    auto req = sent(kafka::offset_for_leader_epoch_api, version, body);
    const auto& decoded = req.body["Topics"].as_array()[0].as_struct()["Partitions"].as_array();
    REQUIRE(decoded.size() == 4);
    CHECK(decoded[0].as_struct()["CurrentLeaderEpoch"].as_int() == 3);
    CHECK(decoded[0].as_struct()["LeaderEpoch"].as_int() == 2);

    std::vector<kafka_epoch_answer> answers{
        {0, 0, answer<epoch_end>{epoch_end{leader_epoch{2}, offset{42}}, {}}},
        {0, 1, failed<epoch_end>(errc::fenced_leader_epoch)},
        {0, 2, failed<epoch_end>(errc::unknown_leader_epoch)},
        {0, 3, failed<epoch_end>(errc::not_leader_or_follower)},
    };
    auto out = received(kafka::offset_for_leader_epoch_api, req,
                        offsets_for_leader_epoch_response_body(answers, req));
    const auto& answered = out["Topics"].as_array()[0].as_struct();
    CHECK(answered["Topic"].as_string() == "t");
    const auto& p = answered["Partitions"].as_array();
    REQUIRE(p.size() == 4);
    CHECK(code_of(p[0].as_struct()["ErrorCode"]) == 0);
    CHECK(p[0].as_struct()["LeaderEpoch"].as_int() == 2);
    CHECK(p[0].as_struct()["EndOffset"].as_int() == 42);
    CHECK(code_of(p[1].as_struct()["ErrorCode"]) == fenced_leader_epoch);
    CHECK(p[1].as_struct()["EndOffset"].as_int() == -1);
    CHECK(code_of(p[2].as_struct()["ErrorCode"]) == unknown_leader_epoch);
    CHECK(code_of(p[3].as_struct()["ErrorCode"]) == not_leader_or_follower);
    CHECK(p[3].as_struct()["Partition"].as_int() == 3);
  }
}
