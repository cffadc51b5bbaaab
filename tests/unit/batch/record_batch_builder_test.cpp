#include "runtime/batch/record_batch_builder.hpp"

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

using namespace capstan;

namespace {

constexpr timestamp_ms base_ts = 1700000000000; // 0x0000018BCFE56800

// Assembled by hand from the RecordBatch v2 layout (docs/formats.md); the CRC was computed
// with an independent bit-at-a-time CRC-32C over bytes [21, 90).
const bytes known_batch = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // base offset 0
    0x00, 0x00, 0x00, 0x4e,                         // batch length 78 = 90 - 12
    0xff, 0xff, 0xff, 0xff,                         // partition leader epoch -1
    0x02,                                           // magic 2
    0x7c, 0x08, 0x90, 0xd6,                         // CRC-32C
    0x00, 0x00,                                     // attributes: none, CreateTime
    0x00, 0x00, 0x00, 0x01,                         // last offset delta 1
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, // base timestamp
    0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x69, 0x2c, // max timestamp = base + 300
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // producer id -1
    0xff, 0xff,                                     // producer epoch -1
    0xff, 0xff, 0xff, 0xff,                         // base sequence -1
    0x00, 0x00, 0x00, 0x02,                         // 2 records
    // record 0: key "k", value "hello", no headers
    0x18,                         // length 12
    0x00,                         // attributes
    0x00,                         // timestamp delta 0
    0x00,                         // offset delta 0
    0x02, 'k',                    // key length 1, key
    0x0a, 'h', 'e', 'l', 'l', 'o', // value length 5, value
    0x00,                         // 0 headers
    // record 1: null key, value "v", headers h=x and n=null
    0x1e,       // length 15
    0x00,       // attributes
    0xd8, 0x04, // timestamp delta 300
    0x02,       // offset delta 1
    0x01,       // key length -1 (null)
    0x02, 'v',  // value length 1, value
    0x04,       // 2 headers
    0x02, 'h', 0x02, 'x', // "h" = "x"
    0x02, 'n', 0x01,      // "n" = null
};

bytes b(std::string_view s) { return bytes(s.begin(), s.end()); }
bytes_view v(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(bytes_view x) { return std::string(x.begin(), x.end()); }

} // namespace

TEST_CASE("the builder writes exactly the hand-assembled Kafka batch", "[batch][builder]") {
  record_batch_builder builder(offset{0}, base_ts);
  builder.add("k", "hello", base_ts);
  builder.add(std::nullopt, v("v"), base_ts + 300, {{b("h"), b("x")}, {b("n"), std::nullopt}});
  CHECK(builder.size_bytes() == known_batch.size());
  CHECK(builder.build() == known_batch);
}

TEST_CASE("the hand-assembled batch parses to its fields and records", "[batch][builder]") {
  auto view = record_batch_view::parse(known_batch, batch_format::default_max_batch_bytes,
                                       batch_validation::produce);
  REQUIRE(view.ok());
  CHECK(view->base_offset() == offset{0});
  CHECK(view->last_offset() == offset{1});
  CHECK(view->partition_leader_epoch() == leader_epoch{-1});
  CHECK(view->attributes() == 0);
  CHECK(view->base_timestamp() == base_ts);
  CHECK(view->max_timestamp() == base_ts + 300);
  CHECK(view->producer_id() == -1);
  CHECK(view->producer_epoch() == -1);
  CHECK(view->base_sequence() == -1);
  CHECK(view->record_count() == 2);
  CHECK(view->crc() == 0x7c0890d6u);
  CHECK_FALSE(view->is_control());
  CHECK(view->size_bytes() == known_batch.size());

  int i = 0;
  view->for_each_record([&](const record_view& r) {
    CHECK(r.attributes == 0);
    CHECK(r.offset_delta == i);
    if (i == 0) {
      CHECK(r.timestamp_delta == 0);
      REQUIRE(r.key);
      CHECK(str(*r.key) == "k");
      REQUIRE(r.value);
      CHECK(str(*r.value) == "hello");
      CHECK(r.headers.empty());
    } else {
      CHECK(r.timestamp_delta == 300);
      CHECK_FALSE(r.key);
      REQUIRE(r.value);
      CHECK(str(*r.value) == "v");
      REQUIRE(r.headers.size() == 2);
      CHECK(str(r.headers[0].key) == "h");
      REQUIRE(r.headers[0].value);
      CHECK(str(*r.headers[0].value) == "x");
      CHECK(str(r.headers[1].key) == "n");
      CHECK_FALSE(r.headers[1].value);
    }
    ++i;
  });
  CHECK(i == 2);
}

