// Runs the real `capstan` binary on data dirs that lost files or were killed while a topic was
// deleted and created again: a damaged partition is reported and offline, a
// repair accepts the loss without reusing an offset, a data dir without meta.properties is refused
// untouched, and segments a stale checkpoint entry would have trusted are verified.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <memory>

#include "runtime/storage/offset_checkpoint.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/tree_snapshot.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

const std::string binary = CAPSTAN_BINARY;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// One `capstan node` on <dir>/data with free ports; the client port is read from its log.
class node_run {
public:
  node_run(const temp_dir& dir, std::vector<std::string> extra = {}) : dir_(dir) {
    std::vector<std::string> args{"node",           "--data-dir",        (dir / "data").string(),
                                  "--listen",       "127.0.0.1:0",       "--cluster-listen",
                                  "127.0.0.1:0",    "--metrics-listen",  "127.0.0.1:0",
                                  "--kafka-listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    child_ = std::make_unique<child_process>(binary, args, dir.path(), "node" + std::to_string(++runs_));
  }

  // Waits until the node serves; false if it ended first.
  bool ready() {
    if (!child_->wait_for_stderr("ready; stop with", 60s)) return false;
    const auto err = child_->stderr_text();
    static const std::string marker = "client RPC on 127.0.0.1:";
    const auto at = err.find(marker);
    REQUIRE(at != std::string::npos);
    bootstrap_ = "127.0.0.1:" + std::to_string(std::stoi(err.substr(at + marker.size())));
    return true;
  }
  std::string log() const { return child_->stderr_text(); }
  std::optional<int> stop(int sig) {
    child_->signal(sig);
    return child_->wait(60s);
  }
  std::optional<int> wait() { return child_->wait(60s); }

  int run(std::vector<std::string> args, std::string* out, std::string* err) const {
    args.push_back("--bootstrap");
    args.push_back(bootstrap_);
    return run_to_end(binary, args, dir_.path(), out, err, 60s);
  }
  int run_with_input(const std::string& input, const std::string& args, std::string* out,
                     std::string* err) const {
    const auto in = dir_ / ("stdin" + std::to_string(++inputs_));
    std::ofstream(in) << input;
    const std::string command =
      "'" + binary + "' " + args + " --bootstrap " + bootstrap_ + " < '" + in.string() + "'";
    return run_to_end("/bin/sh", {"-c", command}, dir_.path(), out, err, 60s);
  }

private:
  const temp_dir& dir_;
  std::unique_ptr<child_process> child_;
  std::string bootstrap_;
  static inline int runs_ = 0;
  static inline int inputs_ = 0;
};

std::string numbered_lines(const std::string& prefix, int count, size_t width = 0) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    auto line = prefix + std::to_string(i);
    if (line.size() < width) line += std::string(width - line.size(), '.');
    out += line + "\n";
  }
  return out;
}

} // namespace

TEST_CASE("a partition directory removed while the node was down is offline until a repair accepts "
          "the loss, no offset is handed out twice",
          "[system][damage]") {
  temp_dir dir("capstan-damage");
  const auto data = dir / "data";
  std::string out, err;
  {
    node_run node(dir);
    REQUIRE(node.ready());
    REQUIRE(node.run({"topic", "create", "c"}, &out, &err) == 0);
    REQUIRE(node.run_with_input(numbered_lines("r", 600), "produce c --acks all", &out, &err) == 0);
    REQUIRE(node.run({"consume", "c", "--group", "g", "--from-beginning", "--max-messages", "100"},
                     &out, &err) == 0);
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }
  auto points = read_offset_checkpoint(data / recovery_point_checkpoint_name);
  REQUIRE(points);
  REQUIRE(points->at({"c", 0}) == offset{600});
  std::filesystem::remove_all(data / "c-0");

  {
    node_run node(dir);
    REQUIRE(node.ready());
    INFO(node.log());
    CHECK(node.log().find("c-0 on node 1 is offline") != std::string::npos);
    CHECK(node.log().find("offsets up to 599 were handed out") != std::string::npos);
    CHECK(node.run_with_input("again\n", "produce c --delivery-timeout-ms 5000", &out, &err) != 0);
    CHECK(err.find("KAFKA_STORAGE_ERROR") != std::string::npos);
    CHECK(node.run({"consume", "c", "--from-beginning", "--timeout-ms", "500"}, &out, &err) != 0);
    CHECK(err.find("KAFKA_STORAGE_ERROR") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(data / "c-0"));
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }

  // A dry run shows the plan and changes nothing; --execute accepts the loss.
  const auto before = snapshot_tree(data);
  CHECK(run_to_end(binary, {"log", "repair", "--data-dir", data.string()}, dir.path(), &out, &err) == 1);
  CHECK(out.find("nothing was changed (dry run)") != std::string::npos);
  CHECK(out.find("c-0: the directory is missing") != std::string::npos);
  CHECK(out.find("start the log empty at offset 600") != std::string::npos);
  CHECK(snapshot_tree(data) == before);
  REQUIRE(run_to_end(binary, {"log", "repair", "--data-dir", data.string(), "--execute"}, dir.path(),
                     &out, &err) == 0);
  CHECK(run_to_end(binary, {"log", "repair", "--data-dir", data.string()}, dir.path(), &out, &err) == 0);
  CHECK(out.find("No damaged partition") != std::string::npos);

  node_run node(dir);
  REQUIRE(node.ready());
  REQUIRE(node.run_with_input("after-repair\n", "produce c --acks all", &out, &err) == 0);
  REQUIRE(node.run({"consume", "c", "--from-beginning", "--timeout-ms", "1000", "--print-offset"}, &out,
                   &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"600\tafter-repair"});
  // The group's committed offset (100) is below the new log start: the consumer resets as
  // auto.offset.reset says (earliest with --from-beginning) and says so; no offset is re-read.
  REQUIRE(node.run({"consume", "c", "--group", "g", "--from-beginning", "--timeout-ms", "1000",
                    "--print-offset"},
                   &out, &err) == 0);
  CHECK(lines(out) == std::vector<std::string>{"600\tafter-repair"});
  CHECK(err.find("Offset 100 of c-0 is out of range; resetting to 600") != std::string::npos);
  REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
}

