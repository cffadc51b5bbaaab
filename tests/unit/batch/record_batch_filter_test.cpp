#include "runtime/batch/record_batch_filter.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;

namespace {

constexpr size_t max_bytes = bf::default_max_batch_bytes;

bytes b(std::string_view s) {
  return bytes(s.begin(), s.end());
}
std::string str(bytes_view v) {
  return std::string(v.begin(), v.end());
}

record_batch_view parse(const bytes& batch) {
  auto view = record_batch_view::parse(batch, max_bytes, batch_validation::stored);
  INFO((view.ok() ? std::string() : view.err().message));
  REQUIRE(view.ok());
  return *view;
}

// Five records at base offset 100 with producer fields, a header, a null key and a tombstone.
bytes sample_batch() {
  record_batch_builder builder(offset{100}, 5000);
  builder.producer(7, 3, 40).leader_epoch(leader_epoch{9});
  builder.add("k0", "v0", 5000);
  builder.add(b("k1"), b("v1"), 5003, {{b("h"), b("x")}});
  builder.add(std::nullopt, b("no key"), 4999);
  builder.add(b("k3"), std::nullopt, 5010);
  builder.add("k4", std::string(200, 'z'), 5001);
  return builder.build();
}

struct seen_record {
  int64_t offset;
  std::string key;
  timestamp_ms timestamp;
};

std::vector<seen_record> records_of(const record_batch_view& batch) {
  std::vector<seen_record> out;
  batch.for_each_record([&](const record_view& r) {
    out.push_back({(batch.base_offset() + r.offset_delta).value(), r.key ? str(*r.key) : "<null>",
                   batch.timestamp_of(r)});
  });
  return out;
}

// True iff needle occurs contiguously in haystack.
bool contains(bytes_view haystack, bytes_view needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

} // namespace

TEST_CASE("a filtered batch keeps the chosen records at their offsets and re-validates",
          "[batch][filter]") {
  const bytes original = sample_batch();
  const record_batch_view in = parse(original);
  std::vector<int64_t> offered;
  auto out = filter_records(in, [&](const record_view&, offset at) {
    offered.push_back(at.value());
    return at.value() % 2 == 1;
  });
  REQUIRE(out);
  CHECK(offered == std::vector<int64_t>{100, 101, 102, 103, 104});

  const record_batch_view filtered = parse(*out);
  CHECK(filtered.record_count() == 2);
  CHECK(filtered.size_bytes() == out->size());
  auto seen = records_of(filtered);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].offset == 101);
  CHECK(seen[0].key == "k1");
  CHECK(seen[0].timestamp == 5003);
  CHECK(seen[1].offset == 103);
  CHECK(seen[1].key == "k3");
  CHECK(seen[1].timestamp == 5010);

  // Everything but length, count and CRC is the original header.
  CHECK(filtered.base_offset() == in.base_offset());
  CHECK(filtered.last_offset_delta() == 4);
  CHECK(filtered.partition_leader_epoch() == in.partition_leader_epoch());
  CHECK(filtered.attributes() == in.attributes());
  CHECK(filtered.base_timestamp() == in.base_timestamp());
  CHECK(filtered.max_timestamp() == in.max_timestamp());
  CHECK(filtered.producer_id() == 7);
  CHECK(filtered.producer_epoch() == 3);
  CHECK(filtered.base_sequence() == 40);
  CHECK(filtered.crc() != in.crc());
  CHECK(std::equal(original.begin() + bf::partition_leader_epoch_at, original.begin() + bf::crc_at,
                   out->begin() + bf::partition_leader_epoch_at));
  CHECK(std::equal(original.begin() + bf::attributes_at, original.begin() + bf::records_count_at,
                   out->begin() + bf::attributes_at));
}

