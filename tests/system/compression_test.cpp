// Runs the real `capstan` binary against one node: lines produced with each --compression are
// consumed back in order, and the node stores the batches as the producer compressed them
// (`capstan log dump` names each batch's codec).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

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
