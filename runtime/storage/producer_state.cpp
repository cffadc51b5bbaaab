#include "runtime/storage/producer_state.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

namespace capstan {

namespace {

bool in_sequence(int32_t last, int32_t next) {
  return int64_t{next} == int64_t{last} + 1 ||
         (next == 0 && last == std::numeric_limits<int32_t>::max());
}

std::string producer_name(const producer_batch& b) {
  return "producer " + std::to_string(b.producer_id) + " epoch " + std::to_string(b.epoch);
}

} // namespace

int32_t increment_sequence(int32_t sequence, int32_t delta) {
  assert(sequence >= 0 && delta >= 0);
  constexpr int32_t max = std::numeric_limits<int32_t>::max();
  if (sequence > max - delta) return delta - (max - sequence) - 1;
  return sequence + delta;
}

producer_batch producer_batch::of(const record_batch_view& batch) {
  return producer_batch{batch.producer_id(), batch.producer_epoch(), batch.base_sequence(),
                        batch.last_offset_delta(), batch.max_timestamp()};
}

result<producer_check> producer_state::check(const producer_batch& b, producer_origin origin) const {
  producer_check out;
  out.append.batch = b;
  if (b.producer_id == no_producer_id) return out;
  if (b.epoch < 0 || b.base_sequence < 0) {
    if (origin == producer_origin::client)
      return make_error(errc::invalid_record,
                        producer_name(b) + ": base sequence " + std::to_string(b.base_sequence) +
                            " and epoch must not be negative for a producer id");
    // A follower takes what the leader wrote; with no sequence there is nothing to track.
    out.append.batch.producer_id = no_producer_id;
    return out;
  }
  out.append.last_sequence = increment_sequence(b.base_sequence, b.last_offset_delta);
  if (origin == producer_origin::replication) return out;

  const producer_entry* entry = find(b.producer_id);
  if (!entry) return out;
  if (b.epoch == entry->epoch) {
    for (const auto& retained : entry->batches)
      if (retained.first_sequence == b.base_sequence &&
          retained.last_sequence == out.append.last_sequence) {
        out.duplicate = retained;
        return out;
      }
  }
  if (b.epoch < entry->epoch)
    return make_error(errc::invalid_producer_epoch,
                      producer_name(b) + " is older than its current epoch " +
                          std::to_string(entry->epoch));
  if (b.epoch > entry->epoch) {
    if (b.base_sequence != 0)
      return make_error(errc::out_of_order_sequence_number,
                        producer_name(b) + ": a new epoch must start at sequence 0, not " +
                            std::to_string(b.base_sequence));
    return out;
  }
  if (!in_sequence(entry->last_sequence(), b.base_sequence))
    return make_error(errc::out_of_order_sequence_number,
                      producer_name(b) + ": base sequence " + std::to_string(b.base_sequence) +
                          " does not follow the last sequence " +
                          std::to_string(entry->last_sequence()));
  return out;
}

void producer_state::commit(const producer_append_info& info, offset first_offset) {
  const offset last_offset = first_offset + info.batch.last_offset_delta;
  end_ = std::max(end_, last_offset + 1);
  if (info.batch.producer_id == no_producer_id) return;
  auto& entry = producers_[info.batch.producer_id];
  if (entry.epoch != info.batch.epoch) {
    entry.epoch = info.batch.epoch;
    entry.batches.clear();
  }
  entry.batches.push_back(producer_batch_entry{info.batch.base_sequence, info.last_sequence,
                                               first_offset, last_offset,
                                               info.batch.max_timestamp});
  if (entry.batches.size() > producer_batches_retained) entry.batches.pop_front();
}

void producer_state::replay(const record_batch_view& batch) {
  replay(producer_batch::of(batch), batch.base_offset());
}

void producer_state::replay(const producer_batch& batch, offset base_offset) {
  auto checked = check(batch, producer_origin::replication);
  assert(checked.ok() && !checked->duplicate);
  commit(checked->append, base_offset);
}

void producer_state::truncate_to(offset end) {
  for (auto it = producers_.begin(); it != producers_.end();) {
    auto& batches = it->second.batches;
    while (!batches.empty() && batches.back().last_offset >= end) batches.pop_back();
    it = batches.empty() ? producers_.erase(it) : std::next(it);
  }
  end_ = std::min(end_, end);
}

size_t producer_state::expire(timestamp_ms now, int64_t expiration_ms) {
  return std::erase_if(producers_, [&](const auto& kv) {
    return now - kv.second.last_timestamp() >= expiration_ms;
  });
}

const producer_entry* producer_state::find(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

void producer_state::restore(int64_t producer_id, producer_entry entry) {
  assert(!entry.batches.empty() && entry.batches.size() <= producer_batches_retained);
  producers_[producer_id] = std::move(entry);
}

void replay_batches(producer_state& state, std::span<const record_batch_view> batches, offset from) {
  for (const auto& batch : batches)
    if (batch.last_offset() >= from) state.replay(batch);
}

} // namespace capstan
