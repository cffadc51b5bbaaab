#include "runtime/client/producer_sequencer.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

#include "runtime/storage/producer_state.hpp"

namespace capstan::client {

namespace {

// Errors after which nothing is known for good about the batch: it may or may not be in the log,
// and resending the same sequence either appends it or is answered as a duplicate.
bool undecided(errc code) {
  switch (code) {
  case errc::request_timed_out:
  case errc::network_exception:
  case errc::not_leader_or_follower:
  case errc::unknown_topic_or_partition:
  case errc::not_enough_replicas:
  case errc::not_enough_replicas_after_append:
    return true;
  default:
    return false;
  }
}

} // namespace

std::deque<producer_sequencer::partition::batch>::iterator
producer_sequencer::find_batch(partition& p, int32_t base_sequence) {
  return std::find_if(p.in_flight.begin(), p.in_flight.end(),
                      [base_sequence](const auto& b) { return b.base_sequence == base_sequence; });
}

result<bool> resolve_idempotence(const client_config& config) {
  const bool acks_all = config.acks == -1;
  const bool in_flight_ok = config.max_in_flight <= max_in_flight_with_idempotence;
  if (!config.enable_idempotence) return acks_all && in_flight_ok;
  if (!*config.enable_idempotence) return false;
  if (!acks_all)
    return make_error(errc::invalid_config, "idempotence requires acks all, not acks " +
                                                std::to_string(config.acks) +
                                                ": set acks to all or turn idempotence off");
  if (!in_flight_ok)
    return make_error(errc::invalid_config, "idempotence allows at most " +
                                                std::to_string(max_in_flight_with_idempotence) +
                                                " requests in flight per partition, not " +
                                                std::to_string(config.max_in_flight) +
                                                ": lower it or turn idempotence off");
  return true;
}

void producer_sequencer::set_identity(producer_identity id) {
  identity_ = id;
  if (awaiting_identity_ == 0) return;
  for (auto& [tp, p] : partitions_) {
    if (!p.awaiting_identity) continue;
    p.awaiting_identity = false;
    p.producer_id = id.producer_id;
    p.epoch = id.producer_epoch;
    p.next_sequence = 0;
  }
  awaiting_identity_ = 0;
}

int producer_sequencer::free_slots(const topic_partition_key& tp, int max_in_flight) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return has_identity() ? max_in_flight : 0;
  auto& p = it->second;
  if (p.restart_pending && p.in_flight.empty()) restart(p);
  if (p.restart_pending || p.awaiting_identity || p.waiting_resend > 0) return 0;
  return std::max(0, max_in_flight - static_cast<int>(p.in_flight.size()));
}

batch_stamp producer_sequencer::next(const topic_partition_key& tp, int32_t records) {
  assert(records > 0 && has_identity());
  auto [it, fresh] = partitions_.try_emplace(tp);
  auto& p = it->second;
  if (fresh) {
    p.producer_id = identity_.producer_id;
    p.epoch = identity_.producer_epoch;
  }
  const batch_stamp stamp{p.producer_id, p.epoch, p.next_sequence};
  p.in_flight.push_back({p.next_sequence, false});
  p.next_sequence = increment_sequence(p.next_sequence, records);
  return stamp;
}

void producer_sequencer::acknowledged(const topic_partition_key& tp, const batch_stamp& stamp) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return;
  auto& p = it->second;
  if (stamp.producer_id != p.producer_id || stamp.epoch != p.epoch) return;
  auto pos = find_batch(p, stamp.base_sequence);
  if (pos == p.in_flight.end()) return;
  for (auto earlier = p.in_flight.begin(); earlier != pos; ++earlier)
    earlier->known_appended = true;
  p.in_flight.erase(pos);
}

failure_verdict producer_sequencer::failed(const topic_partition_key& tp, const batch_stamp& stamp,
                                           errc code, bool may_retry) {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return failure_verdict::fail;
  auto& p = it->second;
  if (stamp.producer_id != p.producer_id || stamp.epoch != p.epoch) return failure_verdict::fail;
  auto pos = find_batch(p, stamp.base_sequence);
  if (pos == p.in_flight.end()) return failure_verdict::fail;
  if (pos->known_appended) {
    p.in_flight.erase(pos);
    return failure_verdict::appended;
  }
  // Earlier batches known appended cannot close a gap before this one.
  const bool earlier_unacknowledged = std::any_of(
      p.in_flight.begin(), pos, [](const partition::batch& b) { return !b.known_appended; });
  if (may_retry &&
      (undecided(code) || (code == errc::out_of_order_sequence_number && earlier_unacknowledged))) {
    ++p.waiting_resend;
    return failure_verdict::retry;
  }
  p.in_flight.erase(pos);
  p.restart_pending = true;
  return failure_verdict::fail;
}

void producer_sequencer::resent(const topic_partition_key& tp) {
  auto it = partitions_.find(tp);
  if (it != partitions_.end() && it->second.waiting_resend > 0) --it->second.waiting_resend;
}

std::optional<batch_stamp> producer_sequencer::peek(const topic_partition_key& tp) const {
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return std::nullopt;
  return batch_stamp{it->second.producer_id, it->second.epoch, it->second.next_sequence};
}

size_t producer_sequencer::in_flight(const topic_partition_key& tp) const {
  auto it = partitions_.find(tp);
  return it == partitions_.end() ? 0 : it->second.in_flight.size();
}

void producer_sequencer::restart(partition& p) {
  assert(p.in_flight.empty());
  p.restart_pending = false;
  p.next_sequence = 0;
  if (p.epoch < std::numeric_limits<int16_t>::max()) {
    ++p.epoch;
  } else if (identity_.producer_id != p.producer_id) {
    p.producer_id = identity_.producer_id;
    p.epoch = identity_.producer_epoch;
  } else {
    p.awaiting_identity = true;
    ++awaiting_identity_;
  }
}

} // namespace capstan::client
