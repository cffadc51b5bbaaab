// A node whose disk fails under one partition (runtime/storage/fault_injection_env): that
// partition goes offline with KAFKA_STORAGE_ERROR, the node keeps serving the others, and the
// failed partition's log is intact when the node restarts on a healthy disk.

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

#include "actors/node/node.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/http_get.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/loopback_node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

std::vector<read_record> fetch_all(client::cluster_client& c, const std::string& topic) {
  auto f = c.fetch_sync(topic, 0, offset{0}, 1 << 20, 1, 0);
  INFO((f ? std::string() : f.err().to_string()));
  REQUIRE(f);
  return records_of(f->records);
}

// Produces to the failed partition until the node answers for it from its offline replica (the
// first produce may meet the failing log itself); returns that answer. Bounded by 20 s.
error offline_answer(client::cluster_client& c, const std::string& topic) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    auto p = c.produce_sync(topic, 0, -1, make_batch(1, "refused", 1000));
    REQUIRE_FALSE(p);
    if (p.err().message.find("is offline") != std::string::npos ||
        std::chrono::steady_clock::now() > deadline)
      return p.err();
    std::this_thread::sleep_for(20ms);
  }
}

// Breaks `op` of partition a-0 with `err`, then checks that a-0 is offline with a message naming
// it and the failure, that b-0 keeps taking produce and fetch, and that a-0 is whole after a
// restart without the fault.
void check_partition_goes_offline(std::map<std::string, std::string> a_configs, storage_op op,
                                  int err, const std::string& err_text) {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  {
    auto n = node::start(loopback_node_config(dir.path()));
    REQUIRE(n);
    auto client = connect_client(**n);
    REQUIRE(client->create_topic(topic_spec{"a", 1, 1, a_configs}));
    REQUIRE(client->create_topic(topic_spec{"b", 1, 1, {}}));
    REQUIRE(client->produce_sync("a", 0, -1, make_batch(2, "a-kept", 1000)));
    REQUIRE(client->produce_sync("b", 0, -1, make_batch(1, "b-first", 1000)));

    faults.fail("/a-0/", op, err);
    auto first = client->produce_sync("a", 0, -1, make_batch(1, "a-lost", 1000));
    REQUIRE_FALSE(first);
    CHECK(first.code() == errc::kafka_storage_error);
    CHECK(first.err().message.find(err_text) != std::string::npos);

    auto offline = offline_answer(*client, "a");
    INFO(offline.to_string());
    CHECK(offline.code == errc::kafka_storage_error);
    CHECK(offline.message.find("a-0 on node 1 is offline") != std::string::npos);
    CHECK(offline.message.find(err_text) != std::string::npos);
    auto fetched = client->fetch_sync("a", 0, offset{0}, 1 << 20, 1, 0);
    REQUIRE_FALSE(fetched);
    CHECK(fetched.code() == errc::kafka_storage_error);
    CHECK(fetched.err().message.find("a-0 on node 1 is offline") != std::string::npos);

    auto b = client->produce_sync("b", 0, -1, make_batch(1, "b-second", 1000));
    INFO((b ? std::string() : b.err().to_string()));
    REQUIRE(b);
    CHECK(b->base_offset == offset{1});
    auto b_records = fetch_all(*client, "b");
    REQUIRE(b_records.size() == 2);
    CHECK(b_records[1].value == "b-second-0");
    client.reset();
    (*n)->stop();
  }
  faults.clear();
  auto n = node::start(loopback_node_config(dir.path()));
  REQUIRE(n);
  auto client = connect_client(**n);
  // A failed write left nothing; a failed fsync may leave the unacknowledged record (it was
  // written, only its durability is unknown), as Kafka may.
  auto a_records = fetch_all(*client, "a");
  REQUIRE(a_records.size() >= 2);
  REQUIRE(a_records.size() <= (op == storage_op::write ? 2u : 3u));
  CHECK(a_records[0].value == "a-kept-0");
  CHECK(a_records[1].value == "a-kept-1");
  if (a_records.size() == 3) CHECK(a_records[2].value == "a-lost-0");
  auto again = client->produce_sync("a", 0, -1, make_batch(1, "a-again", 1000));
  INFO((again ? std::string() : again.err().to_string()));
  REQUIRE(again);
  CHECK(again->base_offset == offset{static_cast<int64_t>(a_records.size())});
  client.reset();
  (*n)->stop();
}