TEST_CASE("surviving record bytes are copied verbatim from the original batch", "[batch][filter]") {
  const bytes original = sample_batch();
  const record_batch_view in = parse(original);
  // Keep one record at a time: the output's record section must then be exactly one contiguous
  // piece of the original's record section.
  std::vector<bytes> single;
  for (int64_t keep_at = 100; keep_at <= 104; ++keep_at) {
    auto out =
        filter_records(in, [&](const record_view&, offset at) { return at.value() == keep_at; });
    REQUIRE(out);
    const record_batch_view filtered = parse(*out);
    REQUIRE(filtered.record_count() == 1);
    const bytes_view record = bytes_view(*out).subspan(bf::records_at);
    CHECK(contains(bytes_view(original).subspan(bf::records_at), record));
    CHECK(records_of(filtered).at(0).offset == keep_at);
    single.emplace_back(record.begin(), record.end());
  }
  // Keeping several records concatenates exactly their bytes.
  auto out = filter_records(in, [](const record_view&, offset at) {
    return at.value() == 101 || at.value() == 103 || at.value() == 104;
  });
  REQUIRE(out);
  bytes expected = single[1];
  expected.insert(expected.end(), single[3].begin(), single[3].end());
  expected.insert(expected.end(), single[4].begin(), single[4].end());
  CHECK(bytes(out->begin() + bf::records_at, out->end()) == expected);
  CHECK(out->size() - bf::log_overhead ==
        static_cast<size_t>(bf::load_be<int32_t>(out->data() + bf::batch_length_at)));
}

TEST_CASE("a filter that keeps every record reproduces the batch byte for byte",
          "[batch][filter]") {
  const bytes original = sample_batch();
  auto out = filter_records(parse(original), [](const record_view&, offset) { return true; });
  REQUIRE(out);
  CHECK(*out == original);
}

TEST_CASE("a filter that keeps no record returns nothing", "[batch][filter]") {
  const bytes original = sample_batch();
  CHECK_FALSE(filter_records(parse(original), [](const record_view&, offset) { return false; }));
}

TEST_CASE("the predicate sees each record's fields and absolute offset across offset gaps",
          "[batch][filter]") {
  record_batch_builder builder(offset{1000}, 0);
  builder.add("a", "1", 0)
      .skip_offsets(3)
      .add("b", "2", 0)
      .skip_offsets(2)
      .add("c", "3", 0)
      .skip_offsets(4);
  const bytes original = builder.build();
  const record_batch_view in = parse(original);
  std::vector<std::pair<std::string, int64_t>> offered;
  auto out = filter_records(in, [&](const record_view& r, offset at) {
    offered.emplace_back(str(*r.key) + "=" + str(*r.value), at.value());
    return str(*r.key) != "b";
  });
  CHECK(offered ==
        std::vector<std::pair<std::string, int64_t>>{{"a=1", 1000}, {"b=2", 1004}, {"c=3", 1007}});
  REQUIRE(out);
  const record_batch_view filtered = parse(*out);
  CHECK(filtered.last_offset() == offset{1011});
  auto seen = records_of(filtered);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].offset == 1000);
  CHECK(seen[1].offset == 1007);
}

TEST_CASE("a filtered batch can be filtered again", "[batch][filter]") {
  const bytes original = sample_batch();
  auto once = filter_records(parse(original),
                             [](const record_view&, offset at) { return at.value() != 102; });
  REQUIRE(once);
  auto twice = filter_records(parse(*once),
                              [](const record_view& r, offset) { return r.value.has_value(); });
  REQUIRE(twice);
  const record_batch_view filtered = parse(*twice);
  std::vector<int64_t> offsets;
  for (const auto& r : records_of(filtered)) offsets.push_back(r.offset);
  CHECK(offsets == std::vector<int64_t>{100, 101, 104});
}

TEST_CASE("flipping any byte of a filtered batch under its CRC is detected", "[batch][filter]") {
  const bytes original = sample_batch();
  auto out = filter_records(parse(original),
                            [](const record_view&, offset at) { return at.value() >= 103; });
  REQUIRE(out);
  for (size_t i = bf::attributes_at; i < out->size(); ++i) {
    bytes damaged = *out;
    damaged[i] ^= 0x01;
    CHECK_FALSE(record_batch_view::parse(damaged, max_bytes, batch_validation::stored).ok());
  }
}
