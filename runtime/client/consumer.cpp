#include "runtime/client/consumer.hpp"

#include <condition_variable>
#include <mutex>
#include <set>

namespace capstan::client {

namespace {

constexpr int64_t earliest_timestamp = -2;
constexpr int64_t latest_timestamp = -1;

} // namespace

consumer::consumer(cluster_client& client, client_config config, std::string group)
    : client_(client), config_(std::move(config)), group_(std::move(group)) {}

status consumer::assign(const std::string& topic, const std::vector<int32_t>& partitions) {
  auto md = client_.metadata({topic});
  if (!md) return md.err();
  auto it = md->topics.find(topic);
  if (it == md->topics.end())
    return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
  std::set<int32_t> existing;
  for (const auto& p : it->second.partitions) existing.insert(p.partition);
  std::vector<int32_t> wanted = partitions;
  if (wanted.empty()) wanted.assign(existing.begin(), existing.end());
  for (auto p : wanted) {
    if (!existing.count(p))
      return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' has no partition " +
                                                              std::to_string(p) + " (" +
                                                              std::to_string(existing.size()) + " partitions)");
    assigned_.push_back(topic_partition_key{topic, p});
  }
  return {};
}

void consumer::set_assignment(std::vector<topic_partition_key> partitions) {
  assigned_ = std::move(partitions);
  const std::set<topic_partition_key> kept(assigned_.begin(), assigned_.end());
  std::erase_if(positions_, [&](const auto& e) { return !kept.count(e.first); });
  std::erase_if(epochs_, [&](const auto& e) { return !kept.count(e.first); });
}

void consumer::seek(const topic_partition_key& tp, offset to) {
  positions_[tp] = to;
  epochs_.erase(tp);
}

result<int64_t> consumer::list_offset(const topic_partition_key& tp, int64_t timestamp) {
  return client_.list_offsets(tp.topic, tp.partition, timestamp);
}

status consumer::seek_to_beginning() {
  for (const auto& tp : assigned_) {
    auto o = list_offset(tp, earliest_timestamp);
    if (!o) return o.err();
    seek(tp, offset{*o});
  }
  return {};
}

status consumer::seek_to_end() {
  for (const auto& tp : assigned_) {
    auto o = list_offset(tp, latest_timestamp);
    if (!o) return o.err();
    seek(tp, offset{*o});
  }
  return {};
}

status consumer::seek_to_committed(bool earliest) { return seek_to_committed(earliest, assigned_); }

status consumer::seek_unpositioned_to_committed(bool earliest) {
  std::vector<topic_partition_key> unpositioned;
  for (const auto& tp : assigned_)
    if (!positions_.count(tp)) unpositioned.push_back(tp);
  if (unpositioned.empty()) return {};
  return seek_to_committed(earliest, unpositioned);
}

status consumer::seek_to_committed(bool earliest, const std::vector<topic_partition_key>& wanted) {
  if (group_.empty()) return make_error(errc::invalid_config, "no consumer group given");
  std::vector<std::pair<std::string, int32_t>> partitions;
  for (const auto& tp : wanted) partitions.emplace_back(tp.topic, tp.partition);
  auto committed = client_.fetch_offsets(group_, partitions);
  if (!committed) return committed.err();
  std::map<topic_partition_key, const committed_offset*> found;
  for (const auto& c : *committed) {
    if (c.error != errc::none) return make_error(c.error, "fetching the committed offset of " + c.topic + "-" +
                                                              std::to_string(c.partition));
    if (c.offset >= 0) found[topic_partition_key{c.topic, c.partition}] = &c;
  }
  for (const auto& tp : wanted) {
    if (auto it = found.find(tp); it != found.end()) {
      seek(tp, offset{it->second->offset});
      // The first fetch names the commit's epoch: a log truncated below the commit since it was
      // made is found then, as in Kafka's consumer after an OffsetFetch (KIP-320).
      if (it->second->leader_epoch >= 0) epochs_[tp] = leader_epoch{it->second->leader_epoch};
      continue;
    }
    auto o = list_offset(tp, earliest ? earliest_timestamp : latest_timestamp);
    if (!o) return o.err();
    seek(tp, offset{*o});
  }
  return {};
}

std::optional<offset> consumer::position(const topic_partition_key& tp) const {
  auto it = positions_.find(tp);
  if (it == positions_.end()) return std::nullopt;
  return it->second;
}

