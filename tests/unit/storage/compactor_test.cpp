#include "runtime/storage/compactor.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/log_loader.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
namespace bf = capstan::batch_format;
namespace fs = std::filesystem;

namespace {

constexpr timestamp_ms now = 10'000'000;
constexpr int64_t retention = 1'000;

// An index entry for every batch, so these small segments have non-empty indexes to lose and
// rebuild, and reads go through them.
segment_options options() {
  segment_options o;
  o.index_interval_bytes = 1;
  return o;
}

bytes b(std::string_view s) {
  return bytes(s.begin(), s.end());
}
std::string str(bytes_view v) {
  return std::string(v.begin(), v.end());
}

struct rec {
  std::optional<std::string> key;
  std::optional<std::string> value; // nullopt: tombstone
  timestamp_ms timestamp = now;
};

// One batch at `base` holding the records at consecutive offsets.
bytes make_batch(int64_t base, const std::vector<rec>& records) {
  record_batch_builder builder(offset{base}, records.empty() ? now : records.front().timestamp);
  for (const auto& r : records) {
    std::optional<bytes> key, value;
    if (r.key) key = b(*r.key);
    if (r.value) value = b(*r.value);
    builder.add(key ? std::optional<bytes_view>(*key) : std::nullopt,
                value ? std::optional<bytes_view>(*value) : std::nullopt, r.timestamp);
  }
  return builder.build();
}

// A transaction marker batch (control bit set) at `at`, as a coordinator writes one.
bytes make_control_batch(int64_t at) {
  record_batch_builder builder(offset{at}, now);
  builder.producer(42, 0, -1);
  const bytes key{0, 0, 0, 1}; // version 0, type 1 (COMMIT)
  const bytes value{0, 0, 0, 0, 0, 0};
  builder.add(bytes_view(key), bytes_view(value), now);
  bytes batch = builder.build();
  bf::store_be<int16_t>(batch.data() + bf::attributes_at,
                        static_cast<int16_t>(bf::control_mask | bf::transactional_mask));
  bf::store_be<uint32_t>(batch.data() + bf::crc_at,
                         crc32c(bytes_view(batch).subspan(bf::attributes_at)));
  return batch;
}

void write_segment(const fs::path& dir, int64_t base, const std::vector<bytes>& batches) {
  auto seg = segment::open(dir, offset{base}, segment_open_mode::create, options());
  INFO((seg.ok() ? std::string() : seg.err().to_string()));
  REQUIRE(seg.ok());
  for (const auto& batch : batches) {
    status s = (*seg)->append(batch);
    INFO((s.ok() ? std::string() : s.err().to_string()));
    REQUIRE(s.ok());
  }
  REQUIRE((*seg)->seal().ok());
  REQUIRE((*seg)->flush().ok());
}

struct read_record {
  int64_t offset;
  std::optional<std::string> key;
  std::optional<std::string> value;
  bool control = false;

