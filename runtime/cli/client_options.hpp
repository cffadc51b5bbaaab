#pragma once

// What every client subcommand shares: the --bootstrap option, connecting, and how a failure is
// reported (the error's Kafka name and message on stderr, then a non-zero exit through
// CLI::RuntimeError, which run_app (runtime/cli/exit_codes.hpp) turns into the exit code).

#include <memory>
#include <optional>
#include <string>

#include <CLI/App.hpp>

#include "runtime/client/cluster_client.hpp"

namespace capstan::cli {

struct client_options {
  std::string bootstrap = "127.0.0.1:9192";
  int64_t request_timeout_ms = 30000;
};

// Adds --bootstrap and --request-timeout-ms to `cmd`.
void add_client_options(CLI::App* cmd, client_options& options);

// Adds `--idempotence true|false` (enable.idempotence) to a producing command. `value` stays
// nullopt unless given, so that Kafka 3.x's rule applies (client::resolve_idempotence): unset
// means on unless --acks is 0 or 1 (or --max-in-flight above 5); set to true with those it is a
// usage error naming the conflict.
void add_idempotence_option(CLI::App* cmd, std::optional<bool>& value);

// Adds `--compression none|gzip|snappy|lz4|zstd` (compression.type) to a producing command.
void add_compression_option(CLI::App* cmd, compression& value);

// Sets config.enable_idempotence to `value` and fails with a usage error (exit 2) when the
// result conflicts with acks or max in flight.
void apply_idempotence_or_fail(client::client_config& config, std::optional<bool> value);

// The client config for `options`: the bootstrap list split at commas.
client::client_config make_client_config(const client_options& options);

// Prints "error: NAME: message" to stderr and ends the command with the exit code for `e`
// (exit_code_for), or with `code` for a message of the CLI's own.
[[noreturn]] void fail(const error& e);
[[noreturn]] void fail(const std::string& message, int code);

// Connects or fails.
std::unique_ptr<client::cluster_client> connect_or_fail(const client::client_config& config);

} // namespace capstan::cli
