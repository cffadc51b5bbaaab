#pragma once

// Reads the names a docs page lists in its Markdown tables, so tests can hold the docs to what
// the code does (tests/unit/node/config_docs_test.cpp, tests/cluster/metrics_docs_test.cpp).

#include <filesystem>
#include <set>
#include <string>

namespace capstan::test {

// docs/<name> in the source tree this test binary was built from.
std::filesystem::path docs_page(const std::string& name);

// Every `backticked` token in the column headed `column` (e.g. "metric", "TOML key") of every
// table under a heading that contains `section` (empty: under any heading). A cell such as
// "`node.id` (or `broker.id`)" gives both names. REQUIRES: the page exists (a test fails if not).
std::set<std::string> doc_table_names(const std::filesystem::path& page, const std::string& column,
                                      const std::string& section = "");

// The elements of `a` that are not in `b`.
std::set<std::string> names_missing_from(const std::set<std::string>& a, const std::set<std::string>& b);

} // namespace capstan::test
