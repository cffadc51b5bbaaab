// capstan: the broker and its tools in one binary.
//
//   capstan node [--config FILE] [--node-id N] [--data-dir DIR] [--listen HOST:PORT]
//                [--cluster-listen HOST:PORT] [--metrics-listen HOST:PORT]
//                [--kafka-listen HOST:PORT] [--controller-quorum ID@HOST:PORT,...] [--log-level LEVEL]
//       Runs a node (single-node cluster by default): recovers its topics' logs, serves the client
//       RPC and the metrics endpoint until SIGINT/SIGTERM, then flushes and writes checkpoints.
//   capstan log dump DIR [--from OFFSET] [--max-batches N]
//       Prints the batches of a partition directory (like kafka-dump-log), validating each.
//   capstan log repair [--data-dir DIR] [--partition TOPIC-N]... [--dry-run | --execute]
//       Shows (and with --execute accepts) the loss in damaged partitions of a stopped node.
//   capstan topic create|list|describe|delete, capstan produce, capstan consume,
//   capstan perf produce|consume, capstan cluster describe,
//   capstan groups list|describe|reset-offsets,
//   capstan debug fault isolate|drop-produce-responses|clear
//       Client tools against a running cluster (--bootstrap HOST:PORT,..., default
//       127.0.0.1:9192); docs/cli.md describes each.
//
// `capstan --help` and `capstan SUBCOMMAND --help` describe every option. Exit codes: 0 success,
// 1 the command failed, 2 the command line asked for something invalid (runtime/cli/exit_codes.hpp,
// docs/cli.md).

#include <memory>

#include <CLI/CLI.hpp>

#include "runtime/cli/cluster_command.hpp"
#include "runtime/cli/consume_command.hpp"
#include "runtime/cli/debug_command.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/groups_command.hpp"
#include "runtime/cli/log_dump.hpp"
#include "runtime/cli/log_repair_command.hpp"
#include "runtime/cli/node_command.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/cli/perf_command.hpp"
#include "runtime/cli/produce_command.hpp"
#include "runtime/cli/topic_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"capstan: a replicated, partitioned commit-log broker", "capstan"};
  app.require_subcommand(1);

  capstan::cli::add_node_command(app);
  capstan::cli::add_topic_command(app);
  capstan::cli::add_produce_command(app);
  capstan::cli::add_consume_command(app);
  capstan::cli::add_perf_command(app);
  capstan::cli::add_cluster_command(app);
  capstan::cli::add_groups_command(app);
  capstan::cli::add_debug_command(app);

  auto dump = std::make_shared<capstan::cli::dump_options>();
  auto* log_cmd = app.add_subcommand("log", "Inspect partition logs on disk");
  log_cmd->require_subcommand(1);
  auto* dump_cmd = log_cmd->add_subcommand("dump", "Print and validate the batches of a partition directory");
  dump_cmd->add_option("dir", dump->dir, "Partition directory (e.g. capstan-data/orders-0)")
    ->required()
    ->check(CLI::ExistingDirectory);
  dump_cmd->add_option("--from", dump->from, "First offset to print")
    ->capture_default_str()
    ->check(capstan::cli::integer_in(0));
  dump_cmd->add_option("--max-batches", dump->max_batches, "Stop after this many batches")
    ->capture_default_str()
    ->check(capstan::cli::integer_in(1));
  dump_cmd->add_flag("--records", dump->print_records, "Also print each record");
  dump_cmd->callback([dump] {
    if (int rc = capstan::cli::run_log_dump(*dump); rc != capstan::cli::exit_ok) throw CLI::RuntimeError(rc);
  });
  capstan::cli::add_log_repair_command(*log_cmd);

  return capstan::cli::run_app(app, argc, argv);
}
