#include <catch2/catch.hpp>

#include <fstream>

#include "actors/node/data_dir.hpp"
#include "actors/node/data_dir_repair.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tree_snapshot.hpp"

using namespace capstan;
using namespace capstan::test;
namespace fs = std::filesystem;

namespace {

// A stopped node 1 whose topic c (2 partitions) holds offsets 0..59 in each, in segments at 0, 20
// and 40, with checkpoints that say so.
void make_data_dir(const fs::path& data) {
  fs::create_directories(data);
  REQUIRE(claim_data_dir(data, 1, ""));
  auto meta = read_meta_properties(data);
  REQUIRE(meta);
  cluster_metadata md;
  md.cluster_id = (*meta)->cluster_id;
  topic_metadata t;
  t.name = "c";
  t.id[0] = 5;
  for (int32_t p = 0; p < 2; ++p) t.partitions.push_back(partition_assignment{p, {1}, 1, 0, {1}, {}});
  md.topics.emplace("c", t);
  REQUIRE(write_metadata_store(data / metadata_store_file, md));
  offset_map points;
  for (int32_t p = 0; p < 2; ++p) {
    const auto dir = data / ("c-" + std::to_string(p));
    fs::create_directories(dir);
    REQUIRE(write_partition_metadata(dir, t.id));
    for (int64_t base : {0, 20, 40}) {
      auto seg = segment::open(dir, offset{base}, segment_open_mode::create, {});
      REQUIRE(seg);
      for (int i = 0; i < 10; ++i) {
        auto batch = make_batch(2, "v", 1000);
        set_base_offset(batch, offset{base + 2 * i});
        REQUIRE((*seg)->append(batch));
      }
      REQUIRE((*seg)->flush());
    }
    points[{"c", p}] = offset{60};
  }
  REQUIRE(write_offset_checkpoint(data / recovery_point_checkpoint_name, points));
  REQUIRE(write_offset_checkpoint(data / high_watermark_checkpoint_name, points));
}

} // namespace

TEST_CASE("find_repairs names only the damaged partitions and changes nothing", "[node][repair]") {
  temp_dir dir;
  const auto data = dir / "data";
  make_data_dir(data);
  auto none = find_repairs(data, {});
  REQUIRE(none);
  CHECK(none->node_id == 1);
  CHECK(none->partitions.empty());

  fs::remove(data / "c-1" / "00000000000000000020.log");
  const auto before = snapshot_tree(data);
  auto found = find_repairs(data, {});
  REQUIRE(found);
  REQUIRE(found->partitions.size() == 1);
  const auto& r = found->partitions[0];
  CHECK(r.partition == "c-1");
  CHECK(r.damage.find("offsets 20..39 missing") != std::string::npos);
  CHECK_FALSE(r.plan.empty());
  CHECK(snapshot_tree(data) == before);

  auto only_other = find_repairs(data, {"c-0"});
  REQUIRE(only_other);
  CHECK(only_other->partitions.empty());
  auto unknown = find_repairs(data, {"c-7"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.code() == errc::invalid_config);
}

TEST_CASE("apply_repairs makes the partition pass start-up's check and keeps its known end",
          "[node][repair]") {
  temp_dir dir;
  const auto data = dir / "data";
  make_data_dir(data);
  fs::remove_all(data / "c-0");
  auto found = find_repairs(data, {});
  REQUIRE(found);
  REQUIRE(found->partitions.size() == 1);
  REQUIRE(apply_repairs(data, *found));

  auto points = read_offset_checkpoint(data / recovery_point_checkpoint_name);
  auto marks = read_offset_checkpoint(data / high_watermark_checkpoint_name);
  REQUIRE(points);
  REQUIRE(marks);
  CHECK(points->at({"c", 0}) == offset{0});
  CHECK(marks->at({"c", 0}) == offset{60});
  CHECK(points->at({"c", 1}) == offset{60});
  auto again = find_repairs(data, {});
  REQUIRE(again);
  CHECK(again->partitions.empty());
  CHECK(fs::exists(data / "c-0" / "00000000000000000060.log"));
}

TEST_CASE("find_repairs passes over a directory a crash left with a torn partition.metadata "
          "beside no record",
          "[node][repair]") {
  temp_dir dir;
  const auto data = dir / "data";
  make_data_dir(data);
  // A placed replica created just before a power loss: its file's name survived, its content not.
  const auto fresh = data / "d-0";
  fs::create_directories(fresh);
  { std::ofstream(fresh / "partition.metadata"); }
  { std::ofstream(fresh / "00000000000000000000.log"); }
  fs::remove(data / "c-1" / "00000000000000000020.log");
  auto found = find_repairs(data, {});
  REQUIRE(found);
  REQUIRE(found->partitions.size() == 1);
  CHECK(found->partitions[0].partition == "c-1");
}

TEST_CASE("a torn partition.metadata in a directory that handed out offsets is damage that "
          "apply_repairs mends",
          "[node][repair]") {
  temp_dir dir;
  const auto data = dir / "data";
  make_data_dir(data);
  // Emptied by retention (one empty segment at the known end), then the file lost its content.
  const auto c1 = data / "c-1";
  for (int64_t base : {0, 20, 40})
    for (const char* ext : {".log", ".index", ".timeindex"})
      fs::remove(c1 / (segment::file_stem(offset{base}) + ext));
  { std::ofstream(c1 / "00000000000000000060.log"); }
  { std::ofstream(c1 / "partition.metadata", std::ios::trunc); }
  auto found = find_repairs(data, {});
  REQUIRE(found);
  REQUIRE(found->partitions.size() == 1);
  CHECK(found->partitions[0].partition == "c-1");
  CHECK(found->partitions[0].damage.find("partition.metadata is empty") != std::string::npos);
  REQUIRE(apply_repairs(data, *found));
  auto again = find_repairs(data, {});
  REQUIRE(again);
  CHECK(again->partitions.empty());
  auto id = read_partition_metadata(c1);
  REQUIRE(id);
  CHECK(id->has_value());
}

TEST_CASE("find_repairs needs meta.properties to know the node", "[node][repair]") {
  temp_dir dir;
  const auto data = dir / "data";
  make_data_dir(data);
  fs::remove(data / meta_properties_file);
  auto found = find_repairs(data, {});
  REQUIRE_FALSE(found);
  CHECK(found.err().message.find("meta.properties is missing") != std::string::npos);
}
