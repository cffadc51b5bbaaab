#include "runtime/cli/cluster_command.hpp"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cluster/cluster_description.hpp"

namespace capstan::cli {

namespace {

std::string join(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

void run_describe(const client_options& options) {
  auto client = connect_or_fail(make_client_config(options));
  auto md = client->metadata();
  if (!md) fail(md.err());
  std::cout << "Cluster id: " << md->cluster_id << "\n";
  std::cout << "Controller: "
            << (md->controller_id < 0 ? std::string("none") : std::to_string(md->controller_id))
            << "\n";
  std::cout << "Nodes:\n";
  for (const auto& b : md->brokers) {
    std::cout << "\t" << b.node_id << "\t" << b.host << ":" << b.port
              << (b.node_id == md->controller_id ? "\t(controller)" : "") << "\n";
  }
  auto quorum = client->describe_cluster();
  if (!quorum) fail(quorum.err());
  std::cout << format_cluster_description(*quorum);
  std::cout << "Partitions:\n";
  for (const auto& [name, t] : md->topics) {
    for (const auto& p : t.partitions) {
      std::cout << "\t" << name << "-" << p.partition
                << "\tLeader: " << (p.leader < 0 ? std::string("none") : std::to_string(p.leader))
                << "\tEpoch: " << p.leader_epoch << "\tReplicas: " << join(p.replicas)
                << "\tIsr: " << join(p.isr) << "\n";
    }
  }
  std::cout.flush();
}

struct elect_flags {
  client_options client;
  std::string topic;
  int32_t partition = -1;
};

// One line per partition; fails (exit 1) when a partition's preferred replica could not be
// elected for another reason than that it leads already (as kafka-leader-election does).
void run_elect_leaders(const elect_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  std::vector<std::pair<std::string, int32_t>> wanted;
  if (!f.topic.empty()) {
    if (f.partition >= 0) {
      wanted.emplace_back(f.topic, f.partition);
    } else {
      auto md = client->metadata({f.topic});
      if (!md) fail(md.err());
      auto it = md->topics.find(f.topic);
      if (it == md->topics.end())
        fail(
            make_error(errc::unknown_topic_or_partition, "topic '" + f.topic + "' does not exist"));
      for (const auto& p : it->second.partitions) wanted.emplace_back(f.topic, p.partition);
    }
  }
  auto results = client->elect_leaders(wanted);
  if (!results) fail(results.err());
  size_t failed = 0;
  for (const auto& r : *results) {
    std::cout << r.topic << "-" << r.partition << "	";
    if (r.error == errc::none)
      std::cout << "elected the preferred leader";
    else
      std::cout << to_string(r.error) << ": " << r.message;
    std::cout << "\n";
    if (r.error != errc::none && r.error != errc::election_not_needed) ++failed;
  }
  std::cout.flush();
  if (failed > 0)
    fail(std::to_string(failed) + " partition(s) could not elect their preferred leader",
         exit_failed);
}

struct unregister_flags {
  client_options client;
  int32_t node = -1;
};

// Kafka's kafka-cluster unregister: the node leaves the metadata, so `cluster describe` stops
// listing it.
void run_unregister(const unregister_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->unregister_node(f.node); !s) fail(s.err());
  std::cout << "Unregistered node " << f.node << "\n";
  std::cout.flush();
}

struct voter_flags {
  client_options client;
  int32_t node = -1;
  std::string endpoint;
};

// KIP-853's add-controller: returns once the new voter set committed.
void run_add_voter(const voter_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->add_voter(f.node, f.endpoint); !s) fail(s.err());
  std::cout << "Added node " << f.node << " (" << f.endpoint
            << ") to the controller quorum's voters\n";
  std::cout.flush();
}

// KIP-853's remove-controller: returns once the new voter set committed.
void run_remove_voter(const voter_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->remove_voter(f.node); !s) fail(s.err());
  std::cout << "Removed node " << f.node << " from the controller quorum's voters\n";
  std::cout.flush();
}

} // namespace

