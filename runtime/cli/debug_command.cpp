#include "runtime/cli/debug_command.hpp"

#include <iostream>
#include <limits>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/option_checks.hpp"

namespace capstan::cli {

namespace {

struct fault_options {
  client_options client;
  client::fault_request fault;
};

void run_fault(fault_options& f, client::fault_kind kind, const std::string& done) {
  auto client = connect_or_fail(make_client_config(f.client));
  f.fault.kind = kind;
  if (auto s = client->inject_fault(f.fault); !s) fail(s.err());
  std::cout << done << "\n";
  std::cout.flush();
}

std::string join(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

} // namespace

void add_debug_command(CLI::App& app) {
  auto f = std::make_shared<fault_options>();
  auto* debug = app.add_subcommand("debug", "Failure injection for tests");
  debug->require_subcommand(1);
  auto* fault =
      debug->add_subcommand("fault", "The fault switch of the --bootstrap node; it must run with "
                                     "fault.injection.enable = true (off by default)");
  fault->require_subcommand(1);

  // The cuts: the same --peers, a different direction.
  const auto add_cut = [&](const std::string& name, const std::string& what,
                           client::fault_kind kind, const std::string& done) {
    auto* cut = fault->add_subcommand(name, what);
    cut->add_option("--peers", f->fault.peers, "Node ids, e.g. 2,3")
        ->required()
        ->delimiter(',')
        ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
    add_client_options(cut, f->client);
    cut->callback([f, kind, done] { run_fault(*f, kind, done + join(f->fault.peers)); });
  };
  add_cut("isolate",
          "Drop every message between the node and the given nodes, both ways, until cleared: "
          "the node gets fenced, a cut-off leader loses its ISR",
          client::fault_kind::isolate, "Isolated from nodes ");
  add_cut("drop-outgoing",
          "Drop what the node sends to the given nodes until cleared (one way); what they send "
          "it still arrives",
          client::fault_kind::drop_outgoing, "Dropping what the node sends to nodes ");
  add_cut("drop-incoming",
          "Drop what the node receives from the given nodes until cleared (one way); what it "
          "sends them still arrives",
          client::fault_kind::drop_incoming, "Dropping what the node receives from nodes ");

  auto* drop = fault->add_subcommand(
      "drop-produce-responses", "Append the next N produce requests on the node but answer each "
                                "with a lost connection instead of its result");
  drop->add_option("count", f->fault.count, "How many produce responses to drop")
      ->required()
      ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  add_client_options(drop, f->client);
  drop->callback([f] {
    run_fault(*f, client::fault_kind::drop_produce_responses,
              "Dropping the next " + std::to_string(f->fault.count) + " produce responses");
  });

  auto* drop_control = fault->add_subcommand(
      "drop-control", "Lose the LeaderAndIsr / UpdateMetadata / StopReplica messages the node's "
                      "controller sends: the next --count, then each with --probability, until "
                      "cleared");
  drop_control->add_option("--count", f->fault.count, "How many to lose first (default 0)")
      ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  drop_control
      ->add_option("--probability", f->fault.probability,
                   "Then lose each with this probability (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  add_client_options(drop_control, f->client);
  drop_control->callback([f] {
    run_fault(*f, client::fault_kind::drop_control,
              "Losing the next " + std::to_string(f->fault.count) +
                  " control messages, then each with probability " +
                  std::to_string(f->fault.probability));
  });

  auto* delay_control = fault->add_subcommand(
      "delay-control", "Send each LeaderAndIsr / UpdateMetadata / StopReplica message of the "
                       "node's controller late, until cleared");
  delay_control->add_option("--delay-ms", f->fault.delay_ms, "How late, in ms")
      ->required()
      ->check(integer_in(1, std::numeric_limits<int32_t>::max()));
  add_client_options(delay_control, f->client);
  delay_control->callback([f] {
    run_fault(*f, client::fault_kind::delay_control,
              "Delaying control messages by " + std::to_string(f->fault.delay_ms) + " ms");
  });

  struct disk_fault {
    const char* name;
    client::fault_kind kind;
    const char* errno_text; // what each failing call gets
    const char* done;       // the line printed once set
  };
  for (const auto& d : {
           disk_fault{"disk-full", client::fault_kind::disk_full,
                      "ENOSPC (no space left on device)", "The node's disk is full (ENOSPC)"},
           disk_fault{"disk-read-only", client::fault_kind::disk_read_only,
                      "EROFS (a file system remounted read-only)",
                      "The node's disk is read-only (EROFS)"},
           disk_fault{"disk-io-error", client::fault_kind::disk_io_error,
                      "EIO (a failing disk)", "The node's disk fails every write (EIO)"},
       }) {
    auto* cmd = fault->add_subcommand(
        d.name, std::string("Fail every write, fsync and file or directory creation under the "
                            "node's data dir with ") +
                    d.errno_text + ", until cleared");
    add_client_options(cmd, f->client);
    cmd->callback([f, d] { run_fault(*f, d.kind, d.done); });
  }

  auto* clear = fault->add_subcommand("clear", "Undo every fault set on the node");
  add_client_options(clear, f->client);
  clear->callback([f] { run_fault(*f, client::fault_kind::clear, "Faults cleared"); });
}

} // namespace capstan::cli
