#pragma once

// `capstan log repair`: on a stopped node's data dir, shows the damaged partitions and what
// accepting the loss would do to each; with --execute, does it (docs/cli.md, docs/operations.md).

#include <CLI/CLI.hpp>

namespace capstan::cli {

// Adds `repair` under the `log` subcommand.
void add_log_repair_command(CLI::App& log_command);

} // namespace capstan::cli
