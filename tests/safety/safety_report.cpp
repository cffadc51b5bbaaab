#include "tests/safety/safety_report.hpp"

#include <cstdio>
#include <map>
#include <vector>

namespace capstan::safety {

namespace {

// Jepsen's anomaly names first, then the harness's own expectations, then anything else found.
const std::vector<std::string> known_kinds{
    "lost-write",         "duplicate",   "inconsistent-offsets", "nonmonotonic",
    "poll-skip",          "unseen",      "acked-below-min-isr",  "offline-with-two-nodes",
    "leader-not-serving", "unavailable", "offset-out-of-range",  "unclean-stop"};

using rows = std::vector<std::pair<std::string, std::string>>;

rows fault_rows(const run_result& r) {
  rows out;
  int total = 0;
  for (auto k : all_fault_kinds()) {
    auto it = r.faults_by_kind.find(k);
    const int n = it == r.faults_by_kind.end() ? 0 : it->second;
    total += n;
    out.emplace_back(to_string(k), std::to_string(n));
  }
  out.emplace_back("total", std::to_string(total));
  return out;
}

rows operation_rows(const run_result& r) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.0f", r.seconds);
  return {
      {"steps run", std::to_string(r.steps_run) + " of " + std::to_string(r.schedule.steps.size())},
      {"wall time (s)", seconds},
      {"records sent", std::to_string(r.sent)},
      {"acknowledged", std::to_string(r.acknowledged)},
      {"failed after retries", std::to_string(r.failed)}};
}

rows anomaly_rows(const run_result& r) {
  std::map<std::string, int> count;
  for (const auto& a : r.anomalies) ++count[a.kind];
  rows out;
  for (const auto& k : known_kinds) {
    out.emplace_back(k, std::to_string(count[k]));
    count.erase(k);
  }
  for (const auto& [k, n] : count) out.emplace_back(k, std::to_string(n));
  return out;
}

std::string text_section(const std::string& title, const rows& rs) {
  std::string out = title + "\n";
  for (const auto& [k, v] : rs) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-26s %10s\n", k.c_str(), v.c_str());
    out += line;
  }
  return out;
}

std::string md_section(const std::string& title, const std::string& what, const rows& rs) {
  std::string out = "| " + title + " | " + what + " |\n|---|---:|\n";
  for (const auto& [k, v] : rs) out += "| " + k + " | " + v + " |\n";
  return out + "\n";
}

} // namespace

std::string text_table(const run_result& r) {
  return text_section("faults by kind", fault_rows(r)) +
         text_section("operations", operation_rows(r)) +
         text_section("anomalies by kind", anomaly_rows(r));
}

std::string markdown_report(const run_result& r, const std::string& title) {
  std::string out = "## " + title + "\n\n" + r.schedule.origin + "\n\n";
  out += md_section("fault", "count", fault_rows(r));
  out += md_section("operations", "", operation_rows(r));
  out += md_section("anomaly", "count", anomaly_rows(r));
  if (!r.anomalies.empty()) out += "```\n" + test::describe(r.anomalies) + "```\n";
  return out;
}

} // namespace capstan::safety