// A node on a fresh data dir whose file operations go through `faults`, and a client of it;
// both are stopped before the env is put back.
struct faulty_node {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed{faults};
  std::unique_ptr<node> n = started(dir.path());
  std::unique_ptr<client::cluster_client> client = connect_client(*n);

  static std::unique_ptr<node> started(const std::filesystem::path& data_dir) {
    auto n = node::start(loopback_node_config(data_dir));
    REQUIRE(n);
    return std::move(*n);
  }
  ~faulty_node() {
    client.reset();
    n->stop();
  }
};

} // namespace

TEST_CASE("EIO on a partition's log write takes that partition offline, the node serves the rest",
          "[cluster][storage]") {
  check_partition_goes_offline({}, storage_op::write, EIO, "Input/output error");
}

TEST_CASE("ENOSPC on a partition's fsync takes that partition offline, the node serves the rest",
          "[cluster][storage]") {
  check_partition_goes_offline({{"flush.messages", "1"}}, storage_op::sync, ENOSPC,
                               "No space left on device");
}

// Before: the replica died with its log and dropped the parked fetch's promise, so the client
// heard REQUEST_TIMED_OUT only once the fetch's maxWaitMs had passed.
TEST_CASE("a fetch parked on a partition whose disk fails is answered KAFKA_STORAGE_ERROR, not "
          "left to time out",
          "[cluster][storage]") {
  faulty_node f;
  auto& client = f.client;
  REQUIRE(client->create_topic(topic_spec{"a", 1, 1, {}}));
  REQUIRE(client->produce_sync("a", 0, -1, make_batch(1, "a-kept", 1000)));

  // Waits at the high watermark for more than will ever come, far longer than the test runs.
  auto parked = std::async(std::launch::async, [&node = *f.n] {
    auto waiter = connect_client(node);
    return waiter->fetch_sync("a", 0, offset{1}, 1 << 20, 1 << 20, 30000);
  });
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (scrape_metrics(f.n->metrics_port()).find("\ncapstan_rpc_parked_fetches 1") ==
         std::string::npos) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(20ms);
  }

  f.faults.fail("/a-0/", storage_op::write, EIO);
  auto failed = client->produce_sync("a", 0, -1, make_batch(1, "a-lost", 1000));
  REQUIRE_FALSE(failed);
  CHECK(failed.code() == errc::kafka_storage_error);

  REQUIRE(parked.wait_for(60s) == std::future_status::ready);
  auto fetched = parked.get();
  REQUIRE_FALSE(fetched);
  INFO(fetched.err().to_string());
  CHECK(fetched.code() == errc::kafka_storage_error);
  CHECK(fetched.err().message.find("Input/output error") != std::string::npos);
}

// The node's controller places the partition as on any cluster (Kafka's way): the replica that
// cannot be made is reported offline, and the topic's other partitions serve.
TEST_CASE("a new partition whose directory cannot be made is offline with KAFKA_STORAGE_ERROR, "
          "the topic's others serve",
          "[cluster][storage]") {
  faulty_node f;
  auto& client = f.client;
  f.faults.fail("/c-0", storage_op::mkdir, ENOSPC);
  f.faults.fail("/c-3", storage_op::mkdir, ENOSPC);
  REQUIRE(client->create_topic(topic_spec{"c", 2, 1, {}}));
  REQUIRE(client->create_partitions("c", 4));
  for (int32_t p : {0, 3}) {
    INFO("partition " << p);
    auto lost = client->produce_sync("c", p, -1, make_batch(1, "lost", 1000));
    REQUIRE_FALSE(lost);
    INFO(lost.err().to_string());
    CHECK(lost.code() == errc::kafka_storage_error);
    CHECK_FALSE(std::filesystem::exists(f.dir.path() / ("c-" + std::to_string(p))));
  }
  for (int32_t p : {1, 2}) {
    auto kept = client->produce_sync("c", p, -1, make_batch(1, "kept", 1000));
    INFO((kept ? std::string() : kept.err().to_string()));
    CHECK(kept);
  }
}
