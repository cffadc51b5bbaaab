#include "runtime/storage/segment.hpp"

#include <cstring>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/offset_index.hpp"
#include "runtime/storage/time_index.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan {
namespace {

namespace fs = std::filesystem;
namespace bf = batch_format;

struct appended {
  offset base{0};
  offset last{0};
  uint64_t position = 0;
  bytes data;
};

struct record_time {
  offset off{0};
  timestamp_ms ts = 0;
};

bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& p, bytes_view b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

std::unique_ptr<segment> must_open(const fs::path& dir, offset base, segment_open_mode mode,
                                   const segment_options& options) {
  auto s = segment::open(dir, base, mode, options);
  INFO((s.ok() ? std::string() : s.err().to_string()));
  REQUIRE(s.ok());
  return std::move(*s);
}

// Validates a slice as a padded batch sequence; returns the base offsets of its batches.
std::vector<int64_t> slice_bases(const log_slice& slice) {
  std::vector<int64_t> out;
  batch_sequence_reader r(slice.bytes(), bf::default_max_batch_bytes);
  for (;;) {
    auto b = r.next();
    INFO((b.ok() ? std::string() : b.err().to_string()));
    REQUIRE(b.ok());
    if (!*b) break;
    out.push_back((*b)->base_offset().value());
  }
  return out;
}

bool aligned(const uint8_t* p) {
  return reinterpret_cast<uintptr_t>(p) % 8 == 0;
}

// A log of batches with varied sizes (so varied padding), gaps between some batches' offsets and
// timestamps that go backwards now and then.
class segment_fixture {
public:
  explicit segment_fixture(size_t index_interval = 128) {
    options.index_interval_bytes = index_interval;
  }

  void fill(segment& seg, int batches) {
    for (int i = 0; i < batches; ++i) append(seg, (i % 4) + 1, 10 + (i * 7) % 45);
  }

  void append(segment& seg, int records, size_t value_size) {
    const int i = static_cast<int>(batches.size());
    const offset base = seg.next_offset() + (gaps && i % 5 == 4 ? 3 : 0);
    const timestamp_ms ts0 = 1000 + 10 * i - (i % 3 == 2 ? 25 : 0);
    record_batch_builder b(base, ts0);
    for (int j = 0; j < records; ++j) {
      b.add("key-" + std::to_string(j), std::string(value_size + j, 'a' + j), ts0 + 3 * j);
      times.push_back({base + j, ts0 + 3 * j});
    }
    const uint64_t position = bf::align_up(seg.size_bytes());
    bytes data = b.build();
    auto s = seg.append(data);
    INFO((s.ok() ? std::string() : s.err().to_string()));
    REQUIRE(s.ok());
    batches.push_back({base, base + (records - 1), position, std::move(data)});
  }

  std::optional<offset> model_offset_for(timestamp_ms target) const {
    for (const auto& r : times)
      if (r.ts >= target) return r.off;
    return std::nullopt;
  }

  segment_options options;
  bool gaps = true;
  std::vector<appended> batches;
  std::vector<record_time> times;
};

// Every read from every offset returns the batch holding it first, whole, aligned.
void check_reads(const segment& seg, const std::vector<appended>& batches) {
  for (size_t i = 0; i < batches.size(); ++i) {
    for (offset o = i == 0 ? seg.base_offset() : batches[i - 1].last + 1; o <= batches[i].last;
         ++o) {
      auto slice = seg.read(o, 1);
      REQUIRE(slice.ok());
      CHECK(aligned(slice->data));
      CHECK(slice->first_offset == batches[i].base);
      CHECK(slice->next_offset == batches[i].last + 1);
      REQUIRE(slice->size == batches[i].data.size());
      CHECK(std::memcmp(slice->data, batches[i].data.data(), slice->size) == 0);
    }
  }
}

} // namespace

