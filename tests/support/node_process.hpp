#pragma once

// One real `capstan node` process for system tests, on its own data dir under a temp dir and on
// 127.0.0.1: started with posix_spawn (child_process), waited for until it says it is ready (30 s
// at most), its client, cluster and metrics ports read from its log. Each start takes fresh
// ports unless a listener is pinned (a controller quorum names its voters' cluster ports up
// front).
// Stopped by pid: kill() is SIGKILL, stop() SIGTERM and a clean exit; the destructor kills what is
// still running. Also the CLI helpers the system tests share.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/storage/offset_checkpoint.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::test {

struct node_process_options {
  // The capstan binary (system tests have it as CAPSTAN_BINARY).
  std::string binary;
  // The node's TOML config file text.
  std::string settings;
  // --cluster-listen; port 0 picks a free one at each start.
  std::string cluster_listen = "127.0.0.1:0";
  // More flags, e.g. --controller-quorum and --cluster-id.
  std::vector<std::string> extra_args;
  // --listen (the client RPC listener); port 0 picks a free one at each start.
  std::string client_listen = "127.0.0.1:0";
};

class node_process {
public:
  node_process(const temp_dir& dir, int id, node_process_options options);
  node_process(const node_process&) = delete;
  node_process& operator=(const node_process&) = delete;

  // Starts the node and waits until it is ready; fails the test otherwise.
  void start();
  void signal(int sig);
  // SIGKILL, and waits until the process is gone.
  void kill();
  // SIGTERM, and a clean exit.
  void stop();
  // The exit code once the process ended by itself (128 + signal when a signal ended it), or
  // nullopt if it still runs after `timeout`. For a node that should refuse to go on.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);
  // Started, and neither killed nor stopped since.
  bool running() const { return alive_; }

  int id() const { return id_; }
  uint16_t rpc_port() const { return rpc_port_; }
  uint16_t cluster_port() const { return cluster_port_; }
  uint16_t metrics_port() const { return metrics_port_; }
  // The Kafka listener's (--kafka-listen, a free port at each start).
  uint16_t kafka_port() const { return kafka_port_; }
  // 127.0.0.1:<client port>, for --bootstrap.
  std::string bootstrap() const { return "127.0.0.1:" + std::to_string(rpc_port_); }
  // 127.0.0.1:<Kafka port>, for a Kafka client's bootstrap servers.
  std::string kafka_bootstrap() const { return "127.0.0.1:" + std::to_string(kafka_port_); }
  // The binary it runs, for the CLI helpers.
  const std::string& binary() const { return opts_.binary; }
  std::filesystem::path data_dir() const { return data_; }
  std::filesystem::path partition_dir(const topic_partition& tp) const {
    return data_ / (tp.first + "-" + std::to_string(tp.second));
  }
  // What the current (or last) process wrote to stderr, its log.
  std::string log() const;

private:
  std::filesystem::path dir_;
  int id_;
  node_process_options opts_;
  std::filesystem::path data_;
  std::filesystem::path config_;
  int starts_ = 0;
  std::unique_ptr<child_process> process_;
  uint16_t rpc_port_ = 0;
  uint16_t cluster_port_ = 0;
  uint16_t metrics_port_ = 0;
  uint16_t kafka_port_ = 0;
  bool alive_ = false;
};

// Runs `binary ARGS` with `input` on its stdin (through /bin/sh, as a user's pipe would), bounded
// by 60 s; its exit code, with stdout and stderr in the out-parameters.
int run_cli(const std::string& binary, const temp_dir& dir, const std::string& input,
            const std::vector<std::string>& args, std::string* out, std::string* err);

std::vector<std::string> lines_of(const std::string& text);

// `capstan topic create NAME --partitions N` against `node`; test_failure unless it succeeds.
void create_topic(const node_process& node, const temp_dir& dir, const std::string& name,
                  int partitions);

} // namespace capstan::test
