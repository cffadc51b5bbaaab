#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/log_loader.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

// Writes segments of `batches_each` 2-record batches at the given bases.
void write_segments(const std::filesystem::path& dir, std::vector<int64_t> bases, int batches_each) {
  for (auto base : bases) {
    auto seg = segment::open(dir, offset{base}, segment_open_mode::create, {});
    REQUIRE(seg);
    for (int i = 0; i < batches_each; ++i) {
      auto batch = make_batch(2, "v", 1000);
      set_base_offset(batch, offset{base + 2 * i});
      REQUIRE((*seg)->append(batch));
    }
    REQUIRE((*seg)->flush());
  }
}

void touch(const std::filesystem::path& file, const std::string& content) {
  std::ofstream(file) << content;
}

} // namespace

TEST_CASE("an empty directory loads as one empty segment at the start offset", "[storage][loader]") {
  temp_dir dir;
  auto log = load_log(dir.path(), offset{0}, offset{42}, {}, "t-0");
  REQUIRE(log);
  REQUIRE(log->segments.size() == 1);
  CHECK(log->segments[0]->base_offset() == offset{42});
  CHECK(std::filesystem::exists(dir / "00000000000000000042.log"));
}

TEST_CASE("unknown files are reported and left alone", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 2);
  touch(dir / "notes.txt", "mine");
  touch(dir / "123.log", "short name");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK(log->unknown_files.size() == 2);
  CHECK(std::filesystem::exists(dir / "notes.txt"));
  CHECK(std::filesystem::exists(dir / "123.log"));
  CHECK(log->segments.size() == 1);
}

TEST_CASE("index files without their log are removed", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 1);
  touch(dir / "00000000000000000100.index", "");
  touch(dir / "00000000000000000100.timeindex", "");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK(log->segments.size() == 1);
  CHECK_FALSE(std::filesystem::exists(dir / "00000000000000000100.index"));
}

TEST_CASE("segments after a truncated one are deleted so the log stays contiguous",
          "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0, 10, 20}, 5);
  auto middle = dir / "00000000000000000010.log";
  std::filesystem::resize_file(middle, std::filesystem::file_size(middle) - 5);
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  REQUIRE(log->segments.size() == 2);
  CHECK(log->segments[1]->next_offset() == offset{18});
  CHECK(log->dropped_segments == std::vector<std::string>{"00000000000000000020"});
  CHECK_FALSE(std::filesystem::exists(dir / "00000000000000000020.log"));
}

TEST_CASE("a segment overlapping its predecessor is dropped with all later ones",
          "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 5);
  write_segments(dir.path(), {6}, 2);
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  REQUIRE(log->segments.size() == 1);
  CHECK(log->segments[0]->next_offset() == offset{10});
  CHECK_FALSE(std::filesystem::exists(dir / "00000000000000000006.log"));
}

TEST_CASE("leftovers of an interrupted compaction are removed", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 1);
  std::filesystem::create_directories(dir / compaction_dir_name);
  touch(dir / compaction_dir_name / "00000000000000000000.log", "partial");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK_FALSE(std::filesystem::exists(dir / compaction_dir_name));
  CHECK(log->unknown_files.empty());
}

TEST_CASE("producer snapshots are not reported as unknown", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 2);
  touch(dir / "00000000000000000004.snapshot", "");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK(log->unknown_files.empty());
  CHECK(std::filesystem::exists(dir / "00000000000000000004.snapshot"));
}

TEST_CASE("a stale sealed-truncation file is not reported as unknown", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 1);
  touch(dir / "00000000000000000000.log.truncating", "partial copy");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK(log->unknown_files.empty());
  CHECK_FALSE(std::filesystem::exists(dir / "00000000000000000000.log.truncating"));
}

TEST_CASE("a segment name that cannot be stat'ed is a storage error, not an exception",
          "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 1);
  // A symlink to itself: stat fails with ELOOP.
  std::filesystem::create_symlink(dir / "00000000000000000010.log", dir / "00000000000000000010.log");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE_FALSE(log);
  CHECK(log.code() == errc::kafka_storage_error);
  CHECK(log.err().message.find("00000000000000000010.log") != std::string::npos);
}

TEST_CASE("partition.metadata and offset-gaps are the directory's own files", "[storage][loader]") {
  temp_dir dir;
  write_segments(dir.path(), {0}, 1);
  touch(dir / "partition.metadata", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n");
  touch(dir / "offset-gaps", "0\n0\n");
  auto log = load_log(dir.path(), offset{0}, offset{0}, {}, "t-0");
  REQUIRE(log);
  CHECK(log->unknown_files.empty());
}
