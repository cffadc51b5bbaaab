// A consumer that read records an unclean leader election then threw away (real `capstan node`
// processes, tests/support/node_cluster): its next fetch names the leader epoch of what it read
// last, the new leader answers where its log diverged, and the consumer reports the truncation
// and reads the new leader's records from there (KIP-320; docs/protocol.md, "Leader epoch").
// Before, it fetched on at its old position and silently skipped the records the new leader had
// written below it. A consumer that resumes from the group's commit made before the election
// finds the truncation the same way: the commit keeps the leader epoch of the last record read.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "runtime/client/consumer.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"
#include "tests/support/workload.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

std::string lines(const std::string& prefix, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += prefix + std::to_string(i) + "\n";
  return out;
}

// Polls until `count` records were read or 60 s passed; their values.
std::vector<std::string> read_values(client::consumer& c, size_t count) {
  std::vector<std::string> out;
  eventually(
      [&] {
        auto got = c.poll(500ms, count - out.size());
        if (got)
          for (const auto& r : *got) out.emplace_back(r.value->begin(), r.value->end());
        return out.size() >= count;
      },
      60s);
  return out;
}

} // namespace

TEST_CASE("a consumer that read records an unclean election truncated, or resumes from a commit "
          "of them, is told where the log diverged, reports it, and reads the new leader's "
          "records from there",
          "[system][cluster][failover]") {
  node_cluster c(binary, 2); // voters 1-3, broker-only nodes 4 and 5
  c.create_topic("unclean", 2, c.node(1), 1,
                 {"min.insync.replicas=1", "unclean.leader.election.enable=true"});
  std::string out, err;
  // Replicas on nodes 4 and 5, node 4 leading: the voters stay out of it.
  REQUIRE(eventually(
      [&] {
        return c.cli("", {"topic", "reassign", "unclean", "--replicas", "4,5"}, c.node(1), &out,
                     &err) == 0;
      },
      60s));
  REQUIRE(eventually(
      [&] {
        c.cli("", {"cluster", "elect-leaders", "--topic", "unclean"}, c.node(1), &out, &err);
        auto rows = c.describe("unclean", c.node(1));
        return rows && rows->at(0).replicas == std::vector<int>{4, 5} && rows->at(0).leader == 4 &&
               rows->at(0).isr.size() == 2;
      },
      60s));
  REQUIRE(c.cli(lines("kept-", 5), {"produce", "unclean", "--acks", "all"}, c.node(1), &out,
                &err) == 0);
  // Node 5 is down while node 4 alone acknowledges five more (min.insync.replicas=1).
  c.node(5).kill();
  c.await_isr("unclean", c.node(1), {4});
  REQUIRE(c.cli(lines("lost-", 5), {"produce", "unclean", "--acks", "all"}, c.node(1), &out,
                &err) == 0);

  client::client_config config;
  config.request_timeout_ms = 5000;
  config.fetch_max_wait_ms = 100;
  config.auto_offset_reset = client::offset_reset::earliest;
  auto client = connect_to(c, config);
  client::consumer consumer(*client, config, "readers");
  REQUIRE(consumer.assign("unclean").ok());
  const client::topic_partition_key p0{"unclean", 0};
  consumer.seek(p0, offset{0});
  REQUIRE(read_values(consumer, 10).size() == 10);
  REQUIRE(consumer.commit().ok());

  // Node 4 dies; node 5 comes back without the five and is elected uncleanly; eight new records
  // take offsets 5-12, past the consumer's position 10.
  c.node(4).kill();
  c.node(5).start();
  c.await_partition("unclean", c.node(1),
                    [](const node_cluster::partition_row& r) { return r.leader == 5; });
  REQUIRE(eventually(
      [&] {
        return c.cli(lines("new-", 8), {"produce", "unclean", "--acks", "all"}, c.node(1), &out,
                     &err) == 0;
      },
      60s));

  std::vector<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.push_back("new-" + std::to_string(i));
  const auto reads_new_records_after_truncation = [&](client::consumer& reader) {
    CHECK(read_values(reader, 8) == expected);
    const auto resets = reader.take_resets();
    REQUIRE(resets.size() == 1);
    CHECK(resets[0].truncation);
    CHECK(resets[0].from == offset{10});
    CHECK(resets[0].to == offset{5});
  };
  // The consumer that read them, and one that resumes from the group's commit at offset 10.
  reads_new_records_after_truncation(consumer);
  client::consumer resumed(*client, config, "readers");
  REQUIRE(resumed.assign("unclean").ok());
  REQUIRE(resumed.seek_to_committed(true).ok());
  REQUIRE(resumed.position(p0) == offset{10});
  reads_new_records_after_truncation(resumed);
}
