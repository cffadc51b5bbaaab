// The consumer against a cluster_client that answers in memory (tests/support/memory_cluster):
// a poll that fetched records of one partition while another partition's fetch failed hands over
// the records, and the error comes with a later poll; no position moves past a record the caller
// was not given.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
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
  cluster.fetch_handler = [&](int32_t partition, offset from,
                              leader_epoch) -> result<fetch_response> {
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

namespace {

// Two batches of partition 0 as a fetch returns them (offsets 0-2 and 3-5, padded between),
// with one bit of the second batch's record "second-1" flipped ('s' -> 'S') after its CRC was
// computed, as a disk or a link might.
bytes with_damaged_second_batch() {
  bytes first = make_batch(3, "first", 1000);
  bytes second = make_batch(3, "second", 1000);
  set_base_offset(second, offset{3});
  const std::string target = "second-1";
  auto at = std::search(second.begin(), second.end(), target.begin(), target.end());
  REQUIRE(at != second.end());
  *at ^= 0x20;
  bytes out = first;
  out.resize(batch_format::align_up(out.size()), 0);
  out.insert(out.end(), second.begin(), second.end());
  return out;
}

} // namespace

TEST_CASE("a consumer checks each fetched batch's CRC and fails with CORRUPT_MESSAGE before "
          "handing over any record of a damaged one",
          "[client][consumer]") {
  client_config config;
  REQUIRE(config.check_crcs);
  memory_cluster cluster(config, 1);
  const auto log = with_damaged_second_batch();
  const auto second_at =
      static_cast<std::ptrdiff_t>(batch_format::align_up(make_batch(3, "first", 1000).size()));
  cluster.fetch_handler = [&](int32_t, offset from, leader_epoch) -> result<fetch_response> {
    fetch_response r;
    r.high_watermark = offset{6};
    // From the batch that holds `from`, as a log read answers.
    if (from.value() == 0) r.records = log;
    if (from.value() == 3) r.records = bytes(log.begin() + second_at, log.end());
    return r;
  };
  consumer c(cluster, config);
  REQUIRE(c.assign(memory_cluster::topic).ok());
  const topic_partition_key p0{memory_cluster::topic, 0};
  c.seek(p0, offset{0});

  auto first = c.poll(100ms);
  REQUIRE(first);
  REQUIRE(first->size() == 3);
  CHECK(value_of(first->back()) == "first-2");
  CHECK(c.position(p0) == offset{3});

  auto damaged = c.poll(100ms);
  REQUIRE_FALSE(damaged);
  INFO(damaged.err().to_string());
  CHECK(damaged.code() == errc::corrupt_message);
  CHECK(damaged.err().message.find("partition t-0 at offset 3") != std::string::npos);
  CHECK(damaged.err().message.find("CRC-32C mismatch") != std::string::npos);
  CHECK(c.position(p0) == offset{3});
}

TEST_CASE("a consumer with check_crcs off hands over a damaged batch's records as they came",
          "[client][consumer]") {
  client_config config;
  config.check_crcs = false;
  memory_cluster cluster(config, 1);
  const auto log = with_damaged_second_batch();
  cluster.fetch_handler = [&](int32_t, offset from, leader_epoch) -> result<fetch_response> {
    fetch_response r;
    r.high_watermark = offset{6};
    if (from.value() == 0) r.records = log;
    return r;
  };
  consumer c(cluster, config);
  REQUIRE(c.assign(memory_cluster::topic).ok());
  c.seek(topic_partition_key{memory_cluster::topic, 0}, offset{0});
  auto all = c.poll(100ms);
  REQUIRE(all);
  REQUIRE(all->size() == 6);
  CHECK(value_of((*all)[4]) == "Second-1");
}

namespace {

// Offsets 0-9 of partition 0, written by the leader of epoch 3.
bytes epoch_three_batch() {
  bytes b = make_batch(10, "lost", 1000);
  set_partition_leader_epoch(b, leader_epoch{3});
  return b;
}

} // namespace

TEST_CASE("a consumer whose fetch finds the log diverged from what it read moves back to where it "
          "diverged and reports a truncation, or with no offset reset fails until it seeks",
          "[client][consumer]") {
  for (const auto reset : {offset_reset::earliest, offset_reset::none}) {
    INFO("auto_offset_reset none: " << (reset == offset_reset::none));
    client_config config;
    config.auto_offset_reset = reset;
    memory_cluster cluster(config, 1);
    const auto log = epoch_three_batch();
    std::vector<int32_t> named;
    // The new leader (epoch 5) holds epoch 3 only up to offset 6: 6-9 were lost.
    cluster.fetch_handler = [&](int32_t, offset from,
                                leader_epoch last) -> result<fetch_response> {
      named.push_back(last.value());
      fetch_response r;
      r.high_watermark = offset{10};
      if (last == leader_epoch{3} && from > offset{6}) {
        r.diverging_epoch = leader_epoch{3};
        r.diverging_end = offset{6};
      } else if (from == offset{0}) {
        r.records = log;
      }
      return r;
    };
    consumer c(cluster, config);
    REQUIRE(c.assign(memory_cluster::topic).ok());
    const topic_partition_key p0{memory_cluster::topic, 0};
    c.seek(p0, offset{0});
    auto first = c.poll(100ms);
    REQUIRE(first);
    CHECK(first->size() == 10);
    CHECK(named == std::vector<int32_t>{-1});

    auto second = c.poll(100ms, 100);
    CHECK(named.back() == 3);
    if (reset == offset_reset::none) {
      REQUIRE_FALSE(second);
      CHECK(second.code() == errc::offset_out_of_range);
      CHECK(second.err().message.find("log truncation detected") != std::string::npos);
      CHECK(c.position(p0) == offset{10});
      CHECK(c.take_resets().empty());
      continue;
    }
    REQUIRE(second);
    CHECK(c.position(p0) == offset{6});
    const auto resets = c.take_resets();
    REQUIRE(resets.size() == 1);
    CHECK(resets[0].truncation);
    CHECK(resets[0].from == offset{10});
    CHECK(resets[0].to == offset{6});
    // A seek forgets the epoch: nothing was read at the new position.
    c.seek(p0, offset{0});
    REQUIRE(c.poll(100ms, 1));
    CHECK(named.back() == -1);
  }
}
