#pragma once

// A cluster of real `capstan node` processes with their own controller quorum, for system tests:
// three voters (--controller-quorum names each one's cluster listener, pinned to a free port so
// that a restarted voter comes back where the others look for it) and `brokers` more nodes that
// are brokers only. Short heartbeats, sessions and elections, so that failover takes seconds; the
// tests wait for outcomes, never for these. Everything goes through the real CLI at a node the
// caller names. Every node is stopped by pid: the destructor kills what is still running. A wait
// that runs out throws test_failure (test_failure.hpp).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/node_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::test {

class node_cluster {
public:
  // Starts voters 1..3 and nodes 4..3+brokers, each waited for until it is ready. `settings`:
  // more TOML lines for every node's config file; a key they set replaces the cluster's default.
  // `stable_client_ports`: each node's client listener keeps its port across restarts, as a real
  // deployment's does, so that a client bootstrapped before every node restarted finds them again.
  node_cluster(std::string binary, int brokers, const std::string& settings = {},
               bool stable_client_ports = false);
  ~node_cluster();
  node_cluster(const node_cluster&) = delete;
  node_cluster& operator=(const node_cluster&) = delete;

  temp_dir dir{"capstan-cluster"};
  std::vector<std::unique_ptr<node_process>> nodes;

  node_process& node(int id) { return *nodes.at(static_cast<size_t>(id - 1)); }

  // The options a node `id` of this cluster starts with: its quorum, cluster id and settings. A
  // test may change them to start a node the cluster should refuse.
  node_process_options options(int id) const;

  // `capstan ARGS --bootstrap <via>` with `input` on stdin; its exit code.
  int cli(const std::string& input, std::vector<std::string> args, const node_process& via,
          std::string* out, std::string* err);

  // The node whose controller said last that it is active and has not said since that it no
  // longer is, among the running voters; 0 if none.
  int active_controller();

  // `topic create` through `via` until the controller takes it (the nodes are still registering,
  // or an election is under way); fails the test if it never does within 60 s.
  void create_topic(const std::string& name, int replication_factor, const node_process& via,
                    int partitions = 1,
                    const std::vector<std::string>& configs = {"min.insync.replicas=2"});

  // The "Registered nodes:" part of `cluster describe` through `via` (empty when the CLI fails):
  // a line per node, "\tID\tfenced|unfenced\t...".
  std::string registered_nodes(const node_process& via);

  // One partition's row of `topic describe`: "Leader: N\tReplicas: a,b,c\tIsr: a,b", ids sorted;
  // leader -1 for "Leader: none".
  struct partition_row {
    int leader = -1;
    std::vector<int> replicas;
    std::vector<int> isr;
  };

  // Every partition's row of `topic describe TOPIC` through `via`, by partition id; nullopt
  // when the CLI fails (the node is down, the topic unknown there).
  std::optional<std::vector<partition_row>> describe(const std::string& topic,
                                                     const node_process& via);

  // The partition as node `via` describes it once `settled` holds for its row. Fails the test
  // after 60 s.
  partition_row await_partition(const std::string& topic, const node_process& via,
                                const std::function<bool(const partition_row&)>& settled,
                                int partition = 0);

  // The partition's leader once its ISR is exactly `isr` with the leader among them.
  int await_isr(const std::string& topic, const node_process& via, std::vector<int> isr,
                int partition = 0);

  // The partition once its ISR is all of its replicas but `gone`, with the leader among them.
  // Which nodes hold the replicas is the controller's choice, broker-only nodes included.
  partition_row await_full_isr(const std::string& topic, const node_process& via,
                               const std::vector<int>& gone = {}, int partition = 0);

  // The topic's records read through `via` from the beginning: `count` of them, or (0) all there
  // are, until nothing new came for 5 s. `extra` are more `consume` flags (--partition,
  // --print-offset).
  std::vector<std::string> consume(const std::string& topic, const node_process& via, size_t count,
                                   const std::vector<std::string>& extra = {});

private:
  std::string binary_;
  std::vector<uint16_t> voter_ports_;
  // Each node's client port when they stay across restarts; empty: fresh at each start.
  std::vector<uint16_t> client_ports_;
  std::vector<std::string> flags_;
  std::string settings_;
};

// `text` with its tabs as spaces: Catch2's console reporter wraps text holding tabs wrongly
// (catchorg/Catch2#476), and the CLI's describe output is tab-separated.
std::string untabbed(std::string text);

} // namespace capstan::test
