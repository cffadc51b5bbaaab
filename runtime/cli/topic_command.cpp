#include "runtime/cli/topic_command.hpp"

#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/cli/reassign_command.hpp"
#include "runtime/cluster/partition_availability.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan::cli {

namespace {

struct topic_flags {
  client_options client;
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  std::vector<std::string> configs;
  std::vector<std::string> deleted_configs;
  // describe: only these partitions, as kafka-topics --describe's filters.
  bool under_replicated = false;
  bool unavailable = false;
};

// Whether describe prints partition `p` under the flags: every one without a filter; with
// --under-replicated-partitions those whose ISR is smaller than their replica set, with
// --unavailable-partitions those without a live leader (either filter matching is enough).
bool wanted(const topic_flags& f, const partition_assignment& p, const std::set<int32_t>& live) {
  if (!f.under_replicated && !f.unavailable) return true;
  return (f.under_replicated && p.isr.size() < p.replicas.size()) ||
         (f.unavailable && (p.leader < 0 || live.count(p.leader) == 0));
}

void print_configs(const std::map<std::string, std::string>& configs, bool overrides,
                   const std::map<std::string, std::string>& topic_overrides) {
  bool first = true;
  for (const auto& [k, v] : configs) {
    if ((topic_overrides.count(k) != 0) != overrides) continue;
    std::cout << (first ? "" : ",") << k << "=" << v;
    first = false;
  }
}

// Kafka's kafka-topics.sh --describe layout: a topic line (`Configs:` the topic's overrides, as
// Kafka prints them, then `Defaults:` the node defaults that apply to the others), then one line
// per partition; after Kafka's columns, the replicas on nodes that are not live, the wiped ones
// (back on a new data dir, not counted by recovery until back in the ISR) and, without a leader,
// why. With a filter, as in Kafka, only the partition lines that match. `effective`: every
// config's value.
void print_topic(const topic_flags& f, const topic_metadata& t,
                 const std::map<std::string, std::string>& effective,
                 const std::set<int32_t>& live) {
  if (!f.under_replicated && !f.unavailable) {
    const size_t rf = t.partitions.empty() ? 0 : t.partitions.front().replicas.size();
    std::cout << "Topic: " << t.name << "\tTopicId: " << to_base64_uuid(t.id)
              << "\tPartitionCount: " << t.partitions.size() << "\tReplicationFactor: " << rf
              << "\tConfigs: ";
    print_configs(effective, true, t.configs);
    std::cout << "\tDefaults: ";
    print_configs(effective, false, t.configs);
    std::cout << "\n";
  }
  for (const auto& p : t.partitions) {
    if (!wanted(f, p, live)) continue;
    std::cout << "\tTopic: " << t.name << "\tPartition: " << p.partition
              << "\tLeader: " << (p.leader < 0 ? std::string("none") : std::to_string(p.leader))
              << "\tReplicas: " << join_node_ids(p.replicas) << "\tIsr: " << join_node_ids(p.isr);
    if (auto down = offline_replicas(p, live); !down.empty())
      std::cout << "\tOffline: " << join_node_ids(down);
    if (!p.wiped.empty()) std::cout << "\tWiped: " << join_node_ids(p.wiped);
    if (auto why = why_offline(p, live, effective); !why.empty())
      std::cout << "\tUnavailable: " << why;
    std::cout << "\n";
  }
}

std::map<std::string, std::string> parse_configs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const auto& kv : pairs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      fail("--config '" + kv + "' is not KEY=VALUE", exit_usage);
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

void run_create(const topic_flags& f) {
  topic_spec spec{f.name, f.partitions, f.replication_factor, parse_configs(f.configs)};
  auto client = connect_or_fail(make_client_config(f.client));
  auto created = client->create_topic(spec);
  if (!created) fail(created.err());
  std::cout << "Created topic " << f.name << "." << std::endl;
}

void run_list(const topic_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  auto topics = client->list_topics();
  if (!topics) fail(topics.err());
  for (const auto& t : *topics) std::cout << t << "\n";
  std::cout.flush();
}

void run_describe(const topic_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  std::vector<std::string> wanted;
  if (!f.name.empty()) wanted.push_back(f.name);
  auto md = client->metadata(wanted);
  if (!md) fail(md.err());
  std::set<int32_t> live;
  for (const auto& b : md->brokers) live.insert(b.node_id);
  for (auto& [name, t] : md->topics) {
    // Without the effective values (a failed describeConfigs), the overrides are what is known.
    // A filter prints no topic line, but a partition's `Unavailable:` needs min.insync.replicas.
    auto effective = client->describe_configs(name);
    print_topic(f, t, effective ? *effective : t.configs, live);
  }
  std::cout.flush();
}

void run_alter_config(const topic_flags& f) {
  if (f.configs.empty() && f.deleted_configs.empty())
    fail("alter-config needs --config KEY=VALUE or --delete-config KEY", exit_usage);
  auto configs = parse_configs(f.configs);
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->alter_configs(f.name, configs, f.deleted_configs); !s) fail(s.err());
  std::cout << "Altered the configs of topic " << f.name << "." << std::endl;
}

