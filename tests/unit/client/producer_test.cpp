// The producer against a cluster_client that answers in memory: which thread sends a batch, and
// that batches of a partition reach the client in sequence order whichever thread sends them.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/producer.hpp"

using namespace capstan;
using namespace capstan::client;
using namespace std::chrono_literals;

namespace {

constexpr int32_t partitions = 2;
const std::string topic_name = "t";

// One produce call as the client saw it.
struct sent_batch {
  int32_t partition;
  int32_t base_sequence;
  int32_t records;
  std::thread::id thread;
};

// Topic "t" with two partitions; every produce is answered in order by a thread of its own, as the
// real client's loop thread would, at consecutive offsets per partition.
class memory_cluster : public cluster_client {
public:
  explicit memory_cluster(client_config config) : cluster_client(std::move(config)) {
    answerer_ = std::thread([this] { answer(); });
  }
  ~memory_cluster() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    answerer_.join();
  }

  std::vector<sent_batch> sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }

  result<cluster_metadata> metadata(const std::vector<std::string>&) override {
    topic_metadata topic;
    topic.name = topic_name;
    topic.partitions.resize(partitions);
    cluster_metadata md;
    md.topics.emplace(topic_name, std::move(topic));
    return md;
  }
  result<producer_identity> init_producer_id() override { return producer_identity{7, 0}; }
  void produce(const std::string&, int32_t partition, int16_t, std::shared_ptr<const bytes> batch,
               std::function<void(result<produce_response>)> done) override {
    // Catch2's assertions belong to the test's thread: a batch that does not parse is kept as one
    // with sequence -1, which the tests' checks then fail on.
    auto view = record_batch_view::parse(bytes_view(*batch), batch->size());
    const int32_t sequence = view ? view->base_sequence() : -1;
    const int32_t records = view ? view->record_count() : 0;
    std::lock_guard lock(mu_);
    sent_.push_back({partition, sequence, records, std::this_thread::get_id()});
    queue_.push_back({partition, records, std::move(done)});
    cv_.notify_all();
  }

  result<topic_metadata> create_topic(const topic_spec&) override { return unsupported(); }
  status delete_topic(const std::string&) override { return unsupported(); }
  result<std::vector<std::string>> list_topics() override { return unsupported(); }
  result<std::map<std::string, std::string>> describe_configs(const std::string&) override {
    return unsupported();
  }
  status alter_configs(const std::string&, const std::map<std::string, std::string>&) override {
    return unsupported();
  }
  status create_partitions(const std::string&, int32_t) override { return unsupported(); }
  result<std::vector<election_result>>
  elect_leaders(const std::vector<std::pair<std::string, int32_t>>&) override {
    return unsupported();
  }
  result<cluster_description> describe_cluster() override { return unsupported(); }
  status inject_fault(fault_kind, const std::vector<int32_t>&, int32_t) override {
    return unsupported();
  }
  void fetch(const std::string&, int32_t, offset, int32_t, int32_t, int32_t,
             std::chrono::steady_clock::time_point,
             std::function<void(result<fetch_response>)> done) override {
    done(unsupported());
  }
  result<int64_t> list_offsets(const std::string&, int32_t, int64_t) override {
    return unsupported();
  }
  result<std::vector<committed_offset>>
  commit_offsets(const std::string&, const std::vector<committed_offset>&) override {
    return unsupported();
  }
  result<std::vector<committed_offset>>
  fetch_offsets(const std::string&, const std::vector<std::pair<std::string, int32_t>>&) override {
    return unsupported();
  }

private:
  static error unsupported() { return make_error(errc::invalid_request, "not in memory_cluster"); }

  struct pending {
    int32_t partition;
    int32_t records;
    std::function<void(result<produce_response>)> done;
  };

  void answer() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto p = std::move(queue_.front());
      queue_.pop_front();
      const int64_t base = ends_[p.partition];
      ends_[p.partition] += p.records;
      lock.unlock();
      p.done(produce_response{offset{base}, no_timestamp, offset{0}});
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<sent_batch> sent_;
  std::deque<pending> queue_;
  std::map<int32_t, int64_t> ends_;
  bool stopping_ = false;
  std::thread answerer_;
};

client_config one_at_a_time() {
  client_config c;
  c.acks = -1;
  c.linger_ms = 0;
  return c;
}

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

} // namespace

TEST_CASE("with linger.ms 0 the calling thread sends its record itself, and flush returns once "
          "it is acknowledged",
          "[client][producer]") {
  memory_cluster cluster(one_at_a_time());
  producer p(cluster, one_at_a_time());
  REQUIRE(p.init_producer_id().ok());
  const std::string value = "v";
  std::vector<int64_t> offsets; // written on the answering thread before flush returns
  for (int i = 0; i < 20; ++i) {
    p.send("t", std::nullopt, as_bytes(value), 0,
           [&](result<record_metadata> r) { offsets.push_back(r ? r->off.value() : -1); });
    p.flush();
    REQUIRE(offsets.size() == static_cast<size_t>(i + 1));
  }
  for (int i = 0; i < 20; ++i) CHECK(offsets[static_cast<size_t>(i)] == i);
  const auto sent = cluster.sent();
  CHECK(sent.size() == 20);
  for (const auto& b : sent) {
    CHECK(b.base_sequence >= 0);
    CHECK(b.thread == std::this_thread::get_id());
  }
}

TEST_CASE("batches of a partition reach the client in sequence order while callers and the "
          "sender thread both send",
          "[client][producer]") {
  auto config = one_at_a_time();
  config.batch_size = 1024; // many batches, some closed full while others linger
  memory_cluster cluster(config);
  producer p(cluster, config);
  const std::string value(100, 'v');
  std::atomic<int> acknowledged{0};
  std::atomic<int> failed{0};
  constexpr int per_thread = 2000;
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        p.send("t", std::nullopt, as_bytes(value), (t + i) % partitions,
               [&](result<record_metadata> r) { ++(r ? acknowledged : failed); });
        if (i % 97 == 0) p.flush();
      }
    });
  for (auto& c : callers) c.join();
  p.flush();
  CHECK(acknowledged == 3 * per_thread);
  CHECK(failed == 0);

  std::map<int32_t, int32_t> next;
  for (const auto& b : cluster.sent()) {
    INFO("partition " << b.partition);
    CHECK(b.base_sequence == next[b.partition]);
    next[b.partition] = b.base_sequence + b.records;
  }
  CHECK(next[0] + next[1] == 3 * per_thread);
}
