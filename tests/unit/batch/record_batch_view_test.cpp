#include "runtime/batch/record_batch_view.hpp"

#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;

namespace {

constexpr size_t max_bytes = bf::default_max_batch_bytes;

bytes b(std::string_view s) { return bytes(s.begin(), s.end()); }

// Recomputes the CRC so a test reaches the checks behind it.
void reseal(bytes& batch) {
  bf::store_be<uint32_t>(batch.data() + bf::crc_at,
                         crc32c(bytes_view(batch).subspan(bf::attributes_at)));
}

// A v2 header (base offset 0, CreateTime) around raw record bytes, with length and CRC fixed.
bytes assemble(const bytes& records, int32_t count, int32_t last_offset_delta,
               int16_t attributes = 0) {
  bytes out(bf::header_size);
  bf::store_be<int32_t>(out.data() + bf::batch_length_at,
                        static_cast<int32_t>(bf::header_size + records.size() - bf::log_overhead));
  bf::store_be<int32_t>(out.data() + bf::partition_leader_epoch_at, -1);
  out[bf::magic_at] = 2;
  bf::store_be<int16_t>(out.data() + bf::attributes_at, attributes);
  bf::store_be<int32_t>(out.data() + bf::last_offset_delta_at, last_offset_delta);
  bf::store_be<int64_t>(out.data() + bf::producer_id_at, -1);
  bf::store_be<int16_t>(out.data() + bf::producer_epoch_at, -1);
  bf::store_be<int32_t>(out.data() + bf::base_sequence_at, -1);
  bf::store_be<int32_t>(out.data() + bf::records_count_at, count);
  out.insert(out.end(), records.begin(), records.end());
  reseal(out);
  return out;
}

// A small record: the given zigzag offset delta, key "k", value "v", no headers (length 8).
bytes simple_record(uint8_t zigzag_delta) {
  return {0x10, 0x00, 0x00, zigzag_delta, 0x02, 'k', 0x02, 'v', 0x00};
}

bytes sample_batch() {
  record_batch_builder builder(offset{0}, 1000);
  builder.add("key-0", "value-0", 1000);
  builder.add(std::nullopt, std::nullopt, 1001, {{b("h"), b("x")}, {b("n"), std::nullopt}});
  builder.add("key-2", std::string(300, 'z'), 999);
  return builder.build();
}

std::string parse_message(const bytes& batch, batch_validation mode = batch_validation::stored) {
  auto r = record_batch_view::parse(batch, max_bytes, mode);
  return r.ok() ? std::string("ok") : r.err().message;
}

errc parse_code(const bytes& batch, batch_validation mode = batch_validation::stored) {
  return record_batch_view::parse(batch, max_bytes, mode).code();
}

} // namespace

TEST_CASE("parse rejects a batch truncated at every length, reading only the given bytes",
          "[batch][view]") {
  const bytes batch = sample_batch();
  REQUIRE(record_batch_view::parse(batch, max_bytes).ok());
  for (size_t len = 0; len < batch.size(); ++len) {
    // An exact-size heap copy, so a sanitizer build flags any read past it.
    const bytes prefix(batch.begin(), batch.begin() + static_cast<ptrdiff_t>(len));
    auto r = record_batch_view::parse(prefix, max_bytes);
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.code() == errc::corrupt_message);
  }
}

TEST_CASE("parse covers exactly the framed batch when more bytes follow", "[batch][view]") {
  bytes batch = sample_batch();
  const size_t size = batch.size();
  batch.insert(batch.end(), {0xde, 0xad, 0xbe, 0xef});
  auto r = record_batch_view::parse(batch, max_bytes);
  REQUIRE(r.ok());
  CHECK(r->size_bytes() == size);
  CHECK(r->data().data() == batch.data());
}

TEST_CASE("a bit flip under the CRC is rejected, outside it only a negative base offset is",
          "[batch][view]") {
  const bytes batch = sample_batch();
  for (size_t i = 0; i < batch.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      bytes flipped = batch;
      flipped[i] ^= static_cast<uint8_t>(1u << bit);
      const bool uncovered =
          i < bf::batch_length_at || (i >= bf::partition_leader_epoch_at && i < bf::magic_at);
      // The base offset's sign bit is outside the CRC, but a negative base offset is refused.
      const bool negative_base = i == bf::base_offset_at && bit == 7;
      INFO("byte " << i << " bit " << bit);
      if (uncovered && !negative_base)
        REQUIRE(record_batch_view::parse(flipped, max_bytes).ok());
      else
        REQUIRE(parse_code(flipped) == errc::corrupt_message);
    }
  }
}

