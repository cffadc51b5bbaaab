#pragma once

// A cluster_client that answers in memory, for tests of the producer and the consumer without a
// broker: topic "t" with `partitions` partitions; every produce is answered in order by a thread
// of its own, as the real client's loop thread would, at consecutive offsets per partition; each
// fetch is answered at once by the test's `fetch_handler`. With `max_message_bytes` set,
// describeConfigs names it and a larger batch is refused MESSAGE_TOO_LARGE. Everything else is
// INVALID_REQUEST.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/client/cluster_client.hpp"

namespace capstan::test {

class memory_cluster : public client::cluster_client {
public:
  inline static const std::string topic = "t";

  // One produce call as the client saw it: a batch that does not parse is kept with sequence -1
  // (Catch2's assertions belong to the test's thread, and produce runs on the producer's).
  struct sent_batch {
    int32_t partition;
    int32_t base_sequence;
    int32_t records;
    std::thread::id thread;
    size_t size_bytes;
    timestamp_ms base_timestamp; // -1 when the batch does not parse
  };

  memory_cluster(client::client_config config, int32_t partitions);
  ~memory_cluster() override;
  memory_cluster(const memory_cluster&) = delete;
  memory_cluster& operator=(const memory_cluster&) = delete;

  std::vector<sent_batch> sent();
  // The thread that answers every produce.
  std::thread::id answering_thread() const { return answerer_.get_id(); }

  // Asked on the answering thread just before a produce is answered: an error fails the call,
  // true appends the batch, false answers it after the calls queued behind it (only when there
  // are some). Unset, every batch is appended.
  std::function<result<bool>(int32_t partition, int32_t base_sequence)> produce_answer;

  // Runs on the caller's thread before initProducerId answers (producer id 7, epoch 0); unset,
  // it answers at once.
  std::function<void()> before_producer_id;
  // Runs on the caller's thread before Metadata answers; unset, it answers at once.
  std::function<void()> before_metadata;

  // The topic's max.message.bytes; 0: describeConfigs is INVALID_REQUEST and any size is taken.
  std::atomic<int64_t> max_message_bytes{0};

  // Answers fetch(partition, from, last_fetched_epoch); unset, every fetch is INVALID_REQUEST.
  std::function<result<client::fetch_response>(int32_t partition, offset from,
                                               leader_epoch last_fetched_epoch)>
    fetch_handler;

  result<cluster_metadata> metadata(const std::vector<std::string>& topics) override;
  result<client::producer_identity> init_producer_id() override;
  void produce(const std::string& topic, int32_t partition, int16_t acks,
               std::shared_ptr<const bytes> batch,
               std::function<void(result<client::produce_response>)> done) override;
  void fetch(const std::string& topic, int32_t partition, offset from,
             leader_epoch last_fetched_epoch, int32_t max_bytes, int32_t min_bytes,
             int32_t max_wait_ms, std::chrono::steady_clock::time_point retry_until,
             std::function<void(result<client::fetch_response>)> done) override;

  result<topic_metadata> create_topic(const topic_spec&) override;
  status delete_topic(const std::string&) override;
  result<std::vector<std::string>> list_topics() override;
  result<std::map<std::string, std::string>> describe_configs(const std::string&) override;
  status alter_configs(const std::string&, const std::map<std::string, std::string>&,
                       const std::vector<std::string>&) override;
  status create_partitions(const std::string&, int32_t) override;
  result<std::vector<client::election_result>>
  elect_leaders(const std::vector<std::pair<std::string, int32_t>>&) override;
  result<std::vector<client::election_result>>
  reassign_partitions(const std::vector<client::reassignment_request>&) override;
  status unregister_node(int32_t) override;
  status add_voter(int32_t, const std::string&) override;
  status remove_voter(int32_t) override;
  result<cluster_description> describe_cluster() override;
  status inject_fault(const client::fault_request&) override;
  result<int64_t> list_offsets(const std::string&, int32_t, int64_t) override;
  result<std::vector<client::committed_offset>>
  commit_offsets(const std::string&, const std::vector<client::committed_offset>&,
                 const group_member_ref&) override;
  result<std::vector<client::committed_offset>>
  fetch_offsets(const std::string&, const std::vector<std::pair<std::string, int32_t>>&) override;
  result<std::vector<std::string>> list_groups() override;
  result<join_group_response> join_group(const std::string&, const join_group_request&) override;
  result<sync_group_response> sync_group(const std::string&, const sync_group_request&) override;
  status heartbeat(const std::string&, const group_member_ref&) override;
  status leave_group(const std::string&, const group_member_ref&) override;
  result<group_summary> describe_group(const std::string&) override;
  status delete_group(const std::string&) override;

private:
  struct pending {
    int32_t partition;
    int32_t base_sequence;
    int32_t records;
    bool too_large;
    std::function<void(result<client::produce_response>)> done;
  };

  void answer();

  int32_t partitions_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<sent_batch> sent_;
  std::deque<pending> queue_;
  std::map<int32_t, int64_t> ends_;
  bool stopping_ = false;
  std::thread answerer_;
};

} // namespace capstan::test
