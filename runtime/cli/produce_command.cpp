#include "runtime/cli/produce_command.hpp"

#include <atomic>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/client/producer.hpp"

namespace capstan::cli {

namespace {

struct produce_flags {
  client_options client;
  std::string topic;
  std::optional<int32_t> partition;
  std::string acks = "all";
  std::string key_separator;
  int64_t linger_ms = 0;
  int64_t delivery_timeout_ms = 120000;
  std::optional<bool> idempotence;
  compression codec = compression::none;
};

bytes_view as_bytes(std::string_view s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void run_produce(const produce_flags& f) {
  auto acks = parse_acks(f.acks);
  if (!acks) fail("--acks must be 0, 1 or all, not '" + f.acks + "'", exit_usage);
  auto config = make_client_config(f.client);
  config.acks = *acks;
  config.linger_ms = f.linger_ms;
  config.delivery_timeout_ms = f.delivery_timeout_ms;
  config.compression_type = f.codec;
  apply_idempotence_or_fail(config, f.idempotence);
  auto client = connect_or_fail(config);
  auto md = client->metadata({f.topic});
  if (!md) fail(md.err());

  struct outcome {
    std::atomic<uint64_t> acked{0};
    std::atomic<uint64_t> failed{0};
    std::mutex mu;
    std::optional<error> first;
  };
  auto state = std::make_shared<outcome>();
  uint64_t sent = 0;
  {
    client::producer producer(*client, config);
    std::string line;
    while (std::getline(std::cin, line)) {
      std::string_view value = line;
      std::optional<bytes_view> key;
      if (!f.key_separator.empty()) {
        auto at = value.find(f.key_separator);
        if (at == std::string_view::npos) {
          producer.flush();
          fail("line " + std::to_string(sent + 1) + " has no key separator '" + f.key_separator + "'", exit_failed);
        }
        key = as_bytes(value.substr(0, at));
        value = value.substr(at + f.key_separator.size());
      }
      ++sent;
      producer.send(f.topic, key, as_bytes(value), f.partition, [state](capstan::result<client::record_metadata> r) {
        if (r) {
          ++state->acked;
          return;
        }
        ++state->failed;
        std::lock_guard lock(state->mu);
        if (!state->first) state->first = r.err();
      });
    }
    producer.flush();
  }
  if (state->failed > 0) {
    fail(std::to_string(state->failed.load()) + " of " + std::to_string(sent) +
           " records were not acknowledged; first error: " + state->first->to_string(),
         exit_failed);
  }
}

} // namespace

std::optional<int16_t> parse_acks(const std::string& text) {
  if (text == "0") return int16_t{0};
  if (text == "1") return int16_t{1};
  if (text == "all" || text == "-1") return int16_t{-1};
  return std::nullopt;
}

void add_produce_command(CLI::App& app) {
  auto f = std::make_shared<produce_flags>();
  auto* cmd = app.add_subcommand("produce", "Send one record per stdin line (exit 0 only when all are acknowledged)");
  cmd->add_option("topic", f->topic, "Topic to write to")->required();
  cmd->add_option("--partition", f->partition, "Write every record to this partition (default: by key, or sticky)")
    ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--acks", f->acks, "0, 1 or all")->capture_default_str();
  cmd->add_option("--key-separator", f->key_separator,
                  "Split each line at the first SEP into key and value (default: no key)")
    ->check(non_empty("one or more characters"));
  cmd->add_option("--linger-ms", f->linger_ms, "linger.ms")->capture_default_str()->check(integer_in(0));
  cmd->add_option("--delivery-timeout-ms", f->delivery_timeout_ms, "delivery.timeout.ms")
    ->capture_default_str()
    ->check(integer_in(1));
  add_idempotence_option(cmd, f->idempotence);
  add_compression_option(cmd, f->codec);
  add_client_options(cmd, f->client);
  cmd->callback([f] { run_produce(*f); });
}

} // namespace capstan::cli
