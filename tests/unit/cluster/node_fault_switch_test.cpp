// The fault switch of one node (runtime/cluster/node_fault_switch.hpp) over the process-wide
// link_faults: which links it cuts, what it refuses, and that clearing undoes only its own node.

#include <catch2/catch.hpp>

#include "runtime/cluster/link_faults.hpp"
#include "runtime/cluster/node_fault_switch.hpp"

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