  bool operator==(const read_record&) const = default;
};

std::ostream& operator<<(std::ostream& os, const read_record& r) {
  return os << (r.control ? "control " : "") << r.offset << ":" << r.key.value_or("<null>") << "="
            << r.value.value_or("<tombstone>");
}

void collect(const record_batch_view& batch, std::vector<read_record>& out) {
  batch.for_each_record([&](const record_view& r) {
    read_record x{(batch.base_offset() + r.offset_delta).value(), std::nullopt, std::nullopt,
                  batch.is_control()};
    if (r.key) x.key = str(*r.key);
    if (r.value) x.value = str(*r.value);
    out.push_back(x);
  });
}

// Every record of a padded batch sequence; fails the test on a bad sequence.
std::vector<read_record> records_in(bytes_view sequence, size_t* batch_count = nullptr) {
  std::vector<read_record> out;
  batch_sequence_reader reader(sequence, bf::default_max_batch_bytes);
  size_t batches = 0;
  for (;;) {
    auto next = reader.next();
    INFO((next.ok() ? std::string() : next.err().to_string()));
    REQUIRE(next.ok());
    if (!next->has_value()) break;
    ++batches;
    collect(**next, out);
  }
  if (batch_count) *batch_count = batches;
  return out;
}

bytes file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<read_record> records_in_file(const fs::path& path, size_t* batch_count = nullptr) {
  const bytes data = file_bytes(path);
  return records_in(data, batch_count);
}

// Everything a segment serves, read through segment::read from its base offset.
std::vector<read_record> records_served(const segment& seg) {
  std::vector<read_record> out;
  offset from = seg.base_offset();
  for (;;) {
    auto slice = seg.read(from, 1 << 20);
    REQUIRE(slice.ok());
    if (slice->empty()) break;
    auto part = records_in(slice->bytes());
    out.insert(out.end(), part.begin(), part.end());
    REQUIRE(slice->next_offset > from);
    from = slice->next_offset;
  }
  return out;
}

std::string stem(int64_t base) {
  return segment::file_stem(offset{base});
}

compaction_input input_for(const fs::path& dir, std::vector<int64_t> bases) {
  compaction_input in;
  in.dir = dir;
  for (auto base : bases) in.bases.push_back(offset{base});
  in.now = now;
  in.delete_retention_ms = retention;
  in.options = options();
  return in;
}

compaction_output compact(const compaction_input& in) {
  auto out = compact_segments(in);
  INFO((out.ok() ? std::string() : out.err().to_string()));
  REQUIRE(out.ok());
  REQUIRE(out->segments.size() == in.bases.size());
  return std::move(*out);
}

fs::path staged_log(const compacted_segment& seg) {
  return seg.staged_dir / (segment::file_stem(seg.base) + ".log");
}

void install_all(const fs::path& dir, const compaction_output& out) {
  for (const auto& seg : out.segments) {
    status s = install_compacted_segment(dir, seg);
    INFO((s.ok() ? std::string() : s.err().to_string()));
    REQUIRE(s.ok());
  }
}

// The two-segment log most tests clean: keys rewritten across batches and segments.
//   segment 0:  0 k1=a  1 k2=b  2 k1=c  | 3 k3=d  4 k2=e | 5 k5=h
//   segment 6:  6 k1=f  7 k4=g
void write_sample(const fs::path& dir) {
  write_segment(dir, 0,
                {make_batch(0, {{"k1", "a"}, {"k2", "b"}, {"k1", "c"}}),
                 make_batch(3, {{"k3", "d"}, {"k2", "e"}}), make_batch(5, {{"k5", "h"}})});
  write_segment(dir, 6, {make_batch(6, {{"k1", "f"}, {"k4", "g"}})});
}

const std::vector<read_record> sample_cleaned_0{{3, "k3", "d"}, {4, "k2", "e"}, {5, "k5", "h"}};
const std::vector<read_record> sample_cleaned_6{{6, "k1", "f"}, {7, "k4", "g"}};

} // namespace

TEST_CASE("compaction keeps only the latest value per key at its original offset",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  const auto out = compact(input_for(dir.path(), {0, 6}));

  size_t batches = 0;
  CHECK(records_in_file(staged_log(out.segments[0]), &batches) == sample_cleaned_0);
  CHECK(batches == 2); // the first batch lost all its records and is gone
  CHECK(records_in_file(staged_log(out.segments[1])) == sample_cleaned_6);

  CHECK(out.segments[0].base == offset{0});
  CHECK(out.segments[0].records_removed == 3);
  CHECK(out.segments[0].size_before ==
        static_cast<int64_t>(fs::file_size(dir / (stem(0) + ".log"))));
  CHECK(out.segments[0].size_after ==
        static_cast<int64_t>(fs::file_size(staged_log(out.segments[0]))));
  CHECK(out.segments[0].size_after < out.segments[0].size_before);
  CHECK(out.segments[1].records_removed == 0);
  CHECK(out.segments[1].size_after == out.segments[1].size_before);
  CHECK(out.segments[0].staged_dir == dir / compaction_dir_name);
  // The live files are untouched until install.
  CHECK(records_in_file(dir / (stem(0) + ".log")).size() == 6);
}

TEST_CASE("records without a key are always kept", "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_segment(dir.path(), 10,
                {make_batch(10, {{"k", "old"}, {std::nullopt, "x"}, {std::nullopt, std::nullopt}}),
                 make_batch(13, {{"k", "new"}, {std::nullopt, "y"}})});
  const auto out = compact(input_for(dir.path(), {10}));
  CHECK(records_in_file(staged_log(out.segments[0])) ==
        std::vector<read_record>{{11, std::nullopt, "x"},
                                 {12, std::nullopt, std::nullopt},
                                 {13, "k", "new"},
                                 {14, std::nullopt, "y"}});
  CHECK(out.segments[0].records_removed == 1);
}

TEST_CASE("tombstones older than delete.retention.ms are dropped and newer ones kept",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_segment(dir.path(), 0,
                {make_batch(0, {{"old", "v", now - 5000},
                                {"new", "v", now - 5000},
                                {"edge", "v", now - 5000},
                                {"live", "v", now - 5000}}),
                 make_batch(4, {{"old", std::nullopt, now - retention - 1},
                                {"new", std::nullopt, now - retention + 1},
                                {"edge", std::nullopt, now - retention}})});
  const auto out = compact(input_for(dir.path(), {0}));
  CHECK(records_in_file(staged_log(out.segments[0])) ==
        std::vector<read_record>{
            {3, "live", "v"}, {5, "new", std::nullopt}, {6, "edge", std::nullopt}});
  CHECK(out.segments[0].records_removed == 4);
}

