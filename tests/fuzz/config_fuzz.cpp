// libFuzzer target: config parsing. The input is read as a node's TOML config
// (node_config::from_toml, the parser behind `capstan node --config`) and, line by line as
// `name=value` pairs, as topic configs (log_config::from_map through validate_topic_configs,
// what createTopic and alterConfigs apply). Accepted topic configs must survive describeConfigs:
// to_map's output is accepted again and prints the same.
//
// Run: build-fuzz/tests/fuzz/config_fuzz tests/fuzz/corpus/config, or
// tests/fuzz/run.sh config [seconds] (tests/fuzz/README.md).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "actors/node/node.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/storage/log_config.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::map<std::string, std::string> key_values(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    out[std::string(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 1)));
  }
  return out;
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan;
  using namespace capstan::fuzz;
  const std::string text(reinterpret_cast<const char*>(data), size);

  auto node = node_config::from_toml(text, "fuzz.toml", node_config{});
  if (!node) FUZZ_CHECK(node.code() == errc::invalid_config && !node.err().message.empty());

  const auto pairs = key_values(text);
  (void)validate_topic_configs(pairs);
  if (auto c = log_config::from_map(pairs); c) {
    const auto described = c->to_map();
    auto again = log_config::from_map(described);
    FUZZ_CHECK_OK(again);
    FUZZ_CHECK(again->to_map() == described);
  } else {
    FUZZ_CHECK(c.code() == errc::invalid_config);
  }
  return 0;
}