result<size_t> consumer::poll_each(std::chrono::milliseconds timeout, const std::function<void(const record_ref&)>& visit,
                                   size_t max_records) {
  for (const auto& tp : assigned_) {
    if (positions_.count(tp)) continue;
    auto o = list_offset(tp, latest_timestamp);
    if (!o) return o.err();
    positions_[tp] = offset{*o};
  }
  if (assigned_.empty() || max_records == 0) return size_t{0};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t visited = 0;
  for (;;) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    const auto wait_ms = static_cast<int32_t>(std::clamp<int64_t>(remaining, 0, config_.fetch_max_wait_ms));

    // One fetch per partition, all in flight at once.
    struct pending {
      std::mutex mu;
      std::condition_variable cv;
      size_t outstanding = 0;
      std::vector<std::optional<result<fetch_response>>> responses;
    };
    auto state = std::make_shared<pending>();
    state->outstanding = assigned_.size();
    state->responses.resize(assigned_.size());
    for (size_t i = 0; i < assigned_.size(); ++i) {
      const auto& tp = assigned_[i];
      const auto epoch = epochs_.find(tp);
      client_.fetch(tp.topic, tp.partition, positions_[tp],
                    epoch == epochs_.end() ? leader_epoch{-1} : epoch->second,
                    config_.max_partition_fetch_bytes, config_.fetch_min_bytes, wait_ms, deadline,
                    [state, i](result<fetch_response> r) {
                      std::lock_guard lock(state->mu);
                      state->responses[i].emplace(std::move(r));
                      if (--state->outstanding == 0) state->cv.notify_all();
                    });
    }
    {
      std::unique_lock lock(state->mu);
      state->cv.wait(lock, [&] { return state->outstanding == 0; });
    }

    // A partition that failed keeps its position, so the next poll fetches it again and meets
    // its error then; records other partitions brought are handed over first, since their
    // positions have moved past them (Kafka's Fetcher does the same).
    std::optional<error> failed;
    for (size_t i = 0; i < assigned_.size() && visited < max_records; ++i) {
      auto& response = *state->responses[i];
      const auto& tp = assigned_[i];
      auto& position = positions_[tp];
      if (!response && response.code() == errc::offset_out_of_range &&
          config_.auto_offset_reset != offset_reset::none) {
        auto o = list_offset(tp, config_.auto_offset_reset == offset_reset::earliest ? earliest_timestamp
                                                                                     : latest_timestamp);
        if (!o) {
          if (!failed) failed = o.err();
          continue;
        }
        resets_.push_back(position_reset{tp, position, offset{*o}});
        seek(tp, offset{*o});
        continue;
      }
      if (!response) {
        if (!failed) failed = response.err();
        continue;
      }
      if (response->diverging_epoch.value() >= 0) {
        const offset to = std::min(response->diverging_end, position);
        if (config_.auto_offset_reset == offset_reset::none) {
          if (!failed)
            failed = make_error(
                errc::offset_out_of_range,
                "log truncation detected on " + tp.topic + "-" + std::to_string(tp.partition) +
                    ": the records read from offset " + std::to_string(to.value()) + " up to " +
                    std::to_string(position.value()) +
                    " are no longer in the log (an unclean leader election); seek to go on");
          continue;
        }
        resets_.push_back(position_reset{tp, position, to, true});
        position = to;
        epochs_[tp] = response->diverging_epoch;
        continue;
      }
      batch_sequence_reader reader(response->records, response->records.size() + 1,
                                   batch_validation::stored, std::nullopt,
                                   config_.check_crcs ? crc_check::verify : crc_check::skip);
      for (;;) {
        auto next = reader.next();
        if (!next) {
          // Kafka's Fetcher: "Record batch for partition P at offset O is invalid". The position
          // stays at the bad batch, so no record of it reaches the application.
          if (!failed)
            failed = make_error(next.code(), "record batch for partition " + tp.topic + "-" +
                                                 std::to_string(tp.partition) + " at offset " +
                                                 std::to_string(position.value()) +
                                                 " is invalid: " + next.err().message);
          break;
        }
        if (!*next) break;
        const auto& batch = **next;
        if (batch.last_offset() < position) continue;
        const offset before = position;
        bool stopped = false;
        batch.for_each_record([&](const record_view& r) {
          if (stopped) return;
          const offset off = batch.base_offset() + r.offset_delta;
          if (off < position) return;
          if (visited >= max_records) {
            stopped = true;
            return;
          }
          visit(record_ref{tp, off, batch.timestamp_of(r), r});
          position = off + 1;
          ++visited;
        });
        // Compaction may leave offsets without records at a batch's end.
        if (!stopped && position <= batch.last_offset() && visited < max_records)
          position = batch.last_offset() + 1;
        if (position != before) epochs_[tp] = batch.partition_leader_epoch();
        if (stopped || visited >= max_records) break;
      }
    }
    if (visited > 0) return visited;
    if (failed) return std::move(*failed);
    if (std::chrono::steady_clock::now() >= deadline) return visited;
  }
}

result<std::vector<consumer_record>> consumer::poll(std::chrono::milliseconds timeout, size_t max_records) {
  std::vector<consumer_record> out;
  auto copy = [](bytes_view v) { return bytes(v.begin(), v.end()); };
  auto n = poll_each(
      timeout,
      [&](const record_ref& r) {
        consumer_record c{r.tp.topic, r.tp.partition, r.off, r.timestamp, std::nullopt, std::nullopt};
        if (r.record.key) c.key = copy(*r.record.key);
        if (r.record.value) c.value = copy(*r.record.value);
        out.push_back(std::move(c));
      },
      max_records);
  if (!n) return n.err();
  return out;
}

status consumer::commit(const group_member_ref& member) {
  if (group_.empty()) return make_error(errc::invalid_config, "no consumer group given");
  std::vector<committed_offset> offsets;
  for (const auto& tp : assigned_) {
    auto it = positions_.find(tp);
    if (it == positions_.end()) continue;
    const auto epoch = epochs_.find(tp);
    offsets.push_back(committed_offset{tp.topic, tp.partition, it->second.value(), "", errc::none,
                                       epoch == epochs_.end() ? -1 : epoch->second.value()});
  }
  if (offsets.empty()) return {};
  auto r = client_.commit_offsets(group_, offsets, member);
  if (!r) return r.err();
  for (const auto& c : *r)
    if (c.error != errc::none)
      return make_error(c.error, "committing " + c.topic + "-" + std::to_string(c.partition));
  return {};
}

} // namespace capstan::client
