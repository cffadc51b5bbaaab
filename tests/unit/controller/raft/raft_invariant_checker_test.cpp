// The simulation's checker must itself catch what it checks: hand-made histories that break
// each invariant, including Raft's figure 8, where a leader that commits an entry of an older
// term by counting replicas (the rule §5.4.2 forbids) lets a later leader overwrite it.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/controller/raft/raft_invariant_checker.hpp"

namespace capstan::raft::test {
namespace {

bytes b(const std::string& s) {
  return bytes(s.begin(), s.end());
}

entry e(uint64_t term, uint64_t index, const std::string& data) {
  return entry{raft_term{term}, log_index{index}, b(data)};
}

// The view points into `log`, which must outlive it.
node_view view(int id, role r, uint64_t term, uint64_t commit, const std::vector<entry>& log) {
  return node_view{node_id{id}, r, raft_term{term}, log_index{commit}, snapshot_meta{}, log};
}

std::vector<node_id> ids(std::initializer_list<int> xs) {
  std::vector<node_id> out;
  for (int x : xs) out.push_back(node_id{x});
  return out;
}

} // namespace

TEST_CASE("the checker accepts a healthy history", "[raft][checker]") {
  raft_invariant_checker c;
  const std::vector<entry> log{e(1, 1, ""), e(1, 2, "a")};
  const std::vector<entry> shorter{log[0]};
  std::vector<node_view> up{view(1, role::leader, 1, 2, log), view(2, role::follower, 1, 2, log),
                            view(3, role::follower, 1, 1, shorter)};
  CHECK_FALSE(c.check(up, ids({1, 2, 3})));
  CHECK_FALSE(c.on_apply(node_id{1}, log_index{1}, {}));
  CHECK_FALSE(c.on_apply(node_id{1}, log_index{2}, b("a")));
  CHECK_FALSE(c.on_apply(node_id{2}, log_index{1}, {}));
}

TEST_CASE("the checker catches two leaders in one term", "[raft][checker]") {
  raft_invariant_checker c;
  CHECK_FALSE(c.check(std::vector<node_view>{view(1, role::leader, 3, 0, {})}, {}));
  // Node 1 is gone; much later node 2 claims the same term.
  auto bad = c.check(std::vector<node_view>{view(2, role::leader, 3, 0, {})}, {});
  REQUIRE(bad);
  CHECK_THAT(*bad, Catch::Contains("election safety"));
}

TEST_CASE("the checker catches logs that agree on a term but not on the prefix",
          "[raft][checker]") {
  raft_invariant_checker c;
  const std::vector<entry> a{e(1, 1, "x"), e(2, 2, "y")};
  const std::vector<entry> d{e(1, 1, "z"), e(2, 2, "y")};
  auto bad = c.check(
      std::vector<node_view>{view(1, role::follower, 2, 0, a), view(2, role::follower, 2, 0, d)},
      ids({1}));
  REQUIRE(bad);
  CHECK_THAT(*bad, Catch::Contains("log matching"));
}

TEST_CASE("the checker catches figure 8: an old-term entry committed by counting replicas",
          "[raft][checker]") {
  // Raft paper, figure 8, with 3 nodes. (a) S1 leads term 2 and gets entry 2 (term 2) to itself
  // only. (b) S1 crashes; S3 leads term 3 with entry 2 (term 3) that no one else has.
  // (c) S1 leads term 4 and copies its entry 2 (term 2) to S2: on 2 of 3 nodes. The broken rule
  // commits it now, by counting replicas.
  raft_invariant_checker c;
  const std::vector<entry> s1{e(1, 1, ""), e(2, 2, "from-term-2"), e(4, 3, "")};
  const std::vector<entry> s2{e(1, 1, ""), e(2, 2, "from-term-2")};
  const std::vector<entry> s3{e(1, 1, ""), e(3, 2, "from-term-3")};
  CHECK_FALSE(c.check(std::vector<node_view>{view(3, role::leader, 3, 1, s3)}, ids({3})));
  CHECK_FALSE(c.check(
      std::vector<node_view>{view(1, role::leader, 4, 2, s1), view(2, role::follower, 4, 1, s2)},
      ids({1, 2})));
  // (d) S1 crashes; S3 (last term 3 beats S2's 2) wins term 5 with S2's vote and would
  // overwrite index 2: its log lacks the entry "committed" in term 4.
  auto bad = c.check(
      std::vector<node_view>{view(2, role::follower, 5, 1, s2), view(3, role::leader, 5, 1, s3)},
      ids({3}));
  REQUIRE(bad);
  CHECK_THAT(*bad, Catch::Contains("leader completeness"));
}

TEST_CASE("the checker catches two nodes applying different data at one index", "[raft][checker]") {
  raft_invariant_checker c;
  CHECK_FALSE(c.on_apply(node_id{1}, log_index{1}, b("a")));
  auto bad = c.on_apply(node_id{2}, log_index{1}, b("b"));
  REQUIRE(bad);
  CHECK_THAT(*bad, Catch::Contains("state machine safety"));

  SECTION("also through a snapshot") {
    const std::vector<bytes> snap{b("c")};
    auto via_snapshot = c.on_snapshot_loaded(node_id{3}, snap);
    REQUIRE(via_snapshot);
    CHECK_THAT(*via_snapshot, Catch::Contains("state machine safety"));
  }
}

TEST_CASE("the checker catches an application that skips an index", "[raft][checker]") {
  raft_invariant_checker c;
  CHECK_FALSE(c.on_apply(node_id{1}, log_index{1}, b("a")));
  CHECK(c.on_apply(node_id{1}, log_index{3}, b("c")));
}

TEST_CASE("the checker catches a commit index or term that goes back", "[raft][checker]") {
  raft_invariant_checker c;
  const std::vector<entry> log{e(1, 1, ""), e(1, 2, "a")};
  CHECK_FALSE(c.check(std::vector<node_view>{view(1, role::follower, 2, 2, log)}, {}));
  SECTION("commit") {
    auto bad = c.check(std::vector<node_view>{view(1, role::follower, 2, 1, log)}, {});
    REQUIRE(bad);
    CHECK_THAT(*bad, Catch::Contains("commit index"));
  }
  SECTION("term") {
    auto bad = c.check(std::vector<node_view>{view(1, role::follower, 1, 2, log)}, {});
    REQUIRE(bad);
    CHECK_THAT(*bad, Catch::Contains("term"));
  }
  SECTION("a restart resets the commit index but not the term it promised") {
    c.on_sent(node_id{1}, vote_response{raft_term{2}, true});
    CHECK_FALSE(c.on_start(node_id{1}, raft_term{2}));
    CHECK_FALSE(c.check(std::vector<node_view>{view(1, role::follower, 2, 0, log)}, {}));
    auto bad = c.on_start(node_id{1}, raft_term{1});
    REQUIRE(bad);
    CHECK_THAT(*bad, Catch::Contains("term not durable"));
  }
}

} // namespace capstan::raft::test
