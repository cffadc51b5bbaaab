#pragma once

// `capstan cluster describe`: nodes, the active controller, and every partition's leader and ISR.

#include <CLI/App.hpp>

namespace capstan::cli {

void add_cluster_command(CLI::App& app);

} // namespace capstan::cli
