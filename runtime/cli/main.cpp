// capstan: the broker and its tools in one binary.
//
//   capstan node [--data-dir DIR] [--node-id N] [--log-level LEVEL]
//       Runs a node. For now it opens and recovers every partition log found under the data dir
//       (one folder per topic-partition), reports what it found, and serves until SIGINT/SIGTERM,
//       then flushes and closes every log.
//   capstan log dump DIR [--from OFFSET] [--max-batches N]
//       Prints the batches of a partition directory (like kafka-dump-log), validating each.
//
// `capstan --help` and `capstan SUBCOMMAND --help` describe every option.

#include <CLI/CLI.hpp>

#include "runtime/cli/log_dump.hpp"
#include "runtime/cli/node_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"capstan: a replicated, partitioned commit-log broker"};
  app.require_subcommand(1);

  capstan::cli::node_options node;
  auto* node_cmd = app.add_subcommand("node", "Run a capstan node (single-node default)");
  node_cmd->add_option("--data-dir", node.data_dir, "Directory holding the partition logs")
    ->capture_default_str();
  node_cmd->add_option("--node-id", node.node_id, "This node's id")->capture_default_str()
    ->check(CLI::Range(0, 1 << 30));
  node_cmd->add_option("--log-level", node.log_level, "trace, debug, info, warn, error")
    ->capture_default_str()
    ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  capstan::cli::dump_options dump;
  auto* log_cmd = app.add_subcommand("log", "Inspect partition logs on disk");
  log_cmd->require_subcommand(1);
  auto* dump_cmd = log_cmd->add_subcommand("dump", "Print and validate the batches of a partition directory");
  dump_cmd->add_option("dir", dump.dir, "Partition directory (e.g. capstan-data/orders-0)")
    ->required()
    ->check(CLI::ExistingDirectory);
  dump_cmd->add_option("--from", dump.from, "First offset to print")->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  dump_cmd->add_option("--max-batches", dump.max_batches, "Stop after this many batches")
    ->capture_default_str()
    ->check(CLI::PositiveNumber);
  dump_cmd->add_flag("--records", dump.print_records, "Also print each record");

  CLI11_PARSE(app, argc, argv);
  if (node_cmd->parsed()) return capstan::cli::run_node(node);
  if (dump_cmd->parsed()) return capstan::cli::run_log_dump(dump);
  return 2;
}
