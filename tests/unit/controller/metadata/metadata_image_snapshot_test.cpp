// Raft snapshots of the image: a round trip gives the same image, and an image restored from a
// snapshot then fed the later records equals the image built from every record.

#include <catch2/catch.hpp>

#include <random>

#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/metadata/metadata_image_snapshot.hpp"
#include "actors/controller/metadata/metadata_record_codec.hpp"
#include "actors/controller/metadata/partition_decisions.hpp"
#include "actors/controller/metadata/topic_decisions.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

// A log of decision batches, as a controller would commit them.
std::vector<std::vector<metadata_record>> decision_log() {
  std::vector<std::vector<metadata_record>> log;
  metadata_image image(test_cluster_id);
  std::mt19937_64 rng(42);
  decision_options options;
  auto commit = [&](const result<decision>& d) {
    INFO((d.ok() ? std::string() : d.err().to_string()));
    REQUIRE(d.ok());
    if (d->records.empty()) return;
    image = applied(image, d->records);
    log.push_back(d->records);
  };
  for (int32_t n = 1; n <= 4; ++n) {
    broker_registration_request req{node_id{n}, make_incarnation(static_cast<uint8_t>(n)),
                                    test_cluster_id, "h", 1, "h", 2, n % 2 ? "a" : "b"};
    commit(register_broker(image, req, false, options));
    commit(unfence_broker(image, node_id{n}, image.broker(node_id{n})->epoch, options));
  }
  commit(create_topic(image, topic_spec{"orders", 6, 3, {{"retention.ms", "5000"}}}, options, rng));
  commit(create_topic(image, topic_spec{"payments", 2, 2, {}}, options, rng));
  commit(create_partitions(image, "payments", 5, options));
  commit(alter_configs(image, "orders", {{"cleanup.policy", "compact"}}, {}));
  commit(fence_broker(image, node_id{2}, image.broker(node_id{2})->epoch, options));
  commit(delete_topic(image, "payments"));
  log.push_back({producer_ids_record{0, 1000}});
  image = applied(image, log.back());
  commit(unfence_broker(image, node_id{2}, image.broker(node_id{2})->epoch, options));
  // The leaders take node 2 back into their ISRs, then it leads where it is preferred.
  const auto orders = image.topic_by_name("orders")->id;
  for (int32_t i = 0; i < 6; ++i) {
    const auto p = *image.partition(orders, partition_id{i});
    if (!p.has_replica(node_id{2}) || p.in_isr(node_id{2})) continue;
    auto isr = p.isr;
    isr.push_back(node_id{2});
    auto d = alter_partition(
      image, alter_partition_msg{p.leader, {alter_partition_item{topic_partition{"orders", i}, orders,
                                                                 p.leader_epoch,
                                                                 p.partition_epoch.value(), isr}}});
    REQUIRE(d.outcomes.at(0).code == errc::none);
    commit(d.changes);
  }
  commit(elect_preferred_leaders(image, std::nullopt).changes);
  // Node 4, the highest broker epoch, goes for good: the snapshot must keep that epoch although
  // no registration in it holds it any more.
  commit(fence_broker(image, node_id{4}, image.broker(node_id{4})->epoch, options));
  commit(unregister_broker(image, node_id{4}, false));
  return log;
}

metadata_image replay(metadata_image image, const std::vector<std::vector<metadata_record>>& log,
                      size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    // Through the codec, as entries arrive from the Raft log.
    auto records = decode_batch(encode_batch(log[i]));
    REQUIRE(records.ok());
    auto s = image.apply(*records);
    INFO("entry " << i << ": " << s.err().to_string());
    REQUIRE(s.ok());
  }
  return image;
}

} // namespace

TEST_CASE("an image snapshot round trips", "[controller][snapshot]") {
  const auto log = decision_log();
  const auto image = replay(metadata_image(test_cluster_id), log, 0, log.size());
  REQUIRE(image.topics().size() == 1);
  auto restored = read_image_snapshot(write_image_snapshot(image));
  INFO((restored.ok() ? std::string() : restored.err().to_string()));
  REQUIRE(restored.ok());
  CHECK(*restored == image);
  CHECK(restored->cluster_id() == test_cluster_id);
  CHECK(restored->broker(node_id{4}) == nullptr);
  CHECK(restored->max_broker_epoch() == broker_epoch{4});

  auto empty = read_image_snapshot(write_image_snapshot(metadata_image("c")));
  REQUIRE(empty.ok());
  CHECK(*empty == metadata_image("c"));
}

TEST_CASE("image from a snapshot plus later records equals image from all records",
          "[controller][snapshot]") {
  const auto log = decision_log();
  const auto all = replay(metadata_image(test_cluster_id), log, 0, log.size());
  for (size_t cut = 0; cut <= log.size(); ++cut) {
    INFO("snapshot after entry " << cut);
    const auto prefix = replay(metadata_image(test_cluster_id), log, 0, cut);
    auto restored = read_image_snapshot(write_image_snapshot(prefix));
    REQUIRE(restored.ok());
    CHECK(replay(*restored, log, cut, log.size()) == all);
  }
}

TEST_CASE("a snapshot whose records contradict each other is refused", "[controller][snapshot]") {
  const auto t = make_topic_id(4);
  snapshot_contents contents{test_cluster_id,
                             {topic_record{"orders", t, false, {}},
                              partition_record{t, partition_id{1}, ids({1}), ids({1}), node_id{1},
                                               leader_epoch{0}, partition_epoch{0}, {}, {}}},
                             broker_epoch{0}};
  auto restored = read_image_snapshot(encode_snapshot(contents));
  CHECK(restored.code() == errc::invalid_partitions);
  CHECK(restored.err().message.find("snapshot record 1 (Partition)") != std::string::npos);
  CHECK(read_image_snapshot(bytes{1, 2, 3}).code() == errc::corrupt_message);
}
