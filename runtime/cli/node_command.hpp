#pragma once

// `capstan node`: runs a node (actors/node/node.hpp) until SIGINT/SIGTERM.

#include <string>

#include <CLI/App.hpp>

#include "actors/node/node.hpp"

namespace capstan::cli {

// Declares the `node` subcommand and its options on `app`. When it is parsed, the node runs from
// the parse callback; a non-zero exit code surfaces as CLI::RuntimeError, which CLI11_PARSE turns
// into main's return value.
void add_node_command(CLI::App& app);

// Logs to stderr with "[node N]" in every line. Returns the process exit code: 0 after a clean
// stop, 1 when the node could not start.
int run_node(const node_config& config, const std::string& log_level);

} // namespace capstan::cli
