// The metadata image: built only by applying records, deterministic, and refusing records that
// contradict it with an error value while staying unchanged.

#include <catch2/catch.hpp>

#include "actors/controller/metadata/metadata_image.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

const topic_id orders = make_topic_id(1);

// A short history touching every record kind.
std::vector<metadata_record> history() {
  return {
    registration(1, broker_epoch{1}),
    registration(2, broker_epoch{2}, "r2"),
    unfence_broker_record{node_id{1}, broker_epoch{1}},
    unfence_broker_record{node_id{2}, broker_epoch{2}},
    topic_record{"orders", orders, false, {{"retention.ms", "1000"}}},
    partition_record{orders, partition_id{0}, ids({1, 2}), ids({1, 2}), node_id{1}, leader_epoch{0},
                     partition_epoch{0}, {}, {}},
    partition_record{orders, partition_id{1}, ids({2, 1}), ids({2, 1}), node_id{2}, leader_epoch{0},
                     partition_epoch{0}, {}, {}},
    partition_change_record{orders, partition_id{0}, std::nullopt, ids({1}), std::nullopt,
                            leader_epoch{0}, partition_epoch{1}, {}},
    fence_broker_record{node_id{2}, broker_epoch{2}},
    partition_change_record{orders, partition_id{1}, node_id{1}, ids({1}), std::nullopt,
                            leader_epoch{1}, partition_epoch{1}, {}},
    topic_config_record{orders, {{"cleanup.policy", "compact"}}},
    producer_ids_record{0, 1000},
    registration(2, broker_epoch{3}, "r2", 2),
  };
}

metadata_image from(const std::vector<metadata_record>& records) {
  metadata_image image(test_cluster_id);
  for (const auto& r : records) {
    auto s = image.apply(r);
    INFO(record_kind(r) << ": " << s.err().to_string());
    REQUIRE(s.ok());
  }
  return image;
}

// Applies `r` expecting `code`, and checks the image did not change.
void refused(metadata_image& image, const metadata_record& r, errc code) {
  const auto before = image;
  auto s = image.apply(r);
  INFO(record_kind(r));
  CHECK(s.code() == code);
  CHECK_FALSE(s.err().message.empty());
  CHECK(image == before);
}

} // namespace

TEST_CASE("the image holds what the records say", "[controller][image]") {
  const auto image = from(history());
  REQUIRE(image.broker(node_id{1}) != nullptr);
  CHECK_FALSE(image.broker(node_id{1})->fenced);
  const auto* two = image.broker(node_id{2});
  REQUIRE(two != nullptr);
  CHECK(two->fenced); // a new registration starts fenced
  CHECK(two->epoch == broker_epoch{3});
  CHECK(two->incarnation == make_incarnation(2));
  CHECK(two->rack == "r2");
  CHECK(image.max_broker_epoch() == broker_epoch{3});
  CHECK(image.unfenced_brokers() == ids({1}));
  CHECK(image.broker(node_id{9}) == nullptr);

  const auto* topic = image.topic_by_name("orders");
  REQUIRE(topic != nullptr);
  CHECK(image.topic(orders) == topic);
  CHECK(topic->configs == std::map<std::string, std::string>{{"cleanup.policy", "compact"}});
  const auto* p1 = image.partition(orders, partition_id{1});
  REQUIRE(p1 != nullptr);
  CHECK(p1->leader == node_id{1});
  CHECK(p1->isr == ids({1}));
  CHECK(p1->replicas == ids({2, 1}));
  CHECK(p1->leader_epoch == leader_epoch{1});
  CHECK(p1->partition_epoch == partition_epoch{1});
  CHECK(image.partition(orders, partition_id{2}) == nullptr);
  CHECK(image.next_producer_id() == 1000);
}

TEST_CASE("the same records give the same image", "[controller][image]") {
  CHECK(from(history()) == from(history()));
  auto shorter = history();
  shorter.pop_back();
  CHECK_FALSE(from(shorter) == from(history()));
}

