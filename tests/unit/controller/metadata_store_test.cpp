#include <catch2/catch.hpp>

#include <fstream>

#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

cluster_metadata sample() {
  cluster_metadata md;
  md.cluster_id = "q1Wr8zNtR7ya0pbd8r3KlA";
  topic_metadata orders;
  orders.name = "orders";
  for (uint8_t i = 0; i < 16; ++i) orders.id[i] = static_cast<uint8_t>(i * 17);
  orders.configs = {{"cleanup.policy", "compact"}, {"min.insync.replicas", "2"}};
  for (int32_t p = 0; p < 3; ++p)
    orders.partitions.push_back(partition_assignment{p, {1, 2}, 1 + p % 2, p, {1}, {}});
  topic_metadata offsets;
  offsets.name = "__consumer_offsets";
  offsets.id[15] = 1;
  offsets.internal = true;
  offsets.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
  md.topics.emplace(orders.name, orders);
  md.topics.emplace(offsets.name, offsets);
  return md;
}

void check_same(const cluster_metadata& a, const cluster_metadata& b) {
  CHECK(a.cluster_id == b.cluster_id);
  REQUIRE(a.topics.size() == b.topics.size());
  for (const auto& [name, t] : a.topics) {
    INFO(name);
    REQUIRE(b.topics.count(name) == 1);
    const auto& u = b.topics.at(name);
    CHECK(t.name == u.name);
    CHECK(t.id == u.id);
    CHECK(t.internal == u.internal);
    CHECK(t.configs == u.configs);
    REQUIRE(t.partitions.size() == u.partitions.size());
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      CHECK(t.partitions[i].partition == u.partitions[i].partition);
      CHECK(t.partitions[i].replicas == u.partitions[i].replicas);
      CHECK(t.partitions[i].leader == u.partitions[i].leader);
      CHECK(t.partitions[i].leader_epoch == u.partitions[i].leader_epoch);
      CHECK(t.partitions[i].isr == u.partitions[i].isr);
    }
  }
}

} // namespace

TEST_CASE("the metadata store reads back what it wrote", "[controller][store]") {
  temp_dir dir;
  const auto file = dir / metadata_store_file;
  auto md = sample();
  REQUIRE(write_metadata_store(file, md));
  auto back = read_metadata_store(file);
  REQUIRE(back);
  check_same(md, *back);

  md.topics.erase("orders");
  REQUIRE(write_metadata_store(file, md));
  back = read_metadata_store(file);
  REQUIRE(back);
  check_same(md, *back);
  CHECK_FALSE(std::filesystem::exists(dir / (std::string(metadata_store_file) + ".tmp")));
}

TEST_CASE("a missing metadata store reads as an empty cluster", "[controller][store]") {
  temp_dir dir;
  auto md = read_metadata_store(dir / metadata_store_file);
  REQUIRE(md);
  CHECK(md->cluster_id.empty());
  CHECK(md->topics.empty());
  CHECK(md->next_producer_id == 0);
}

TEST_CASE("the metadata store keeps the next producer id, 0 when a store has none",
          "[controller][store]") {
  temp_dir dir;
  const auto file = dir / metadata_store_file;
  auto md = sample();
  md.next_producer_id = 3000;
  REQUIRE(write_metadata_store(file, md));
  auto back = read_metadata_store(file);
  REQUIRE(back);
  CHECK(back->next_producer_id == 3000);

  REQUIRE(write_file_atomically(file, "version = 1\ncluster_id = \"c\"\n"));
  back = read_metadata_store(file);
  REQUIRE(back);
  CHECK(back->next_producer_id == 0);
  REQUIRE(write_file_atomically(file, "version = 1\ncluster_id = \"c\"\nnext_producer_id = -4\n"));
  CHECK(read_metadata_store(file).code() == errc::kafka_storage_error);
}