void add_cluster_command(CLI::App& app) {
  auto options = std::make_shared<client_options>();
  auto* cluster =
      app.add_subcommand("cluster", "Inspect the cluster, move leaders to preferred replicas, "
                                    "unregister nodes gone for good and change the controller "
                                    "quorum's voters");
  cluster->require_subcommand(1);
  auto* describe = cluster->add_subcommand(
      "describe", "Nodes, the controller quorum and its members' Raft state, registered nodes and "
                  "their fencing, partition leaders and ISR");
  add_client_options(describe, *options);
  describe->callback([options] { run_describe(*options); });

  auto elect = std::make_shared<elect_flags>();
  auto* elect_cmd = cluster->add_subcommand(
      "elect-leaders", "Make each partition's preferred replica (its first) the leader where it is "
                       "live and in the ISR (Kafka: kafka-leader-election --election-type "
                       "PREFERRED); one line per partition");
  elect_cmd->add_option("--topic", elect->topic, "Only this topic's partitions (default: all)");
  elect_cmd->add_option("--partition", elect->partition, "Only this partition of --topic")
      ->check(CLI::NonNegativeNumber)
      ->needs(elect_cmd->get_option("--topic"));
  add_client_options(elect_cmd, elect->client);
  elect_cmd->callback([elect] { run_elect_leaders(*elect); });

  auto unregister = std::make_shared<unregister_flags>();
  auto* unregister_cmd = cluster->add_subcommand(
      "unregister", "Remove a stopped node gone for good from the cluster's metadata, after its "
                    "partitions were moved off it with `topic reassign` (Kafka: kafka-cluster "
                    "unregister); refused while the node runs");
  unregister_cmd->add_option("--id", unregister->node, "The node's id")
      ->required()
      ->check(CLI::NonNegativeNumber);
  add_client_options(unregister_cmd, unregister->client);
  unregister_cmd->callback([unregister] { run_unregister(*unregister); });

  auto add_voter = std::make_shared<voter_flags>();
  auto* add_voter_cmd = cluster->add_subcommand(
      "add-voter",
      "Make a node a controller quorum voter (Kafka: kafka-metadata-quorum add-controller). The "
      "node must already run a quorum member: it is started with the cluster's same "
      "--controller-quorum, which names it. Returns once the new voter set committed, which "
      "waits for the node to catch up with the quorum's log (up to 15 s). One voter change at a "
      "time; to replace a "
      "controller, add the new one first, then remove the old one. Errors: DUPLICATE_VOTER (the "
      "node is a voter already), INVALID_REQUEST (a bad --endpoint), REQUEST_TIMED_OUT (another "
      "voter change is under way, or the node did not catch up: is it running a quorum member?), "
      "NOT_CONTROLLER (no active controller was found)");
  add_voter_cmd->add_option("--id,--node-id", add_voter->node, "The node's id")
      ->required()
      ->check(CLI::NonNegativeNumber);
  add_voter_cmd
      ->add_option("--endpoint", add_voter->endpoint,
                   "The node's cluster listener, HOST:PORT (what --controller-quorum names after "
                   "the node's 'ID@')")
      ->required();
  add_client_options(add_voter_cmd, add_voter->client);
  add_voter_cmd->callback([add_voter] { run_add_voter(*add_voter); });

  auto remove_voter = std::make_shared<voter_flags>();
  auto* remove_voter_cmd = cluster->add_subcommand(
      "remove-voter",
      "Remove a node from the controller quorum's voters (Kafka: kafka-metadata-quorum "
      "remove-controller); the node may be stopped. Returns once the new voter set committed. "
      "One voter change at a time. Errors: VOTER_NOT_FOUND (the node is no voter), "
      "INVALID_REQUEST (it is the last voter), REQUEST_TIMED_OUT (another voter change is under "
      "way, or the remaining voters have no live majority), NOT_CONTROLLER (no active controller "
      "was found)");
  remove_voter_cmd->add_option("--id,--node-id", remove_voter->node, "The node's id")
      ->required()
      ->check(CLI::NonNegativeNumber);
  add_client_options(remove_voter_cmd, remove_voter->client);
  remove_voter_cmd->callback([remove_voter] { run_remove_voter(*remove_voter); });
}

} // namespace capstan::cli
