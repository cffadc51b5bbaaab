// Runs the real `capstan` binary: start-up recovery, the data-dir lock, clean shutdown on
// SIGTERM, kill -9, and `capstan log dump`.

#include <catch2/catch.hpp>

#include <csignal>

#include "actors/node/data_dir.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "runtime/storage/segment.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

// Ports 0: tests may run in parallel, and nothing else may be on the default ports.
const std::vector<std::string> ephemeral_ports = {
    "--listen",         "127.0.0.1:0", "--cluster-listen", "127.0.0.1:0",
    "--metrics-listen", "127.0.0.1:0", "--kafka-listen",   "127.0.0.1:0"};

std::vector<std::string> node_args(std::vector<std::string> args) {
  args.insert(args.begin(), "node");
  args.insert(args.end(), ephemeral_ports.begin(), ephemeral_ports.end());
  return args;
}

// Claims `data` for `node_id` and records `topic` with `partitions` partitions on that node, as if
// it had been created through the controller, so the node opens its partition directories.
void prepare_data_dir(const std::filesystem::path& data, int32_t node_id, const std::string& topic,
                      int32_t partitions) {
  std::filesystem::create_directories(data);
  auto meta = claim_data_dir(data, node_id, "");
  REQUIRE(meta);
  cluster_metadata md;
  md.cluster_id = meta->cluster_id;
  topic_metadata t;
  t.name = topic;
  t.id[0] = 1;
  for (int32_t p = 0; p < partitions; ++p)
    t.partitions.push_back(partition_assignment{p, {node_id}, node_id, 0, {node_id}, {}});
  md.topics.emplace(topic, t);
  REQUIRE(write_metadata_store(data / metadata_store_file, md));
}

// A partition directory with `batches` batches of 3 records, offsets from 0.
void write_partition(const std::filesystem::path& dir, int batches) {
  std::filesystem::create_directories(dir);
  auto seg = segment::open(dir, offset{0}, segment_open_mode::create, {});
  REQUIRE(seg);
  for (int i = 0; i < batches; ++i) {
    auto batch = make_batch(3, "rec" + std::to_string(i), 1000);
    set_base_offset(batch, offset{3 * i});
    REQUIRE((*seg)->append(batch));
  }
}

} // namespace

TEST_CASE("capstan node recovers a torn log, refuses a second node and stops cleanly",
          "[system][node]") {
  temp_dir dir;
  const auto data = dir / "data";
  prepare_data_dir(data, 3, "orders", 1);
  write_partition(data / "orders-0", 10);
  auto log_file = data / "orders-0" / "00000000000000000000.log";
  std::filesystem::resize_file(log_file, std::filesystem::file_size(log_file) - 7);

  child_process node(binary, node_args({"--data-dir", data.string(), "--node-id", "3"}), dir.path(), "node");
  const bool started = node.wait_for_stderr("ready; stop with", 30s);
  INFO(node.stderr_text());
  REQUIRE(started);
  CHECK(node.stderr_text().find("[node 3]") != std::string::npos);
  CHECK(node.stderr_text().find("serves 1 partition logs") != std::string::npos);
  CHECK(node.stderr_text().find("client RPC on 127.0.0.1:") != std::string::npos);
  CHECK(node.stderr_text().find("truncated") != std::string::npos);
  CHECK(node.stderr_text().find("offsets 0..27") != std::string::npos);

  std::string err;
  CHECK(run_to_end(binary, node_args({"--data-dir", data.string(), "--node-id", "3"}), dir.path(),
                   nullptr, &err) == 1);
  CHECK(err.find("in use by another capstan node") != std::string::npos);

  node.signal(SIGTERM);
  auto code = node.wait(60s);
  REQUIRE(code);
  CHECK(*code == 0);
  auto points = read_offset_checkpoint(data / "recovery-point-offset-checkpoint");
  REQUIRE(points);
  CHECK(points->at({"orders", 0}) == offset{27});

  std::string out;
  CHECK(run_to_end(binary, {"log", "dump", (data / "orders-0").string()}, dir.path(), &out, nullptr) == 0);
  CHECK(out.find("lastOffset: 26") != std::string::npos);
  CHECK(out.find("INVALID") == std::string::npos);
}

TEST_CASE("a node killed with SIGKILL starts again and recovers", "[system][node]") {
  temp_dir dir;
  const auto data = dir / "data";
  prepare_data_dir(data, 1, "events", 3);
  write_partition(data / "events-2", 4);
  {
    child_process node(binary, node_args({"--data-dir", data.string()}), dir.path(), "first");
    REQUIRE(node.wait_for_stderr("ready; stop with", 30s));
    CHECK(node.stderr_text().find("serves 3 partition logs") != std::string::npos);
    node.signal(SIGKILL);
    REQUIRE(node.wait(30s));
  }
  child_process again(binary, node_args({"--data-dir", data.string()}), dir.path(), "second");
  REQUIRE(again.wait_for_stderr("ready; stop with", 30s));
  // events-0..2: __consumer_offsets waits for a group's first FindCoordinator.
  INFO(again.stderr_text());
  CHECK(again.stderr_text().find("serves 3 partition logs") != std::string::npos);
  CHECK(again.stderr_text().find("offsets 0..12") != std::string::npos);
  again.signal(SIGINT);
  auto code = again.wait(60s);
  REQUIRE(code);
  CHECK(*code == 0);
}

TEST_CASE("capstan log dump reports a corrupt batch and fails", "[system][dump]") {
  temp_dir dir;
  write_partition(dir / "t-0", 3);
  auto log_file = dir / "t-0" / "00000000000000000000.log";
  {
    std::fstream f(log_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(log_file) - 2));
    f.put('\x7f');
  }
  std::string out;
  CHECK(run_to_end(binary, {"log", "dump", (dir / "t-0").string(), "--records"}, dir.path(), &out, nullptr) == 1);
  CHECK(out.find("INVALID") != std::string::npos);
  CHECK(out.find("| offset: 0 key: null value: rec0-0") != std::string::npos);
}

TEST_CASE("every capstan command has help and bad flags are refused", "[system][cli]") {
  temp_dir dir;
  std::string out;
  CHECK(run_to_end(binary, {"--help"}, dir.path(), &out, nullptr) == 0);
  CHECK(out.find("node") != std::string::npos);
  CHECK(run_to_end(binary, {"node", "--help"}, dir.path(), &out, nullptr) == 0);
  CHECK(out.find("--data-dir") != std::string::npos);
  CHECK(run_to_end(binary, {"log", "dump", "--help"}, dir.path(), &out, nullptr) == 0);
  CHECK(out.find("--max-batches") != std::string::npos);
  std::string err;
  CHECK(run_to_end(binary, {"node", "--no-such-flag"}, dir.path(), nullptr, &err) != 0);
  CHECK(run_to_end(binary, {"node", "--node-id", "-5"}, dir.path(), nullptr, &err) != 0);
  CHECK(run_to_end(binary, {"node", "--listen", "nowhere"}, dir.path(), nullptr, &err) != 0);
  CHECK(run_to_end(binary, {"node", "--config", (dir / "missing.toml").string()}, dir.path(), nullptr,
                   &err) != 0);
  CHECK(run_to_end(binary, {"log", "dump", (dir / "missing").string()}, dir.path(), nullptr, &err) != 0);
}
