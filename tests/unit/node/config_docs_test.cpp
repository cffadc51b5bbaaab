// docs/configuration.md names exactly the keys the code takes: a key added to the parser without
// a line in the docs, or a documented key the parser refuses, fails here.

#include <catch2/catch.hpp>

#include "actors/node/node.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "tests/support/doc_tables.hpp"

using namespace capstan;
using namespace capstan::test;

TEST_CASE("docs/configuration.md lists every broker TOML key node_config takes, and no other",
          "[node][config][docs]") {
  const auto documented = doc_table_names(docs_page("configuration.md"), "TOML key");
  const auto known = node_config::known_keys();
  REQUIRE_FALSE(documented.empty());
  CHECK(names_missing_from(documented, known) == std::set<std::string>{});
  CHECK(names_missing_from(known, documented) == std::set<std::string>{});
}

TEST_CASE("docs/configuration.md lists every topic config createTopic takes, and no other",
          "[node][config][docs]") {
  const auto page = docs_page("configuration.md");
  auto documented = doc_table_names(page, "name", "Log (per topic)");
  documented.merge(doc_table_names(page, "name", "Topic configs beyond the log"));
  const auto known = topic_config_keys();
  REQUIRE_FALSE(documented.empty());
  CHECK(names_missing_from(documented, known) == std::set<std::string>{});
  CHECK(names_missing_from(known, documented) == std::set<std::string>{});
}

TEST_CASE("docs/configuration.md's broker schedules are broker keys, not topic configs",
          "[node][config][docs]") {
  const auto schedules = doc_table_names(docs_page("configuration.md"), "name", "Broker schedules");
  REQUIRE(schedules.size() == 2);
  CHECK(names_missing_from(schedules, node_config::known_keys()) == std::set<std::string>{});
  CHECK(names_missing_from(schedules, topic_config_keys()) == schedules);
}