TEST_CASE("a created segment is empty and refuses to be created twice", "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{42}, segment_open_mode::create, f.options);
  CHECK(segment::file_stem(offset{42}) == "00000000000000000042");
  CHECK(fs::exists(dir / "00000000000000000042.log"));
  // Its index files come with their first entry.
  CHECK_FALSE(fs::exists(dir / "00000000000000000042.index"));
  CHECK_FALSE(fs::exists(dir / "00000000000000000042.timeindex"));
  CHECK(seg->next_offset() == offset{42});
  CHECK(seg->size_bytes() == 0);
  CHECK(seg->max_timestamp() == no_timestamp);
  auto slice = seg->read(offset{42}, 1 << 20);
  REQUIRE(slice.ok());
  CHECK(slice->empty());
  CHECK_FALSE(seg->offset_for_timestamp(0)->has_value());
  auto again = segment::open(dir.path(), offset{42}, segment_open_mode::create, f.options);
  CHECK(again.code() == errc::kafka_storage_error);
  CHECK(segment::open(dir.path(), offset{7}, segment_open_mode::open_trusted, f.options).code() ==
        errc::kafka_storage_error);
}

TEST_CASE("a segment has no index files until its first index entry: flushed, sealed and opened "
          "again without them, it reads and looks up as one with them",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f(1 << 20);
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  f.fill(*seg, 20);
  REQUIRE(seg->flush().ok());
  REQUIRE(seg->seal().ok());
  CHECK_FALSE(fs::exists(dir / "00000000000000000000.index"));
  CHECK_FALSE(fs::exists(dir / "00000000000000000000.timeindex"));
  seg.reset();
  for (auto mode : {segment_open_mode::open_trusted, segment_open_mode::open_recover}) {
    seg = must_open(dir.path(), offset{0}, mode, f.options);
    check_reads(*seg, f.batches);
    for (timestamp_ms t = 900; t < 1300; t += 7)
      CHECK(seg->offset_for_timestamp(t).value() == f.model_offset_for(t));
    CHECK_FALSE(fs::exists(dir / "00000000000000000000.index"));
    seg.reset();
  }

  // A smaller interval: the reopened segment's first entries create the files.
  segment_fixture small;
  seg = must_open(dir.path(), offset{0}, segment_open_mode::open_trusted, small.options);
  REQUIRE(seg->flush().ok());
  CHECK(fs::file_size(dir / "00000000000000000000.index") > 0);
  CHECK(fs::file_size(dir / "00000000000000000000.timeindex") > 0);
}

// The files of `dir` this process has open, by their names.
std::vector<std::string> open_files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& fd : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = fs::read_symlink(fd.path(), ec);
    if (!ec && target.parent_path() == fs::canonical(dir)) out.push_back(target.filename());
  }
  return out;
}

TEST_CASE("a segment keeps only its .log open: its indexes open their files to write them",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  CHECK(open_files_in(dir.path()) == std::vector<std::string>{"00000000000000000000.log"});
  f.fill(*seg, 200);
  REQUIRE(seg->flush().ok());
  CHECK(open_files_in(dir.path()) == std::vector<std::string>{"00000000000000000000.log"});
  REQUIRE(seg->seal().ok());
  CHECK(open_files_in(dir.path()) == std::vector<std::string>{"00000000000000000000.log"});
  CHECK(fs::file_size(dir / "00000000000000000000.index") > 0);
  CHECK(fs::file_size(dir / "00000000000000000000.timeindex") > 0);
}

TEST_CASE("batches are stored at 8-byte aligned positions with zero padding before each",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  f.fill(*seg, 20);
  const bytes file = read_file(dir / "00000000000000000000.log");
  REQUIRE(file.size() == seg->size_bytes());
  uint64_t expected_position = 0;
  for (const auto& b : f.batches) {
    CHECK(b.position % 8 == 0);
    CHECK(b.position == bf::align_up(expected_position));
    for (uint64_t p = expected_position; p < b.position; ++p) CHECK(file[p] == 0);
    CHECK(std::memcmp(file.data() + b.position, b.data.data(), b.data.size()) == 0);
    expected_position = b.position + b.data.size();
  }
  CHECK(file.size() == expected_position);
  CHECK(seg->next_offset() == f.batches.back().last + 1);
}

TEST_CASE("reads return whole batches from the one holding the offset, active and sealed",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{100}, segment_open_mode::create, f.options);
  f.fill(*seg, 40);
  check_reads(*seg, f.batches);
  REQUIRE(seg->seal().ok());
  CHECK(seg->sealed());
  check_reads(*seg, f.batches);
  CHECK(seg->append(f.batches.back().data).code() == errc::kafka_storage_error);
  auto past = seg->read(seg->next_offset(), 1 << 20);
  REQUIRE(past.ok());
  CHECK(past->empty());
  CHECK(past->first_offset == seg->next_offset());
}

