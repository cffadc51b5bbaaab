// `cluster describe`'s quorum part: voters' reports merged into one description (unanswered
// voters unreachable, the newest active controller's nodes) and its text form.

#include <catch2/catch.hpp>

#include "runtime/cluster/cluster_description.hpp"

using namespace capstan;

namespace {

voter_state voter(int32_t node, const char* role, int64_t term, bool active,
                  std::vector<registered_node> nodes = {}, std::vector<int32_t> voters = {}) {
  voter_state s;
  s.node = node;
  s.role = role;
  s.term = term;
  s.commit_index = 10 * term;
  s.leader = active ? node : -1;
  s.active = active;
  s.nodes = std::move(nodes);
  s.voters = std::move(voters);
  return s;
}

} // namespace

TEST_CASE("merged voter answers list every member by id, an unanswered one as unreachable",
          "[cluster][describe]") {
  std::vector<voter_answer> answers{
      {3, voter(3, "follower", 4, false), {}},
      {1, std::nullopt, "connection refused"},
      {2, voter(2, "leader", 4, true, {{4, true, 7, {}}, {2, false, 5, {}}}), {}},
  };
  auto d = merge_voter_answers(answers);
  REQUIRE(d.members.size() == 3);
  CHECK(d.members[0].node == 1);
  CHECK_FALSE(d.members[0].reachable);
  CHECK(d.members[0].failure == "connection refused");
  CHECK(d.members[1].node == 2);
  CHECK(d.members[1].role == "leader");
  CHECK(d.members[1].commit_index == 40);
  CHECK(d.members[2].role == "follower");
  CHECK(d.active_controller == 2);
  REQUIRE(d.nodes_known);
  REQUIRE(d.nodes.size() == 2);
  CHECK(d.nodes[0].node == 2);
  CHECK_FALSE(d.nodes[0].fenced);
  CHECK(d.nodes[1].node == 4);
  CHECK(d.nodes[1].fenced);
}

TEST_CASE("of two voters that report themselves active the newer term is the active controller",
          "[cluster][describe]") {
  std::vector<voter_answer> answers{
      {1, voter(1, "leader", 3, true, {{1, false, 1, {}}}), {}},
      {2, voter(2, "leader", 5, true, {{1, true, 1, {}}, {2, false, 2, {}}}), {}},
  };
  auto d = merge_voter_answers(answers);
  CHECK(d.active_controller == 2);
  CHECK(d.nodes.size() == 2);
}

TEST_CASE("without an active voter the registered nodes are unknown", "[cluster][describe]") {
  auto d = merge_voter_answers({{1, voter(1, "candidate", 2, false), {}}, {2, std::nullopt, ""}});
  CHECK(d.active_controller == -1);
  CHECK_FALSE(d.nodes_known);
  CHECK(d.members[1].failure == "no answer");
  auto text = format_cluster_description(d);
  CHECK(text.find("Active controller: none\n") != std::string::npos);
  CHECK(text.find("\t2\tunreachable\t(no answer)\n") != std::string::npos);
  CHECK(text.find("Registered nodes: unknown") != std::string::npos);
}

TEST_CASE("the description's text has one line per member and per registered node",
          "[cluster][describe]") {
  registered_node n{4, false, 9, {}};
  n.incarnation[0] = 0xab;
  n.incarnation[15] = 0x01;
  auto d = merge_voter_answers({{1, voter(1, "leader", 2, true, {n}, {1, 2, 4}), {}}});
  CHECK(format_cluster_description(d) ==
        "Active controller: 1\n"
        "Voters: 1, 2, 4\n"
        "Quorum members:\n"
        "\t1\tleader\tTerm: 2\tCommit index: 20\tLeader: 1\n"
        "Registered nodes:\n"
        "\t4\tunfenced\tBroker epoch: 9\tIncarnation: ab000000000000000000000000000001\n");
  CHECK(format_cluster_description(cluster_description{}).rfind("Quorum: none", 0) == 0);
}

TEST_CASE("the voters are the active controller's, else those of the member of the highest term "
          "and commit index",
          "[cluster][describe]") {
  auto active = merge_voter_answers({
      {1, voter(1, "follower", 6, false, {}, {1, 2, 3}), {}},
      {2, voter(2, "leader", 5, true, {}, {4, 2, 1}), {}},
  });
  CHECK(active.voters == std::vector<int32_t>{1, 2, 4});

  auto behind = voter(3, "follower", 6, false, {}, {1, 2, 3});
  behind.commit_index = 50;
  auto ahead = voter(1, "follower", 6, false, {}, {1, 2});
  ahead.commit_index = 70;
  auto none_active = merge_voter_answers({{3, behind, {}}, {1, ahead, {}}, {2, std::nullopt, ""}});
  CHECK(none_active.voters == std::vector<int32_t>{1, 2});

  auto unanswered = merge_voter_answers({{1, std::nullopt, "refused"}});
  CHECK(unanswered.voters.empty());
  CHECK(format_cluster_description(unanswered).find("Voters: unknown") != std::string::npos);
}