TEST_CASE("a CRC mismatch names the stored and computed values", "[batch][view]") {
  bytes batch = sample_batch();
  batch.back() ^= 1;
  const std::string msg = parse_message(batch);
  CHECK_THAT(msg, Catch::Contains("CRC-32C mismatch"));
  CHECK_THAT(msg, Catch::Contains("batch offset 17"));
}

TEST_CASE("a batch with magic other than 2 is corrupt", "[batch][view]") {
  bytes batch = sample_batch();
  batch[bf::magic_at] = 1;
  CHECK(parse_code(batch) == errc::corrupt_message);
  CHECK_THAT(parse_message(batch), Catch::Contains("magic byte at batch offset 16 is 1"));
}

TEST_CASE("frame_size reads only the length and checks it against the header size",
          "[batch][view]") {
  const bytes batch = sample_batch();
  auto whole = record_batch_view::frame_size(batch);
  REQUIRE(whole.ok());
  CHECK(*whole == batch.size());
  // A bare header frames the batch without the records being present.
  const bytes header(batch.begin(), batch.begin() + bf::header_size);
  auto from_header = record_batch_view::frame_size(header);
  REQUIRE(from_header.ok());
  CHECK(*from_header == batch.size());
  const bytes short_header(batch.begin(), batch.begin() + bf::header_size - 1);
  CHECK(record_batch_view::frame_size(short_header).code() == errc::corrupt_message);

  for (int32_t length : {-1, 0, 48, std::numeric_limits<int32_t>::min()}) {
    bytes bad = batch;
    bf::store_be<int32_t>(bad.data() + bf::batch_length_at, length);
    CHECK(record_batch_view::frame_size(bad).code() == errc::corrupt_message);
    CHECK(parse_code(bad) == errc::corrupt_message);
  }
  bytes empty_records = batch;
  bf::store_be<int32_t>(empty_records.data() + bf::batch_length_at, 49);
  CHECK(*record_batch_view::frame_size(empty_records) == bf::header_size);
}

TEST_CASE("a batch above max_batch_bytes is MESSAGE_TOO_LARGE", "[batch][view]") {
  const bytes batch = sample_batch();
  CHECK(record_batch_view::parse(batch, batch.size()).ok());
  auto r = record_batch_view::parse(batch, batch.size() - 1);
  CHECK(r.code() == errc::message_too_large);
}

TEST_CASE("codec bits 5 to 7 are UNSUPPORTED_COMPRESSION_TYPE naming the bits", "[batch][view]") {
  for (int16_t codec : {5, 6, 7}) {
    bytes batch = sample_batch();
    bf::store_be<int16_t>(batch.data() + bf::attributes_at, codec);
    reseal(batch);
    CHECK(parse_code(batch) == errc::unsupported_compression_type);
    CHECK_THAT(parse_message(batch), Catch::Contains("codec " + std::to_string(codec)));
  }
}

TEST_CASE("plain records under a codec's bits are CORRUPT_MESSAGE naming the codec",
          "[batch][view]") {
  for (const auto& [codec, name] : {std::pair<int16_t, std::string>{1, "gzip"}, {2, "snappy"},
                                    {3, "lz4"}, {4, "zstd"}}) {
    bytes batch = sample_batch();
    bf::store_be<int16_t>(batch.data() + bf::attributes_at, codec);
    reseal(batch);
    CHECK(parse_code(batch) == errc::corrupt_message);
    CHECK_THAT(parse_message(batch), Catch::Contains(name + " records section does not "
                                                            "decompress"));
  }
}

TEST_CASE("attribute bits other than compression are accepted", "[batch][view]") {
  bytes batch = sample_batch();
  bf::store_be<int16_t>(batch.data() + bf::attributes_at,
                        bf::timestamp_type_mask | bf::transactional_mask | bf::control_mask);
  reseal(batch);
  auto r = record_batch_view::parse(batch, max_bytes);
  REQUIRE(r.ok());
  CHECK(r->is_control());
}