TEST_CASE("a lost active segment, a lost middle segment and a stray garbage segment take their "
          "partitions offline, by name and offsets, after a repair each continues at the known end",
          "[system][damage]") {
  temp_dir dir("capstan-damage");
  const auto data = dir / "data";
  const int per_partition = 2200; // 1 KB records: three 1 MiB segments per partition
  std::string out, err;
  {
    node_run node(dir);
    REQUIRE(node.ready());
    REQUIRE(node.run({"topic", "create", "c", "--partitions", "3", "--config", "segment.bytes=1048576"},
                     &out, &err) == 0);
    for (int p = 0; p < 3; ++p)
      REQUIRE(node.run_with_input(numbered_lines("r", per_partition, 1000),
                                  "produce c --acks all --partition " + std::to_string(p), &out,
                                  &err) == 0);
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }
  auto segments_of = [&](const std::string& partition) {
    std::vector<std::filesystem::path> logs;
    for (const auto& e : std::filesystem::directory_iterator(data / partition))
      if (e.path().extension() == ".log") logs.push_back(e.path());
    std::sort(logs.begin(), logs.end());
    return logs;
  };
  auto c0 = segments_of("c-0");
  auto c1 = segments_of("c-1");
  REQUIRE(c0.size() >= 3);
  REQUIRE(c1.size() >= 3);
  std::filesystem::remove(c0.back());                  // case 2: the active segment
  std::filesystem::remove(c1[1]);                      // case 3: a middle segment
  std::ofstream(data / "c-2" / "00000000000000099999.log") << std::string(64, 'x'); // case 4
  const auto c0_lost = c0.back().stem().string();
  const auto before = snapshot_tree(data);

  {
    node_run node(dir);
    REQUIRE(node.ready());
    INFO(node.log());
    const auto log = node.log();
    CHECK(log.find("c-0 on node 1 is offline") != std::string::npos);
    CHECK(log.find("c-1 on node 1 is offline") != std::string::npos);
    CHECK(log.find("c-2 on node 1 is offline") != std::string::npos);
    CHECK(log.find("remain without their .log") != std::string::npos);
    CHECK(log.find("offsets 2200..99998 missing") != std::string::npos);
    for (int p = 0; p < 3; ++p) {
      CHECK(node.run_with_input("x\n", "produce c --partition " + std::to_string(p), &out, &err) != 0);
      CHECK(err.find("KAFKA_STORAGE_ERROR") != std::string::npos);
    }
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }
  // Nothing in the damaged directories changed while they were offline.
  auto partitions_only = [](tree_snapshot t) {
    for (auto it = t.begin(); it != t.end();) it = it->first.rfind("c-", 0) == 0 ? std::next(it) : t.erase(it);
    return t;
  };
  CHECK(partitions_only(snapshot_tree(data)) == partitions_only(before));

  REQUIRE(run_to_end(binary, {"log", "repair", "--data-dir", data.string(), "--execute"}, dir.path(),
                     &out, &err) == 0);
  INFO(out);
  CHECK(out.find("c-0:") != std::string::npos);
  CHECK(out.find("c-1:") != std::string::npos);
  CHECK(out.find("c-2:") != std::string::npos);
  CHECK(std::filesystem::exists(data / "repair-moved" / "c-2" / "00000000000000099999.log"));
  CHECK(std::filesystem::exists(data / "repair-moved" / "c-0" / (c0_lost + ".index")));

  node_run node(dir);
  REQUIRE(node.ready());
  CHECK(node.log().find("is offline") == std::string::npos);
  for (int p = 0; p < 3; ++p) {
    const auto partition = std::to_string(p);
    REQUIRE(node.run_with_input("after\n", "produce c --acks all --partition " + partition, &out, &err) == 0);
    REQUIRE(node.run({"consume", "c", "--partition", partition, "--offset", std::to_string(per_partition),
                      "--max-messages", "1", "--print-offset"},
                     &out, &err) == 0);
    CHECK(lines(out) == std::vector<std::string>{std::to_string(per_partition) + "\tafter"});
  }
  REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
}

