// Kafka's consumer protocol: what capstan's consumers write reads back, and what a Kafka consumer
// writes reads as it means.

#include <catch2/catch.hpp>

#include "runtime/group/consumer_protocol.hpp"

using namespace capstan;

namespace {

bytes of(std::initializer_list<int> values) {
  bytes out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

} // namespace

TEST_CASE("a subscription and an assignment read back as they were written", "[unit][group]") {
  consumer_subscription s{{"orders", "payments"}, of({1, 2}), {{"orders", {0, 3}}}, 7};
  auto read = decode_subscription(encode_subscription(s));
  REQUIRE(read);
  CHECK(*read == s);

  consumer_assignment a{{{"orders", {1, 2}}, {"payments", {0}}}, {}};
  auto back = decode_assignment(encode_assignment(a));
  REQUIRE(back);
  CHECK(*back == a);
}

TEST_CASE("a Kafka consumer's version 0 subscription and a newer version read as Kafka means them",
          "[unit][group]") {
  // Version 0: topics ["t"], null user data.
  auto v0 = decode_subscription(of({0, 0, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff}));
  REQUIRE(v0);
  CHECK(v0->topics == std::vector<std::string>{"t"});
  CHECK(v0->owned.empty());
  CHECK(v0->generation == -1);

  // Version 9 reads as the newest known (3): owned t-[2], generation 4, rack "r1", then fields
  // a later Kafka appended.
  auto v9 = decode_subscription(of({0, 9, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff,  //
                                    0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 2,         //
                                    0, 0, 0, 4, 0, 2, 'r', '1', 0x55}));
  REQUIRE(v9);
  CHECK(v9->owned == topic_partitions{{"t", {2}}});
  CHECK(v9->generation == 4);

  // An empty assignment is what the coordinator gives a member the leader left out.
  auto none = decode_assignment({});
  REQUIRE(none);
  CHECK(none->partitions.empty());
}

TEST_CASE("bytes that are not the consumer protocol are INCONSISTENT_GROUP_PROTOCOL",
          "[unit][group]") {
  for (const auto& bad : {of({}), of({0}), of({0xff, 0xff}),
                          // a topic count of 2 billion in 4 bytes
                          of({0, 0, 0x7f, 0xff, 0xff, 0xff}),
                          // a topic whose string runs past the end
                          of({0, 0, 0, 0, 0, 1, 0, 9, 't'})}) {
    auto s = decode_subscription(bad);
    REQUIRE_FALSE(s);
    CHECK(s.code() == errc::inconsistent_group_protocol);
  }
  auto a = decode_assignment(of({0, 0, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xfe}));
  REQUIRE_FALSE(a);
  CHECK(a.code() == errc::inconsistent_group_protocol);
}