void run_add_partitions(const topic_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->create_partitions(f.name, f.partitions); !s) fail(s.err());
  std::cout << "Topic " << f.name << " has " << f.partitions << " partitions now." << std::endl;
}

void run_delete(const topic_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  if (auto s = client->delete_topic(f.name); !s) fail(s.err());
  std::cout << "Deleted topic " << f.name << "." << std::endl;
}

} // namespace

void add_topic_command(CLI::App& app) {
  auto f = std::make_shared<topic_flags>();
  auto* topic =
      app.add_subcommand("topic",
                         "Create, list, describe, alter, grow, reassign and delete topics");
  topic->require_subcommand(1);

  auto* create = topic->add_subcommand("create", "Create a topic");
  create->add_option("name", f->name, "Topic name: 1-249 characters of [a-zA-Z0-9._-]")->required();
  create->add_option("--partitions", f->partitions, "Number of partitions (1-10000)")
      ->capture_default_str()
      ->check(integer_in(1, 10000));
  create->add_option("--replication-factor", f->replication_factor, "Replicas per partition")
      ->capture_default_str()
      ->check(integer_in(1, 32767));
  create->add_option("--config", f->configs, "Topic config KEY=VALUE (Kafka names), repeatable");
  add_client_options(create, f->client);
  create->callback([f] { run_create(*f); });

  auto* list = topic->add_subcommand("list", "List topic names");
  add_client_options(list, f->client);
  list->callback([f] { run_list(*f); });

  auto* describe =
      topic->add_subcommand("describe", "Show partitions (leader, replicas, ISR) and configs");
  describe->add_option("name", f->name, "Topic to describe (default: every topic)");
  describe->add_flag("--under-replicated-partitions", f->under_replicated,
                     "Only partitions whose ISR is smaller than their replica set");
  describe->add_flag("--unavailable-partitions", f->unavailable,
                     "Only partitions without a live leader");
  add_client_options(describe, f->client);
  describe->callback([f] { run_describe(*f); });

  auto* alter = topic->add_subcommand(
      "alter-config",
      "Set or remove topic configs; the topic's other overrides keep their values");
  alter->add_option("name", f->name, "Topic to change")->required();
  alter->add_option("--config", f->configs, "Topic config KEY=VALUE (Kafka names), repeatable");
  alter->add_option("--delete-config", f->deleted_configs,
                    "Topic config KEY to stop overriding (the node's default applies again), "
                    "repeatable");
  add_client_options(alter, f->client);
  alter->callback([f] { run_alter_config(*f); });

  auto* grow = topic->add_subcommand(
      "add-partitions",
      "Grow a topic to more partitions (Kafka: kafka-topics --alter --partitions); "
      "records already written stay where they are");
  grow->add_option("name", f->name, "Topic to grow")->required();
  grow->add_option("--partitions", f->partitions, "The new total number of partitions (1-10000)")
      ->required()
      ->check(integer_in(1, 10000));
  add_client_options(grow, f->client);
  grow->callback([f] { run_add_partitions(*f); });

  auto* del = topic->add_subcommand("delete", "Delete a topic and its data");
  del->add_option("name", f->name, "Topic to delete")->required();
  add_client_options(del, f->client);
  del->callback([f] { run_delete(*f); });

  add_reassign_command(*topic);
}

} // namespace capstan::cli
