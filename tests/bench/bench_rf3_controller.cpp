// bench_rf3_controller: plays the controller for `capstan node` processes that run without one,
// for benchmarks (tests/bench/perf_rf3.sh). It connects to each node's cluster port, sends every
// node the topics' configs and the cluster (UpdateMetadata, with each node's client port, which
// clients are answered from), makes each topic's partitions led by the nodes in turn with every
// node in the ISR (LeaderAndIsr), answers the leaders' AlterPartition, prints "ready" and stays up
// until SIGTERM or SIGINT. It is tests/support/test_controller behind a command line:
//
//   bench_rf3_controller --node 1:CLIENT_PORT:CLUSTER_PORT --node 2:... --node 3:...
//       --topic perf-100 --topic perf-1024 [--partitions 1] [--min-insync-replicas 2]
//
// Every address is 127.0.0.1. Exit code 0 after a signal, 1 when a node cannot be reached or
// refuses its role.

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <CLI/CLI.hpp>

#include "tests/support/caf_fixture.hpp"
#include "tests/support/test_controller.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

constexpr caf::timespan control_timeout = std::chrono::seconds(30);

struct node_address {
  int32_t id = 0;
  uint16_t client_port = 0;
  uint16_t cluster_port = 0;
};

bool parse_node(const std::string& text, node_address& out) {
  unsigned id = 0, client = 0, cluster = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%u:%u:%u%c", &id, &client, &cluster, &tail) != 3) return false;
  if (client == 0 || client > 65535 || cluster == 0 || cluster > 65535) return false;
  out = node_address{static_cast<int32_t>(id), static_cast<uint16_t>(client), static_cast<uint16_t>(cluster)};
  return true;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "bench_rf3_controller: %s\n", why.c_str());
  return 1;
}

int run(const std::vector<node_address>& nodes, const std::vector<std::string>& topics, int32_t partitions,
        int32_t min_insync_replicas) {
  // Signals are taken by sigwait below, in no thread of the actor system.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  threaded_system system;
  auto controller = spawn_test_controller(system.sys());
  system.track(controller);
  std::vector<int32_t> ids;
  for (const auto& n : nodes) {
    auto endpoint = system.remote_actor<node_endpoint_actor>(n.cluster_port);
    if (!endpoint)
      return fail("node " + std::to_string(n.id) + " at 127.0.0.1:" + std::to_string(n.cluster_port) + ": " +
                  caf::to_string(endpoint.error()));
    auto ok = system.request<bool>(controller, control_timeout, connect_node_atom::value, n.id,
                                   caf::actor_cast<caf::actor>(*endpoint), n.cluster_port, n.client_port);
    if (!ok) return fail("connect node " + std::to_string(n.id) + ": " + caf::to_string(ok.error()));
    ids.push_back(n.id);
  }
  std::vector<topic_config_msg> configs;
  for (const auto& t : topics)
    configs.push_back(topic_config_msg{t, {}, false, {{"min.insync.replicas", std::to_string(min_insync_replicas)}}});
  if (auto ok = system.request<bool>(controller, control_timeout, topics_atom::value, configs); !ok)
    return fail("UpdateMetadata: " + caf::to_string(ok.error()));
  size_t next_leader = 0;
  for (const auto& t : topics) {
    for (int32_t p = 0; p < partitions; ++p) {
      const int32_t leader = ids[next_leader++ % ids.size()];
      auto errors = system.request<std::vector<partition_error_msg>>(
        controller, control_timeout, elect_atom::value, election{{t, p}, leader, 1, ids, ids, {}});
      if (!errors) return fail("LeaderAndIsr for " + t + ": " + caf::to_string(errors.error()));
      if (!errors->empty())
        return fail("LeaderAndIsr for " + t + "-" + std::to_string(p) + ": " +
                    std::string(to_string(errors->front().error)) + " " + errors->front().message);
      std::printf("%s-%d leader %d\n", t.c_str(), p, leader);
    }
  }
  std::printf("ready\n");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  caf::anon_send_exit(controller, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Plays the controller for local capstan nodes (benchmarks)"};
  std::vector<std::string> node_texts;
  std::vector<std::string> topics;
  int32_t partitions = 1;
  int32_t min_insync_replicas = 2;
  app.add_option("--node", node_texts, "A node as ID:CLIENT_PORT:CLUSTER_PORT on 127.0.0.1 (repeat)")->required();
  app.add_option("--topic", topics, "A topic to place on every node (repeat)")->required();
  app.add_option("--partitions", partitions, "Partitions per topic, led by the nodes in turn")
    ->capture_default_str()
    ->check(CLI::Range(1, 10000));
  app.add_option("--min-insync-replicas", min_insync_replicas, "The topics' min.insync.replicas")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  std::vector<node_address> nodes;
  for (const auto& text : node_texts) {
    node_address n;
    if (!parse_node(text, n)) return fail("--node " + text + " is not ID:CLIENT_PORT:CLUSTER_PORT");
    nodes.push_back(n);
  }
  return run(nodes, topics, partitions, min_insync_replicas);
}
