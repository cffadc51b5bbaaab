// Replacing a lost controller on a cluster of real `capstan node` processes (three bootstrap
// voters, tests/support/node_cluster), through the real CLI: node 4 starts with
// --process-roles broker,controller and becomes a voter with `cluster add-voter`; voter 1 is
// killed for good and removed with `cluster remove-voter`; then voter 2 dies too, and the two
// voters left (3 and 4) still run the cluster. Finally every node is killed and only 3 and 4
// come back: they find each other from the voter set in their logs, although node 4 is in no
// node's --controller-quorum.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/eventually.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// `count` records "<prefix>-i" produced with acks=all through `via`.
std::vector<std::string> produce(node_cluster& c, const std::string& topic,
                                 const std::string& prefix, int count, const node_process& via) {
  std::vector<std::string> values;
  std::string input;
  for (int i = 0; i < count; ++i) {
    values.push_back(prefix + "-" + std::to_string(i));
    input += values.back() + "\n";
  }
  std::string out, err;
  const int code = c.cli(input, {"produce", topic, "--acks", "all"}, via, &out, &err);
  INFO(err);
  REQUIRE(code == 0);
  return values;
}

// The voters `cluster describe` through `via` shows, as its "Voters:" line says; empty when the
// CLI fails.
std::string voters_line(node_cluster& c, const node_process& via) {
  std::string out, err;
  if (c.cli("", {"cluster", "describe"}, via, &out, &err) != 0) return {};
  const auto at = out.find("Voters:");
  if (at == std::string::npos) return {};
  return out.substr(at, out.find('\n', at) - at);
}

// Retries a voter change while the quorum is busy (an election, another change, a learner
// catching up): the CLI's exit code once it is not REQUEST_TIMED_OUT or NOT_CONTROLLER.
int change_voters(node_cluster& c, const std::vector<std::string>& args, const node_process& via,
                  std::string* out, std::string* err) {
  int code = -1;
  eventually(
      [&] {
        code = c.cli("", args, via, out, err);
        return code == 0 || (err->find("REQUEST_TIMED_OUT") == std::string::npos &&
                             err->find("NOT_CONTROLLER") == std::string::npos);
      },
      60s);
  return code;
}

// Until the active controller, asked through `via`, shows every node of `ids` fenced.
void await_fenced(node_cluster& c, const node_process& via, const std::vector<int>& ids) {
  std::string nodes;
  const bool fenced = eventually(
      [&] {
        nodes = c.registered_nodes(via);
        for (int id : ids)
          if (nodes.find("\t" + std::to_string(id) + "\tfenced") == std::string::npos) return false;
        return true;
      },
      30s);
  INFO("registered nodes through node " << via.id() << ":\n" << untabbed(nodes));
  CHECK(fenced);
}

} // namespace

TEST_CASE("a lost controller is replaced with cluster add-voter and remove-voter, and the "
          "cluster survives the loss of a second bootstrap voter and a crash of every node",
          "[system][quorum][voters]") {
  node_cluster c(binary, 0);
  c.create_topic("kept", 3, c.node(1));
  auto acked = produce(c, "kept", "before", 30, c.node(1));

  // Node 4 runs a quorum member that is no voter; its cluster listener stays put across restarts.
  auto options = c.options(4);
  options.cluster_listen = "127.0.0.1:" + std::to_string(free_port());
  options.extra_args.push_back("--process-roles");
  options.extra_args.push_back("broker,controller");
  node_process fourth(c.dir, 4, options);
  fourth.start();

  std::string out, err;
  // Refusals first: they change nothing.
  int code = c.cli("", {"cluster", "add-voter", "--id", "2", "--endpoint",
                        "127.0.0.1:" + std::to_string(c.node(2).cluster_port())},
                   c.node(1), &out, &err);
  CHECK(code == 1);
  CHECK(err.find("DUPLICATE_VOTER") != std::string::npos);
  code = c.cli("", {"cluster", "remove-voter", "--id", "9"}, c.node(1), &out, &err);
  CHECK(code == 1);
  CHECK(err.find("VOTER_NOT_FOUND") != std::string::npos);

  code = change_voters(c,
                       {"cluster", "add-voter", "--id", "4", "--endpoint",
                        "127.0.0.1:" + std::to_string(fourth.cluster_port())},
                       c.node(2), &out, &err);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(eventually([&] { return voters_line(c, c.node(3)).find("1, 2, 3, 4") != std::string::npos; },
                   30s));

  // Voter 1's machine is lost for good.
  c.node(1).kill();
  code = change_voters(c, {"cluster", "remove-voter", "--id", "1"}, c.node(2), &out, &err);
  INFO(out << err);
  REQUIRE(code == 0);
  CHECK(eventually([&] { return voters_line(c, fourth).find("2, 3, 4") != std::string::npos; },
                   30s));
  CHECK(c.consume("kept", c.node(2), acked.size()) == acked);

  // Then voter 2 dies too: of the bootstrap voters only 3 is left, and with 4 it is a majority of
  // {2, 3, 4}. The controller still takes topics, and acks=all writes go on.
  c.node(2).kill();
  // Placed only once the controller fenced both: until their sessions ran out it counts them
  // live, as Kafka's does.
  await_fenced(c, fourth, {1, 2});
  c.create_topic("after", 2, fourth);
  c.await_full_isr("after", fourth);
  auto later = produce(c, "after", "after", 30, fourth);

  // A crash of every node; only 3 and 4 come back. Node 4 is in nobody's --controller-quorum:
  // node 3 finds it from its voter set, and the other way round.
  c.node(3).kill();
  fourth.kill();
  c.node(3).start();
  fourth.start();
  await_fenced(c, c.node(3), {1, 2});
  c.create_topic("restarted", 2, c.node(3));
  c.await_full_isr("restarted", c.node(3));
  produce(c, "restarted", "restarted", 10, c.node(3));
  const auto read = c.consume("after", fourth, later.size());
  CHECK(read == later);
  CHECK(voters_line(c, c.node(3)).find("2, 3, 4") != std::string::npos);
  fourth.kill();
}