TEST_CASE("reads stay within max_bytes but always return at least one batch",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  f.fill(*seg, 30);
  for (bool sealed : {false, true}) {
    if (sealed) REQUIRE(seg->seal().ok());
    for (size_t first = 0; first < f.batches.size(); first += 3) {
      const uint64_t start = f.batches[first].position;
      // For each possible count of batches, max_bytes exactly at their end and one byte short.
      for (size_t last = first; last < f.batches.size(); ++last) {
        const uint64_t end = f.batches[last].position + f.batches[last].data.size();
        auto exact = seg->read(f.batches[first].base, end - start);
        REQUIRE(exact.ok());
        CHECK(aligned(exact->data));
        CHECK(exact->size == end - start);
        CHECK(exact->next_offset == f.batches[last].last + 1);
        CHECK(slice_bases(*exact).size() == last - first + 1);
        auto short_by_one = seg->read(f.batches[first].base, end - start - 1);
        REQUIRE(short_by_one.ok());
        CHECK(slice_bases(*short_by_one).size() == std::max<size_t>(1, last - first));
        CHECK(short_by_one->size <=
              std::max<uint64_t>(end - start - 1, f.batches[first].data.size()));
      }
      auto tiny = seg->read(f.batches[first].base, 0);
      REQUIRE(tiny.ok());
      CHECK(tiny->size == f.batches[first].data.size());
    }
    auto all = seg->read(offset{0}, 1 << 30);
    REQUIRE(all.ok());
    CHECK(all->size == seg->size_bytes());
    CHECK(all->next_offset == seg->next_offset());
  }
}

TEST_CASE("a read from the middle of a batch starts at that batch", "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  f.gaps = false;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  for (int i = 0; i < 10; ++i) f.append(*seg, 10, 30);
  auto slice = seg->read(offset{55}, 1);
  REQUIRE(slice.ok());
  CHECK(slice->first_offset == offset{50});
  CHECK(slice_bases(*slice) == std::vector<int64_t>{50});
}

TEST_CASE("offset_for_timestamp finds the first record at or after the target",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f(64);
  auto seg = must_open(dir.path(), offset{10}, segment_open_mode::create, f.options);
  f.fill(*seg, 60);
  timestamp_ms max_ts = no_timestamp;
  for (const auto& r : f.times) max_ts = std::max(max_ts, r.ts);
  CHECK(seg->max_timestamp() == max_ts);
  for (bool sealed : {false, true}) {
    if (sealed) REQUIRE(seg->seal().ok());
    for (timestamp_ms target = 900; target <= max_ts + 2; ++target) {
      INFO("target " << target);
      CHECK(seg->offset_for_timestamp(target).value() == f.model_offset_for(target));
    }
  }
}

TEST_CASE("offset_for_timestamp treats every record of a LogAppendTime batch as its max timestamp",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_options options;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, options);
  record_batch_builder b(offset{0}, 100);
  b.add("a", "1", 100).add("b", "2", 101);
  bytes first = b.build();
  REQUIRE(seg->append(first).ok());
  record_batch_builder c(offset{2}, 5);
  c.add("c", "3", 5).add("d", "4", 6);
  bytes second = c.build();
  set_log_append_time(second, 500);
  REQUIRE(seg->append(second).ok());
  CHECK(seg->max_timestamp() == 500);
  CHECK(seg->offset_for_timestamp(101).value() == offset{1});
  CHECK(seg->offset_for_timestamp(102).value() == offset{2});
  CHECK(seg->offset_for_timestamp(500).value() == offset{2});
  CHECK_FALSE(seg->offset_for_timestamp(501)->has_value());
}

TEST_CASE("append refuses batches that break the segment's contract", "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_options options;
  options.max_batch_bytes = 400;
  auto seg = must_open(dir.path(), offset{100}, segment_open_mode::create, options);
  record_batch_builder b(offset{100}, 0);
  b.add("k", "v", 0);
  bytes ok = b.build();
  REQUIRE(seg->append(ok).ok());
  CHECK(seg->append(ok).code() == errc::invalid_record); // base below next offset
  bytes longer = ok;
  longer.push_back(0);
  set_base_offset(longer, offset{101});
  CHECK(seg->append(longer).code() == errc::invalid_record);
  CHECK(seg->append(bytes_view(ok).first(20)).code() == errc::invalid_record);
  record_batch_builder big(offset{200}, 0);
  big.add("k", std::string(500, 'x'), 0);
  CHECK(seg->append(big.build()).code() == errc::message_too_large);
  bytes far = ok;
  set_base_offset(far, offset{100 + (int64_t{1} << 32)});
  CHECK_FALSE(seg->can_hold(offset{100 + (int64_t{1} << 32)}, far.size()));
  CHECK(seg->append(far).code() == errc::kafka_storage_error);
  CHECK(seg->next_offset() == offset{101});
  CHECK(seg->size_bytes() == ok.size());
}

