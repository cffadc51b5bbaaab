#include "tests/support/memory_cluster.hpp"

#include "runtime/batch/record_batch_view.hpp"

namespace capstan::test {

namespace {

error unsupported() {
  return make_error(errc::invalid_request, "not in memory_cluster");
}

} // namespace

memory_cluster::memory_cluster(client::client_config config, int32_t partitions)
    : cluster_client(std::move(config)), partitions_(partitions) {
  answerer_ = std::thread([this] { answer(); });
}

memory_cluster::~memory_cluster() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  answerer_.join();
}

std::vector<memory_cluster::sent_batch> memory_cluster::sent() {
  std::lock_guard lock(mu_);
  return sent_;
}

result<cluster_metadata> memory_cluster::metadata(const std::vector<std::string>&) {
  if (before_metadata) before_metadata();
  topic_metadata t;
  t.name = topic;
  for (int32_t p = 0; p < partitions_; ++p) {
    partition_assignment a;
    a.partition = p;
    a.replicas = {1};
    a.leader = 1;
    a.isr = {1};
    t.partitions.push_back(std::move(a));
  }
  cluster_metadata md;
  md.topics.emplace(topic, std::move(t));
  return md;
}

result<client::producer_identity> memory_cluster::init_producer_id() {
  if (before_producer_id) before_producer_id();
  return client::producer_identity{7, 0};
}

void memory_cluster::produce(const std::string&, int32_t partition, int16_t,
                             std::shared_ptr<const bytes> batch,
                             std::function<void(result<client::produce_response>)> done) {
  auto view = record_batch_view::parse(bytes_view(*batch), batch->size());
  const int32_t sequence = view ? view->base_sequence() : -1;
  const int32_t records = view ? view->record_count() : 0;
  const timestamp_ms base_timestamp = view ? view->base_timestamp() : -1;
  const int64_t limit = max_message_bytes;
  const bool too_large = limit > 0 && static_cast<int64_t>(batch->size()) > limit;
  std::lock_guard lock(mu_);
  sent_.push_back(
      {partition, sequence, records, std::this_thread::get_id(), batch->size(), base_timestamp});
  queue_.push_back({partition, sequence, records, too_large, std::move(done)});
  cv_.notify_all();
}

void memory_cluster::fetch(const std::string&, int32_t partition, offset from,
                           leader_epoch last_fetched_epoch, int32_t, int32_t, int32_t,
                           std::chrono::steady_clock::time_point,
                           std::function<void(result<client::fetch_response>)> done) {
  if (!fetch_handler) return done(unsupported());
  done(fetch_handler(partition, from, last_fetched_epoch));
}

void memory_cluster::answer() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    auto p = std::move(queue_.front());
    queue_.pop_front();
    result<bool> verdict = true;
    if (p.too_large) {
      verdict = make_error(errc::message_too_large, "above max.message.bytes");
    } else if (produce_answer) {
      lock.unlock();
      verdict = produce_answer(p.partition, p.base_sequence);
      lock.lock();
    }
    if (verdict && !*verdict && !queue_.empty()) {
      queue_.push_back(std::move(p));
      continue;
    }
    if (!verdict) {
      lock.unlock();
      p.done(verdict.err());
      lock.lock();
      continue;
    }
    const int64_t base = ends_[p.partition];
    ends_[p.partition] += p.records;
    lock.unlock();
    p.done(client::produce_response{offset{base}, no_timestamp, offset{0}});
    lock.lock();
  }
}

result<topic_metadata> memory_cluster::create_topic(const topic_spec&) {
  return unsupported();
}
status memory_cluster::delete_topic(const std::string&) {
  return unsupported();
}
result<std::vector<std::string>> memory_cluster::list_topics() {
  return unsupported();
}
result<std::map<std::string, std::string>> memory_cluster::describe_configs(const std::string&) {
  if (const int64_t limit = max_message_bytes; limit > 0)
    return std::map<std::string, std::string>{{"max.message.bytes", std::to_string(limit)}};
  return unsupported();
}
status memory_cluster::alter_configs(const std::string&,
                                     const std::map<std::string, std::string>&,
                                     const std::vector<std::string>&) {
  return unsupported();
}
status memory_cluster::create_partitions(const std::string&, int32_t) {
  return unsupported();
}
result<std::vector<client::election_result>>
memory_cluster::elect_leaders(const std::vector<std::pair<std::string, int32_t>>&) {
  return unsupported();
}
result<std::vector<client::election_result>>
memory_cluster::reassign_partitions(const std::vector<client::reassignment_request>&) {
  return unsupported();
}
status memory_cluster::unregister_node(int32_t) {
  return unsupported();
}
status memory_cluster::add_voter(int32_t, const std::string&) {
  return unsupported();
}
status memory_cluster::remove_voter(int32_t) {
  return unsupported();
}
result<cluster_description> memory_cluster::describe_cluster() {
  return unsupported();
}
status memory_cluster::inject_fault(const client::fault_request&) {
  return unsupported();
}
result<int64_t> memory_cluster::list_offsets(const std::string&, int32_t, int64_t) {
  return unsupported();
}
result<std::vector<client::committed_offset>>
memory_cluster::commit_offsets(const std::string&, const std::vector<client::committed_offset>&,
                               const group_member_ref&) {
  return unsupported();
}
result<std::vector<client::committed_offset>>
memory_cluster::fetch_offsets(const std::string&,
                              const std::vector<std::pair<std::string, int32_t>>&) {
  return unsupported();
}

result<std::vector<std::string>> memory_cluster::list_groups() { return unsupported(); }

result<join_group_response> memory_cluster::join_group(const std::string&, const join_group_request&) {
  return unsupported();
}

result<sync_group_response> memory_cluster::sync_group(const std::string&, const sync_group_request&) {
  return unsupported();
}

status memory_cluster::heartbeat(const std::string&, const group_member_ref&) { return unsupported(); }

status memory_cluster::leave_group(const std::string&, const group_member_ref&) { return unsupported(); }

result<group_summary> memory_cluster::describe_group(const std::string&) { return unsupported(); }

status memory_cluster::delete_group(const std::string&) { return unsupported(); }

} // namespace capstan::test
