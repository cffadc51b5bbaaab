#pragma once

// What the nemesis and the checks of a safety run do to and ask of the node_cluster, each bounded
// in time and none throwing on a failure the faults can cause: the fault switch of a node, the
// partitions as a running node describes them, waits for leaders and whole ISRs, acks=all probe
// writes, a topic's min.insync.replicas, and damage to a stopped node's segment tails. Every
// action is written to the run's event log.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/node_cluster.hpp"
#include "tests/support/workload.hpp"

namespace capstan::safety {

using test::node_cluster;
using test::node_process;
using row = node_cluster::partition_row;

// What happened during a run, with the time since it started: printed as it happens and kept
// for the report.
class event_log {
public:
  event_log();
  void add(const std::string& what);
  const std::vector<std::string>& lines() const { return lines_; }
  double seconds() const;

private:
  test::workload_clock::time_point start_;
  std::vector<std::string> lines_;
};

class cluster_ops {
public:
  cluster_ops(node_cluster& c, std::vector<std::string> topics, int partitions, event_log& log);
  cluster_ops(const cluster_ops&) = delete;
  cluster_ops& operator=(const cluster_ops&) = delete;

  node_cluster& cluster() { return c_; }
  const std::vector<std::string>& topics() const { return topics_; }
  int partitions() const { return partitions_; }
  std::vector<topic_partition> all_partitions() const;
  event_log& log() { return log_; }

  std::vector<int> running() const;
  // kill -9, and start on its data dir; start is false (and logged) if the node did not get ready.
  void kill(int id);
  bool start(int id);
  // True (and logged, with its exit code and the last line of its log that says why it stopped) if the
  // node's process ended by itself; it then counts as not running.
  bool stopped_by_itself(int id);
  // Stops a running node with SIGTERM (kill -9 if it does not stop cleanly), then starts it on
  // its data dir.
  bool restart(int id);
  void signal(int id, int sig, const std::string& what);

  // `capstan debug fault ARGS` at node `id`; false (and logged) if it failed.
  bool fault(int id, std::vector<std::string> args);
  // `debug fault clear` on every running node.
  void clear_faults();

  // Every partition as a running node describes it; nullopt if no running node answered.
  std::optional<std::map<topic_partition, row>> describe_all();
  int active_controller() { return c_.active_controller(); }
  // The partition's leader as described now; -1 if none or unknown.
  int leader_of(const topic_partition& tp);

  // Waits up to `limit` until `settled` holds for every partition (as one running node describes
  // them all); the partitions it does not hold for then, with their rows ("" when all settled).
  std::string await_all(const std::function<bool(const row&)>& settled,
                        std::chrono::milliseconds limit);
  // Every partition has a leader and an ISR of all its replicas.
  std::string await_whole(std::chrono::milliseconds limit);

  // One acks=all record to every partition by a fresh idempotent producer, each acknowledged
  // within `limit`; the partitions whose record failed ("" when none). What was acknowledged is
  // kept as one more producer's history (probe_history).
  std::string probe(const std::string& label, std::chrono::milliseconds limit);
  const std::vector<std::map<topic_partition, std::vector<test::acked_record>>>&
  probe_history() const {
    return probes_;
  }

  // `topic alter-config TOPIC --config min.insync.replicas=N` through a running node, then until
  // every running node describes the topic with it (60 s); false if either failed.
  bool set_min_isr(const std::string& topic, int n);

  // Deletes everything under stopped node `id`'s data dir: a new machine under its id.
  void wipe(int id);
  // Tears `bytes` off the end of the newest non-empty segment of every partition on node `id`
  // (stopped), or flips bit `bit` of the byte `bytes` from its end.
  void damage_tails(int id, int bytes, bool flip, int bit);

private:
  node_process* any_running();

  node_cluster& c_;
  std::vector<std::string> topics_;
  int partitions_;
  event_log& log_;
  std::vector<std::map<topic_partition, std::vector<test::acked_record>>> probes_;
};

} // namespace capstan::safety