TEST_CASE("truncating the active segment drops every batch holding an offset at or after the "
          "target",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f(100);
  f.gaps = false;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  for (int i = 0; i < 20; ++i) f.append(*seg, 5, 40); // batch i holds [5i, 5i + 4]
  const auto log = dir / "00000000000000000000.log";

  SECTION("at a batch boundary") {
    REQUIRE(seg->truncate_to(offset{50}).ok());
    CHECK(seg->next_offset() == offset{50});
  }
  SECTION("inside a batch drops that batch whole, as Kafka does") {
    REQUIRE(seg->truncate_to(offset{52}).ok());
    CHECK(seg->next_offset() == offset{50});
  }
  SECTION("at the last offset of a batch drops that batch") {
    REQUIRE(seg->truncate_to(offset{54}).ok());
    CHECK(seg->next_offset() == offset{50});
  }
  SECTION("one past a batch keeps it") {
    REQUIRE(seg->truncate_to(offset{55}).ok());
    CHECK(seg->next_offset() == offset{55});
  }
  SECTION("inside the first batch empties the segment") {
    REQUIRE(seg->truncate_to(offset{3}).ok());
    CHECK(seg->next_offset() == offset{0});
    CHECK(seg->size_bytes() == 0);
  }
  SECTION("at or below the base empties the segment") {
    REQUIRE(seg->truncate_to(offset{0}).ok());
    CHECK(seg->next_offset() == offset{0});
    CHECK(seg->size_bytes() == 0);
    CHECK(seg->max_timestamp() == no_timestamp);
  }
  SECTION("at or past the end changes nothing") {
    const auto size = seg->size_bytes();
    REQUIRE(seg->truncate_to(offset{100}).ok());
    REQUIRE(seg->truncate_to(offset{150}).ok());
    CHECK(seg->size_bytes() == size);
    CHECK(seg->next_offset() == offset{100});
  }
  const auto kept = static_cast<size_t>(seg->next_offset().value() / 5);
  f.batches.resize(kept);
  f.times.resize(kept * 5);
  CHECK(fs::file_size(log) == seg->size_bytes());
  CHECK(seg->size_bytes() ==
        (kept == 0 ? 0 : f.batches.back().position + f.batches.back().data.size()));
  check_reads(*seg, f.batches);
  // The truncated segment takes appends again and its indexes equal a fresh rebuild.
  for (int i = 0; i < 5; ++i) f.append(*seg, 3, 20);
  check_reads(*seg, f.batches);
  for (timestamp_ms t = 900; t < 1300; t += 7)
    CHECK(seg->offset_for_timestamp(t).value() == f.model_offset_for(t));
  REQUIRE(seg->flush().ok());
  const bytes index = read_file(dir / "00000000000000000000.index");
  const bytes tindex = read_file(dir / "00000000000000000000.timeindex");
  seg.reset();
  fs::remove(dir / "00000000000000000000.index");
  fs::remove(dir / "00000000000000000000.timeindex");
  seg = must_open(dir.path(), offset{0}, segment_open_mode::open_trusted, f.options);
  CHECK(read_file(dir / "00000000000000000000.index") == index);
  CHECK(seg->next_offset() == f.batches.back().last + 1);
}

TEST_CASE("truncating a sealed segment rewrites the log and leaves live slices unchanged",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f(100);
  f.gaps = false;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  for (int i = 0; i < 20; ++i) f.append(*seg, 5, 40);
  REQUIRE(seg->seal().ok());
  auto live = seg->read(offset{0}, 1 << 20);
  REQUIRE(live.ok());
  const bytes before(live->data, live->data + live->size);
  REQUIRE(seg->truncate_to(offset{33}).ok());
  CHECK_FALSE(seg->sealed());
  CHECK(seg->next_offset() == offset{30});
  CHECK(fs::file_size(dir / "00000000000000000000.log") == seg->size_bytes());
  CHECK_FALSE(fs::exists(dir / "00000000000000000000.log.truncating"));
  // The old mapping still reads the old inode, byte for byte.
  CHECK(bytes(live->data, live->data + live->size) == before);
  CHECK(slice_bases(*live).size() == 20);
  f.batches.resize(6);
  f.times.resize(30);
  check_reads(*seg, f.batches);
  f.append(*seg, 2, 10);
  check_reads(*seg, f.batches);
  CHECK(bytes(live->data, live->data + live->size) == before);
}

