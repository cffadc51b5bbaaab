#include "runtime/cli/cluster_command.hpp"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
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

} // namespace

void add_cluster_command(CLI::App& app) {
  auto options = std::make_shared<client_options>();
  auto* cluster = app.add_subcommand("cluster", "Inspect the cluster");
  cluster->require_subcommand(1);
  auto* describe = cluster->add_subcommand(
      "describe", "Nodes, the controller quorum and its members' Raft state, registered nodes and "
                  "their fencing, partition leaders and ISR");
  add_client_options(describe, *options);
  describe->callback([options] { run_describe(*options); });
}

} // namespace capstan::cli
