// The fault switch of one node (runtime/cluster/node_fault_switch.hpp) over the process-wide
// link_faults: which links it cuts, what it refuses, and that clearing undoes only its own node.

#include <catch2/catch.hpp>

#include "runtime/cluster/link_faults.hpp"
#include "runtime/cluster/node_fault_switch.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "runtime/storage/file_handle.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;

namespace {

// Leaves link_faults clear for the next test whatever this one set.
struct clear_links {
  clear_links() { link_faults::instance().clear_all(); }
  ~clear_links() { link_faults::instance().clear_all(); }
};

bool dropped(int from, int to) {
  return link_faults::instance().dropped(node_id{from}, node_id{to});
}

} // namespace

TEST_CASE("isolating a node drops its links to the named peers both ways and no others",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  REQUIRE(faults.isolate({2, 3}));
  CHECK(dropped(1, 2));
  CHECK(dropped(2, 1));
  CHECK(dropped(1, 3));
  CHECK(dropped(3, 1));
  CHECK_FALSE(dropped(2, 3));
  CHECK_FALSE(dropped(1, 4));
  CHECK_FALSE(dropped(1, 1));
}

TEST_CASE("isolate refuses no peers, a negative id and the node itself, and sets nothing",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  for (const auto& peers :
       {std::vector<int32_t>{}, std::vector<int32_t>{2, -1}, std::vector<int32_t>{2, 1}}) {
    auto s = faults.isolate(peers);
    REQUIRE_FALSE(s);
    CHECK(s.code() == errc::invalid_request);
  }
  CHECK_FALSE(dropped(1, 2));
  CHECK_FALSE(dropped(2, 1));
}

TEST_CASE("clearing a node's switch restores its links and leaves other nodes' faults",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch one{node_id{1}};
  REQUIRE(one.isolate({2}));
  link_faults::instance().drop(node_id{3}, node_id{4});
  REQUIRE(one.drop_produce_responses(2));
  one.clear();
  CHECK_FALSE(dropped(1, 2));
  CHECK_FALSE(dropped(2, 1));
  CHECK(dropped(3, 4));
  CHECK_FALSE(one.take_produce_response());
}

TEST_CASE("drop-produce-responses drops exactly the next N answers", "[unit][cluster][fault]") {
  node_fault_switch faults{node_id{1}};
  CHECK_FALSE(faults.take_produce_response());
  REQUIRE(faults.drop_produce_responses(2));
  CHECK(faults.take_produce_response());
  CHECK(faults.take_produce_response());
  CHECK_FALSE(faults.take_produce_response());
  auto s = faults.drop_produce_responses(-1);
  REQUIRE_FALSE(s);
  CHECK(s.code() == errc::invalid_request);
}

TEST_CASE("one-way cuts drop only the named direction between the node and its peers",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  REQUIRE(faults.drop_outgoing({2}));
  CHECK(dropped(1, 2));
  CHECK_FALSE(dropped(2, 1));
  REQUIRE(faults.drop_incoming({3}));
  CHECK(dropped(3, 1));
  CHECK_FALSE(dropped(1, 3));
  auto s = faults.drop_incoming({1});
  REQUIRE_FALSE(s);
  CHECK(s.code() == errc::invalid_request);
  faults.clear();
  CHECK_FALSE(dropped(1, 2));
  CHECK_FALSE(dropped(3, 1));
}

namespace {

link_fault::kind control(int from, int to) {
  return link_faults::instance().check_control(node_id{from}, node_id{to}).what;
}

} // namespace

TEST_CASE("drop-control loses exactly the next N control messages of the node's controller, "
          "whatever the peer, and a probability of 1 loses every one after them",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  REQUIRE(faults.drop_control(2, 0));
  CHECK(control(1, 2) == link_fault::kind::drop);
  CHECK(control(2, 3) == link_fault::kind::pass);
  CHECK(control(1, 3) == link_fault::kind::drop);
  CHECK(control(1, 2) == link_fault::kind::pass);
  // Links other than the controller's are not touched.
  CHECK_FALSE(dropped(1, 2));
  REQUIRE(faults.drop_control(0, 1));
  for (int i = 0; i < 10; ++i) CHECK(control(1, 2) == link_fault::kind::drop);
  faults.clear();
  CHECK(control(1, 2) == link_fault::kind::pass);
}

