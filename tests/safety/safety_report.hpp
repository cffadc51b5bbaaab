#pragma once

// The results table of a safety run: faults by kind, operations, acknowledgements, anomalies by
// kind; as plain text for the terminal or as markdown (--report FILE, docs/safety.md).

#include <string>

#include "tests/safety/safety_run.hpp"

namespace capstan::safety {

std::string text_table(const run_result& r);
// `title` heads the page (what was run, when, on which commit).
std::string markdown_report(const run_result& r, const std::string& title);

} // namespace capstan::safety