TEST_CASE("the image converts to the cluster metadata the gateway serves", "[controller][image]") {
  const auto metadata = from(history()).to_cluster_metadata(node_id{7});
  CHECK(metadata.cluster_id == test_cluster_id);
  CHECK(metadata.controller_id == 7);
  REQUIRE(metadata.brokers.size() == 1); // node 2 is fenced
  CHECK(metadata.brokers[0].node_id == 1);
  CHECK(metadata.brokers[0].host == "client1.example");
  CHECK(metadata.brokers[0].port == 9001);
  REQUIRE(metadata.topics.count("orders") == 1);
  const auto& t = metadata.topics.at("orders");
  CHECK(t.id == orders);
  REQUIRE(t.partitions.size() == 2);
  CHECK(t.partitions[1].partition == 1);
  CHECK(t.partitions[1].replicas == std::vector<int32_t>{2, 1});
  CHECK(t.partitions[1].leader == 1);
  CHECK(t.partitions[1].leader_epoch == 1);
  CHECK(t.partitions[1].isr == std::vector<int32_t>{1});
}

TEST_CASE("records that contradict the image are refused and change nothing",
          "[controller][image]") {
  auto image = from(history());
  const auto unknown = make_topic_id(99);
  auto p0 = [](std::optional<node_id> leader, std::optional<std::vector<node_id>> isr,
               int32_t le, int32_t pe) {
    return partition_change_record{orders, partition_id{0}, leader, std::move(isr), std::nullopt,
                                   leader_epoch{le}, partition_epoch{pe}, {}};
  };
  // partition 0: leader 1, ISR [1], leader epoch 0, partition epoch 1.
  refused(image, partition_change_record{unknown, partition_id{0}, std::nullopt, ids({1}),
                                         std::nullopt, leader_epoch{0}, partition_epoch{2}, {}},
          errc::unknown_topic_or_partition);
  refused(image, partition_change_record{orders, partition_id{5}, std::nullopt, ids({1}),
                                         std::nullopt, leader_epoch{0}, partition_epoch{2}, {}},
          errc::unknown_topic_or_partition);
  refused(image, p0(std::nullopt, ids({1, 2}), 0, 1), errc::invalid_update_version); // same
  refused(image, p0(std::nullopt, ids({1, 2}), 0, 0), errc::invalid_update_version); // backwards
  refused(image, p0(std::nullopt, ids({1, 2}), 0, 3), errc::invalid_update_version); // skips
  refused(image, p0(node_id{2}, ids({2}), 0, 2), errc::invalid_update_version); // leader epoch kept
  refused(image, p0(std::nullopt, ids({1, 2}), 1, 2), errc::invalid_update_version); // bumped
  refused(image, p0(std::nullopt, ids({2}), 0, 2), errc::invalid_request); // leader not in ISR
  refused(image, p0(std::nullopt, ids({1, 3}), 0, 2), errc::invalid_request); // ISR not replicas
  refused(image, p0(std::nullopt, std::vector<node_id>{}, 0, 2), errc::invalid_request);
  refused(image, partition_record{unknown, partition_id{0}, ids({1}), ids({1}), node_id{1},
                                  leader_epoch{0}, partition_epoch{0}, {}, {}},
          errc::unknown_topic_or_partition);
  refused(image, partition_record{orders, partition_id{1}, ids({1}), ids({1}), node_id{1},
                                  leader_epoch{0}, partition_epoch{0}, {}, {}},
          errc::invalid_partitions); // exists already
  refused(image, partition_record{orders, partition_id{3}, ids({1}), ids({1}), node_id{1},
                                  leader_epoch{0}, partition_epoch{0}, {}, {}},
          errc::invalid_partitions); // leaves a gap
  refused(image, partition_record{orders, partition_id{2}, {}, {}, no_leader, leader_epoch{0},
                                  partition_epoch{0}, {}, {}},
          errc::invalid_request);
  refused(image, topic_record{"orders", make_topic_id(50), false, {}}, errc::topic_already_exists);
  refused(image, topic_record{"other", orders, false, {}}, errc::topic_already_exists);
  refused(image, remove_topic_record{unknown}, errc::unknown_topic_or_partition);
  refused(image, topic_config_record{unknown, {}}, errc::unknown_topic_or_partition);
  refused(image, registration(1, broker_epoch{1}), errc::stale_broker_epoch);
  auto foreign = registration(5, broker_epoch{9});
  foreign.cluster_id = "cluster-b";
  refused(image, foreign, errc::inconsistent_cluster_id);
  refused(image, fence_broker_record{node_id{2}, broker_epoch{2}}, errc::stale_broker_epoch);
  refused(image, unfence_broker_record{node_id{8}, broker_epoch{1}}, errc::stale_broker_epoch);
  refused(image, producer_ids_record{0, 10}, errc::invalid_request); // not at the next id
  refused(image, producer_ids_record{2000, 10}, errc::invalid_request);
}