TEST_CASE("delay-control makes the controller's messages late, keeps its drops first, and a "
          "cut link still loses them",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  REQUIRE(faults.delay_control(250));
  auto f = link_faults::instance().check_control(node_id{1}, node_id{2});
  CHECK(f.what == link_fault::kind::delay);
  CHECK(f.delay == std::chrono::milliseconds(250));
  REQUIRE(faults.drop_control(1, 0));
  CHECK(control(1, 2) == link_fault::kind::drop);
  CHECK(control(1, 2) == link_fault::kind::delay);
  REQUIRE(faults.drop_outgoing({3}));
  CHECK(control(1, 3) == link_fault::kind::drop);
}

TEST_CASE("drop-control and delay-control refuse a negative count, a probability outside 0..1 "
          "and a delay below 1 ms",
          "[unit][cluster][fault]") {
  clear_links guard;
  node_fault_switch faults{node_id{1}};
  for (auto s : {faults.drop_control(-1, 0), faults.drop_control(0, 1.5),
                 faults.drop_control(0, -0.1), faults.delay_control(0)}) {
    REQUIRE_FALSE(s);
    CHECK(s.code() == errc::invalid_request);
  }
  CHECK(control(1, 2) == link_fault::kind::pass);
}

TEST_CASE("disk-full makes writes, fsyncs and creations under the node's own data dir fail with "
          "ENOSPC until cleared, and a switch without a storage env refuses it",
          "[unit][cluster][fault]") {
  test::temp_dir dir;
  fault_injection_env env;
  scoped_storage_env installed(env);
  REQUIRE(make_directories(dir / "node-1"));
  REQUIRE(make_directories(dir / "node-2"));
  node_fault_switch faults{node_id{1}, env, (dir / "node-1").string()};
  const auto create = [&](const std::string& path) {
    return file_handle::open(dir / path, file_mode::create_new);
  };
  auto kept = create("node-1/kept");
  REQUIRE(kept);

  REQUIRE(faults.fail_disk(disk_failure::full));
  REQUIRE(faults.fail_disk(disk_failure::full));
  auto refused = create("node-1/new");
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::kafka_storage_error);
  CHECK(refused.err().message.find("No space left on device") != std::string::npos);
  CHECK_FALSE(kept->sync());
  CHECK_FALSE(make_directories(dir / "node-1/t-0"));
  CHECK(create("node-2/new"));

  faults.clear();
  CHECK(create("node-1/new"));
  CHECK(kept->sync());

  node_fault_switch plain{node_id{1}};
  auto s = plain.fail_disk(disk_failure::full);
  REQUIRE_FALSE(s);
  CHECK(s.code() == errc::invalid_request);
}

TEST_CASE("a read-only or failing disk makes writes under the node's data dir fail with EROFS or "
          "EIO, the later fault replacing the earlier, while reads go on",
          "[unit][cluster][fault]") {
  test::temp_dir dir;
  fault_injection_env env;
  scoped_storage_env installed(env);
  REQUIRE(make_directories(dir / "node-1"));
  node_fault_switch faults{node_id{1}, env, (dir / "node-1").string()};
  auto kept = file_handle::open(dir / "node-1/kept", file_mode::create_new);
  REQUIRE(kept);
  const auto create = [&] { return file_handle::open(dir / "node-1/new", file_mode::create_new); };

  REQUIRE(faults.fail_disk(disk_failure::read_only));
  auto refused = create();
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::kafka_storage_error);
  CHECK(refused.err().message.find("Read-only file system") != std::string::npos);
  CHECK_FALSE(kept->sync());

  REQUIRE(faults.fail_disk(disk_failure::io_error));
  refused = create();
  REQUIRE_FALSE(refused);
  CHECK(refused.err().message.find("Input/output error") != std::string::npos);
  CHECK(file_handle::open(dir / "node-1/kept", file_mode::open_existing));

  faults.clear();
  CHECK(create());
}