TEST_CASE("record count and last offset delta are checked per validation mode", "[batch][view]") {
  const bytes two = [] {
    bytes r = simple_record(0x00);
    bytes r1 = simple_record(0x02);
    r.insert(r.end(), r1.begin(), r1.end());
    return r;
  }();
  using enum batch_validation;
  CHECK(parse_code(assemble(two, 2, 1), produce) == errc::none);
  CHECK(parse_code(assemble(two, 2, 1), stored) == errc::none);
  // Count != lastOffsetDelta + 1: Kafka's INVALID_RECORD for a producer, fine once compacted.
  CHECK(parse_code(assemble(two, 2, 5), produce) == errc::invalid_record);
  CHECK(parse_code(assemble(two, 2, 5), stored) == errc::none);
  // More records than offsets.
  CHECK(parse_code(assemble(two, 2, 0), stored) == errc::corrupt_message);
  CHECK(parse_code(assemble(two, 2, 0), produce) == errc::invalid_record);
  CHECK(parse_code(assemble(two, -1, 1), stored) == errc::corrupt_message);
  CHECK(parse_code(assemble(two, -1, 1), produce) == errc::corrupt_message);
  CHECK(parse_code(assemble({}, 0, -1), stored) == errc::corrupt_message);
  // Count says 3 but only two records are there; count says 1 but two are there.
  CHECK_THAT(parse_message(assemble(two, 3, 2)), Catch::Contains("after 2 of its 3 records"));
  CHECK_THAT(parse_message(assemble(two, 1, 1)),
             Catch::Contains("9 trailing bytes at batch offset 70"));
}

TEST_CASE("a base offset whose last offset leaves the int64 range is corrupt", "[batch][view]") {
  // Found by the record_batch fuzzer: last_offset() overflowed on a validated batch.
  const auto with_base = [](int64_t base, int32_t last_offset_delta) {
    bytes batch = assemble(simple_record(0x00), 1, last_offset_delta);
    bf::store_be<int64_t>(batch.data() + bf::base_offset_at, base);
    reseal(batch);
    return batch;
  };
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  using enum batch_validation;
  for (auto mode : {produce, stored}) {
    CHECK(parse_code(with_base(max, 0), mode) == errc::none);
    CHECK(parse_code(with_base(-1, 0), mode) == errc::corrupt_message);
  }
  CHECK(parse_code(with_base(max - 5, 5), stored) == errc::none);
  CHECK(parse_code(with_base(max - 4, 5), stored) == errc::corrupt_message);
  CHECK_THAT(parse_message(with_base(max, 53672)), Catch::Contains("leaves the offset range"));
}

TEST_CASE("a compacted batch may have no records at all", "[batch][view]") {
  const bytes empty = assemble({}, 0, 5);
  auto r = record_batch_view::parse(empty, max_bytes, batch_validation::stored);
  REQUIRE(r.ok());
  CHECK(r->record_count() == 0);
  CHECK(r->last_offset_delta() == 5);
  int calls = 0;
  r->for_each_record([&](const record_view&) { ++calls; });
  CHECK(calls == 0);
  CHECK(parse_code(assemble({}, 0, 0), batch_validation::produce) == errc::invalid_record);
}

TEST_CASE("offset deltas must be 0..n-1 when produced and increasing when stored",
          "[batch][view]") {
  auto records = [](std::initializer_list<uint8_t> zigzag_deltas) {
    bytes out;
    for (uint8_t d : zigzag_deltas) {
      bytes r = simple_record(d);
      out.insert(out.end(), r.begin(), r.end());
    }
    return out;
  };
  using enum batch_validation;
  // deltas 0, 2 in a batch with lastOffsetDelta 1: produce wants 0, 1.
  CHECK(parse_code(assemble(records({0x00, 0x04}), 2, 1), produce) == errc::invalid_record);
  CHECK_THAT(parse_message(assemble(records({0x00, 0x04}), 2, 1), produce),
             Catch::Contains("record 1 at batch offset 70 has offset delta 2, expected 1"));
  // Stored: gaps fine, repeats, decreases and deltas past lastOffsetDelta are corrupt.
  CHECK(parse_code(assemble(records({0x02, 0x08}), 2, 4), stored) == errc::none);
  CHECK(parse_code(assemble(records({0x02, 0x02}), 2, 4), stored) == errc::corrupt_message);
  CHECK(parse_code(assemble(records({0x04, 0x02}), 2, 4), stored) == errc::corrupt_message);
  CHECK(parse_code(assemble(records({0x02, 0x0a}), 2, 4), stored) == errc::corrupt_message);
  CHECK(parse_code(assemble(records({0x01}), 1, 4), stored) == errc::corrupt_message); // delta -1
}