TEST_CASE("a sealed and flushed segment reopens trusted with the same state and indexes",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f(100);
  const auto stem = dir / "00000000000000001000";
  size_t size = 0;
  timestamp_ms max_ts = 0;
  {
    auto seg = must_open(dir.path(), offset{1000}, segment_open_mode::create, f.options);
    f.fill(*seg, 50);
    REQUIRE(seg->seal().ok());
    REQUIRE(seg->flush().ok());
    size = seg->size_bytes();
    max_ts = seg->max_timestamp();
  }
  const bytes index = read_file(stem.string() + ".index");
  const bytes tindex = read_file(stem.string() + ".timeindex");
  REQUIRE(index.size() > 8 * 10);
  REQUIRE(tindex.size() > 12 * 3);

  auto reopen = [&] {
    auto seg = must_open(dir.path(), offset{1000}, segment_open_mode::open_trusted, f.options);
    CHECK(seg->size_bytes() == size);
    CHECK(seg->next_offset() == f.batches.back().last + 1);
    CHECK(seg->max_timestamp() == max_ts);
    CHECK(seg->recovery().truncated_bytes == 0);
    check_reads(*seg, f.batches);
    CHECK(read_file(stem.string() + ".index") == index);
    CHECK(read_file(stem.string() + ".timeindex") == tindex);
    return seg->recovery().index_rebuilt;
  };

  SECTION("intact indexes are kept") {
    CHECK_FALSE(reopen());
  }
  SECTION("deleted indexes are rebuilt") {
    fs::remove(stem.string() + ".index");
    fs::remove(stem.string() + ".timeindex");
    CHECK(reopen());
  }
  SECTION("indexes that lost their last entries are completed") {
    fs::resize_file(stem.string() + ".index", index.size() / 2);
    fs::resize_file(stem.string() + ".timeindex", 12);
    CHECK(reopen());
  }
  SECTION("an index of the wrong size is rebuilt") {
    fs::resize_file(stem.string() + ".index", index.size() - 3);
    CHECK(reopen());
  }
  SECTION("an index whose entries do not increase is rebuilt") {
    bytes bad = index;
    std::memcpy(bad.data() + 16, index.data() + 8, 8);
    write_file(stem.string() + ".index", bad);
    CHECK(reopen());
  }
  SECTION("an index pointing at a position that is not its batch is rebuilt") {
    bytes bad = index;
    bad[bad.size() - 1] = static_cast<uint8_t>(bad[bad.size() - 1] + 8);
    write_file(stem.string() + ".index", bad);
    CHECK(reopen());
  }
  SECTION("garbage indexes are rebuilt") {
    bytes junk(index.size());
    for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 131 + 7);
    write_file(stem.string() + ".index", junk);
    write_file(stem.string() + ".timeindex", bytes(tindex.size(), 0xff));
    CHECK(reopen());
  }
  SECTION("an index entry that a rescan from the time index passes over is checked") {
    // With only its first time entry left, the open rescans from near the start to find the max
    // timestamp, past index entries nothing else checks: one of them now points inside a batch.
    fs::resize_file(stem.string() + ".timeindex", 12);
    bytes bad = index;
    const size_t at = (index.size() / 8 / 2) * 8 + 4;
    bf::store_be<uint32_t>(bad.data() + at, bf::load_be<uint32_t>(bad.data() + at) + 8);
    write_file(stem.string() + ".index", bad);
    CHECK(reopen());
  }
  SECTION("a time index pointing past the log is rebuilt") {
    bytes bad = tindex;
    bad.resize(bad.size() + 12);
    time_index::encode({max_ts + 1000, 1u << 30}, bad.data() + tindex.size());
    write_file(stem.string() + ".timeindex", bad);
    CHECK(reopen());
  }
}

