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
  std::vector<int32_t> peers;
  int32_t count = 0;
};

void run_fault(const fault_options& f, client::fault_kind kind, const std::string& done) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->inject_fault(kind, f.peers, f.count); !s) fail(s.err());
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

  auto* isolate = fault->add_subcommand(
      "isolate", "Drop every message between the node and the given nodes, both ways, until "
                 "cleared: the node gets fenced, a cut-off leader loses its ISR");
  isolate->add_option("--peers", f->peers, "Node ids to cut the node off from, e.g. 2,3")
      ->required()
      ->delimiter(',')
      ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  add_client_options(isolate, f->client);
  isolate->callback(
      [f] { run_fault(*f, client::fault_kind::isolate, "Isolated from nodes " + join(f->peers)); });

  auto* drop = fault->add_subcommand(
      "drop-produce-responses", "Append the next N produce requests on the node but answer each "
                                "with a lost connection instead of its result");
  drop->add_option("count", f->count, "How many produce responses to drop")
      ->required()
      ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  add_client_options(drop, f->client);
  drop->callback([f] {
    run_fault(*f, client::fault_kind::drop_produce_responses,
              "Dropping the next " + std::to_string(f->count) + " produce responses");
  });

  auto* clear = fault->add_subcommand("clear", "Undo every fault set on the node");
  add_client_options(clear, f->client);
  clear->callback([f] { run_fault(*f, client::fault_kind::clear, "Faults cleared"); });
}

} // namespace capstan::cli
