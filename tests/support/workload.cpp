#include "tests/support/workload.hpp"

#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_failure.hpp"

namespace capstan::test {

using namespace std::chrono_literals;

namespace {

std::optional<std::string> text_of(const std::optional<bytes>& b) {
  if (!b) return std::nullopt;
  return std::string(b->begin(), b->end());
}

} // namespace

std::unique_ptr<client::cluster_client> connect_to(const node_cluster& c,
                                                   client::client_config config) {
  config.bootstrap.clear();
  for (const auto& n : c.nodes)
    if (n->running()) config.bootstrap.push_back(n->bootstrap());
  auto connected = client::cluster_client::connect(config);
  require(static_cast<bool>(connected),
          "no client connection: " + (connected ? std::string() : connected.err().to_string()));
  return std::move(*connected);
}

std::vector<topic_partition> partitions_of(const std::string& topic, int count) {
  std::vector<topic_partition> out;
  for (int p = 0; p < count; ++p) out.emplace_back(topic, p);
  return out;
}

busy_producer::busy_producer(const node_cluster& c, std::vector<topic_partition> targets,
                             int max_in_flight, std::string prefix, std::chrono::microseconds pause)
    : targets_(std::move(targets)), prefix_(std::move(prefix)), pause_(pause) {
  config_.acks = -1;
  config_.linger_ms = 1;
  config_.request_timeout_ms = 5000;
  // Long enough for a failover: what is in flight when a leader dies is retried until the
  // controller names the new leader.
  config_.delivery_timeout_ms = 60000;
  config_.retry_backoff_ms = 50;
  // Idempotent (acks all and at most 5 in flight turn it on, as in Kafka 3.x), so a batch
  // retried after its leader died is stored once and in its place, with up to five in flight.
  config_.max_in_flight = max_in_flight;
  client_ = connect_to(c, config_);
  writer_ = std::thread([this] { write(); });
}

std::vector<size_t> busy_producer::counts() {
  std::lock_guard lock(mu_);
  std::vector<size_t> out;
  for (const auto& tp : targets_) {
    auto it = acked_.find(tp);
    out.push_back(it == acked_.end() ? 0 : it->second.size());
  }
  return out;
}

bool busy_producer::await_acks(const std::vector<size_t>& from, size_t more,
                               std::chrono::milliseconds limit) {
  return eventually(
      [&] {
        const auto now = counts();
        for (size_t i = 0; i < now.size(); ++i)
          if (now[i] < from.at(i) + more) return false;
        return true;
      },
      limit);
}

void busy_producer::stop() {
  stop_ = true;
  if (writer_.joinable()) writer_.join();
}

std::map<topic_partition, std::vector<acked_record>> busy_producer::acknowledged() {
  std::lock_guard lock(mu_);
  return acked_;
}

std::vector<std::string> busy_producer::failures() {
  std::lock_guard lock(mu_);
  return failures_;
}

void busy_producer::write() {
  client::producer producer(*client_, config_);
  for (int i = 0; !stop_ && i < 10000000; ++i) {
    const auto& [topic, partition] = targets_[static_cast<size_t>(i) % targets_.size()];
    auto value = std::make_shared<std::string>(prefix_ + std::to_string(i));
    const auto sent_at = workload_clock::now();
    producer.send(
        topic, std::nullopt,
        bytes_view(reinterpret_cast<const uint8_t*>(value->data()), value->size()), partition,
        [this, value, i, sent_at, tp = targets_[static_cast<size_t>(i) % targets_.size()]](
            result<client::record_metadata> r) {
          const auto now = workload_clock::now();
          std::lock_guard lock(mu_);
          if (!r) {
            failures_.push_back(*value + ": " + r.err().to_string());
            return;
          }
          acked_[tp].push_back({*value, i, r->off.value(), sent_at, now});
        });
    ++sent_;
    // A steady trickle rather than a flood keeps the logs small; the tests wait for counts of
    // acknowledgements, never for time.
    std::this_thread::sleep_for(pause_);
  }
  producer.flush();
}

busy_consumer::busy_consumer(const node_cluster& c, std::string topic) : topic_(std::move(topic)) {
  config_.request_timeout_ms = 5000;
  config_.fetch_max_wait_ms = 100;
  config_.auto_offset_reset = client::offset_reset::none;
  client_ = connect_to(c, config_);
  reader_ = std::thread([this] { read(); });
}

void busy_consumer::stop() {
  stop_ = true;
  if (reader_.joinable()) reader_.join();
}

std::map<int, std::vector<read_record>> busy_consumer::records() {
  std::lock_guard lock(mu_);
  return read_;
}

std::vector<std::string> busy_consumer::errors() {
  std::lock_guard lock(mu_);
  return errors_;
}

bool busy_consumer::reached(const std::map<int, int64_t>& ends) {
  std::lock_guard lock(mu_);
  for (const auto& [p, end] : ends) {
    if (end <= 0) continue;
    auto it = read_.find(p);
    if (it == read_.end() || it->second.empty() || it->second.back().off.value() + 1 < end)
      return false;
  }
  return true;
}

void busy_consumer::read() {
  client::consumer consumer(*client_, config_);
  auto started = consumer.assign(topic_);
  if (started) started = consumer.seek_to_beginning();
  if (!started) {
    std::lock_guard lock(mu_);
    errors_.push_back("start: " + started.err().to_string());
    return;
  }
  while (!stop_) {
    auto polled = consumer.poll(200ms);
    std::lock_guard lock(mu_);
    if (!polled) {
      if (polled.code() == errc::offset_out_of_range) errors_.push_back(polled.err().to_string());
      continue;
    }
    for (auto& r : *polled)
      read_[r.partition].push_back({r.off, std::nullopt, text_of(r.value), 0});
  }
}

std::optional<std::map<int, int64_t>> end_offsets(const node_cluster& c, const std::string& topic,
                                                  int partitions, std::chrono::milliseconds limit) {
  client::client_config config;
  config.request_timeout_ms = 5000;
  auto client = connect_to(c, config);
  std::map<int, int64_t> ends;
  const bool done = eventually(
      [&] {
        for (int p = 0; p < partitions; ++p) {
          if (ends.count(p)) continue;
          auto end = client->list_offsets(topic, p, -1);
          if (!end) return false;
          ends[p] = *end;
        }
        return true;
      },
      limit);
  if (!done) return std::nullopt;
  return ends;
}

std::optional<std::map<int, std::vector<read_record>>> read_to(const node_cluster& c,
                                                               const std::string& topic,
                                                               const std::map<int, int64_t>& ends,
                                                               std::chrono::milliseconds limit) {
  client::client_config config;
  config.request_timeout_ms = 5000;
  config.fetch_max_wait_ms = 100;
  config.auto_offset_reset = client::offset_reset::none;
  auto client = connect_to(c, config);
  client::consumer consumer(*client, config);
  std::map<int, std::vector<read_record>> out;
  const auto deadline = workload_clock::now() + limit;
  if (!consumer.assign(topic) || !consumer.seek_to_beginning()) return std::nullopt;
  const auto done = [&] {
    for (const auto& [p, end] : ends) {
      auto at = consumer.position({topic, p});
      if (end > 0 && (!at || at->value() < end)) return false;
    }
    return true;
  };
  while (!done()) {
    if (workload_clock::now() >= deadline) return std::nullopt;
    auto polled = consumer.poll(200ms);
    if (!polled) continue;
    for (auto& r : *polled)
      if (r.off.value() < ends.at(r.partition))
        out[r.partition].push_back({r.off, std::nullopt, text_of(r.value), 0});
  }
  return out;
}

std::vector<read_record> records_of_lines(const std::vector<std::string>& lines) {
  std::vector<read_record> out;
  for (const auto& line : lines) {
    const auto tab = line.find('\t');
    require(tab != std::string::npos, "not an \"<offset>\\t<value>\" line: " + line);
    out.push_back({offset{std::stoll(line.substr(0, tab))}, std::nullopt, line.substr(tab + 1), 0});
  }
  return out;
}

} // namespace capstan::test
