// safety_harness: randomized, seeded multi-fault runs against a 3-node cluster of real `capstan
// node` processes, checking that capstan keeps its promises when faults combine (docs/safety.md).
// It starts its own cluster (fault.injection.enable on, two topics with replication factor 3 and
// min.insync.replicas=2), runs idempotent acks=all producers and consumers that never reset their
// position, mixes kills, pauses, cut links, lost or late control messages, damaged segment tails
// and a raised min.insync.replicas at random moments (sometimes two at once), then checks every
// partition's history with Jepsen's anomaly names and that the cluster is whole again.
//
//   build/tests/safety_harness --seed 7                  # a short run (tests/safety/seeds.txt)
//   build/tests/safety_harness --seed 7 --profile long   # an hour of faults (long.sh)
//   build/tests/safety_harness --scenario raised-min-isr # a fixed schedule for one behaviour
//
// The same seed draws the same schedule of faults (the real timing may differ). It prints its
// seed first; on any anomaly it prints the seed, the schedule, what each fault hit, the anomalies
// and the table, and exits 1 (2 when the harness itself could not run).

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>

#include "tests/safety/safety_report.hpp"
#include "tests/safety/safety_run.hpp"
#include "tests/support/test_failure.hpp"

using namespace capstan::safety;

int main(int argc, char** argv) {
  CLI::App app{"Seeded multi-fault safety runs against a 3-node capstan cluster (docs/safety.md)"};
  uint64_t seed = std::random_device{}();
  std::string profile = "short";
  int duration_s = 0;
  int faults = 0;
  std::string scenario;
  std::string report_file;
  std::string title = "safety run";
  bool fail_fast = false;
  bool print_schedule = false;
  run_options o;
  o.binary = CAPSTAN_BINARY;
  app.add_option("--seed", seed, "Seed of the fault schedule (default: a random one, printed)");
  app.add_option("--profile", profile,
                 "short: 6 faults within 150 s (CI); long: 600 faults drawn, none started "
                 "after an hour (about 550 fit in it on 2 cores)")
      ->check(CLI::IsMember({"short", "long"}));
  app.add_option("--duration", duration_s,
                 "No new fault step after this many seconds (default: the profile's)")
      ->check(CLI::Range(1, 86400));
  app.add_option("--faults", faults, "Faults to draw (default: the profile's)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--scenario", scenario,
                 "A fixed schedule instead of a drawn one; implies --fail-fast")
      ->check(CLI::IsMember(scenario_names()));
  app.add_flag("--fail-fast", fail_fast,
               "Stop at the first anomaly a step finds, without the final checks");
  app.add_option("--report", report_file, "Also write the results as markdown to this file");
  app.add_option("--title", title, "The markdown report's heading");
  app.add_option("--partitions", o.partitions, "Partitions per topic")->check(CLI::Range(1, 64));
  app.add_option("--producers", o.producers, "Producers, each writing to every partition")
      ->check(CLI::Range(1, 16));
  app.add_option("--consumers", o.consumers, "Consumers per topic")->check(CLI::Range(1, 8));
  app.add_option("--pause-us", o.pause_us, "Each producer sends one record per this many µs")
      ->check(CLI::Range(100, 1000000));
  app.add_option("--logs", o.logs_dir, "On an anomaly, copy the nodes' logs to this directory");
  app.add_option("--binary", o.binary, "The capstan binary");
  app.add_flag("--print-schedule", print_schedule, "Print the schedule and exit");
  CLI11_PARSE(app, argc, argv);

  const bool long_profile = profile == "long";
  if (!faults) faults = long_profile ? 600 : 6;
  o.duration_s = duration_s ? duration_s : (long_profile ? 3600 : 150);
  if (!scenario.empty()) {
    o.schedule = *scenario_schedule(scenario);
    fail_fast = true;
    std::cout << "scenario " << scenario << std::endl;
  } else {
    o.schedule = draw_schedule(seed, faults, profile);
    std::cout << "seed " << seed << std::endl;
  }
  o.fail_fast = fail_fast;
  const std::string replay = scenario.empty()
                                 ? "safety_harness --seed " + std::to_string(seed) + " --profile " +
                                       profile + " --faults " + std::to_string(faults) +
                                       " --duration " + std::to_string(o.duration_s)
                                 : "safety_harness --scenario " + scenario;
  std::cout << to_string(o.schedule) << std::flush;
  if (print_schedule) return 0;

  int code = 0;
  const auto report = [&](const run_result& r) {
    std::cout << "\n" << text_table(r);
    if (!report_file.empty()) std::ofstream(report_file) << markdown_report(r, title);
    if (r.anomalies.empty()) {
      std::cout << "no anomaly; replay with: " << replay << std::endl;
      return;
    }
    code = 1;
    std::cout << "\nANOMALIES in " << o.schedule.origin << "\n"
              << capstan::test::describe(r.anomalies) << "\nthe schedule it ran:\n"
              << to_string(r.schedule) << "what each fault hit:\n";
    for (const auto& e : r.events) std::cout << "  " << e << "\n";
    // Again last, where a log cut in the middle (CI's) still shows them.
    std::cout << "in short, " << r.anomalies.size() << " anomalies:\n";
    for (size_t i = 0; i < r.anomalies.size() && i < 5; ++i)
      std::cout << "  " << r.anomalies[i].kind << ": " << r.anomalies[i].detail << "\n";
    std::cout << "replay with: " << replay << std::endl;
  };
  try {
    run_safety(o, report);
  } catch (const std::exception& e) {
    std::cout << "harness error in " << o.schedule.origin << ": " << e.what()
              << "\nreplay with: " << replay << std::endl;
    return 2;
  }
  return code;
}
