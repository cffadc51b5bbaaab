#include "runtime/cli/consume_command.hpp"

#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/client/consumer.hpp"

namespace capstan::cli {

namespace {

struct consume_flags {
  client_options client;
  std::string topic;
  std::optional<int32_t> partition;
  bool from_beginning = false;
  std::optional<int64_t> offset;
  std::string group;
  std::optional<uint64_t> max_messages;
  std::optional<int64_t> timeout_ms;
  bool print_key = false;
  bool print_offset = false;
  bool print_partition = false;
  bool check_crcs = true;
};

// A poll without a user's bound: long enough that only records (or an error) end it.
constexpr auto unbounded_poll = std::chrono::hours(24);

void write(std::optional<bytes_view> data) {
  if (!data) {
    std::cout << "null";
    return;
  }
  std::cout.write(reinterpret_cast<const char*>(data->data()), static_cast<std::streamsize>(data->size()));
}

void run_consume(const consume_flags& f) {
  auto config = make_client_config(f.client);
  // As kafka-console-consumer: --from-beginning means auto.offset.reset=earliest.
  config.auto_offset_reset = f.from_beginning ? client::offset_reset::earliest : client::offset_reset::latest;
  config.check_crcs = f.check_crcs;
  auto client = connect_or_fail(config);
  client::consumer consumer(*client, config, f.group);
  std::vector<int32_t> partitions;
  if (f.partition) partitions.push_back(*f.partition);
  if (auto s = consumer.assign(f.topic, partitions); !s) fail(s.err());

  status started;
  if (f.offset) {
    for (const auto& tp : consumer.assignment()) consumer.seek(tp, offset{*f.offset});
  } else if (!f.group.empty()) {
    started = consumer.seek_to_committed(f.from_beginning);
  } else if (f.from_beginning) {
    started = consumer.seek_to_beginning();
  } else {
    started = consumer.seek_to_end();
  }
  if (!started) fail(started.err());

  const uint64_t limit = f.max_messages.value_or(std::numeric_limits<uint64_t>::max());
  // --timeout-ms bounds each poll, and with it how long a retriable error (a deleted topic, a
  // leader that does not answer) is retried. Without it the consumer runs until --max-messages or
  // until it is killed, and each fetch retries for request.timeout.ms as every request does.
  const auto poll_timeout = f.timeout_ms ? std::chrono::milliseconds(*f.timeout_ms) : unbounded_poll;
  uint64_t printed = 0;
  while (printed < limit) {
    auto n = consumer.poll_each(
        poll_timeout,
        [&](const client::record_ref& r) {
          if (f.print_partition) std::cout << r.tp.partition << "\t";
          if (f.print_offset) std::cout << r.off.value() << "\t";
          if (f.print_key) {
            write(r.record.key);
            std::cout << "\t";
          }
          write(r.record.value);
          std::cout << "\n";
        },
        limit - printed);
    if (!n) fail(n.err());
    for (const auto& r : consumer.take_resets())
      if (r.truncation)
        std::cerr << "Log truncation detected on " << r.tp.topic << "-" << r.tp.partition
                  << ": the records read from offset " << r.to.value() << " up to "
                  << r.from.value()
                  << " are no longer in the log (an unclean leader election); resuming at "
                  << r.to.value() << std::endl;
      else
        std::cerr << "Offset " << r.from.value() << " of " << r.tp.topic << "-" << r.tp.partition
                  << " is out of range; resetting to " << r.to.value() << std::endl;
    printed += *n;
    std::cout.flush();
    if (*n > 0 && !f.group.empty()) {
      if (auto s = consumer.commit(); !s) fail(s.err());
    }
    if (*n == 0 && f.timeout_ms) break;
  }
  std::cerr << "Processed a total of " << printed << " messages" << std::endl;
}

} // namespace

void add_consume_command(CLI::App& app) {
  auto f = std::make_shared<consume_flags>();
  auto* cmd = app.add_subcommand("consume", "Print record values, one per line");
  cmd->add_option("topic", f->topic, "Topic to read")->required();
  cmd->add_option("--partition", f->partition, "Read only this partition (default: all)")
    ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  auto* beginning = cmd->add_flag("--from-beginning", f->from_beginning,
                                  "Start at the earliest offset (with --group: when nothing is committed)");
  cmd->add_option("--offset", f->offset, "Start at this offset in every assigned partition")
    ->check(integer_in(0))
    ->excludes(beginning);
  cmd->add_option("--group", f->group,
                  "Consumer group: start at its committed offsets and commit what was printed");
  cmd->add_option("--max-messages", f->max_messages, "Stop after this many records")->check(integer_in(1));
  cmd->add_option("--timeout-ms", f->timeout_ms,
                  "Stop when nothing new arrived for this long; also bounds retries of a failing fetch")
    ->check(integer_in(0));
  cmd->add_flag("--print-key", f->print_key, "Print KEY<TAB> before each value (null keys as 'null')");
  cmd->add_flag("--print-offset", f->print_offset, "Print OFFSET<TAB> before each record");
  cmd->add_flag("--print-partition", f->print_partition,
                "Print PARTITION<TAB> before each record (before its offset): offsets repeat "
                "across partitions");
  cmd->add_option_function<std::string>(
         "--check-crcs", [f](const std::string& text) { f->check_crcs = text == "true"; },
         "true or false (default: true): verify each fetched batch's CRC-32C and fail with "
         "CORRUPT_MESSAGE instead of printing a damaged batch (check.crcs)")
      ->check(CLI::IsMember({"true", "false"}))
      ->type_name("BOOL");
  add_client_options(cmd, f->client);
  cmd->callback([f] { run_consume(*f); });
}

} // namespace capstan::cli
