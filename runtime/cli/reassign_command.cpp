#include "runtime/cli/reassign_command.hpp"

#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/cluster/reassignment_plan.hpp"

namespace capstan::cli {

namespace {

struct reassign_flags {
  client_options client;
  std::string topic;
  int32_t partition = -1;
  std::vector<int32_t> replicas;
  std::string replace; // OLD=NEW
  bool cancel = false;
};

std::string join(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

// OLD=NEW of --replace, as two node ids, or a usage failure.
std::pair<int32_t, int32_t> parse_replacement(const std::string& text) {
  auto eq = text.find('=');
  auto usage = [&] {
    fail("--replace: '" + text + "' is not OLD=NEW (two node ids, e.g. 1=4)", exit_usage);
  };
  if (eq == std::string::npos) usage();
  try {
    size_t used = 0;
    const auto old_text = text.substr(0, eq);
    const auto new_text = text.substr(eq + 1);
    const int old_id = std::stoi(old_text, &used);
    if (used != old_text.size() || old_id < 0) usage();
    const int new_id = std::stoi(new_text, &used);
    if (used != new_text.size() || new_id < 0) usage();
    return {old_id, new_id};
  } catch (const std::exception&) {
    usage();
  }
  return {}; // not reached: usage() does not return
}

// One line per partition; fails (exit 1) when a partition's request was refused, except a cancel
// of a partition that runs none when no partition was named.
void run_reassign(const reassign_flags& f) {
  const int modes = (f.replicas.empty() ? 0 : 1) + (f.replace.empty() ? 0 : 1) + (f.cancel ? 1 : 0);
  if (modes != 1) fail("give exactly one of --replicas, --replace and --cancel", exit_usage);
  if (f.topic.empty() && f.replace.empty())
    fail("--replicas and --cancel need a topic", exit_usage);
  std::optional<int32_t> partition;
  if (f.partition >= 0) partition = f.partition;
  auto client = connect_or_fail(make_client_config(f.client));
  auto md = f.topic.empty() ? client->metadata() : client->metadata({f.topic});
  if (!md) fail(md.err());
  std::optional<std::string> topic;
  if (!f.topic.empty()) topic = f.topic;
  result<std::vector<client::reassignment_request>> plan =
      std::vector<client::reassignment_request>{};
  if (!f.replace.empty()) {
    if (partition) fail("--replace moves whole topics: leave out --partition", exit_usage);
    auto [from, to] = parse_replacement(f.replace);
    plan = plan_node_replacement(*md, topic, from, to);
  } else {
    plan = plan_partition_targets(*md, f.topic, partition, f.cancel ? std::vector<int32_t>{}
                                                                    : f.replicas);
  }
  if (!plan) fail(plan.err());
  if (plan->empty()) {
    std::cout << "No partition has a replica on that node: nothing to move." << std::endl;
    return;
  }
  auto results = client->reassign_partitions(*plan);
  if (!results) fail(results.err());
  size_t failed = 0;
  for (size_t i = 0; i < results->size(); ++i) {
    const auto& r = (*results)[i];
    std::cout << r.topic << "-" << r.partition << "\t";
    if (r.error != errc::none)
      std::cout << to_string(r.error) << ": " << r.message;
    else if (f.cancel)
      std::cout << "reassignment cancelled";
    else
      std::cout << "moving to replicas " << (i < plan->size() ? join((*plan)[i].replicas) : "?");
    std::cout << "\n";
    const bool benign = f.cancel && !partition && r.error == errc::no_reassignment_in_progress;
    if (r.error != errc::none && !benign) ++failed;
  }
  std::cout.flush();
  if (failed > 0) fail(std::to_string(failed) + " partition(s) were refused", exit_failed);
}

} // namespace

void add_reassign_command(CLI::App& topic) {
  auto f = std::make_shared<reassign_flags>();
  auto* cmd = topic.add_subcommand(
      "reassign",
      "Move partitions' replicas to other nodes (Kafka: kafka-reassign-partitions --execute): "
      "the new replicas are added and catch up first, the old ones are dropped and their logs "
      "deleted once every new replica is in the ISR; watch `topic describe` until the replicas "
      "read as asked. One line per partition");
  cmd->add_option("name", f->topic,
                  "Topic to move (needed by --replicas and --cancel; --replace without it: every "
                  "topic)");
  cmd->add_option("--partition", f->partition, "Only this partition of the topic")
      ->check(integer_in(0, 9999));
  cmd->add_option("--replicas", f->replicas,
                  "The target replicas, node ids, the first the preferred leader (e.g. 2,3,4)")
      ->delimiter(',')
      ->check(integer_in(0, 2147483647));
  cmd->add_option("--replace", f->replace,
                  "OLD=NEW: every partition with a replica on node OLD gets one on node NEW "
                  "instead, in the same place of its replica list (replacing a lost node)");
  cmd->add_flag("--cancel", f->cancel,
                "Cancel the running reassignment: drop the replicas it added, keep the ones it was "
                "removing");
  add_client_options(cmd, f->client);
  cmd->callback([f] { run_reassign(*f); });
}

} // namespace capstan::cli
