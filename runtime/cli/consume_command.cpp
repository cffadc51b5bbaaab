#include "runtime/cli/consume_command.hpp"

#include <csignal>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/consumer_properties.hpp"
#include "runtime/client/group_consumer.hpp"

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
  std::string include;
  std::vector<std::string> properties;
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

void print_record(const consume_flags& f, const client::record_ref& r) {
  if (f.print_partition) std::cout << r.tp.partition << "\t";
  if (f.print_offset) std::cout << r.off.value() << "\t";
  if (f.print_key) {
    write(r.record.key);
    std::cout << "\t";
  }
  write(r.record.value);
  std::cout << "\n";
}

void report_resets(const std::vector<client::position_reset>& resets) {
  for (const auto& r : resets)
    if (r.truncation)
      std::cerr << "Log truncation detected on " << r.tp.topic << "-" << r.tp.partition
                << ": the records read from offset " << r.to.value() << " up to " << r.from.value()
                << " are no longer in the log (an unclean leader election); resuming at " << r.to.value()
                << std::endl;
    else
      std::cerr << "Offset " << r.from.value() << " of " << r.tp.topic << "-" << r.tp.partition
                << " is out of range; resetting to " << r.to.value() << std::endl;
}

volatile std::sig_atomic_t stop_requested = 0;

extern "C" void request_stop(int) { stop_requested = 1; }

// As a member of the group: the group's members share the topic's partitions. Each poll that
// printed is committed (unless enable.auto.commit=false); Ctrl-C or SIGTERM ends the loop and
// leaves the group, so its partitions move at once rather than after the session timeout.
void run_group_consume(const consume_flags& f, const client::client_config& config,
                       client::cluster_client& client) {
  auto consumer = client::group_consumer::create(client, config, f.group);
  if (!consumer) fail(consumer.err());
  auto& c = **consumer;
  if (f.include.empty())
    c.subscribe({f.topic});
  else if (auto s = c.subscribe_matching(f.include); !s)
    fail(s.err().message, exit_usage);
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);

  const uint64_t limit = f.max_messages.value_or(std::numeric_limits<uint64_t>::max());
  // --timeout-ms: nothing printed for this long since the last record or the last rebalance
  // (a join's wait for the other members is not idleness).
  const auto idle_limit = std::chrono::milliseconds(f.timeout_ms.value_or(0));
  constexpr auto slice = std::chrono::milliseconds(500);
  auto idle_since = std::chrono::steady_clock::now();
  int32_t generation = c.generation();
  uint64_t printed = 0;
  while (printed < limit && !stop_requested) {
    auto n = c.poll_each(slice, [&](const client::record_ref& r) { print_record(f, r); }, limit - printed);
    if (!n) fail(n.err());
    report_resets(c.take_resets());
    printed += *n;
    std::cout.flush();
    const auto now = std::chrono::steady_clock::now();
    if (*n > 0 || c.generation() != generation) idle_since = now;
    generation = c.generation();
    if (f.timeout_ms && now - idle_since >= idle_limit) break;
  }
  if (auto s = c.close(); !s) std::cerr << "warning: " << s.err().to_string() << std::endl;
  std::cerr << "Processed a total of " << printed << " messages" << std::endl;
}

void run_consume(const consume_flags& f) {
  auto config = make_client_config(f.client);
  // As kafka-console-consumer: --from-beginning means auto.offset.reset=earliest.
  config.auto_offset_reset = f.from_beginning ? client::offset_reset::earliest : client::offset_reset::latest;
  config.check_crcs = f.check_crcs;
  for (const auto& p : f.properties) {
    const auto eq = p.find('=');
    if (eq == std::string::npos) fail("--consumer-property " + p + ": expected KEY=VALUE", exit_usage);
    if (auto s = client::set_consumer_property(config, p.substr(0, eq), p.substr(eq + 1)); !s)
      fail("--consumer-property: " + s.err().message, exit_usage);
  }
  if (f.topic.empty() == f.include.empty()) fail("give a topic or --include REGEX, not both", exit_usage);
  if (!f.include.empty() && f.group.empty()) fail("--include needs --group", exit_usage);
  auto client = connect_or_fail(config);
  if (!f.group.empty() && !f.partition && !f.offset) {
    run_group_consume(f, config, *client);
    return;
  }
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
        [&](const client::record_ref& r) { print_record(f, r); }, limit - printed);
    if (!n) fail(n.err());
    report_resets(consumer.take_resets());
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
  cmd->add_option("topic", f->topic, "Topic to read");
  cmd->add_option("--include", f->include,
                  "With --group: read every topic whose whole name matches this regular expression "
                  "(ECMAScript), looked up again every metadata.max.age.ms");
  cmd->add_option("--partition", f->partition, "Read only this partition (default: all)")
    ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  auto* beginning = cmd->add_flag("--from-beginning", f->from_beginning,
                                  "Start at the earliest offset (with --group: when nothing is committed)");
  cmd->add_option("--offset", f->offset, "Start at this offset in every assigned partition")
    ->check(integer_in(0))
    ->excludes(beginning);
  cmd->add_option("--group", f->group,
                  "Consumer group: join it and read the partitions it assigns this process (with "
                  "--partition or --offset: read those, as no member), start at its committed "
                  "offsets and commit what was printed");
  cmd->add_option("--consumer-property", f->properties,
                  "KEY=VALUE, repeatable: a consumer setting by its Kafka name, e.g. "
                  "partition.assignment.strategy=cooperative-sticky, group.instance.id=ID, "
                  "session.timeout.ms=N (docs/cli.md lists them)")
      ->type_name("KEY=VALUE");
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
