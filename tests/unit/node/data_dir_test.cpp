#include <catch2/catch.hpp>

#include <fstream>

#include "actors/node/data_dir.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("a data dir lock is exclusive until released", "[node][data_dir]") {
  temp_dir dir;
  {
    auto first = data_dir_lock::acquire(dir.path());
    REQUIRE(first);
    auto second = data_dir_lock::acquire(dir.path());
    REQUIRE_FALSE(second);
    CHECK(second.code() == errc::kafka_storage_error);
    CHECK(second.err().message.find("in use by another capstan node") != std::string::npos);
  }
  CHECK(data_dir_lock::acquire(dir.path()));
}

TEST_CASE("the first claim writes meta.properties and later claims check it", "[node][data_dir]") {
  temp_dir dir;
  auto first = claim_data_dir(dir.path(), 3, "");
  REQUIRE(first);
  CHECK(first->node_id == 3);
  CHECK(first->cluster_id.size() == 22);
  auto stored = read_meta_properties(dir.path());
  REQUIRE(stored);
  REQUIRE(*stored);
  CHECK((*stored)->cluster_id == first->cluster_id);

  auto again = claim_data_dir(dir.path(), 3, "");
  REQUIRE(again);
  CHECK(again->cluster_id == first->cluster_id);
  CHECK(claim_data_dir(dir.path(), 3, first->cluster_id));

  auto other_node = claim_data_dir(dir.path(), 4, "");
  REQUIRE_FALSE(other_node);
  CHECK(other_node.code() == errc::invalid_config);
  CHECK(other_node.err().message.find("belongs to node 3, not node 4") != std::string::npos);

  auto other_cluster = claim_data_dir(dir.path(), 3, "someOtherCluster");
  REQUIRE_FALSE(other_cluster);
  CHECK(other_cluster.err().message.find("someOtherCluster") != std::string::npos);
}

TEST_CASE("a malformed meta.properties is a storage error", "[node][data_dir]") {
  temp_dir dir;
  for (const char* text : {"version=2\nnode.id=1\ncluster.id=x\n", "version=1\nnode.id=one\ncluster.id=x\n",
                           "version=1\nnode.id=1\n", "garbage\n"}) {
    INFO(text);
    {
      std::ofstream out(dir / meta_properties_file, std::ios::trunc);
      out << text;
    }
    auto meta = read_meta_properties(dir.path());
    REQUIRE_FALSE(meta);
    CHECK(meta.code() == errc::kafka_storage_error);
  }
}

TEST_CASE("cluster ids are random 22-character URL-safe strings", "[node][data_dir]") {
  auto a = new_cluster_id();
  auto b = new_cluster_id();
  CHECK(a != b);
  CHECK(a.size() == 22);
  for (char c : a) CHECK((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'));
}
