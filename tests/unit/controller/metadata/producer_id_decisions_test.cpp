// Producer id blocks: each starts where the last committed one ended, so no id is handed out
// twice, also after the image is rebuilt from the log's records or from a snapshot.

#include <catch2/catch.hpp>

#include <limits>
#include <vector>

#include "actors/controller/metadata/metadata_image_snapshot.hpp"
#include "actors/controller/metadata/metadata_record_codec.hpp"
#include "actors/controller/metadata/producer_id_decisions.hpp"
#include "runtime/cluster/producer_id_pool.hpp"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

producer_ids_record block_of(const result<decision>& d) {
  REQUIRE(d.ok());
  REQUIRE(d->records.size() == 1);
  return std::get<producer_ids_record>(d->records.front());
}

} // namespace

TEST_CASE("producer id blocks follow each other without overlap", "[controller][producer]") {
  metadata_image image(test_cluster_id);
  int64_t expected_first = 0;
  for (int i = 0; i < 5; ++i) {
    auto d = allocate_producer_ids(image);
    const auto b = block_of(d);
    CHECK(b.first_id == expected_first);
    CHECK(b.size == producer_id_block_size);
    expected_first += producer_id_block_size;
    image = applied(image, d->records);
    CHECK(image.next_producer_id() == expected_first);
  }
  // A decision the log did not commit changes nothing: the next one gets the same block.
  CHECK(block_of(allocate_producer_ids(image)).first_id ==
        block_of(allocate_producer_ids(image)).first_id);
}

TEST_CASE("producer id blocks continue after a replay of the log and after a snapshot",
          "[controller][producer]") {
  metadata_image image(test_cluster_id);
  std::vector<bytes> log;
  for (int i = 0; i < 3; ++i) {
    auto d = allocate_producer_ids(image, 10);
    REQUIRE(d.ok());
    log.push_back(encode_batch(d->records));
    image = applied(image, d->records);
  }
  // A new active controller replays the entries the old one committed.
  metadata_image replayed(test_cluster_id);
  for (const auto& entry : log) {
    auto records = decode_batch(entry);
    REQUIRE(records.ok());
    REQUIRE(replayed.apply(*records).ok());
  }
  CHECK(block_of(allocate_producer_ids(replayed, 10)).first_id == 30);
  // Or it starts from a snapshot.
  auto restored = read_image_snapshot(write_image_snapshot(image));
  REQUIRE(restored.ok());
  CHECK(restored->next_producer_id() == 30);
  CHECK(block_of(allocate_producer_ids(*restored)).first_id == 30);
}

TEST_CASE("a block that does not start at the next id is refused by the image",
          "[controller][producer]") {
  metadata_image image(test_cluster_id);
  auto d = allocate_producer_ids(image);
  image = applied(image, d->records);
  // The same block again (a stale proposal) would hand out its ids twice.
  CHECK(image.apply(d->records).code() == errc::invalid_request);
}

TEST_CASE("producer ids running out is UNKNOWN_SERVER_ERROR", "[controller][producer]") {
  metadata_image image(test_cluster_id);
  const int64_t max = std::numeric_limits<int64_t>::max();
  image = applied(image, {producer_ids_record{0, max - 5}});
  CHECK(block_of(allocate_producer_ids(image, 5)).first_id == max - 5);
  CHECK(allocate_producer_ids(image, 6).code() == errc::unknown_server_error);
  CHECK(allocate_producer_ids(image, 0).code() == errc::unknown_server_error);
}

TEST_CASE("a node's pool hands out its block's ids once each", "[controller][producer]") {
  producer_id_pool pool;
  CHECK(pool.empty());
  CHECK_FALSE(pool.take());
  pool.refill(producer_id_block{2000, 3});
  CHECK(pool.take() == 2000);
  CHECK(pool.take() == 2001);
  CHECK(pool.take() == 2002);
  CHECK_FALSE(pool.take());
  CHECK(pool.empty());
}
