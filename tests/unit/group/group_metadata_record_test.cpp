#include <catch2/catch.hpp>

#include "actors/group/group_membership.hpp"
#include "actors/group/group_metadata_record.hpp"
#include "actors/group/offset_commit_record.hpp"

using namespace capstan;

namespace {

bytes text(const std::string& s) { return bytes(s.begin(), s.end()); }

group_metadata_value two_members() {
  group_metadata_value v;
  v.protocol_type = "consumer";
  v.generation = 7;
  v.protocol_name = "range";
  v.leader = "a-1";
  v.state_timestamp = 1700000000000;
  v.members = {{"a-1", "", "a", "", 30000, 10000, text("sub a"), text("p0")},
               {"b-2", "instance-b", "b", "", 30000, 10000, text("sub b"), text("p1")}};
  return v;
}

} // namespace

TEST_CASE("group metadata records round-trip in Kafka's layout, and offset commit keys are told "
          "apart from them",
          "[group][record]") {
  auto kb = encode_group_metadata_key("workers");
  CHECK(kb.size() == 2 + 2 + 7);
  CHECK(kb[1] == 2);
  auto k = decode_group_metadata_key(kb);
  REQUIRE(k);
  REQUIRE(*k);
  CHECK(**k == "workers");
  auto commit_key = decode_group_metadata_key(encode_offset_commit_key({"g", "t", 0}));
  REQUIRE(commit_key);
  CHECK_FALSE(*commit_key);

  const auto value = two_members();
  auto vb = encode_group_metadata_value(value);
  CHECK(vb[1] == 3);
  auto v = decode_group_metadata_value(vb);
  REQUIRE(v);
  CHECK(*v == value);

  // A leaderless Empty group: protocol and leader are written as null.
  group_metadata_value empty;
  empty.protocol_type = "consumer";
  empty.generation = 8;
  auto eb = encode_group_metadata_value(empty);
  auto e = decode_group_metadata_value(eb);
  REQUIRE(e);
  CHECK(*e == empty);
}

TEST_CASE("a group record of Kafka's version 0 is read, its session timeout standing for the "
          "rebalance timeout",
          "[group][record]") {
  // int16 0, "consumer", int32 3, "range", "m", int32 1 member: "m", "c", "h", int32 5000,
  // bytes "s", bytes "a"
  const bytes v0 = {0, 0, 0, 8, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r', 0, 0, 0, 3, 0, 5,
                    'r', 'a', 'n', 'g', 'e', 0, 1, 'm', 0, 0, 0, 1, 0, 1, 'm', 0, 1, 'c',
                    0, 1, 'h', 0, 0, 0x13, 0x88, 0, 0, 0, 1, 's', 0, 0, 0, 1, 'a'};
  auto v = decode_group_metadata_value(v0);
  INFO((v ? std::string() : v.err().to_string()));
  REQUIRE(v);
  CHECK(v->generation == 3);
  CHECK(v->leader == "m");
  REQUIRE(v->members.size() == 1);
  CHECK(v->members[0].session_timeout_ms == 5000);
  CHECK(v->members[0].rebalance_timeout_ms == 5000);
  CHECK(v->members[0].client_host == "h");
  CHECK(v->members[0].assignment == text("a"));
}

TEST_CASE("every truncation, extension or bad count of a group record is CORRUPT_MESSAGE",
          "[group][record]") {
  auto kb = encode_group_metadata_key("g");
  auto vb = encode_group_metadata_value(two_members());
  for (size_t n = 0; n < kb.size(); ++n)
    CHECK(decode_group_metadata_key(bytes_view{kb.data(), n}).code() == errc::corrupt_message);
  for (size_t n = 0; n < vb.size(); ++n)
    CHECK(decode_group_metadata_value(bytes_view{vb.data(), n}).code() == errc::corrupt_message);
  vb.push_back(0);
  CHECK(decode_group_metadata_value(vb).code() == errc::corrupt_message);
  kb.push_back(0);
  CHECK(decode_group_metadata_key(kb).code() == errc::corrupt_message);
  // A member count of two billion in a record of a few bytes.
  group_metadata_value none;
  auto nb = encode_group_metadata_value(none);
  nb[nb.size() - 4] = 0x7f;
  CHECK(decode_group_metadata_value(nb).code() == errc::corrupt_message);
  bytes v9 = {0, 9};
  CHECK(decode_group_metadata_value(v9).code() == errc::corrupt_message);
  CHECK(decode_group_metadata_key(bytes{0, 3, 0, 0}).code() == errc::corrupt_message);
}

TEST_CASE("group membership: a group resumed from its record at a new coordinator is Stable with "
          "its members, generation and assignments, and members that stay silent expire",
          "[group][membership]") {
  int ids = 0;
  group_limits limits;
  limits.initial_rebalance_delay_ms = 0;
  auto make = [&] {
    return group_membership("workers", limits,
                            [&](const std::string& c) { return c + "-" + std::to_string(++ids); });
  };
  // A group brought to Stable at its first coordinator, then recorded.
  auto first = make();
  join_group_request join;
  join.client_id = "a";
  join.session_timeout_ms = 10000;
  join.rebalance_timeout_ms = 30000;
  join.protocol_type = "consumer";
  join.protocols = {{"range", text("sub a")}};
  const auto id = first.join(1, join, 0).joins[0].response.member_id;
  join.member_id = id;
  REQUIRE(first.join(2, join, 0).joins[0].response.generation == 1);
  REQUIRE(first.sync(3, {id, {}, 1, {{id, text("p0,p1")}}}, 0).syncs.size() == 1);
  const auto record = first.snapshot(1700000000000);
  CHECK(record.generation == 1);
  CHECK(record.leader == id);
  REQUIRE(record.members.size() == 1);
  CHECK(record.members[0].subscription == text("sub a"));
  CHECK(record.members[0].assignment == text("p0,p1"));

  // The next coordinator resumes it from the record, as read back from its bytes.
  auto decoded = decode_group_metadata_value(encode_group_metadata_value(record));
  REQUIRE(decoded);
  auto next = make();
  next.restore(*decoded, 50000);
  CHECK(next.state() == group_state::stable);
  CHECK(next.generation() == 1);
  CHECK(next.heartbeat({id, {}, 1}, 50000) == errc::none);
  CHECK(next.check_commit({id, {}, 1}) == errc::none);
  auto synced = next.sync(4, {id, {}, 1, {}}, 50000);
  CHECK(synced.syncs[0].response.assignment == text("p0,p1"));
  // Silent for its session: it leaves and the group is Empty in the next generation.
  next.tick(50000 + 9999);
  CHECK(next.state() == group_state::stable);
  next.tick(50000 + 10000);
  CHECK(next.state() == group_state::empty);
  CHECK(next.generation() == 2);

  // An Empty group's record resumes an Empty group.
  auto empty = make();
  empty.restore(next.snapshot(0), 0);
  CHECK(empty.state() == group_state::empty);
  CHECK(empty.generation() == 2);
  CHECK(empty.check_commit({"", {}, -1}) == errc::none);
}
