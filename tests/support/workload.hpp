#pragma once

// The client-side workload of the failure tests over a node_cluster: acks=all producers and
// position-keeping consumers of the client library, each on its own thread, that record every
// acknowledgement, failure and read for the checks (history_check.hpp) to judge afterwards; and
// the final read of a partition. Errors of setup throw test_failure; errors of the workload under
// faults are kept, never thrown.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client/cluster_client.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/node_cluster.hpp"

namespace capstan::test {

using workload_clock = std::chrono::steady_clock;

// A client of the library bootstrapped at every node of `c`, with `config`'s other settings.
std::unique_ptr<client::cluster_client> connect_to(const node_cluster& c,
                                                   client::client_config config);

// Partitions 0..count-1 of `topic`.
std::vector<topic_partition> partitions_of(const std::string& topic, int count);

// One acknowledged record: its value, the order its producer sent it in, where it landed (-1: its
// batch is known appended because a later one was acknowledged, docs/idempotence.md), and when it
// was handed to the producer and acknowledged.
struct acked_record {
  std::string value;
  int sent = 0;
  int64_t offset = -1;
  workload_clock::time_point sent_at;
  workload_clock::time_point acked_at;
};

// An idempotent acks=all producer of the client library on its own thread, writing
// "<prefix><i>" to targets[i % targets.size()] until stopped, one record per `pause`, with every
// acknowledgement and failure kept. Its retries last long enough for a failover (60 s).
class busy_producer {
public:
  busy_producer(const node_cluster& c, std::vector<topic_partition> targets, int max_in_flight = 1,
                std::string prefix = "record-",
                std::chrono::microseconds pause = std::chrono::milliseconds(2));
  ~busy_producer() { stop(); }
  busy_producer(const busy_producer&) = delete;
  busy_producer& operator=(const busy_producer&) = delete;

  // Acknowledgements so far, per target in the order of the targets.
  std::vector<size_t> counts();
  // True once every target has at least `more` acknowledgements beyond `from` (counts()); false
  // after `limit`.
  bool await_acks(const std::vector<size_t>& from, size_t more,
                  std::chrono::milliseconds limit = std::chrono::seconds(60));
  // Stops sending and waits until every record sent is acknowledged or failed.
  void stop();

  std::map<topic_partition, std::vector<acked_record>> acknowledged();
  // "<value>: <error>" of each record that failed after its retries.
  std::vector<std::string> failures();
  // Records handed to the producer so far.
  int sent() const { return sent_.load(); }

private:
  void write();

  std::vector<topic_partition> targets_;
  std::string prefix_;
  std::chrono::microseconds pause_;
  client::client_config config_;
  std::unique_ptr<client::cluster_client> client_;
  std::atomic<bool> stop_{false};
  std::atomic<int> sent_{0};
  std::mutex mu_;
  std::map<topic_partition, std::vector<acked_record>> acked_;
  std::vector<std::string> failures_;
  std::thread writer_;
};

// A consumer of every partition of `topic` from the beginning on its own thread, polling until
// stopped, with what it read and every OFFSET_OUT_OF_RANGE kept: a position is never reset
// (auto.offset.reset none), so a fetch past a partition's end is an error here, not a jump. Other
// poll errors are the retriable ones of moving leaders; the next poll tries again.
class busy_consumer {
public:
  busy_consumer(const node_cluster& c, std::string topic);
  ~busy_consumer() { stop(); }
  busy_consumer(const busy_consumer&) = delete;
  busy_consumer& operator=(const busy_consumer&) = delete;

  void stop();
  const std::string& topic() const { return topic_; }
  // Per partition, what was read in the order it was read.
  std::map<int, std::vector<read_record>> records();
  std::vector<std::string> errors();
  // True iff every partition in `ends` was read up to (excluding) its end offset.
  bool reached(const std::map<int, int64_t>& ends);

private:
  void read();

  std::string topic_;
  client::client_config config_;
  std::unique_ptr<client::cluster_client> client_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<int, std::vector<read_record>> read_;
  std::vector<std::string> errors_;
  std::thread reader_;
};

// Every partition's high watermark (0..partitions-1), asked through a fresh client; nullopt if
// any could not be had within `limit`.
std::optional<std::map<int, int64_t>> end_offsets(const node_cluster& c, const std::string& topic,
                                                  int partitions, std::chrono::milliseconds limit);

// Every partition of `topic` read from the beginning up to `ends` by a fresh consumer; nullopt if
// that did not finish within `limit`.
std::optional<std::map<int, std::vector<read_record>>> read_to(const node_cluster& c,
                                                               const std::string& topic,
                                                               const std::map<int, int64_t>& ends,
                                                               std::chrono::milliseconds limit);

// `consume --print-offset` output lines ("<offset>\t<value>") as records.
std::vector<read_record> records_of_lines(const std::vector<std::string>& lines);

} // namespace capstan::test
