#pragma once

// `capstan groups describe` and `capstan groups reset-offsets` (as kafka-consumer-groups): a
// group's committed offsets with each partition's log end and lag, and moving them.

#include <CLI/App.hpp>

namespace capstan::cli {

void add_groups_command(CLI::App& app);

} // namespace capstan::cli
