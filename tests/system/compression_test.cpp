// Runs the real `capstan` binary: lines produced with each --compression are consumed back in
// order, and the node stores the batches as the producer compressed them (`capstan log dump`
// names each batch's codec); on a three-node cluster every replica holds them so.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/support/node_cluster.hpp"
#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

const std::string binary = CAPSTAN_BINARY;

node_process_options single_node() {
  node_process_options o;
  o.binary = binary;
  return o;
}

} // namespace

TEST_CASE("lines produced with each compression are consumed back and stored compressed",
          "[system][cli][compression]") {
  temp_dir dir("capstan-compression");
  node_process node(dir, 1, single_node());
  node.start();
  const std::vector<std::string> codecs = {"gzip", "snappy", "lz4", "zstd", "none"};
  for (const auto& codec : codecs) {
    INFO(codec);
    const std::string topic = "zipped-" + codec;
    std::string out, err;
    REQUIRE(
        run_cli(binary, dir, "",
                {"topic", "create", topic, "--partitions", "1", "--bootstrap", node.bootstrap()},
                &out, &err) == 0);
    std::string input;
    std::vector<std::string> expected;
    for (int i = 0; i < 300; ++i) {
      expected.push_back(codec + " line " + std::to_string(i) + " " + std::string(40, 'x'));
      input += expected.back() + "\n";
    }
    // A long linger gathers the lines into a few batches, each compressed as a whole.
    REQUIRE(run_cli(binary, dir, input,
                    {"produce", topic, "--compression", codec, "--linger-ms", "200", "--bootstrap",
                     node.bootstrap()},
                    &out, &err) == 0);
    INFO(err);
    REQUIRE(run_cli(binary, dir, "",
                    {"consume", topic, "--from-beginning", "--timeout-ms", "1000", "--bootstrap",
                     node.bootstrap()},
                    &out, &err) == 0);
    CHECK(lines_of(out) == expected);
  }
  node.stop();

  for (const auto& codec : codecs) {
    INFO(codec);
    std::string out, err;
    REQUIRE(run_cli(binary, dir, "",
                    {"log", "dump", node.partition_dir({"zipped-" + codec, 0}).string()}, &out,
                    &err) == 0);
    int batches = 0;
    for (const auto& line : lines_of(out)) {
      if (line.rfind("baseOffset:", 0) != 0) continue;
      ++batches;
      CHECK_THAT(line, Catch::Contains("compresscodec: " + codec + " "));
    }
    CHECK(batches > 0);
  }
}

TEST_CASE("compressed batches replicate to every replica as the producer sent them",
          "[system][cluster][compression]") {
  node_cluster c(binary, 0);
  c.create_topic("zipped", 3, c.node(1));
  c.await_full_isr("zipped", c.node(1));
  // The first 100 lines with zstd, the next 100 with snappy.
  std::vector<std::string> expected;
  std::string out, err;
  for (const std::string codec : {"zstd", "snappy"}) {
    std::string input;
    for (int i = 0; i < 100; ++i) {
      expected.push_back(codec + " " + std::to_string(i) + " " + std::string(30, 'y'));
      input += expected.back() + "\n";
    }
    REQUIRE(c.cli(input, {"produce", "zipped", "--compression", codec, "--linger-ms", "100"},
                  c.node(2), &out, &err) == 0);
  }
  CHECK(c.consume("zipped", c.node(3), expected.size()) == expected);
  c.await_full_isr("zipped", c.node(1));
  for (auto& n : c.nodes) n->stop();

  for (auto& n : c.nodes) {
    INFO("node " << n->id());
    REQUIRE(run_cli(binary, c.dir, "", {"log", "dump", n->partition_dir({"zipped", 0}).string()},
                    &out, &err) == 0);
    std::vector<std::string> codecs;
    for (const auto& line : lines_of(out))
      if (line.rfind("baseOffset:", 0) == 0)
        codecs.push_back(line.find("compresscodec: zstd ") != std::string::npos     ? "zstd"
                         : line.find("compresscodec: snappy ") != std::string::npos ? "snappy"
                                                                                    : line);
    REQUIRE_FALSE(codecs.empty());
    CHECK(codecs.front() == "zstd");
    CHECK(codecs.back() == "snappy");
    for (const auto& codec : codecs) CHECK((codec == "zstd" || codec == "snappy"));
  }
}