TEST_CASE("a data dir whose meta.properties was removed is refused with a message that says so, "
          "and left exactly as it was",
          "[system][damage]") {
  temp_dir dir("capstan-damage");
  const auto data = dir / "data";
  {
    node_run node(dir);
    REQUIRE(node.ready());
    std::string out, err;
    REQUIRE(node.run({"topic", "create", "kept"}, &out, &err) == 0);
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }
  std::filesystem::remove(data / "meta.properties");
  const auto before = snapshot_tree(data);
  node_run node(dir);
  CHECK_FALSE(node.ready());
  CHECK(node.wait() == std::optional<int>{1});
  INFO(node.log());
  CHECK(node.log().find("has no meta.properties") != std::string::npos);
  CHECK(node.log().find("cluster.id=") != std::string::npos);
  CHECK(snapshot_tree(data) == before);
}

TEST_CASE("after a topic is deleted and created again and the node is killed, the new topic's "
          "segments are verified, never trusted under the old topic's checkpoint",
          "[system][damage][crash]") {
  temp_dir dir("capstan-damage");
  const auto data = dir / "data";
  // Checkpoints only on the events under test (deletion, creation, stop), not on a timer.
  std::ofstream(dir / "node.toml") << "log.flush.offset.checkpoint.interval.ms = 3600000\n";
  const std::vector<std::string> config{"--config", (dir / "node.toml").string()};
  const std::string segment_bytes = "segment.bytes=1048576";
  const auto records = numbered_lines("old-", 3000, 1000);
  std::string out, err;
  {
    node_run node(dir, config);
    REQUIRE(node.ready());
    REQUIRE(node.run({"topic", "create", "t", "--config", segment_bytes}, &out, &err) == 0);
    REQUIRE(node.run_with_input(records, "produce t --acks all", &out, &err) == 0);
    REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
  }
  auto points = read_offset_checkpoint(data / recovery_point_checkpoint_name);
  REQUIRE(points);
  REQUIRE(points->at({"t", 0}) == offset{3000});
  {
    node_run node(dir, config);
    REQUIRE(node.ready());
    REQUIRE(node.run({"topic", "delete", "t"}, &out, &err) == 0);
    REQUIRE(node.run({"topic", "create", "t", "--config", segment_bytes}, &out, &err) == 0);
    REQUIRE(node.run_with_input(numbered_lines("new-", 3000, 1000), "produce t --acks all", &out,
                                &err) == 0);
    REQUIRE(node.stop(SIGKILL));
  }
  // Damage the new topic's first segment, which was never fsynced: below the old entry (3000) it
  // would be trusted and served as it is.
  const auto first = data / "t-0" / "00000000000000000000.log";
  REQUIRE(std::filesystem::exists(data / "t-0" / "00000000000000000000.index"));
  const auto size = std::filesystem::file_size(first);
  {
    std::fstream f(first, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 2));
    f.put('\x7f');
  }
  node_run node(dir, config);
  REQUIRE(node.ready());
  INFO(node.log());
  CHECK(node.log().find("00000000000000000000.log truncated") != std::string::npos);
  REQUIRE(node.run({"consume", "t", "--from-beginning", "--timeout-ms", "1000"}, &out, &err) == 0);
  const auto got = lines(out);
  CHECK(!got.empty());
  CHECK(got.size() < 3000);
  CHECK(got.front().rfind("new-0", 0) == 0);
  REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
}

TEST_CASE("capstan log repair has help and refuses a data dir in use", "[system][damage]") {
  temp_dir dir("capstan-damage");
  std::string out, err;
  CHECK(run_to_end(binary, {"log", "repair", "--help"}, dir.path(), &out, &err) == 0);
  CHECK(out.find("--execute") != std::string::npos);
  CHECK(out.find("--dry-run") != std::string::npos);
  node_run node(dir);
  REQUIRE(node.ready());
  CHECK(run_to_end(binary, {"log", "repair", "--data-dir", (dir / "data").string()}, dir.path(), &out,
                   &err) == 1);
  CHECK(err.find("in use by another capstan node") != std::string::npos);
  REQUIRE(node.stop(SIGTERM) == std::optional<int>{0});
}
