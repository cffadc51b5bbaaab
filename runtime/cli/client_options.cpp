#include "runtime/cli/client_options.hpp"

#include <iostream>

#include <CLI/CLI.hpp>

#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/client/producer_sequencer.hpp"

namespace capstan::cli {

void add_client_options(CLI::App* cmd, client_options& options) {
  cmd->add_option("--bootstrap", options.bootstrap, "Comma-separated HOST:PORT list of brokers to start from")
    ->capture_default_str();
  cmd->add_option("--request-timeout-ms", options.request_timeout_ms, "Bound on each request (request.timeout.ms)")
    ->capture_default_str()
    ->check(integer_in(1));
}

void add_idempotence_option(CLI::App* cmd, std::optional<bool>& value) {
  cmd->add_option_function<std::string>(
         "--idempotence", [&value](const std::string& text) { value = text == "true"; },
         "true or false (default: true unless --acks is 0 or 1): number batches so that retries "
         "never write a record twice or out of order (docs/idempotence.md)")
      ->check(CLI::IsMember({"true", "false"}))
      ->type_name("BOOL");
}

void add_compression_option(CLI::App* cmd, compression& value) {
  cmd->add_option_function<std::string>(
         "--compression",
         [&value](const std::string& text) { value = *compression_from_name(text); },
         "none, gzip, snappy, lz4 or zstd (default: none): compression.type, the codec of every "
         "batch sent")
      ->check(CLI::IsMember({"none", "gzip", "snappy", "lz4", "zstd"}))
      ->type_name("CODEC");
}

void apply_idempotence_or_fail(client::client_config& config, std::optional<bool> value) {
  config.enable_idempotence = value;
  if (auto r = client::resolve_idempotence(config); !r)
    fail("--idempotence: " + r.err().message, exit_usage);
}

client::client_config make_client_config(const client_options& options) {
  client::client_config config;
  config.bootstrap = client::split_bootstrap(options.bootstrap);
  config.request_timeout_ms = options.request_timeout_ms;
  return config;
}

void fail(const error& e) { fail(e.to_string(), exit_code_for(e.code)); }

void fail(const std::string& message, int code) {
  std::cout.flush();
  std::cerr << "error: " << message << std::endl;
  throw CLI::RuntimeError(code);
}

std::unique_ptr<client::cluster_client> connect_or_fail(const client::client_config& config) {
  if (config.bootstrap.empty()) fail("--bootstrap is empty; give HOST:PORT[,HOST:PORT...]", exit_usage);
  auto client = client::cluster_client::connect(config);
  if (!client) fail(client.err());
  return std::move(*client);
}

} // namespace capstan::cli