TEST_CASE("size_bytes predicts the built size after every add", "[batch][builder]") {
  record_batch_builder builder(offset{0}, 1000);
  CHECK(builder.size_bytes() == batch_format::header_size);
  const std::string big(200, 'x');
  for (int i = 0; i < 50; ++i) {
    std::vector<std::pair<bytes, std::optional<bytes>>> headers;
    for (int h = 0; h < i % 4; ++h) headers.emplace_back(b(big.substr(0, h * 40)), b(big));
    builder.add(i % 3 ? std::optional<bytes_view>(v(big.substr(0, i * 3))) : std::nullopt,
                i % 5 ? std::optional<bytes_view>(v(big)) : std::nullopt, 1000 - 500 + i * 97,
                std::move(headers));
    REQUIRE(builder.build().size() == builder.size_bytes());
  }
  CHECK(builder.record_count() == 50);
}

TEST_CASE("built batches round-trip keys, values, nulls, empties and headers", "[batch][builder]") {
  record_batch_builder builder(offset{42}, 5000);
  builder.add(v(""), v(""), 5000);
  builder.add(std::nullopt, std::nullopt, 4000); // null key, tombstone, earlier timestamp
  builder.add(v("key"), std::nullopt, 9000, {{b(""), b("")}, {b("a"), std::nullopt}});
  auto built = builder.build();
  auto view = record_batch_view::parse(built, batch_format::default_max_batch_bytes,
                                       batch_validation::produce);
  REQUIRE(view.ok());
  CHECK(view->base_offset() == offset{42});
  CHECK(view->last_offset() == offset{44});
  CHECK(view->max_timestamp() == 9000);
  std::vector<record_view> records;
  view->for_each_record([&](const record_view& r) { records.push_back(r); });
  REQUIRE(records.size() == 3);
  REQUIRE(records[0].key);
  CHECK(records[0].key->empty());
  REQUIRE(records[0].value);
  CHECK(records[0].value->empty());
  CHECK_FALSE(records[1].key);
  CHECK_FALSE(records[1].value);
  CHECK(records[1].timestamp_delta == -1000);
  CHECK(str(*records[2].key) == "key");
  CHECK_FALSE(records[2].value);
  REQUIRE(records[2].headers.size() == 2);
  CHECK(records[2].headers[0].key.empty());
  REQUIRE(records[2].headers[0].value);
  CHECK(records[2].headers[0].value->empty());
  CHECK_FALSE(records[2].headers[1].value);
}

TEST_CASE("producer fields and leader epoch default to -1 and can be set", "[batch][builder]") {
  record_batch_builder builder;
  builder.add("a", "b", 0);
  auto plain = builder.build();
  auto view = record_batch_view::parse(plain, batch_format::default_max_batch_bytes);
  REQUIRE(view.ok());
  CHECK(view->producer_id() == -1);
  CHECK(view->producer_epoch() == -1);
  CHECK(view->base_sequence() == -1);
  CHECK(view->partition_leader_epoch() == leader_epoch{-1});

  builder.producer(77, 3, 1000).leader_epoch(leader_epoch{9});
  auto set = builder.build();
  auto view2 = record_batch_view::parse(set, batch_format::default_max_batch_bytes);
  REQUIRE(view2.ok());
  CHECK(view2->producer_id() == 77);
  CHECK(view2->producer_epoch() == 3);
  CHECK(view2->base_sequence() == 1000);
  CHECK(view2->partition_leader_epoch() == leader_epoch{9});
}

TEST_CASE("reset returns the builder to a fresh state", "[batch][builder]") {
  record_batch_builder builder(offset{5}, 10);
  builder.producer(1, 2, 3).leader_epoch(leader_epoch{4}).add("x", "y", 20).skip_offsets(3);
  builder.reset(offset{0}, base_ts);
  CHECK(builder.record_count() == 0);
  CHECK(builder.size_bytes() == batch_format::header_size);
  builder.add("k", "hello", base_ts);
  builder.add(std::nullopt, v("v"), base_ts + 300, {{b("h"), b("x")}, {b("n"), std::nullopt}});
  CHECK(builder.build() == known_batch);
}

TEST_CASE("skipped offsets make a batch that is valid stored but not produced",
          "[batch][builder]") {
  record_batch_builder builder(offset{100}, 0);
  builder.add("a", "1", 0).skip_offsets(2).add("b", "2", 0).skip_offsets(1);
  auto built = builder.build();
  auto stored = record_batch_view::parse(built, batch_format::default_max_batch_bytes,
                                         batch_validation::stored);
  REQUIRE(stored.ok());
  CHECK(stored->record_count() == 2);
  CHECK(stored->last_offset() == offset{104});
  std::vector<int32_t> deltas;
  stored->for_each_record([&](const record_view& r) { deltas.push_back(r.offset_delta); });
  CHECK(deltas == std::vector<int32_t>{0, 3});
  auto produced = record_batch_view::parse(built, batch_format::default_max_batch_bytes,
                                           batch_validation::produce);
  CHECK(produced.code() == errc::invalid_record);
}