TEST_CASE("record framing errors are corrupt and say where", "[batch][view]") {
  struct bad_record {
    std::string name;
    bytes record;
    std::string message;
  };
  const std::vector<bad_record> cases = {
      {"length longer than the batch",
       {0x12, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x00},
       "record 0 at batch offset 61: length 9 at batch offset 61 is out of range (8 bytes left "
       "in the batch)"},
      {"negative length", {0x01, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x00}, "length -1"},
      {"length shorter than the fields",
       {0x0e, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x00},
       "header count at batch offset 69 runs past the record"},
      {"length longer than the fields",
       {0x12, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x00, 0x00},
       "record length 9 leaves 1 bytes unused after its last header (batch offset 70)"},
      {"length varint runs off the batch",
       {0xff, 0xff},
       "length at batch offset 61 runs past the batch"},
      {"key longer than the record",
       {0x10, 0x00, 0x00, 0x00, 0x0a, 'k', 0x02, 'v', 0x00},
       "key length 5 at batch offset 65 is out of range (4 bytes left in the record)"},
      {"key length below -1",
       {0x10, 0x00, 0x00, 0x00, 0x03, 'k', 0x02, 'v', 0x00},
       "key length -2"},
      {"value longer than the record",
       {0x10, 0x00, 0x00, 0x00, 0x02, 'k', 0x06, 'v', 0x00},
       "value length 3 at batch offset 67"},
      {"negative header count",
       {0x10, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x01},
       "header count -1"},
      {"header count beyond the record",
       {0x10, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x02},
       "header count 1 at batch offset 69 is out of range (0 bytes left in the record)"},
      {"null header key",
       {0x14, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x02, 0x01, 0x01},
       "header key length -1"},
      {"header value beyond the record",
       {0x16, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x02, 0x02, 'h', 0x04},
       "header value length 2 at batch offset 72"},
      {"timestamp delta varlong runs past the record",
       {0x04, 0x00, 0x80, 0x80, 0x00},
       "timestamp delta at batch offset 63 runs past the record"},
      {"empty record", {0x00}, "attributes at batch offset 62 runs past the record"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const bytes batch = assemble(c.record, 1, 0);
    CHECK(parse_code(batch) == errc::corrupt_message);
    CHECK_THAT(parse_message(batch), Catch::Contains(c.message));
  }
}

TEST_CASE("records with every field at its limits validate and iterate", "[batch][view]") {
  // Empty key, empty value, empty header key and value; lengths encoded in multi-byte varints.
  const std::string long_value(200, 'q');
  record_batch_builder builder(offset{0}, 0);
  builder.add(bytes_view{}, bytes_view{}, std::numeric_limits<int64_t>::min(),
              {{bytes{}, bytes{}}});
  builder.add("", long_value, std::numeric_limits<int64_t>::max());
  auto batch = builder.build();
  auto r = record_batch_view::parse(batch, max_bytes, batch_validation::produce);
  REQUIRE(r.ok());
  std::vector<size_t> value_sizes;
  r->for_each_record([&](const record_view& rec) { value_sizes.push_back(rec.value->size()); });
  CHECK(value_sizes == std::vector<size_t>{0, 200});
}

TEST_CASE("random garbage is rejected or iterates consistently, never reading outside its buffer",
          "[batch][view]") {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 20000; ++i) {
    bytes garbage(rng() % 200);
    for (auto& x : garbage) x = static_cast<uint8_t>(rng());
    if (garbage.size() >= bf::header_size && i % 2 == 0) {
      // Half the time make the header plausible so the record decoder sees the garbage.
      bf::store_be<int32_t>(garbage.data() + bf::batch_length_at,
                            static_cast<int32_t>(garbage.size() - bf::log_overhead));
      garbage[bf::magic_at] = 2;
      bf::store_be<int16_t>(garbage.data() + bf::attributes_at, 0);
      bf::store_be<int32_t>(garbage.data() + bf::records_count_at, static_cast<int32_t>(rng() % 4));
      bf::store_be<int32_t>(garbage.data() + bf::last_offset_delta_at,
                            static_cast<int32_t>(rng() % 4));
      reseal(garbage);
    }
    auto r = record_batch_view::parse(garbage, max_bytes);
    if (r.ok()) {
      int n = 0;
      r->for_each_record([&](const record_view&) { ++n; });
      REQUIRE(n == r->record_count());
    }
  }
}