TEST_CASE("a LogAppendTime tombstone is aged by its batch's append time", "[storage][compactor]") {
  test::temp_dir dir("compactor");
  // CreateTime says the tombstones are ancient; the broker stamped them recently (or long ago).
  bytes recent = make_batch(0, {{"a", std::nullopt, 1}});
  set_log_append_time(recent, now - 10);
  bytes ancient = make_batch(1, {{"b", std::nullopt, now}});
  set_log_append_time(ancient, now - retention - 10);
  write_segment(dir.path(), 0, {recent, ancient});
  const auto out = compact(input_for(dir.path(), {0}));
  CHECK(records_in_file(staged_log(out.segments[0])) ==
        std::vector<read_record>{{0, "a", std::nullopt}});
}

TEST_CASE("control batches are kept whole and their keys do not shadow user keys",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  const bytes control = make_control_batch(1);
  const bytes control_key{0, 0, 0, 1};
  // A user record whose key equals the marker's key must survive: markers are not in the key map.
  write_segment(dir.path(), 0,
                {make_batch(0, {{str(control_key), "user"}}), control, make_batch(2, {{"k", "v"}}),
                 make_control_batch(3)});
  const auto out = compact(input_for(dir.path(), {0}));
  const auto records = records_in_file(staged_log(out.segments[0]));
  REQUIRE(records.size() == 4);
  CHECK(records[0] == read_record{0, str(control_key), "user"});
  CHECK(records[1].control);
  CHECK(records[1].offset == 1);
  CHECK(records[3].control);
  CHECK(out.segments[0].records_removed == 0);
  // The marker batch is byte-identical, at an aligned position.
  const bytes staged = file_bytes(staged_log(out.segments[0]));
  CHECK(std::search(staged.begin(), staged.end(), control.begin(), control.end()) != staged.end());
}

TEST_CASE("a segment whose every record is superseded becomes empty and installs as empty",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_segment(dir.path(), 0, {make_batch(0, {{"k", "a"}, {"j", "b"}})});
  write_segment(dir.path(), 2, {make_batch(2, {{"k", "c"}, {"j", "d"}})});
  const auto out = compact(input_for(dir.path(), {0, 2}));
  CHECK(out.segments[0].size_after == 0);
  CHECK(out.segments[0].records_removed == 2);
  CHECK(fs::file_size(staged_log(out.segments[0])) == 0);

  install_all(dir.path(), out);
  discard_compaction(dir.path());
  CHECK(fs::file_size(dir / (stem(0) + ".log")) == 0);
  auto seg = segment::open(dir.path(), offset{0}, segment_open_mode::open_recover, options());
  REQUIRE(seg.ok());
  CHECK((*seg)->size_bytes() == 0);
  CHECK((*seg)->next_offset() == offset{0});
  CHECK(records_served(**seg).empty());
}

TEST_CASE("after install a recovering open of the directory reads exactly the cleaned data",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());

  // A reader of the old segment, holding its mapping across the install.
  auto old_seg = segment::open(dir.path(), offset{0}, segment_open_mode::open_trusted, options());
  REQUIRE(old_seg.ok());
  auto old_slice = (*old_seg)->read(offset{0}, 1 << 20);
  REQUIRE(old_slice.ok());
  const bytes old_bytes(old_slice->bytes().begin(), old_slice->bytes().end());

  const auto out = compact(input_for(dir.path(), {0, 6}));
  install_all(dir.path(), out);
  discard_compaction(dir.path());
  CHECK_FALSE(fs::exists(dir / compaction_dir_name));

  for (auto mode : {segment_open_mode::open_recover, segment_open_mode::open_trusted}) {
    auto seg0 = segment::open(dir.path(), offset{0}, mode, options());
    auto seg6 = segment::open(dir.path(), offset{6}, mode, options());
    REQUIRE(seg0.ok());
    REQUIRE(seg6.ok());
    CHECK((*seg0)->recovery().truncated_bytes == 0);
    CHECK(records_served(**seg0) == sample_cleaned_0);
    CHECK(records_served(**seg6) == sample_cleaned_6);
    CHECK((*seg0)->next_offset() == offset{6});
    // Reads from an offset that compaction removed start at the next survivor.
    auto from_1 = (*seg0)->read(offset{1}, 1 << 20);
    REQUIRE(from_1.ok());
    CHECK(records_in(from_1->bytes()) == sample_cleaned_0);
  }
  for (const char* ext : {".log", ".index", ".timeindex"}) CHECK(fs::exists(dir / (stem(0) + ext)));

  // The old slice still reads the old inode.
  CHECK(bytes(old_slice->bytes().begin(), old_slice->bytes().end()) == old_bytes);
  CHECK(records_in(old_slice->bytes()).size() == 6);
}