TEST_CASE("a leftover temp file from a crash mid-write leaves the store as it was",
          "[controller][store]") {
  temp_dir dir;
  const auto file = dir / metadata_store_file;
  auto md = sample();
  REQUIRE(write_metadata_store(file, md));
  {
    std::ofstream torn(dir / (std::string(metadata_store_file) + ".tmp"));
    torn << "version = 1\ncluster_id = \"other\"\n[topics.half";
  }
  auto back = read_metadata_store(file);
  REQUIRE(back);
  check_same(md, *back);
  md.topics.erase("orders");
  REQUIRE(write_metadata_store(file, md));
  back = read_metadata_store(file);
  REQUIRE(back);
  check_same(md, *back);
}

TEST_CASE("a malformed metadata store is a storage error naming the file", "[controller][store]") {
  temp_dir dir;
  const auto file = dir / metadata_store_file;
  const std::vector<std::string> bad = {
    "version = 1\ncluster_id = \"c\"\n[topics.t\n",
    "version = 7\ncluster_id = \"c\"\n",
    "version = 1\n",
    "version = 1\ncluster_id = \"c\"\n[topics.t]\nid = \"zz\"\npartitions = [{partition = 0, "
    "replicas = [1], leader = 1, leader_epoch = 0, isr = [1]}]\n",
    "version = 1\ncluster_id = \"c\"\n[topics.t]\nid = \"000102030405060708090a0b0c0d0e0f\"\n",
    "version = 1\ncluster_id = \"c\"\n[topics.t]\nid = \"000102030405060708090a0b0c0d0e0f\"\n"
    "partitions = [{partition = 1, replicas = [1], leader = 1, leader_epoch = 0, isr = [1]}]\n",
    "version = 1\ncluster_id = \"c\"\n[topics.\"bad name\"]\nid = \"000102030405060708090a0b0c0d0e0f\"\n"
    "partitions = [{partition = 0, replicas = [1], leader = 1, leader_epoch = 0, isr = [1]}]\n",
  };
  for (const auto& text : bad) {
    INFO(text);
    {
      std::ofstream out(file, std::ios::trunc);
      out << text;
    }
    auto md = read_metadata_store(file);
    REQUIRE_FALSE(md);
    CHECK(md.code() == errc::kafka_storage_error);
    CHECK(md.err().message.find(file.string()) != std::string::npos);
  }
}

// One text form for a topic id everywhere a user or an operator reads one: Kafka's (URL-safe
// base64, 22 characters), as partition.metadata has it. Files of earlier versions hold 32 hex
// digits, which still read.
TEST_CASE("topic ids read and write as Kafka's base64, and earlier files' hex still reads",
          "[controller][store]") {
  topic_id id{};
  for (uint8_t i = 0; i < 16; ++i) id[i] = static_cast<uint8_t>(255 - i);
  auto back = parse_topic_id(to_base64_uuid(id));
  REQUIRE(back);
  CHECK(*back == id);
  auto legacy = parse_topic_id("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0");
  REQUIRE(legacy);
  CHECK(*legacy == id);
  CHECK_FALSE(parse_topic_id("fffe"));
  CHECK_FALSE(parse_topic_id("gffefdfcfbfaf9f8f7f6f5f4f3f2f1f0"));
  CHECK_FALSE(parse_topic_id("!!!!!!!!!!!!!!!!!!!!!!"));

  temp_dir dir;
  const auto file = dir.path() / "cluster-metadata.toml";
  cluster_metadata md;
  md.cluster_id = "c1";
  topic_metadata t;
  t.name = "__consumer_offsets";
  t.id = id;
  t.internal = true;
  t.partitions.push_back(partition_assignment{0, {1}, 1, 0, {1}, {}});
  md.topics.emplace(t.name, t);
  REQUIRE(write_metadata_store(file, md));
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find(to_base64_uuid(id)) != std::string::npos);
  CHECK(text.find("fffefdfc") == std::string::npos);
  auto read = read_metadata_store(file);
  REQUIRE(read);
  CHECK(read->topics.at("__consumer_offsets").id == id);
}