TEST_CASE("resealed random mutations of a valid batch either fail or iterate consistently",
          "[batch][view]") {
  const bytes original = sample_batch();
  std::mt19937_64 rng(99);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    bytes batch = original;
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = bf::records_at + rng() % (batch.size() - bf::records_at);
      batch[at] = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : batch[at] ^ (1u << (rng() % 8)));
    }
    if (rng() % 4 == 0) {
      batch.resize(bf::header_size + rng() % (batch.size() - bf::header_size + 8));
      bf::store_be<int32_t>(batch.data() + bf::batch_length_at,
                            static_cast<int32_t>(batch.size() - bf::log_overhead));
    }
    batch.shrink_to_fit();
    reseal(batch);
    for (auto mode : {batch_validation::stored, batch_validation::produce}) {
      auto r = record_batch_view::parse(batch, max_bytes, mode);
      if (!r.ok()) continue;
      ++accepted;
      int n = 0;
      int32_t last_delta = -1;
      r->for_each_record([&](const record_view& rec) {
        REQUIRE(rec.offset_delta > last_delta);
        last_delta = rec.offset_delta;
        ++n;
      });
      REQUIRE(n == r->record_count());
    }
  }
  CHECK(accepted > 0);
}

TEST_CASE("header patches change only their field and keep the CRC valid", "[batch][view]") {
  bytes batch = sample_batch();
  const uint32_t crc_before = bf::load_be<uint32_t>(batch.data() + bf::crc_at);
  batch.push_back(0xaa); // bytes after the batch are not touched
  set_base_offset(batch, offset{123456789012});
  set_partition_leader_epoch(batch, leader_epoch{17});
  CHECK(batch.back() == 0xaa);
  auto r = record_batch_view::parse(batch, max_bytes);
  REQUIRE(r.ok());
  CHECK(r->base_offset() == offset{123456789012});
  CHECK(r->last_offset() == offset{123456789014});
  CHECK(r->partition_leader_epoch() == leader_epoch{17});
  CHECK(r->crc() == crc_before);
}

TEST_CASE("set_log_append_time sets the timestamp type and max timestamp and re-checksums",
          "[batch][view]") {
  bytes batch = sample_batch();
  set_log_append_time(batch, 1234567);
  auto r = record_batch_view::parse(batch, max_bytes);
  REQUIRE(r.ok());
  CHECK((r->attributes() & bf::timestamp_type_mask) != 0);
  CHECK((r->attributes() & bf::compression_mask) == 0);
  CHECK(r->max_timestamp() == 1234567);
  CHECK(r->base_timestamp() == 1000);
}

TEST_CASE("set_producer stamps producer id, epoch and base sequence and re-checksums",
          "[batch][view]") {
  bytes batch = sample_batch();
  batch.push_back(0xaa); // bytes after the batch are not touched
  set_producer(batch, 4200000000123, 7, 2147483646);
  CHECK(batch.back() == 0xaa);
  auto r = record_batch_view::parse(batch, max_bytes, batch_validation::produce);
  REQUIRE(r.ok());
  CHECK(r->producer_id() == 4200000000123);
  CHECK(r->producer_epoch() == 7);
  CHECK(r->base_sequence() == 2147483646);
  CHECK(r->base_timestamp() == 1000);
  CHECK(r->record_count() == 3);
}

TEST_CASE("a record timestamp that overflows int64 is refused: corrupt when stored, invalid when "
          "produced",
          "[batch][view][timestamp]") {
  constexpr auto max = std::numeric_limits<int64_t>::max();
  constexpr auto min = std::numeric_limits<int64_t>::min();
  // The builder stores timestamp - base wrapped, so base max and timestamp min give delta 1:
  // base + delta runs past int64.
  record_batch_builder builder(offset{0}, max);
  builder.add("k", "v", max);
  builder.add("k", "v", min);
  const bytes batch = builder.build();
  CHECK(parse_code(batch) == errc::corrupt_message);
  CHECK(parse_code(batch, batch_validation::produce) == errc::invalid_timestamp);
  CHECK_THAT(parse_message(batch), Catch::Contains("record 1") && Catch::Contains("overflows"));

  // A LogAppendTime batch's records report the max timestamp: their deltas are never added.
  bytes append_time = batch;
  set_log_append_time(append_time, 5000);
  auto view = record_batch_view::parse(append_time, max_bytes);
  REQUIRE(view);
  view->for_each_record([&](const record_view& r) { CHECK(view->timestamp_of(r) == 5000); });
}