TEST_CASE("an install interrupted after deleting the old indexes still loads, indexes rebuilt",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  const auto out = compact(input_for(dir.path(), {0, 6}));
  const auto& seg = out.segments[0];

  SECTION("crash before the log rename: the old data loads") {
    fs::remove(dir / (stem(0) + ".index"));
    fs::remove(dir / (stem(0) + ".timeindex"));
    auto opened = segment::open(dir.path(), offset{0}, segment_open_mode::open_trusted, options());
    REQUIRE(opened.ok());
    CHECK((*opened)->recovery().index_rebuilt);
    CHECK(records_served(**opened).size() == 6);
  }
  SECTION("crash after the log rename: the cleaned data loads") {
    fs::remove(dir / (stem(0) + ".index"));
    fs::remove(dir / (stem(0) + ".timeindex"));
    fs::rename(staged_log(seg), dir / (stem(0) + ".log"));
    for (auto mode : {segment_open_mode::open_trusted, segment_open_mode::open_recover}) {
      auto opened = segment::open(dir.path(), offset{0}, mode, options());
      REQUIRE(opened.ok());
      CHECK((*opened)->recovery().index_rebuilt);
      CHECK(records_served(**opened) == sample_cleaned_0);
      CHECK(fs::file_size(dir / (stem(0) + ".index")) > 0);
      CHECK(fs::file_size(dir / (stem(0) + ".timeindex")) > 0);
    }
  }
  SECTION("crash after the log rename, loaded by load_log: staging is removed") {
    fs::remove(dir / (stem(0) + ".index"));
    fs::remove(dir / (stem(0) + ".timeindex"));
    fs::rename(staged_log(seg), dir / (stem(0) + ".log"));
    auto loaded = load_log(dir.path(), offset{8}, offset{0}, options(), "compactor-test");
    REQUIRE(loaded.ok());
    CHECK_FALSE(fs::exists(dir / compaction_dir_name));
    REQUIRE(loaded->segments.size() == 2);
    CHECK(loaded->segments[0]->recovery().index_rebuilt);
    CHECK(records_served(*loaded->segments[0]) == sample_cleaned_0);
    CHECK(records_served(*loaded->segments[1]).size() == 2);
  }
}

TEST_CASE("compacting cleaned segments again removes nothing more", "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  install_all(dir.path(), compact(input_for(dir.path(), {0, 6})));
  const bytes first = file_bytes(dir / (stem(0) + ".log"));

  const auto again = compact(input_for(dir.path(), {0, 6}));
  CHECK(again.segments[0].records_removed == 0);
  CHECK(again.segments[1].records_removed == 0);
  CHECK(file_bytes(staged_log(again.segments[0])) == first);
}

TEST_CASE("discard_compaction removes the staging directory", "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  const auto out = compact(input_for(dir.path(), {0, 6}));
  REQUIRE(fs::exists(staged_log(out.segments[0])));
  discard_compaction(dir.path());
  CHECK_FALSE(fs::exists(dir / compaction_dir_name));
  // The live segments are as they were.
  CHECK(records_in_file(dir / (stem(0) + ".log")).size() == 6);
  discard_compaction(dir.path()); // nothing to remove is fine
}

TEST_CASE("leftover staging from an interrupted compaction does not block the next one",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  fs::create_directory(dir / compaction_dir_name);
  { std::ofstream(dir / compaction_dir_name / (stem(0) + ".log")) << "half-written"; }
  const auto out = compact(input_for(dir.path(), {0, 6}));
  CHECK(records_in_file(staged_log(out.segments[0])) == sample_cleaned_0);
}

