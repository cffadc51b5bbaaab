#include "runtime/client/record_accumulator.hpp"

#include "runtime/batch/record_batch_format.hpp"

namespace capstan::client {

record_accumulator::record_accumulator(int32_t batch_size, std::chrono::milliseconds linger,
                                       compression codec,
                                       std::function<clock_type::time_point()> clock)
    : batch_size_(batch_size), linger_(linger), codec_(codec), clock_(std::move(clock)) {}

size_t record_accumulator::record_size_upper_bound(size_t key_size, size_t value_size) {
  // length, attributes, timestamp delta, offset delta, key length, value length, header count.
  constexpr size_t varint_overhead = 5 + 1 + 10 + 5 + 5 + 5 + 5;
  return key_size + value_size + varint_overhead;
}

record_accumulator::append_result record_accumulator::append(const topic_partition_key& tp,
                                                             std::optional<bytes_view> key,
                                                             std::optional<bytes_view> value,
                                                             timestamp_ms timestamp,
                                                             send_callback done, size_t limit) {
  append_result out;
  auto& queue = partitions_[tp];
  const size_t estimate = record_size_upper_bound(key ? key->size() : 0, value ? value->size() : 0);
  if (!queue.empty() && !queue.back().closed) {
    auto& open = queue.back();
    if (open.builder.record_count() > 0 &&
        open.builder.size_bytes() + estimate > limit_or_batch_size(limit)) {
      open.closed = true;
      ++full_batches_;
      out.closed_previous = true;
    }
  }
  if (queue.empty() || queue.back().closed) {
    queue.push_back(open_batch{record_batch_builder(offset{0}, timestamp), {}, clock_(), 0, false});
    queue.back().builder.compress_with(codec_);
    ++batches_;
    out.new_batch = true;
  }
  auto& batch = queue.back();
  const size_t before = batch.builder.size_bytes();
  batch.builder.add(key, value, timestamp);
  const size_t grown = batch.builder.size_bytes() - before + (out.new_batch ? before : 0);
  batch.accounted_bytes += grown;
  queued_bytes_ += grown;
  batch.callbacks.push_back(std::move(done));
  return out;
}

bool record_accumulator::would_start_batch(const topic_partition_key& tp, size_t key_size,
                                           size_t value_size) const {
  auto it = partitions_.find(tp);
  if (it == partitions_.end() || it->second.empty() || it->second.back().closed) return true;
  const auto& open = it->second.back();
  return open.builder.record_count() > 0 &&
         open.builder.size_bytes() + record_size_upper_bound(key_size, value_size) >
             static_cast<size_t>(batch_size_);
}

bool record_accumulator::has_closed_batch(const topic_partition_key& tp) const {
  auto it = partitions_.find(tp);
  return it != partitions_.end() && !it->second.empty() && it->second.front().closed;
}

std::vector<ready_batch> record_accumulator::drain(
    clock_type::time_point now, bool flush,
    const std::function<int(const topic_partition_key&)>& budget) {
  std::vector<ready_batch> out;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    auto& queue = it->second;
    int allowed = queue.empty() ? 0 : budget(it->first);
    while (allowed > 0 && !queue.empty()) {
      auto& front = queue.front();
      const bool ready = front.closed || flush || now - front.created >= linger_ ||
                         front.builder.size_bytes() >= static_cast<size_t>(batch_size_);
      if (!ready) break;
      ready_batch batch{it->first, front.builder.build(), front.builder.record_count(),
                        front.accounted_bytes, std::move(front.callbacks)};
      if (front.closed) --full_batches_;
      queued_bytes_ -= front.accounted_bytes;
      --batches_;
      queue.pop_front();
      out.push_back(std::move(batch));
      --allowed;
    }
    if (queue.empty()) {
      it = partitions_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<ready_batch> record_accumulator::expire(clock_type::time_point now,
                                                    std::chrono::milliseconds timeout) {
  std::vector<ready_batch> out;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    auto& queue = it->second;
    while (!queue.empty() && now - queue.front().created >= timeout) {
      auto& front = queue.front();
      out.push_back(ready_batch{it->first, {}, front.builder.record_count(), front.accounted_bytes,
                                std::move(front.callbacks)});
      if (front.closed) --full_batches_;
      queued_bytes_ -= front.accounted_bytes;
      --batches_;
      queue.pop_front();
    }
    if (queue.empty()) {
      it = partitions_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<clock_type::time_point> record_accumulator::next_deadline() const {
  std::optional<clock_type::time_point> earliest;
  for (const auto& [tp, queue] : partitions_) {
    if (queue.empty()) continue;
    const auto deadline = queue.front().created + linger_;
    if (!earliest || deadline < *earliest) earliest = deadline;
  }
  return earliest;
}

} // namespace capstan::client
