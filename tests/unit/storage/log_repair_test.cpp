// `capstan log repair`'s per-partition part: after a repair the directory passes start-up's
// checks, the log continues at the end the node knew (no offset is handed out twice), and
// nothing is deleted.

#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/log_repair.hpp"
#include "runtime/storage/partition_check.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
namespace fs = std::filesystem;

namespace {

const uuid_bytes topic_a{1};

void write_log(const fs::path& dir, int segments = 10) {
  fs::create_directories(dir);
  REQUIRE(write_partition_metadata(dir, topic_a));
  for (int s = 0; s < segments; ++s) {
    const int64_t base = 60 * s;
    // Small enough an interval that every segment has index files.
    segment_options options;
    options.index_interval_bytes = 256;
    auto seg = segment::open(dir, offset{base}, segment_open_mode::create, options);
    REQUIRE(seg);
    for (int i = 0; i < 30; ++i) {
      auto batch = make_batch(2, "v", 1000);
      set_base_offset(batch, offset{base + 2 * i});
      REQUIRE((*seg)->append(batch));
    }
    REQUIRE((*seg)->flush());
  }
}

std::string stem(int64_t base) { return segment::file_stem(offset{base}); }

struct repaired {
  offset log_start{0};
  offset log_end{0};
};

// Repairs `dir` as if the node knew offsets up to 599, then checks it as start-up does (with the
// recovery point a repair leaves, 0) and loads it.
repaired repair_and_load(const fs::path& dir, const fs::path& aside, const uuid_bytes& id = topic_a) {
  const offset known{600};
  auto survey = survey_log(dir, offset{600}, 1 << 20);
  REQUIRE(survey);
  auto plan = plan_repair(*survey, known, id);
  REQUIRE_FALSE(plan.empty());
  REQUIRE(apply_repair(dir, plan, aside));
  auto check = prepare_partition_dir(dir, "c-0", topic_a, checkpointed_offsets{offset{0}, known}, {});
  INFO((check ? std::string() : check.err().message));
  REQUIRE(check);
  CHECK(check->state == dir_state::intact);
  auto log = load_log(dir, offset{0}, offset{0}, {}, "c-0");
  REQUIRE(log);
  return {log->segments.front()->base_offset(), log->segments.back()->next_offset()};
}

} // namespace

TEST_CASE("repair of a missing directory starts the log empty at the known end", "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  auto r = repair_and_load(dir, data / "aside");
  CHECK(r.log_start == offset{600});
  CHECK(r.log_end == offset{600});
}

TEST_CASE("repair of a missing directory whose topic id is unknown leaves partition.metadata to the "
          "node",
          "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  auto r = repair_and_load(dir, data / "aside", uuid_bytes{});
  CHECK(r.log_start == offset{600});
  CHECK(r.log_end == offset{600});
  // Written by prepare_partition_dir, with the id the node opens the replica under.
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_a});
}

TEST_CASE("repair of a lost active segment continues at the known end and records the gap",
          "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / (stem(540) + ".log"));
  auto r = repair_and_load(dir, data / "aside");
  CHECK(r.log_start == offset{0});
  CHECK(r.log_end == offset{600});
  auto gaps = read_offset_gaps(dir);
  REQUIRE(gaps);
  CHECK(gaps->covers(offset{540}, offset{600}));
  // The orphaned index files went aside, not away.
  CHECK(fs::exists(data / "aside" / (stem(540) + ".index")));
  CHECK_FALSE(fs::exists(dir / (stem(540) + ".index")));
}

TEST_CASE("repair of a middle hole accepts it as a gap and keeps every later segment",
          "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / (stem(420) + ".log"));
  auto r = repair_and_load(dir, data / "aside");
  CHECK(r.log_end == offset{600});
  CHECK(fs::exists(dir / (stem(480) + ".log")));
  auto gaps = read_offset_gaps(dir);
  REQUIRE(gaps);
  CHECK(gaps->covers(offset{420}, offset{480}));
}

TEST_CASE("repair moves a stray garbage segment aside and keeps the log end", "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  std::ofstream(dir / (stem(999) + ".log")) << std::string(100, 'x');
  auto r = repair_and_load(dir, data / "aside");
  CHECK(r.log_end == offset{600});
  CHECK_FALSE(fs::exists(dir / (stem(999) + ".log")));
  CHECK(fs::file_size(data / "aside" / (stem(999) + ".log")) == 100);
}

TEST_CASE("repair of a corrupt middle batch copies the segment aside, cuts it and keeps the rest",
          "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  const auto middle = dir / (stem(240) + ".log");
  const auto size = fs::file_size(middle);
  {
    std::fstream f(middle, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put('\x55');
  }
  auto r = repair_and_load(dir, data / "aside");
  CHECK(r.log_end == offset{600});
  CHECK(fs::file_size(data / "aside" / (stem(240) + ".log")) == size);
  CHECK(fs::file_size(middle) < size);
  CHECK(fs::exists(dir / (stem(300) + ".log")));
  auto gaps = read_offset_gaps(dir);
  REQUIRE(gaps);
  CHECK(gaps->covers(offset{298}, offset{300}));
}

TEST_CASE("an intact directory needs no repair", "[storage][repair]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  auto survey = survey_log(dir, offset{600}, 1 << 20);
  REQUIRE(survey);
  CHECK(plan_repair(*survey, offset{600}, topic_a).empty());
}