TEST_CASE("corrupt or garbage input segments give an error value and leave no staging",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  const fs::path log0 = dir / (stem(0) + ".log");
  const bytes good = file_bytes(log0);
  auto rewrite = [&](const bytes& data) {
    std::ofstream f(log0, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  };
  auto expect_error = [&](errc code) {
    auto out = compact_segments(input_for(dir.path(), {0, 6}));
    REQUIRE_FALSE(out.ok());
    CHECK(out.code() == code);
    CHECK(out.err().message.find(stem(0)) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / compaction_dir_name));
  };

  SECTION("random bytes") {
    bytes garbage(4096);
    uint32_t x = 12345;
    for (auto& byte : garbage) byte = static_cast<uint8_t>((x = x * 1103515245 + 12345) >> 16);
    rewrite(garbage);
    expect_error(errc::corrupt_message);
  }
  SECTION("a flipped byte inside a record") {
    bytes damaged = good;
    damaged[bf::records_at + 3] ^= 0x40;
    rewrite(damaged);
    expect_error(errc::corrupt_message);
  }
  SECTION("a torn tail") {
    rewrite(bytes(good.begin(), good.end() - 5));
    expect_error(errc::corrupt_message);
  }
  SECTION("a batch below its segment's base offset") {
    const bytes stray = make_batch(3, {{"k", "v"}});
    std::ofstream(dir / (stem(100) + ".log"), std::ios::binary)
        .write(reinterpret_cast<const char*>(stray.data()),
               static_cast<std::streamsize>(stray.size()));
    auto out = compact_segments(input_for(dir.path(), {0, 6, 100}));
    REQUIRE_FALSE(out.ok());
    CHECK(out.code() == errc::corrupt_message);
    CHECK(out.err().message.find(stem(100)) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / compaction_dir_name));
  }
  SECTION("a damaged base offset (outside the CRC)") {
    for (int bit : {0, 40, 62, 63}) {
      bytes damaged = good;
      // The second batch of segment 0 starts at the first aligned position after the first.
      const size_t second = bf::align_up(
          static_cast<size_t>(bf::load_be<int32_t>(good.data() + bf::batch_length_at)) +
          bf::log_overhead);
      const int64_t base = bf::load_be<int64_t>(damaged.data() + second);
      bf::store_be<int64_t>(damaged.data() + second, base ^ (int64_t{1} << bit));
      rewrite(damaged);
      expect_error(errc::corrupt_message);
    }
  }
  SECTION("every truncation of the first segment") {
    for (size_t len = 1; len < good.size(); len += 7) {
      rewrite(bytes(good.begin(), good.begin() + static_cast<ptrdiff_t>(len)));
      auto out = compact_segments(input_for(dir.path(), {0, 6}));
      // A cut exactly at a batch boundary (or in the padding after it) is a shorter valid log.
      if (out.ok()) continue;
      CHECK(out.code() == errc::corrupt_message);
    }
  }
  SECTION("a missing segment file") {
    auto out = compact_segments(input_for(dir.path(), {0, 6, 9}));
    REQUIRE_FALSE(out.ok());
    CHECK(out.code() == errc::kafka_storage_error);
    CHECK_FALSE(fs::exists(dir / compaction_dir_name));
  }
  SECTION("bases out of order") {
    auto out = compact_segments(input_for(dir.path(), {6, 0}));
    REQUIRE_FALSE(out.ok());
  }
}

TEST_CASE("installing a segment that was never staged is an error", "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  compacted_segment missing;
  missing.base = offset{0};
  missing.staged_dir = dir / compaction_dir_name;
  status s = install_compacted_segment(dir.path(), missing);
  CHECK_FALSE(s.ok());
  CHECK(s.code() == errc::kafka_storage_error);
  // The live segment keeps its indexes and data.
  CHECK(fs::exists(dir / (stem(0) + ".index")));
  CHECK(records_in_file(dir / (stem(0) + ".log")).size() == 6);
}

TEST_CASE("install refuses to replace a log that was deleted or rewritten since compaction",
          "[storage][compactor]") {
  test::temp_dir dir("compactor");
  write_sample(dir.path());
  const auto out = compact(input_for(dir.path(), {0, 6}));
  const fs::path live = dir / (stem(0) + ".log");

  SECTION("deleted by retention") {
    for (const char* ext : {".log", ".index", ".timeindex"}) fs::remove(dir / (stem(0) + ext));
    CHECK(install_compacted_segment(dir.path(), out.segments[0]).code() ==
          errc::kafka_storage_error);
    CHECK_FALSE(fs::exists(live));
  }
  SECTION("truncated: a shorter copy renamed over it") {
    const bytes data = file_bytes(live);
    const fs::path copy = dir / "truncating";
    std::ofstream(copy, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), 8);
    fs::rename(copy, live);
    CHECK(install_compacted_segment(dir.path(), out.segments[0]).code() ==
          errc::kafka_storage_error);
    CHECK(fs::file_size(live) == 8);
    CHECK(fs::exists(dir / (stem(0) + ".index")));
  }
  // The untouched segment still installs.
  CHECK(install_compacted_segment(dir.path(), out.segments[1]).ok());
}
