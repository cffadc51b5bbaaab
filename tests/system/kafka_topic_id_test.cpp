// Topics by id through the Kafka listener of a real `capstan node` (docs/kafka.md, "Topic
// administration"; KIP-516): a client learns a topic's id from CreateTopics v7 and deletes the
// topic by that id alone with DeleteTopics v6, as Kafka's admin client does for
// deleteTopics(TopicCollection.ofTopicIds(...)); an id no topic has is UNKNOWN_TOPIC_ID, and an
// entry with both a name and an id INVALID_REQUEST, as Kafka's controller answers. kafka-python
// 2.0.2 stops at CreateTopics v3 and DeleteTopics v3, so the requests are written with capstan's
// own codec (runtime/kafka).

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "runtime/kafka/message_codec.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/raw_kafka_client.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;
using kafka::value;

namespace {

constexpr int16_t unknown_topic_or_partition = 3;
constexpr int16_t invalid_request = 42;
constexpr int16_t unknown_topic_id = 100;

int16_t code_of(const kafka::struct_value& s) {
  return static_cast<int16_t>(s["ErrorCode"].as_int());
}

const kafka::uuid_bytes& id_of(const kafka::struct_value& s) {
  return std::get<kafka::uuid_bytes>(s["TopicId"].v);
}

// CreateTopics v7 of one topic with one partition; its answer.
kafka::struct_value create_topic(test::raw_kafka_client& c, const std::string& name) {
  auto body = kafka::make_message(kafka::create_topics_api, kafka::message_kind::request);
  auto t = element_of(body, "Topics");
  t["Name"] = value(name);
  t["NumPartitions"] = value(int64_t{1});
  t["ReplicationFactor"] = value(int64_t{1});
  body["Topics"] = value(value::array_type{value(std::move(t))});
  REQUIRE(c.send(kafka::create_topics_api, 7, 1, body));
  auto r = c.receive(kafka::create_topics_api, 7);
  REQUIRE(r.ok());
  REQUIRE(r->body["Topics"].as_array().size() == 1);
  return r->body["Topics"].as_array()[0].as_struct();
}

// DeleteTopics v6 of `entries` (a name or null, and an id); its answers in request order.
value::array_type delete_topics(test::raw_kafka_client& c,
                                const std::vector<std::pair<value, kafka::uuid_bytes>>& entries) {
  auto body = kafka::make_message(kafka::delete_topics_api, kafka::message_kind::request);
  value::array_type topics;
  for (const auto& [name, id] : entries) {
    auto t = element_of(body, "Topics");
    t["Name"] = name;
    t["TopicId"] = value(id);
    topics.emplace_back(std::move(t));
  }
  body["Topics"] = value(std::move(topics));
  REQUIRE(c.send(kafka::delete_topics_api, 6, 2, body));
  auto r = c.receive(kafka::delete_topics_api, 6);
  REQUIRE(r.ok());
  REQUIRE(r->body["Responses"].as_array().size() == entries.size());
  return r->body["Responses"].as_array();
}

// The error Metadata v1 answers for `topic` (0 while it exists).
int16_t metadata_error(test::raw_kafka_client& c, const std::string& topic) {
  auto body = kafka::make_message(kafka::metadata_api, kafka::message_kind::request);
  auto t = element_of(body, "Topics");
  t["Name"] = value(topic);
  body["Topics"] = value(value::array_type{value(std::move(t))});
  REQUIRE(c.send(kafka::metadata_api, 1, 3, body));
  auto r = c.receive(kafka::metadata_api, 1);
  REQUIRE(r.ok());
  REQUIRE(r->body["Topics"].as_array().size() == 1);
  return code_of(r->body["Topics"].as_array()[0].as_struct());
}

} // namespace

TEST_CASE("a Kafka client deletes a topic by the id CreateTopics v7 answered it with",
          "[system][kafka]") {
  test::temp_dir dir;
  test::node_process_options options;
  options.binary = CAPSTAN_BINARY;
  test::node_process node{dir, 1, options};
  node.start();
  test::raw_kafka_client client(node.kafka_port(), 10s, 30s);
  REQUIRE(client.connected());

  const auto doomed = create_topic(client, "doomed");
  REQUIRE(code_of(doomed) == 0);
  const auto id = id_of(doomed);
  CHECK(id != kafka::uuid_bytes{});
  const auto kept = create_topic(client, "kept");
  REQUIRE(code_of(kept) == 0);
  CHECK(id_of(kept) != id);

  // A name with an id, and neither: refused entry by entry, and the topic stays.
  auto refused = delete_topics(
      client, {{value("kept"), id_of(kept)}, {value(kafka::null_value{}), kafka::uuid_bytes{}}});
  CHECK(code_of(refused[0].as_struct()) == invalid_request);
  CHECK(refused[0].as_struct()["Name"].as_string() == "kept");
  CHECK(code_of(refused[1].as_struct()) == invalid_request);
  CHECK(metadata_error(client, "kept") == 0);

  // The id alone: deleted by the name this node knows for it, answered with both.
  auto deleted = delete_topics(client, {{value(kafka::null_value{}), id}});
  const auto& answer = deleted[0].as_struct();
  const std::string why =
      answer["ErrorMessage"].is_null() ? std::string{} : answer["ErrorMessage"].as_string();
  INFO(why);
  CHECK(code_of(answer) == 0);
  REQUIRE(!answer["Name"].is_null());
  CHECK(answer["Name"].as_string() == "doomed");
  CHECK(id_of(answer) == id);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metadata_error(client, "doomed") == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  CHECK(metadata_error(client, "doomed") == unknown_topic_or_partition);
  CHECK(metadata_error(client, "kept") == 0);

  // The same id again: no topic has it now.
  auto again = delete_topics(client, {{value(kafka::null_value{}), id}});
  CHECK(code_of(again[0].as_struct()) == unknown_topic_id);
  CHECK(again[0].as_struct()["Name"].is_null());
  CHECK(id_of(again[0].as_struct()) == id);

  // By name, v6 answers with the topic's id too.
  auto by_name = delete_topics(client, {{value("kept"), kafka::uuid_bytes{}}});
  CHECK(code_of(by_name[0].as_struct()) == 0);
  CHECK(id_of(by_name[0].as_struct()) == id_of(kept));
  node.stop();
}
