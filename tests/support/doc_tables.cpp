#include "tests/support/doc_tables.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <vector>

#include <catch2/catch.hpp>

namespace capstan::test {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The cells of a table row "| a | b |".
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t start = row.find('|') + 1;
  for (size_t bar = row.find('|', start); bar != std::string::npos; bar = row.find('|', start)) {
    out.push_back(trim(row.substr(start, bar - start)));
    start = bar + 1;
  }
  return out;
}

bool is_table_row(const std::string& line) { return line.rfind('|', 0) == 0; }

bool is_separator(const std::string& line) {
  return is_table_row(line) && line.find_first_not_of("|-: ") == std::string::npos;
}

} // namespace

std::filesystem::path docs_page(const std::string& name) {
  return std::filesystem::path(CAPSTAN_SOURCE_DIR) / "docs" / name;
}

std::set<std::string> doc_table_names(const std::filesystem::path& page, const std::string& column,
                                      const std::string& section) {
  std::ifstream in(page);
  INFO(page.string());
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  std::set<std::string> out;
  std::string heading;
  // The key column of the table being read; npos outside a table or when it has none.
  size_t key_column = std::string::npos;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& line = lines[i];
    if (line.rfind('#', 0) == 0) heading = line;
    if (!is_table_row(line)) {
      key_column = std::string::npos;
      continue;
    }
    if (i + 1 < lines.size() && is_separator(lines[i + 1])) {
      const auto header = cells(line);
      const auto it = std::find(header.begin(), header.end(), column);
      const bool wanted = section.empty() || heading.find(section) != std::string::npos;
      key_column = wanted && it != header.end() ? static_cast<size_t>(it - header.begin())
                                                : std::string::npos;
      ++i;
      continue;
    }
    const auto row = cells(line);
    if (key_column >= row.size()) continue;
    const auto& cell = row[key_column];
    for (size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open)) {
      const auto close = cell.find('`', open + 1);
      if (close == std::string::npos) break;
      out.insert(cell.substr(open + 1, close - open - 1));
      open = close + 1;
    }
  }
  return out;
}

std::set<std::string> names_missing_from(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

} // namespace capstan::test
