// Start-up's comparison of a partition directory with what the node knew: each way of
// losing records is reported with its offsets, and nothing on disk changes while it is.

#include <catch2/catch.hpp>

#include <fstream>
#include <utility>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/partition_check.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/storage/storage_env.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/sync_recorder.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tree_snapshot.hpp"

using namespace capstan;
using namespace capstan::test;
namespace fs = std::filesystem;

namespace {

const uuid_bytes topic_a{1};
const uuid_bytes topic_b{2};

// Segments at 0, 60, ..., 540, each of 30 batches of 2 records: offsets 0..599, as a node
// that rolled every 60 offsets leaves them.
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

checkpointed_offsets at(int64_t recovery_point, int64_t high_watermark) {
  return checkpointed_offsets{offset{recovery_point}, offset{high_watermark}};
}

result<prepared_dir> prepare(const fs::path& dir, checkpointed_offsets known,
                             const uuid_bytes& id = topic_a) {
  return prepare_partition_dir(dir, "c-0", id, known, {});
}

} // namespace

TEST_CASE("an intact directory opens with its checkpointed recovery point", "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  auto p = prepare(dir, at(600, 600));
  REQUIRE(p);
  CHECK(p->state == dir_state::intact);
  CHECK(p->recovery_point == offset{600});
  // A log that grew past the last checkpoint is fine: it was appended after it.
  auto older = prepare(dir, at(300, 420));
  REQUIRE(older);
}

TEST_CASE("case 1: a missing directory the checkpoints know is reported and not recreated",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  auto p = prepare(dir, at(600, 600));
  REQUIRE_FALSE(p);
  CHECK(p.code() == errc::kafka_storage_error);
  CHECK(p.err().message.find("c-0") != std::string::npos);
  CHECK(p.err().message.find("missing") != std::string::npos);
  CHECK(p.err().message.find("offsets up to 599") != std::string::npos);
  CHECK(p.err().message.find("capstan log repair") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));

  // Without a checkpoint entry (or with one at 0) the partition is new and starts empty.
  auto fresh = prepare(dir, checkpointed_offsets{});
  REQUIRE(fresh);
  CHECK(fresh->state == dir_state::created);
  CHECK(fs::is_directory(dir));
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_a});
}

TEST_CASE("a new directory is created without an fsync and left for its log to make durable",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  sync_recorder env;
  scoped_storage_env installed(env);
  auto p = prepare(dir, checkpointed_offsets{});
  REQUIRE(p);
  CHECK(p->state == dir_state::created);
  CHECK(p->unsynced);
  CHECK(env.synced().empty());
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_a});
  // Opened again before a checkpoint knew it, it may still not be durable.
  auto again = prepare(dir, checkpointed_offsets{});
  REQUIRE(again);
  CHECK(again->state == dir_state::intact);
  CHECK(again->unsynced);
  // A checkpoint that knows it syncs only the data dir: without a record it is not durable yet.
  auto known = prepare(dir, at(0, 0));
  REQUIRE(known);
  CHECK(known->unsynced);
  // A record in it, known or not, means the log made it durable first.
  const auto full = data / "d-0";
  write_log(full);
  auto written = prepare(full, at(600, 600));
  REQUIRE(written);
  CHECK_FALSE(written->unsynced);

  // make_partition_dir_durable syncs what the creation did not.
  REQUIRE(make_partition_dir_durable(dir));
  CHECK(env.syncs_of(dir / "partition.metadata") == 1);
  CHECK(env.syncs_of(dir) == 1);
  CHECK(env.syncs_of(data.path()) == 1);
}

TEST_CASE("a crash soon after creation: an unreadable partition.metadata beside no record is "
          "written again, beside records it is damage",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  // Its name was durable, its content not: an empty file, and the empty first segment.
  fs::create_directories(dir);
  { std::ofstream(dir / "partition.metadata"); }
  { std::ofstream(dir / (stem(0) + ".log")); }
  auto p = prepare(dir, checkpointed_offsets{});
  REQUIRE(p);
  CHECK(p->state == dir_state::intact);
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_a});

  // Beside records, or in a directory that handed out offsets (emptied by retention since), the
  // file was durable: damage. So is a file with content that does not parse.
  const auto full = data / "d-0";
  write_log(full);
  { std::ofstream(full / "partition.metadata", std::ios::trunc); }
  const auto emptied = data / "e-0";
  fs::create_directories(emptied);
  { std::ofstream(emptied / "partition.metadata"); }
  { std::ofstream(emptied / (stem(600) + ".log")); }
  const auto garbled = data / "f-0";
  fs::create_directories(garbled);
  { std::ofstream(garbled / "partition.metadata") << "version: 0\ntopic_"; }
  { std::ofstream(garbled / (stem(0) + ".log")); }
  const auto before = snapshot_tree(data.path());
  for (const auto& [where, known] : {std::pair{full, at(600, 600)}, std::pair{emptied, at(600, 600)},
                                     std::pair{garbled, checkpointed_offsets{}}}) {
    INFO(where.string());
    auto damaged = prepare(where, known);
    REQUIRE_FALSE(damaged);
    CHECK(damaged.code() == errc::kafka_storage_error);
    CHECK(damaged.err().message.find("partition.metadata") != std::string::npos);
  }
  CHECK(snapshot_tree(data.path()) == before);
}