TEST_CASE("a batch applies all or nothing", "[controller][image]") {
  auto image = from(history());
  const auto before = image;
  std::vector<metadata_record> batch = {
    topic_record{"payments", make_topic_id(2), false, {}},
    partition_record{make_topic_id(2), partition_id{0}, ids({1}), ids({1}), node_id{1},
                     leader_epoch{0}, partition_epoch{0}, {}, {}},
    remove_topic_record{make_topic_id(99)},
  };
  auto s = image.apply(batch);
  CHECK(s.code() == errc::unknown_topic_or_partition);
  CHECK(s.err().message.find("record 2 (RemoveTopic)") != std::string::npos);
  CHECK(image == before);
  batch.pop_back();
  REQUIRE(image.apply(batch).ok());
  CHECK(image.topic_by_name("payments") != nullptr);
}

TEST_CASE("removing a topic frees its name and id", "[controller][image]") {
  auto image = from(history());
  REQUIRE(image.apply(remove_topic_record{orders}).ok());
  CHECK(image.topic_by_name("orders") == nullptr);
  CHECK(image.topic(orders) == nullptr);
  REQUIRE(image.apply(topic_record{"orders", make_topic_id(3), false, {}}).ok());
  CHECK(image.topic_by_name("orders")->id == make_topic_id(3));
}

TEST_CASE("a registration from a new data dir marks the node's replicas outside the ISR wiped "
          "until it enters the ISR or leaves the replicas, and snapshots keep the marks",
          "[controller][image]") {
  auto image = from(history()); // orders-0: replicas [1,2], ISR [1]; orders-1: [2,1], ISR [1]
  CHECK(image.topic(orders)->partitions[0].wiped.empty()); // node 2 came back on its own dir
  auto fresh = registration(2, broker_epoch{4}, "r2", 3);
  fresh.new_data_dir = true;
  REQUIRE(image.apply(fresh));
  CHECK(image.topic(orders)->partitions[0].wiped == ids({2}));
  CHECK(image.topic(orders)->partitions[1].wiped == ids({2}));

  metadata_image rebuilt(test_cluster_id);
  REQUIRE(rebuilt.apply(image.to_records()));
  CHECK(rebuilt == image);

  REQUIRE(image.apply(partition_change_record{orders, partition_id{0}, std::nullopt, ids({1, 2}),
                                              std::nullopt, leader_epoch{0}, partition_epoch{2},
                                              {}}));
  CHECK(image.topic(orders)->partitions[0].wiped.empty());
  REQUIRE(image.apply(partition_change_record{orders, partition_id{1}, std::nullopt, std::nullopt,
                                              ids({1}), leader_epoch{1}, partition_epoch{2}, {}}));
  CHECK(image.topic(orders)->partitions[1].wiped.empty());

  refused(image, partition_record{orders, partition_id{2}, ids({1, 2}), ids({1, 2}), node_id{1},
                                  leader_epoch{0}, partition_epoch{0}, {}, ids({2})},
          errc::invalid_request); // wiped yet in the ISR
  refused(image, partition_record{orders, partition_id{2}, ids({1, 2}), ids({1}), node_id{1},
                                  leader_epoch{0}, partition_epoch{0}, {}, ids({3})},
          errc::invalid_request); // wiped, not a replica
}
