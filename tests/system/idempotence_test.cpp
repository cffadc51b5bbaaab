// The idempotent producer end to end against a cluster of real `capstan node`
// processes (tests/support/node_cluster: three voters on 127.0.0.1): `capstan produce --acks all`
// of a file of unique lines while the partition leader is killed with SIGKILL writes every line
// exactly once and in order, although batches in flight at the kill are resent; and a node that
// crashed after writing a batch deduplicates a resend of it once it leads again, answering with
// the batch's original offset. Run: build/tests/system_tests "[idempotence]".

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/cluster_client.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/node_cluster.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;
const std::string topic = "lines";

std::unique_ptr<client::cluster_client> connect_to(const node_cluster& c) {
  client::client_config cfg;
  cfg.bootstrap.clear();
  for (const auto& n : c.nodes)
    if (n->running()) cfg.bootstrap.push_back(n->bootstrap());
  cfg.request_timeout_ms = 10000;
  cfg.delivery_timeout_ms = 60000;
  auto connected = client::cluster_client::connect(cfg);
  if (!connected) FAIL("cannot connect: " << connected.err().to_string());
  return std::move(*connected);
}

// The partition's log end offset as its leader reports it, or -1 on an error.
int64_t log_end(client::cluster_client& client) {
  auto end = client.list_offsets(topic, 0, -1);
  return end ? *end : -1;
}

} // namespace

TEST_CASE("capstan produce writes every line exactly once and in order across a kill -9 of the "
          "leader, and the crashed node deduplicates a resent batch once it leads again",
          "[system][idempotence]") {
  node_cluster c(binary, 0);
  c.create_topic(topic, 3, c.node(1));
  // The first leader is the preferred replica: after it comes back into the ISR it leads again
  // as soon as the leader after it is fenced (docs/controller.md, "Election rules").
  const int first_leader = c.await_full_isr(topic, c.node(1)).leader;
  INFO("first leader " << first_leader);

  constexpr int line_count = 6000;
  const auto input = c.dir / "lines.txt";
  {
    std::ofstream out(input);
    for (int i = 0; i < line_count; ++i) out << "line-" << i << "\n";
  }
  std::string bootstrap;
  for (const auto& n : c.nodes) bootstrap += (bootstrap.empty() ? "" : ",") + n->bootstrap();
  // A steady stream (100 lines every 50 ms) so that the kill lands while batches are in flight.
  const std::string command =
      "awk '{ print; fflush() } NR % 100 == 0 { system(\"sleep 0.05\") }' '" + input.string() +
      "' | '" + binary + "' produce " + topic + " --acks all --delivery-timeout-ms 60000 " +
      "--request-timeout-ms 10000 --bootstrap " + bootstrap;
  child_process producer("/bin/sh", {"-c", command}, c.dir.path(), "produce");

  auto client = connect_to(c);
  REQUIRE(eventually([&] { return log_end(*client) >= 1000; }, 60s));
  c.node(first_leader).kill();
  const auto code = producer.wait(120s);
  INFO("produce stderr: " << producer.stderr_text());
  REQUIRE(code);
  REQUIRE(*code == 0);

  int survivor = first_leader == 1 ? 2 : 1;
  const auto read = c.consume(topic, c.node(survivor), 0);
  REQUIRE(read.size() == static_cast<size_t>(line_count));
  for (int i = 0; i < line_count; ++i)
    REQUIRE(read[static_cast<size_t>(i)] == "line-" + std::to_string(i));

  // The last batch the producer wrote, as stored: stamped with a producer id and a sequence.
  auto fetched = client->fetch_sync(topic, 0, offset{line_count - 1}, 1 << 20, 1, 0);
  REQUIRE(fetched);
  batch_sequence_reader reader(fetched->records, batch_format::default_max_batch_bytes);
  std::optional<bytes> last_batch;
  offset last_base{-1};
  for (;;) {
    auto next = reader.next();
    REQUIRE(next);
    if (!*next) break;
    last_batch = bytes((*next)->data().begin(), (*next)->data().end());
    last_base = (*next)->base_offset();
    CHECK((*next)->producer_id() >= 0);
    CHECK((*next)->base_sequence() >= 0);
  }
  REQUIRE(last_batch);

  // The first leader comes back, catches up (the batches after its crash arrive by replication),
  // and crashes again with that last batch in its log: its producer state must come from the log.
  c.node(first_leader).start();
  c.await_full_isr(topic, c.node(survivor));
  c.node(first_leader).kill();
  c.node(first_leader).start();
  c.await_full_isr(topic, c.node(survivor));

  // Make the first leader, the preferred replica, lead again. Killing leaders until it was
  // elected failed now and then: a controller that had just taken over elects only nodes it has
  // heard from since (docs/controller.md, "Live means heard from"), and four rounds of kills
  // could all pass it over.
  std::string out, err;
  REQUIRE(eventually(
      [&] {
        c.cli("", {"cluster", "elect-leaders", "--topic", topic}, c.node(survivor), &out, &err);
        auto rows = c.describe(topic, c.node(survivor));
        return rows && rows->at(0).leader == first_leader;
      },
      60s));
  // A resend of that batch, byte for byte as the producer sent it: the original offset, nothing
  // appended.
  set_base_offset(*last_batch, offset{0});
  set_partition_leader_epoch(*last_batch, leader_epoch{-1});
  client = connect_to(c);
  auto resent = client->produce_sync(topic, 0, -1, *last_batch);
  INFO((resent ? std::string() : resent.err().to_string()));
  REQUIRE(resent);
  CHECK(resent->base_offset == last_base);
  CHECK(log_end(*client) == line_count);
}