TEST_CASE("timestamp_of is the base timestamp plus the delta for CreateTime", "[batch][view][timestamp]") {
  // The view reads the bytes in place: they must outlive it.
  const bytes batch = sample_batch();
  auto view = record_batch_view::parse(batch, max_bytes);
  REQUIRE(view);
  std::vector<timestamp_ms> seen;
  view->for_each_record([&](const record_view& r) { seen.push_back(view->timestamp_of(r)); });
  CHECK(seen == std::vector<timestamp_ms>{1000, 1001, 999});
}

TEST_CASE("a produced batch's max timestamp must be its largest record timestamp",
          "[batch][view][timestamp]") {
  const bytes honest = sample_batch();
  CHECK(parse_code(honest, batch_validation::produce) == errc::none);
  for (int64_t lie : {int64_t{1000}, int64_t{1002}, int64_t{-1}, std::numeric_limits<int64_t>::max()}) {
    INFO("header max timestamp " << lie);
    bytes batch = honest;
    bf::store_be<int64_t>(batch.data() + bf::max_timestamp_at, lie);
    reseal(batch);
    CHECK(parse_code(batch, batch_validation::produce) == errc::invalid_timestamp);
    CHECK_THAT(parse_message(batch, batch_validation::produce),
               Catch::Contains("max timestamp") && Catch::Contains("1001"));
    // Stored batches keep theirs: compaction may have removed the record that set it.
    CHECK(parse_code(batch) == errc::none);
  }
  // Records without a timestamp: the max is -1, as Kafka's producer writes it.
  record_batch_builder none(offset{0}, no_timestamp);
  none.add("k", "v", no_timestamp);
  CHECK(parse_code(none.build(), batch_validation::produce) == errc::none);
}

TEST_CASE("a producer may not set the LogAppendTime timestamp type", "[batch][view][timestamp]") {
  bytes batch = sample_batch();
  set_log_append_time(batch, 1001);
  CHECK(parse_code(batch, batch_validation::produce) == errc::invalid_timestamp);
  CHECK_THAT(parse_message(batch, batch_validation::produce), Catch::Contains("LogAppendTime"));
  CHECK(parse_code(batch) == errc::none);
}

TEST_CASE("produced record timestamps must lie within before.max.ms and after.max.ms of now",
          "[batch][view][timestamp]") {
  constexpr timestamp_ms now = 1'700'000'000'000;
  const timestamp_bounds bounds{now, 1000, 500};
  auto one = [](timestamp_ms ts) {
    record_batch_builder b(offset{0}, ts);
    b.add("k", "v", ts);
    return b.build();
  };
  auto code = [&](const bytes& batch) {
    return record_batch_view::parse(batch, max_bytes, batch_validation::produce, bounds).code();
  };
  CHECK(code(one(now)) == errc::none);
  CHECK(code(one(now - 1000)) == errc::none);
  CHECK(code(one(now + 500)) == errc::none);
  CHECK(code(one(now - 1001)) == errc::invalid_timestamp);
  CHECK(code(one(now + 501)) == errc::invalid_timestamp);
  CHECK(code(one(no_timestamp)) == errc::none);

  // The offending record is named, wherever it sits in the batch.
  record_batch_builder mixed(offset{0}, now);
  mixed.add("k", "v", now).add("k", "v", now + 10).add("k", "v", now - 5000);
  const bytes late = mixed.build();
  auto r = record_batch_view::parse(late, max_bytes, batch_validation::produce, bounds);
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::invalid_timestamp);
  CHECK_THAT(r.err().message, Catch::Contains("record 2") && Catch::Contains("out of range"));
  // Bounds only judge what a producer sends.
  CHECK(record_batch_view::parse(late, max_bytes, batch_validation::stored, bounds).ok());

  // Unlimited windows saturate at the ends of int64 instead of overflowing.
  constexpr auto max = std::numeric_limits<int64_t>::max();
  constexpr auto min = std::numeric_limits<int64_t>::min();
  const timestamp_bounds ahead{now, max, max};
  CHECK(record_batch_view::parse(one(max), max_bytes, batch_validation::produce, ahead).ok());
  const timestamp_bounds behind{-10, max, max};
  CHECK(record_batch_view::parse(one(min), max_bytes, batch_validation::produce, behind).ok());
}
