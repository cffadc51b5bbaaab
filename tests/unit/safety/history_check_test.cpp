// The history checks of the failure tests (tests/support/history_check.hpp): each of Jepsen's
// anomaly names is found in a history made to have it, and a clean history has none.

#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/support/history_check.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

read_record rec(int64_t off, const std::string& value) {
  return read_record{offset{off}, std::nullopt, value, 0};
}

acked_record ack(const std::string& value, int sent, int64_t off) {
  return acked_record{value, sent, off, {}, {}};
}

// Offsets 0..3 holding a, b, c, d, all acknowledged in order, read by one consumer and held by
// two replicas.
partition_history clean() {
  partition_history h;
  h.tp = {"t", 0};
  h.acked = {{ack("a", 0, 0), ack("b", 1, 1), ack("c", 2, 2), ack("d", 3, 3)}};
  h.final_read = {rec(0, "a"), rec(1, "b"), rec(2, "c"), rec(3, "d")};
  h.consumed = {h.final_read};
  h.replicas = {{1, h.final_read}, {2, h.final_read}};
  return h;
}

std::vector<std::string> kinds(const partition_history& h) {
  std::vector<std::string> out;
  for (const auto& a : check_partition(h)) out.push_back(a.kind);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

using kinds_t = std::vector<std::string>;

} // namespace

TEST_CASE("a history without faults has no anomaly", "[unit][safety]") {
  CHECK(check_partition(clean()).empty());
}

TEST_CASE("an acknowledged record missing from the final read is a lost write", "[unit][safety]") {
  auto h = clean();
  h.acked[0].push_back(ack("e", 4, 4));
  h.acked[0].push_back(ack("f", 5, -1));
  h.consumed.clear();
  const auto found = check_partition(h);
  CHECK(found.size() == 2);
  CHECK(kinds(h) == kinds_t{"lost-write"});
}

TEST_CASE("one value at two offsets is a duplicate, in the final read or on a replica",
          "[unit][safety]") {
  auto h = clean();
  h.replicas[1].second.push_back(rec(4, "b"));
  CHECK(kinds(h) == kinds_t{"duplicate"});
}

TEST_CASE("one offset with two values is inconsistent-offsets: an acknowledgement, a consumer "
          "or a replica against the final read",
          "[unit][safety]") {
  auto acked = clean();
  acked.acked[0][1].offset = 2;
  CHECK(kinds(acked) == kinds_t{"inconsistent-offsets", "nonmonotonic"});
  auto consumed = clean();
  consumed.consumed[0][2] = rec(2, "x");
  CHECK(kinds(consumed) == kinds_t{"inconsistent-offsets", "unseen"});
  auto replica = clean();
  replica.replicas[0].second.pop_back();
  CHECK(kinds(replica) == kinds_t{"inconsistent-offsets"});
}

TEST_CASE("a consumer going back, or one producer's records acknowledged out of send order, is "
          "nonmonotonic",
          "[unit][safety]") {
  auto consumer = clean();
  consumer.consumed[0].push_back(rec(1, "b"));
  CHECK(kinds(consumer) == kinds_t{"nonmonotonic"});
  auto producer = clean();
  producer.acked[0][2].sent = 5;
  CHECK(kinds(producer) == kinds_t{"nonmonotonic"});
}

TEST_CASE("a consumer jumping over offsets the final read has is a poll-skip, and what only it "
          "missed is unseen",
          "[unit][safety]") {
  auto h = clean();
  h.consumed[0].erase(h.consumed[0].begin() + 1);
  CHECK(kinds(h) == kinds_t{"poll-skip", "unseen"});
}

TEST_CASE("an acknowledged record below the end that no consumer read is unseen, and one read by "
          "any consumer is not",
          "[unit][safety]") {
  auto h = clean();
  h.consumed[0].pop_back();
  CHECK(kinds(h) == kinds_t{"unseen"});
  h.consumed.push_back(h.final_read);
  CHECK(check_partition(h).empty());
}
