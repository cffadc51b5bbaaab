#pragma once

// `capstan node`: runs a node (actors/node/node.hpp) until SIGINT/SIGTERM.

#include <string>

#include <CLI/App.hpp>

#include "actors/node/node.hpp"
#include "runtime/storage/open_file_limit.hpp"

namespace capstan::cli {

// Declares the `node` subcommand and its options on `app`. When it is parsed, the node runs from
// the parse callback; a non-zero exit code surfaces as CLI::RuntimeError, which run_app
// (runtime/cli/exit_codes.hpp) returns.
void add_node_command(CLI::App& app);

// Logs to stderr with "[node N]" in every line. Returns the process exit code: exit_ok after a
// clean stop, else exit_code_for the error that kept the node from starting (exit_usage for an
// INVALID_CONFIG such as an unusable controller quorum, exit_failed for a listener in use).
// `limit` is what raise_open_file_limit did before the config was resolved; it is logged.
int run_node(const node_config& config, const std::string& log_level,
             const result<open_file_limit>& limit);

} // namespace capstan::cli
