// The consumer against a cluster_client that answers in memory (tests/support/memory_cluster):
// a poll that fetched records of one partition while another partition's fetch failed hands over
// the records, and the error comes with a later poll; no position moves past a record the caller
// was not given.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/client/consumer.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/memory_cluster.hpp"

using namespace capstan;
using namespace capstan::client;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

std::string value_of(const consumer_record& r) {
  return r.value ? std::string(r.value->begin(), r.value->end()) : std::string();
}

} // namespace

TEST_CASE("a poll whose fetch of one partition failed returns the records another partition "
          "brought, and the error at the next poll",
          "[client][consumer]") {
  client_config config;
  config.auto_offset_reset = offset_reset::none;
  memory_cluster cluster(config, 2);
  // Partition 0 holds three records; partition 1's leader is gone.
  const auto log = make_batch(3, "p0", 1000);
  cluster.fetch_handler = [&](int32_t partition, offset from) -> result<fetch_response> {
    if (partition == 1)
      return make_error(errc::not_leader_or_follower, "partition 1 has no leader here");
    fetch_response r;
    r.high_watermark = offset{3};
    if (from.value() == 0) r.records = log;
    return r;
  };

  consumer c(cluster, config);
  REQUIRE(c.assign(memory_cluster::topic).ok());
  const topic_partition_key p0{memory_cluster::topic, 0}, p1{memory_cluster::topic, 1};
  c.seek(p0, offset{0});
  c.seek(p1, offset{0});

  auto first = c.poll(100ms);
  INFO((first ? std::string() : first.err().to_string()));
  REQUIRE(first);
  REQUIRE(first->size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK((*first)[static_cast<size_t>(i)].off.value() == i);
    CHECK(value_of((*first)[static_cast<size_t>(i)]) == "p0-" + std::to_string(i));
  }
  CHECK(c.position(p0) == offset{3});
  CHECK(c.position(p1) == offset{0});

  // Nothing more in partition 0: the failed partition's error is what this poll has.
  auto second = c.poll(100ms);
  REQUIRE_FALSE(second);
  CHECK(second.code() == errc::not_leader_or_follower);
  CHECK(c.position(p1) == offset{0});
}