// Found by tests/fuzz/segment_recovery_fuzz (tests/fuzz/corpus/segment_recovery/
// found-rescan-passes-bad-index-entry, its first segment): the .index claims offset 1979711488
// at position 0, and the .timeindex's only entry makes the trusted open rescan from position 0,
// which used to check only the entry it started at. The bad entry was kept, entries were appended
// after it, and a follower's truncate_to then failed on the index.
TEST_CASE("a trusted open rebuilds an offset index entry its rescan contradicts",
          "[storage][segment]") {
  static const uint8_t log[] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x3e,
      0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00,
      0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x26, 0xff, 0x00, 0x00, 0x00,
      0x01, 0x18, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x76, 0x76,
      0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x19, 0x00, 0x00, 0x00, 0x3e, 0xff, 0xff, 0xff, 0xff,
      0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x27, 0x18, 0x00,
      0x00, 0x00, 0x3e, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
      0x8b, 0xcf, 0xe5, 0x68, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0x18, 0x00, 0xff, 0x01, 0x00, 0x00, 0x26,
      0x00, 0x00, 0x00, 0x04, 0x6b, 0x30, 0x08, 0x76, 0x76, 0x76,
  };
  static const uint8_t index[] = {
      0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  };
  static const uint8_t tindex[] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x19, 0x00, 0x00, 0x00, 0x3e,
  };
  test::temp_dir dir("segment");
  const auto stem = (dir / "00000000000000000000").string();
  write_file(stem + ".log", log);
  write_file(stem + ".index", index);
  write_file(stem + ".timeindex", tindex);
  segment_options options;
  options.index_interval_bytes = 9;

  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::open_trusted, options);
  CHECK(seg->recovery().index_rebuilt);
  CHECK(seg->next_offset() == offset{10034});
  auto entries = offset_index::decode(read_file(stem + ".index"), seg->size_bytes());
  REQUIRE(entries.ok());
  CHECK(*entries == std::vector<offset_index_entry>{{25, 80}});

  REQUIRE(seg->truncate_to(offset{5017}).ok());
  CHECK(seg->next_offset() == offset{25});
  auto slice = seg->read(offset{24}, 1);
  REQUIRE(slice.ok());
  CHECK(slice->first_offset == offset{24});
}

