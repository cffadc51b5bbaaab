#include "runtime/cli/log_repair_command.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/node/data_dir.hpp"
#include "actors/node/data_dir_repair.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"

namespace capstan::cli {

namespace {

struct repair_flags {
  std::string data_dir = "./capstan-data";
  std::vector<std::string> partitions;
  bool execute = false;
  // Only so that --dry-run can be said explicitly: a dry run is what happens without --execute.
  bool dry_run = false;
};

// Exit codes as every subcommand's (docs/cli.md, "Exit codes"); a dry run that finds damage is
// exit_failed, as a log dump that finds a corrupt batch.
void run_log_repair(const repair_flags& flags) {
  spdlog::set_default_logger(get_logger());
  std::error_code ec;
  if (!std::filesystem::is_directory(flags.data_dir, ec))
    fail("capstan log repair: --data-dir: " + flags.data_dir + " is not a directory", exit_usage);
  // A running node holds the lock: its partitions are its own business.
  auto lock = data_dir_lock::acquire(flags.data_dir);
  if (!lock) fail(lock.err());
  auto repairs = find_repairs(flags.data_dir, flags.partitions);
  if (!repairs) fail(repairs.err());
  if (repairs->partitions.empty()) {
    std::cout << "No damaged partition of node " << repairs->node_id << " in " << flags.data_dir << ".\n";
    return;
  }
  for (const auto& r : repairs->partitions) {
    std::cout << r.partition << ": " << r.damage << "\n";
    for (const auto& step : r.plan.steps) std::cout << "  - " << step.text << "\n";
  }
  if (!flags.execute) {
    std::cout << repairs->partitions.size()
              << " damaged partition(s); nothing was changed (dry run). To accept the loss, run "
                 "again with --execute.\n";
    std::cout.flush();
    throw CLI::RuntimeError(exit_failed);
  }
  if (auto s = apply_repairs(flags.data_dir, *repairs); !s) fail(s.err());
  std::cout << "Repaired " << repairs->partitions.size() << " partition(s); what was taken out is in "
            << (std::filesystem::path(flags.data_dir) / repair_moved_dir).string()
            << ". The node re-validates them at its next start.\n";
}

} // namespace

void add_log_repair_command(CLI::App& log_command) {
  auto flags = std::make_shared<repair_flags>();
  auto* cmd = log_command.add_subcommand(
    "repair",
    "Accept the loss in damaged partitions of a stopped node (dry run unless --execute); exit "
    "code 0: nothing damaged, or repaired; 1: damage found by a dry run, or an error");
  cmd->add_option("--data-dir", flags->data_dir, "The stopped node's data dir (log.dirs)")
    ->capture_default_str();
  cmd->add_option("--partition", flags->partitions,
                  "Only this partition, as TOPIC-N (repeatable; default: every damaged one)");
  auto* execute = cmd->add_flag("--execute", flags->execute, "Apply the repairs shown");
  cmd->add_flag("--dry-run", flags->dry_run, "Only show the damage and the repairs (the default)")
    ->excludes(execute);
  cmd->callback([flags] { run_log_repair(*flags); });
}

} // namespace capstan::cli
