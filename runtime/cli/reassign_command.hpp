#pragma once

// `capstan topic reassign`, as kafka-reassign-partitions.sh: move partitions' replicas to other
// nodes, or cancel such a move (docs/cli.md).

#include <CLI/App.hpp>

namespace capstan::cli {

// Adds `reassign` under the `topic` command.
void add_reassign_command(CLI::App& topic);

} // namespace capstan::cli
