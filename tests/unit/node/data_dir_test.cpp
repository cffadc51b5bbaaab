#include <catch2/catch.hpp>

#include <fstream>

#include "actors/node/data_dir.hpp"
#include "actors/node/node.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tree_snapshot.hpp"

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

TEST_CASE("case 5: a data dir with a node's data but no meta.properties is refused, untouched",
          "[node][data_dir]") {
  temp_dir dir;
  cluster_metadata md;
  md.cluster_id = "Gj4BHYKQIsQg1SWBqs-xqw";
  REQUIRE(write_metadata_store(dir / metadata_store_file, md));
  std::filesystem::create_directories(dir / "orders-0");
  std::ofstream(dir / "recovery-point-offset-checkpoint") << "0\n0\n";
  const auto before = snapshot_tree(dir.path());
  auto claimed = claim_data_dir(dir.path(), 1, "");
  REQUIRE_FALSE(claimed);
  CHECK(claimed.code() == errc::kafka_storage_error);
  const auto& message = claimed.err().message;
  CHECK(message.find("has no meta.properties") != std::string::npos);
  CHECK(message.find("cluster-metadata.toml") != std::string::npos);
  CHECK(message.find("1 partition directories") != std::string::npos);
  // It says what to write back: the cluster id comes from the metadata.
  CHECK(message.find("cluster.id=Gj4BHYKQIsQg1SWBqs-xqw") != std::string::npos);
  CHECK(snapshot_tree(dir.path()) == before);
}

TEST_CASE("a lock file the lock created is known to be new", "[node][data_dir]") {
  temp_dir dir;
  {
    auto first = data_dir_lock::acquire(dir.path());
    REQUIRE(first);
    CHECK(first->created_file());
  }
  auto again = data_dir_lock::acquire(dir.path());
  REQUIRE(again);
  CHECK_FALSE(again->created_file());
}

TEST_CASE("a node start refused for a missing meta.properties changes nothing, not even .lock",
          "[node][data_dir]") {
  temp_dir dir;
  cluster_metadata md;
  md.cluster_id = "Gj4BHYKQIsQg1SWBqs-xqw";
  REQUIRE(write_metadata_store(dir / metadata_store_file, md));
  std::filesystem::create_directories(dir / "orders-0");
  const auto before = snapshot_tree(dir.path());
  node_config c;
  c.data_dir = dir.path();
  c.listen = c.cluster_listen = c.metrics_listen = "127.0.0.1:0";
  auto started = node::start(c);
  REQUIRE_FALSE(started);
  CHECK(started.err().message.find("has no meta.properties") != std::string::npos);
  CHECK(snapshot_tree(dir.path()) == before);
}
