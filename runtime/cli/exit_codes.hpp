#pragma once

// The exit codes of every capstan subcommand (docs/cli.md, "Exit codes"), and the one place that
// turns a failure into one of them: CLI11's parse errors, capstan errors, and CLI::RuntimeError
// thrown by a subcommand's callback (runtime/cli/client_options.hpp, fail()).

#include <CLI/App.hpp>

#include "runtime/errc.hpp"

namespace capstan::cli {

// Success, including --help.
inline constexpr int exit_ok = 0;
// The command was well-formed but did not succeed: the cluster refused or failed it, a network
// or storage error, records not acknowledged, a corrupt log.
inline constexpr int exit_failed = 1;
// The command asked for something invalid: an unknown subcommand or option, a missing argument,
// a malformed or out-of-range value (on the command line, in the node's config file, or as the
// broker judged it), conflicting options.
inline constexpr int exit_usage = 2;

// exit_usage for the errors that say the request itself was invalid (INVALID_CONFIG,
// INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR,
// INVALID_REQUIRED_ACKS); exit_failed for every other error.
int exit_code_for(errc code);

// Parses the command line, runs the chosen subcommand's callback and returns the exit code. A
// bad command line is reported as one "error: ..." line on stderr that names the command, the
// argument and what it allows.
int run_app(CLI::App& app, int argc, char** argv);

} // namespace capstan::cli