// Found by tests/fuzz/segment_recovery_fuzz (tests/fuzz/corpus/segment_recovery/
// found-truncate-in-contradicted-trusted-log, its first segment): a trusted log whose batch at
// position 352 claims base offset 2197815304 where its index says 8, followed by a batch at
// offset 10. truncate_to(26501) started at that index entry, found the batch there holding 26501,
// and cut at 352, inside the padding, with next offset 0: the rescan then failed and the segment
// claimed to be empty over 352 bytes of batches.
TEST_CASE("truncating a trusted log that contradicts its index cuts at a kept batch's end",
          "[storage][segment]") {
  static const uint8_t log[] = {
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4b,
      0xff, 0xff, 0xff, 0xff, 0x02, 0x7b, 0x6c, 0xf3, 0x18, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00,
      0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
      0x02, 0x18, 0x00, 0x00, 0x00, 0x04, 0x6b, 0x30, 0x08, 0x76, 0x76, 0x76,
      0x76, 0x00, 0x18, 0x00, 0x02, 0x02, 0x04, 0x6b, 0x31, 0x08, 0x76, 0x76,
      0x76, 0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
      0x00, 0x00, 0x00, 0x4b, 0xff, 0xff, 0xff, 0xff, 0x02, 0x7b, 0x6c, 0xf3,
      0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x8b, 0xcf,
      0xe5, 0x68, 0x00, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x01, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0x00, 0x00, 0x00, 0x02, 0x18, 0x00, 0x00, 0x00, 0x04, 0x6b, 0x30,
      0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x18, 0x00, 0x02, 0x02, 0x04, 0x6b,
      0x32, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x4b, 0xff, 0xff, 0xff, 0xff,
      0x02, 0x7b, 0x6c, 0xf3, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
      0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00, 0x00, 0x01, 0x8b, 0xcf,
      0xe5, 0x68, 0x01, 0xff, 0xff, 0xff, 0xff, 0xf7, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x02, 0x18, 0x00, 0x00,
      0x00, 0x04, 0x6b, 0x30, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x18, 0x00,
      0x02, 0x02, 0x04, 0x6b, 0x31, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x4b,
      0xff, 0xff, 0xff, 0xff, 0x02, 0x7b, 0x6c, 0xf3, 0x18, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00,
      0x00, 0x5d, 0x8b, 0xcf, 0xe5, 0x68, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
      0x02, 0x18, 0x00, 0x00, 0x00, 0x04, 0x6b, 0x30, 0x08, 0x76, 0x76, 0x76,
      0x76, 0x00, 0x18, 0x00, 0x02, 0x02, 0x04, 0x6b, 0x31, 0x08, 0x76, 0x76,
      0x76, 0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x83, 0x00, 0x00, 0x08,
      0x00, 0x00, 0x00, 0x4b, 0xff, 0xff, 0xff, 0xff, 0x02, 0x7b, 0x6c, 0xf3,
      0x18, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x01, 0x68, 0x00, 0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x01, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0x00, 0x00, 0x00, 0x02, 0x18, 0x00, 0x00, 0x00, 0x04, 0x6b, 0x30,
      0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x18, 0x00, 0x02, 0x02, 0x04, 0x6b,
      0x31, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x4b, 0xff, 0xff, 0xff, 0xff,
      0x02, 0x7b, 0x6c, 0xf3, 0x18, 0x00, 0x00, 0x00, 0x00, 0xcf, 0x00, 0x00,
      0x01, 0x8b, 0x00, 0x01, 0xe5, 0x68, 0x00, 0x00, 0x00, 0x01, 0x8b, 0xcf,
      0xe5, 0x68, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x02, 0x18, 0x00, 0x00,
      0x00, 0x04, 0x6b, 0x30, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00, 0x18, 0x00,
      0x02, 0x02, 0x04, 0x6b, 0x31, 0x08, 0x76, 0x76, 0x76, 0x76, 0x00,
  };
  static const uint8_t index[] = {
      0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x58, 0x00, 0x00, 0x00, 0x04,
      0x00, 0x00, 0x00, 0xb0, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x01, 0x08,
      0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x01, 0x60, 0x00, 0x00, 0x00, 0x0a,
      0x00, 0x00, 0x01, 0xb8,
  };
  static const uint8_t tindex[] = {
      0x00, 0x00, 0x01, 0x8b, 0xcf, 0x68, 0xe5, 0x00, 0x00, 0x00, 0x01, 0x00,
  };
  test::temp_dir dir("segment");
  const auto stem = (dir / "00000000000000000000").string();
  write_file(stem + ".log", log);
  write_file(stem + ".index", index);
  write_file(stem + ".timeindex", tindex);
  segment_options options;
  options.index_interval_bytes = 64;

  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::open_trusted, options);
  REQUIRE(seg->next_offset() == offset{53003});
  REQUIRE(seg->truncate_to(offset{26501}).ok());
  CHECK(seg->next_offset() == offset{8});
  CHECK(seg->size_bytes() == 351);
  auto slice = seg->read(offset{6}, 1);
  REQUIRE(slice.ok());
  CHECK(slice->first_offset == offset{6});
  CHECK(slice->next_offset == offset{8});
}

TEST_CASE("a trusted open refuses a log that is not well framed", "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  {
    auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
    f.fill(*seg, 5);
  }
  const auto log = dir / "00000000000000000000.log";
  fs::resize_file(log, fs::file_size(log) - 1);
  auto seg = segment::open(dir.path(), offset{0}, segment_open_mode::open_trusted, f.options);
  CHECK(seg.code() == errc::corrupt_message);
}

TEST_CASE("remove deletes the segment's three files", "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
  f.fill(*seg, 5);
  REQUIRE(seg->seal().ok());
  auto live = seg->read(offset{0}, 1 << 20);
  REQUIRE(live.ok());
  REQUIRE(seg->remove().ok());
  CHECK(fs::is_empty(dir.path()));
  CHECK(slice_bases(*live).size() == 5);
}

TEST_CASE("opening a segment deletes a temp file left by an interrupted sealed truncation",
          "[storage][segment]") {
  test::temp_dir dir("segment");
  segment_fixture f;
  {
    auto seg = must_open(dir.path(), offset{0}, segment_open_mode::create, f.options);
    f.fill(*seg, 6);
  }
  const auto tmp = dir / "00000000000000000000.log.truncating";
  write_file(tmp, bytes(100, 0x42));
  auto seg = must_open(dir.path(), offset{0}, segment_open_mode::open_trusted, f.options);
  CHECK_FALSE(fs::exists(tmp));
  CHECK(seg->next_offset() == f.batches.back().last + 1);
  check_reads(*seg, f.batches);
}

} // namespace capstan