TEST_CASE("case 2: a lost active segment (index files kept) is reported with the missing offsets",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / (stem(540) + ".log"));
  const auto before = snapshot_tree(data.path());
  auto p = prepare(dir, at(600, 600));
  REQUIRE_FALSE(p);
  INFO(p.err().message);
  CHECK(p.err().message.find("the log ends at offset 540") != std::string::npos);
  CHECK(p.err().message.find("offsets 540..599 missing") != std::string::npos);
  CHECK(p.err().message.find("Nothing in the directory was changed") != std::string::npos);
  CHECK(p.err().message.find("index files of " + stem(540) + " remain without their .log") !=
        std::string::npos);
  CHECK(snapshot_tree(data.path()) == before);
}

TEST_CASE("case 3: a lost middle segment is a hole named by its offsets", "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / (stem(420) + ".log"));
  const auto before = snapshot_tree(data.path());
  auto p = prepare(dir, at(600, 600));
  REQUIRE_FALSE(p);
  INFO(p.err().message);
  CHECK(p.err().message.find("offsets 420..479 missing: segment " + stem(480) +
                             ".log starts at 480 but the segment before it ends at 420") !=
        std::string::npos);
  CHECK(snapshot_tree(data.path()) == before);

  // With all three files gone there is no trace but the hole itself, which is enough.
  fs::remove(dir / (stem(420) + ".index"));
  fs::remove(dir / (stem(420) + ".timeindex"));
  auto again = prepare(dir, at(600, 600));
  REQUIRE_FALSE(again);
  CHECK(again.err().message.find("offsets 420..479 missing") != std::string::npos);
}

TEST_CASE("case 4: a stray segment of garbage past the log end is a hole, not a new log end",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  std::ofstream(dir / (stem(999) + ".log")) << std::string(100, 'x');
  const auto before = snapshot_tree(data.path());
  auto p = prepare(dir, at(600, 600));
  REQUIRE_FALSE(p);
  INFO(p.err().message);
  CHECK(p.err().message.find("offsets 600..998 missing: segment " + stem(999) + ".log starts at 999") !=
        std::string::npos);
  CHECK(snapshot_tree(data.path()) == before);
}

TEST_CASE("a corrupt batch below the known end is damage, a torn tail past it is recovery's",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  const auto last = dir / (stem(540) + ".log");
  fs::resize_file(last, fs::file_size(last) - 5);
  // The last batch (598..599) is torn: after a crash with the checkpoint at 580 it is unflushed
  // data, cut as always.
  auto torn = prepare(dir, at(540, 580));
  REQUIRE(torn);
  // If the node had handed out 598..599, the same cut loses them.
  auto lost = prepare(dir, at(600, 600));
  REQUIRE_FALSE(lost);
  CHECK(lost.err().message.find("recovery would cut") != std::string::npos);
  CHECK(lost.err().message.find("lose offsets 598..599") != std::string::npos);
}

TEST_CASE("gaps that compaction or a repair recorded are not holes", "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / (stem(420) + ".log"));
  offset_gaps gaps;
  gaps.add(offset{420}, offset{480});
  REQUIRE(write_offset_gaps(dir, gaps));
  REQUIRE(prepare(dir, at(600, 600)));
}

TEST_CASE("a directory of an earlier topic with the same name is moved aside, never reused",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  // The checkpoints describe the old directory; the new topic must not trust them.
  auto p = prepare(dir, at(600, 600), topic_b);
  REQUIRE(p);
  CHECK(p->state == dir_state::replaced);
  CHECK(p->recovery_point == offset{0});
  CHECK(fs::exists(p->moved_to / (stem(540) + ".log")));
  CHECK(p->moved_to.filename().string() == "c-0." + to_base64_uuid(topic_a) + "-stray");
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_b});
  CHECK_FALSE(fs::exists(dir / (stem(0) + ".log")));
}

TEST_CASE("a directory without partition.metadata (written before it existed) gets one",
          "[storage][check]") {
  temp_dir data;
  const auto dir = data / "c-0";
  write_log(dir);
  fs::remove(dir / partition_metadata_file);
  auto p = prepare(dir, at(600, 600));
  REQUIRE(p);
  CHECK(p->recovery_point == offset{600});
  auto id = read_partition_metadata(dir);
  REQUIRE(id);
  CHECK(*id == std::optional<uuid_bytes>{topic_a});
}

TEST_CASE("a file where the directory should be, or an unreadable segment, is a named storage error",
          "[storage][check]") {
  temp_dir data;
  std::ofstream(data / "c-0") << "not a directory";
  auto p = prepare(data / "c-0", checkpointed_offsets{});
  REQUIRE_FALSE(p);
  CHECK(p.code() == errc::kafka_storage_error);
  CHECK(p.err().message.find((data / "c-0").string()) != std::string::npos);
  CHECK(p.err().message.find("not a directory") != std::string::npos);

  const auto dir = data / "d-0";
  write_log(dir, 1);
  fs::create_symlink(dir / (stem(60) + ".log"), dir / (stem(60) + ".log"));
  auto loop = prepare(dir, at(0, 0));
  REQUIRE_FALSE(loop);
  CHECK(loop.code() == errc::kafka_storage_error);
  CHECK(loop.err().message.find(stem(60) + ".log") != std::string::npos);
}
