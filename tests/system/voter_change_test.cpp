// Controller quorum voter changes on a cluster of real `capstan node` processes (three voters,
// tests/support/node_cluster), through the real CLI: `cluster remove-voter` of a stopped voter
// leaves two voters, which `cluster describe` shows and which still commit a topic; adding it
// while it is down ends REQUEST_TIMED_OUT once the quorum gave up waiting for it to catch up; the
// node, started again, is added back with `cluster add-voter`. The refusals (a voter removed that
// is none, a voter added that is one already, a bad endpoint) change nothing.

#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// The "Voters: ..." line of `cluster describe` through `via`; empty when the CLI fails.
std::string voters(node_cluster& c, const node_process& via) {
  std::string out, err;
  if (c.cli("", {"cluster", "describe"}, via, &out, &err) != 0) return {};
  static const std::regex line(R"((^|\n)Voters: ([^\n]*)\n)");
  std::smatch m;
  return std::regex_search(out, m, line) ? m[2].str() : std::string{};
}

// Runs the voter change until it succeeds, or until a refusal says an earlier attempt did (its
// answer was lost to a leader change). False if neither within 90 s.
bool change_voters(node_cluster& c, const std::vector<std::string>& args, const node_process& via,
                   const char* done_already, std::string* out, std::string* err) {
  return eventually(
    [&] {
      return c.cli("", args, via, out, err) == 0 ||
             err->find(done_already) != std::string::npos;
    },
    90s);
}

} // namespace

TEST_CASE("a stopped voter is removed with cluster remove-voter and added back with add-voter",
          "[system][cluster][voters]") {
  node_cluster c(binary, 0);
  std::string out, err;
  c.create_topic("before", 3, c.node(1));
  CHECK(eventually([&] { return voters(c, c.node(1)) == "1, 2, 3"; }, 30s));
  const std::string endpoint3 = c.options(3).cluster_listen;

  // Refusals first: they change nothing.
  int code = c.cli("", {"cluster", "remove-voter", "--id", "9"}, c.node(1), &out, &err);
  CHECK(code == 1);
  CHECK(err.find("VOTER_NOT_FOUND") != std::string::npos);
  code = c.cli("", {"cluster", "add-voter", "--id", "3", "--endpoint", endpoint3}, c.node(1), &out,
               &err);
  CHECK(code == 1);
  CHECK(err.find("DUPLICATE_VOTER") != std::string::npos);
  for (const char* bad : {"127.0.0.1:0", "127.0.0.1", "127.0.0.1:70000"}) {
    INFO(bad);
    code = c.cli("", {"cluster", "add-voter", "--node-id", "5", "--endpoint", bad}, c.node(2),
                 &out, &err);
    CHECK(code == 1);
    CHECK(err.find("INVALID_REQUEST") != std::string::npos);
  }
  code = c.cli("", {"cluster", "remove-voter", "--id", "-1"}, c.node(1), &out, &err);
  CHECK(code == 2);
  CHECK(voters(c, c.node(2)) == "1, 2, 3");

  // Node 3 stops; the two left are a majority of the two-voter set.
  c.node(3).kill();
  {
    const bool removed = change_voters(c, {"cluster", "remove-voter", "--id", "3"}, c.node(1),
                                       "VOTER_NOT_FOUND", &out, &err);
    INFO(out << err);
    REQUIRE(removed);
    CHECK((out.find("Removed node 3") != std::string::npos ||
           err.find("VOTER_NOT_FOUND") != std::string::npos));
  }
  CHECK(eventually([&] { return voters(c, c.node(2)) == "1, 2"; }, 30s));
  c.create_topic("after", 2, c.node(2));

  // Adding it while it is down waits for it to catch up and then gives up: the quorum's own
  // answer, which no shorter timeout on the way cuts off.
  code = c.cli("", {"cluster", "add-voter", "--id", "3", "--endpoint", endpoint3}, c.node(1), &out,
               &err);
  CHECK(code == 1);
  CHECK(err.find("REQUEST_TIMED_OUT") != std::string::npos);
  CHECK(err.find("node 3 did not catch up") != std::string::npos);
  CHECK(voters(c, c.node(2)) == "1, 2");

  // Node 3 comes back with its quorum member (it is still in --controller-quorum) and is added
  // back once it has caught up.
  c.node(3).start();
  {
    const bool added = change_voters(c, {"cluster", "add-voter", "--id", "3", "--endpoint",
                                         endpoint3},
                                     c.node(1), "DUPLICATE_VOTER", &out, &err);
    INFO(out << err);
    REQUIRE(added);
    CHECK((out.find("Added node 3") != std::string::npos ||
           err.find("DUPLICATE_VOTER") != std::string::npos));
  }
  CHECK(eventually([&] { return voters(c, c.node(3)) == "1, 2, 3"; }, 30s));
  c.create_topic("again", 3, c.node(3));
}
