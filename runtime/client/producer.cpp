// The producer: user threads append to the record_accumulator under one lock; a sender thread
// drains ready batches (full, at batch.size, lingered or flushed) while the partition has fewer
// than max.in.flight requests outstanding and hands them to cluster_client::produce, which retries
// retriable errors until delivery.timeout.ms. Completions run on the client thread: they call
// the records' callbacks in order and release buffer.memory and the in-flight slot.
//
// With idempotence (docs/idempotence.md, "The client") the sender thread first asks
// initProducerId, then stamps each drained batch with the producer id, epoch and the partition's
// next base sequence (producer_sequencer decides those and what a failure becomes); a batch the
// sequencer sends back for a retry is resent, byte for byte, by the sender thread after
// retry.backoff.ms, before any new batch of its partition.

#include "runtime/client/producer.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/partitioner.hpp"
#include "runtime/client/producer_sequencer.hpp"
#include "runtime/client/record_accumulator.hpp"

namespace capstan::client {

struct producer::impl {
  impl(cluster_client& c, client_config cfg)
      : client(c), config(std::move(cfg)), idempotence(resolve_idempotence(config)),
        accumulator(config.batch_size, std::chrono::milliseconds(config.linger_ms),
                    config.compression_type) {
    sender = std::thread([this] { run_sender(); });
  }

  ~impl() {
    flush();
    {
      std::lock_guard lock(mu);
      stopping = true;
    }
    wake_sender.notify_all();
    released.notify_all();
    sender.join();
  }

  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  struct topic_state {
    int32_t partitions = 0;
    // How far a batch of the topic may grow while it cannot leave yet (growth_limit);
    // batch.size when it may not grow.
    size_t max_batch = 0;
  };

  // Learns `topic`'s partition count with one metadata request (and a describeConfigs for its
  // batch limit when batches may grow), and caches it. Called without mu held.
  status learn_topic(const std::string& topic) {
    auto md = client.metadata({topic});
    if (!md) return md.err();
    auto it = md->topics.find(topic);
    if (it == md->topics.end() || it->second.partitions.empty())
      return make_error(errc::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
    const auto count = static_cast<int32_t>(it->second.partitions.size());
    const auto max_batch = growth_limit(topic);
    std::lock_guard lock(mu);
    topics.try_emplace(topic, topic_state{count, max_batch});
    return {};
  }

  // batch.max.size, bounded by half the topic's max.message.bytes: a grown batch the leader
  // refused would fail records a batch of batch.size would have carried, and the half leaves
  // room for what a codec can add to incompressible data. batch.size when the topic's limit is
  // unknown (its configs could not be read).
  size_t growth_limit(const std::string& topic) {
    const auto batch_size = static_cast<size_t>(config.batch_size);
    if (config.batch_max_size <= config.batch_size) return batch_size;
    auto configs = client.describe_configs(topic);
    if (!configs) return batch_size;
    auto it = configs->find("max.message.bytes");
    if (it == configs->end()) return batch_size;
    char* end = nullptr;
    const auto max_message_bytes = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0' || max_message_bytes <= 0) return batch_size;
    return std::max(batch_size, std::min(static_cast<size_t>(config.batch_max_size),
                                         static_cast<size_t>(max_message_bytes / 2)));
  }

  // What the open batch of `tp` may grow to now: past batch.size only while it could not leave
  // anyway, behind a full window or a full batch still waiting (for a slot, a resend or the
  // producer id). Called with mu held.
  size_t batch_limit(const topic_partition_key& tp, size_t max_batch) const {
    auto it = in_flight.find(tp);
    const bool window_full = it != in_flight.end() && it->second >= config.max_in_flight;
    return window_full || accumulator.has_closed_batch(tp) ? max_batch
                                                           : static_cast<size_t>(config.batch_size);
  }

  void send(const std::string& topic, std::optional<bytes_view> key, std::optional<bytes_view> value,
            std::optional<int32_t> explicit_partition, send_callback done) {
    if (!idempotence) {
      if (done) done(idempotence.err());
      return;
    }
    auto now_ms = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
    auto timestamp = now_ms();
    const size_t key_size = key ? key->size() : 0;
    const size_t value_size = value ? value->size() : 0;
    std::unique_lock lock(mu);
    auto known = topics.find(topic);
    if (known == topics.end()) {
      lock.unlock();
      if (auto learnt = learn_topic(topic); !learnt) {
        if (done) done(learnt.err());
        return;
      }
      // The record's time is when it could be sent, not before the wait (as Kafka's producer
      // adds its metadata wait to the send time).
      timestamp = now_ms();
      lock.lock();
      known = topics.find(topic);
    }
    // Entries are never erased, so `known` outlives the waits below.
    const int32_t count = known->second.partitions;
    if (explicit_partition && (*explicit_partition < 0 || *explicit_partition >= count)) {
      lock.unlock();
      if (done)
        done(make_error(errc::unknown_topic_or_partition,
                        "partition " + std::to_string(*explicit_partition) + " of '" + topic +
                            "' does not exist (" + std::to_string(count) + " partitions)"));
      return;
    }
    released.wait(lock, [&] {
      return stopping ||
             accumulator.queued_bytes() + in_flight_bytes < static_cast<size_t>(config.buffer_memory);
    });
    topic_partition_key tp{topic, 0};
    if (explicit_partition) {
      tp.partition = *explicit_partition;
    } else if (key) {
      tp.partition = partition_for_key(*key, count);
    } else {
      // The sticky partitioner moves on at batch.size, as before batches could grow: a
      // partition that cannot send does not keep the records other partitions could send.
      tp.partition = sticky.partition(topic, count);
      if (accumulator.would_start_batch(tp, key_size, value_size)) {
        sticky.on_new_batch(topic, count, tp.partition);
        tp.partition = sticky.partition(topic, count);
      }
    }
    // Read under the lock: a refusal stops growth at any time (complete).
    auto appended = accumulator.append(tp, key, value, timestamp, std::move(done),
                                       batch_limit(tp, known->second.max_batch));
    if (!appended.new_batch && !appended.closed_previous) return;
    const bool sent = config.linger_ms == 0 && dispatch_ready(lock);
    lock.unlock();
    if (!sent) wake_sender.notify_one();
  }

  void flush() {
    std::unique_lock lock(mu);
    ++flushing;
    if (!dispatch_ready(lock)) wake_sender.notify_one();
    released.wait(lock, [&] { return accumulator.empty() && in_flight_batches == 0; });
    --flushing;
  }

  bool idempotent() const { return idempotence && *idempotence; }

  // Free in-flight slots of `tp`. Called with mu held.
  int budget(const topic_partition_key& tp) {
    if (idempotent()) return sequencer.free_slots(tp, config.max_in_flight);
    auto it = in_flight.find(tp);
    return config.max_in_flight - (it == in_flight.end() ? 0 : it->second);
  }

  // Drains the ready batches and sends them; false when nothing was ready. Only one thread at a
  // time does (`dispatching`), so batches leave in the order they were drained and stamped.
  // Called with mu held; releases it while sending.
  bool send_drained(std::unique_lock<std::mutex>& lock, clock_type::time_point now) {
    auto batches = accumulator.drain(now, flushing > 0 || stopping,
                                     [this](const topic_partition_key& tp) { return budget(tp); });
    if (batches.empty()) return false;
    std::vector<std::shared_ptr<batch_state>> stamped;
    for (auto& b : batches) {
      ++in_flight[b.tp];
      in_flight_bytes += b.accounted_bytes;
      ++in_flight_batches;
      if (idempotent()) stamped.push_back(stamp(b, now));
    }
    dispatching = true;
    lock.unlock();
    if (idempotent()) {
      for (auto& state : stamped) send_stamped(state);
    } else {
      for (auto& b : batches) dispatch(std::move(b));
    }
    lock.lock();
    dispatching = false;
    return true;
  }

  // Sends what is ready from the calling thread, sparing the hand-off to the sender thread (a
  // wake-up on each side of every round trip), unless the sender has work that must go first: a
  // send under way, resends, or no producer id yet. False when it left the sending to the
  // sender. Called with mu held; holds it again on return.
  bool send_here(std::unique_lock<std::mutex>& lock) {
    if (dispatching || !resends.empty() || (idempotent() && sequencer.wants_identity()))
      return false;
    send_drained(lock, clock_type::now());
    return true;
  }

  // send_here for a caller: true when nothing is left for the sender.
  bool dispatch_ready(std::unique_lock<std::mutex>& lock) {
    return send_here(lock) && accumulator.empty() && !sender_held;
  }

  void run_sender() {
    std::unique_lock lock(mu);
    const auto delivery_timeout = std::chrono::milliseconds(config.delivery_timeout_ms);
    for (;;) {
      if (dispatching) {
        sender_held = true;
        wake_sender.wait(lock);
        sender_held = false;
        continue;
      }
      const auto now = clock_type::now();
      if (auto expired = accumulator.expire(now, delivery_timeout); !expired.empty()) {
        lock.unlock();
        for (auto& b : expired) fail_unsent(b);
        lock.lock();
        released.notify_all();
        continue;
      }
      if (idempotent()) {
        if (auto due = take_due_resends(now); !due.empty()) {
          dispatching = true;
          lock.unlock();
          for (auto& state : due) send_stamped(state);
          lock.lock();
          dispatching = false;
          continue;
        }
        if (sequencer.wants_identity() && !accumulator.empty()) {
          lock.unlock();
          auto id = client.init_producer_id();
          lock.lock();
          if (id) {
            sequencer.set_identity(*id);
            continue;
          }
          // Queued batches wait (and expire after delivery.timeout.ms) until an id comes.
          wake_sender.wait_for(lock, std::chrono::milliseconds(config.retry_backoff_ms));
          continue;
        }
      }
      if (send_drained(lock, now)) continue;
      if (stopping && accumulator.empty() && resends.empty()) return;
      // Partitions at their in-flight limit are woken by a completion; the 1 ms floor keeps a
      // past deadline from spinning.
      auto deadline = accumulator.next_deadline();
      if (!resends.empty()) {
        const auto resend_at = next_resend_time();
        deadline = deadline ? std::min(*deadline, resend_at) : resend_at;
      }
      if (deadline)
        wake_sender.wait_until(lock, std::max(*deadline, now + std::chrono::milliseconds(1)));
      else
        wake_sender.wait(lock);
    }
  }

  void fail_unsent(ready_batch& b) {
    const auto e = make_error(errc::request_timed_out,
                              "expired after " + std::to_string(config.delivery_timeout_ms) +
                                  " ms (delivery.timeout.ms) before it could be sent to " + b.tp.topic + "-" +
                                  std::to_string(b.tp.partition));
    for (auto& cb : b.callbacks)
      if (cb) cb(e);
  }

  struct batch_state {
    topic_partition_key tp;
    size_t accounted_bytes = 0;
    std::vector<send_callback> callbacks;
    // Idempotence only: the stamped bytes every attempt sends, the stamp, the order the batch was
    // first sent in, and when retries stop (delivery.timeout.ms after the first send). Shared
    // with the attempts in flight: a retry sends the same bytes without copying them.
    std::shared_ptr<const bytes> data;
    batch_stamp stamp;
    uint64_t send_order = 0;
    clock_type::time_point retry_until;
  };

  // Stamps a drained batch with the partition's next sequence. Called with mu held.
  std::shared_ptr<batch_state> stamp(ready_batch& b, clock_type::time_point now) {
    auto state = std::make_shared<batch_state>();
    state->tp = b.tp;
    state->accounted_bytes = b.accounted_bytes;
    state->callbacks = std::move(b.callbacks);
    state->stamp = sequencer.next(b.tp, b.records);
    set_producer(b.data, state->stamp.producer_id, state->stamp.epoch, state->stamp.base_sequence);
    state->data = std::make_shared<const bytes>(std::move(b.data));
    state->send_order = next_send_order++;
    state->retry_until = now + std::chrono::milliseconds(config.delivery_timeout_ms);
    return state;
  }

  void send_stamped(const std::shared_ptr<batch_state>& state) {
    client.produce(state->tp.topic, state->tp.partition, config.acks, state->data,
                   [this, state](result<produce_response> r) { complete_stamped(state, r); });
  }

  // Resends whose backoff has passed, in sending order per partition; a partition's later resends
  // wait for its earlier ones. Called with mu held.
  std::vector<std::shared_ptr<batch_state>> take_due_resends(clock_type::time_point now) {
    std::vector<std::shared_ptr<batch_state>> due;
    std::optional<topic_partition_key> blocked;
    for (auto it = resends.begin(); it != resends.end();) {
      if (blocked && it->first.first == *blocked) {
        ++it;
        continue;
      }
      if (it->second.ready_at > now) {
        blocked = it->first.first;
        ++it;
        continue;
      }
      sequencer.resent(it->first.first);
      due.push_back(std::move(it->second.state));
      it = resends.erase(it);
    }
    return due;
  }

  clock_type::time_point next_resend_time() const {
    auto earliest = clock_type::time_point::max();
    for (const auto& [key, r] : resends) earliest = std::min(earliest, r.ready_at);
    return earliest;
  }

  void complete_stamped(const std::shared_ptr<batch_state>& state,
                        const result<produce_response>& r) {
    auto outcome = r;
    if (!r) {
      std::lock_guard lock(mu);
      const auto now = clock_type::now();
      const auto verdict =
          sequencer.failed(state->tp, state->stamp, r.code(), now < state->retry_until);
      if (verdict == failure_verdict::retry) {
        resends.emplace(
            std::pair{state->tp, state->send_order},
            pending_resend{state, now + std::chrono::milliseconds(config.retry_backoff_ms)});
        wake_sender.notify_one();
        return;
      }
      if (verdict == failure_verdict::appended)
        outcome = produce_response{offset{-1}, no_timestamp, offset{-1}};
    }
    complete(*state, outcome, r.ok());
  }

  void dispatch(ready_batch b) {
    auto state = std::make_shared<batch_state>();
    state->tp = b.tp;
    state->accounted_bytes = b.accounted_bytes;
    state->callbacks = std::move(b.callbacks);
    client.produce(b.tp.topic, b.tp.partition, config.acks,
                   std::make_shared<const bytes>(std::move(b.data)),
                   [this, state](result<produce_response> r) { complete(*state, r); });
  }

  // `acknowledged`: the leader appended this stamped batch. The sequencer frees its place in the
  // same step as its in-flight slot, so no other thread can take that slot before send_here.
  void complete(batch_state& b, const result<produce_response>& r, bool acknowledged = false) {
    if (r) {
      record_metadata md{b.tp.topic, b.tp.partition, r->base_offset};
      for (size_t i = 0; i < b.callbacks.size(); ++i) {
        if (!b.callbacks[i]) continue;
        md.off = r->base_offset.value() < 0 ? r->base_offset : r->base_offset + static_cast<int64_t>(i);
        b.callbacks[i](md);
      }
    } else {
      for (auto& cb : b.callbacks)
        if (cb) cb(r.err());
    }
    bool wake = false;
    {
      std::unique_lock lock(mu);
      if (acknowledged) sequencer.acknowledged(b.tp, b.stamp);
      // The topic's max.message.bytes was lowered below a grown batch: grow no more. (A batch
      // of one record is as large as that record, grown or not.)
      if (!r && r.code() == errc::message_too_large && b.callbacks.size() > 1 &&
          b.accounted_bytes > static_cast<size_t>(config.batch_size))
        if (auto it = topics.find(b.tp.topic); it != topics.end())
          it->second.max_batch = static_cast<size_t>(config.batch_size);
      if (--in_flight[b.tp] == 0) in_flight.erase(b.tp);
      in_flight_bytes -= b.accounted_bytes;
      --in_flight_batches;
      // What the freed slot lets go leaves from this thread (the client's loop, which answers
      // and sends in one loop as Kafka's sender does), not through the sender and back. The
      // sender is woken only when it must act: it was held by this send, or it has resends or
      // no producer id. Batches still lingering keep the deadline it waits for; those behind a
      // full window go at the next completion.
      if (stopping)
        wake = true;
      else if (!accumulator.empty())
        wake = !send_here(lock) || sender_held;
    }
    released.notify_all();
    if (wake) wake_sender.notify_one();
  }

  cluster_client& client;
  const client_config config;
  const result<bool> idempotence; // resolve_idempotence(config): an error fails every send

  std::mutex mu; // guards everything below
  // The sender thread waits on wake_sender; callers wait on released for buffer.memory and for
  // flush. Apart, a completion wakes the sender only when it has batches to send.
  std::condition_variable wake_sender;
  std::condition_variable released;
  record_accumulator accumulator;
  sticky_partitioner sticky;
  std::map<std::string, topic_state> topics;
  std::map<topic_partition_key, int, partition_first> in_flight;
  producer_sequencer sequencer;
  struct pending_resend {
    std::shared_ptr<batch_state> state;
    clock_type::time_point ready_at;
  };
  // Batches the sequencer sent back for a retry, by partition and first sending order.
  std::map<std::pair<topic_partition_key, uint64_t>, pending_resend> resends;
  uint64_t next_send_order = 0;
  size_t in_flight_bytes = 0;
  size_t in_flight_batches = 0;
  int flushing = 0;
  bool stopping = false;
  bool dispatching = false; // a thread is sending drained batches (send_drained)
  bool sender_held = false; // the sender thread waits for that send to end
  std::thread sender;
};

producer::producer(cluster_client& client, client_config config)
    : impl_(std::make_unique<impl>(client, std::move(config))) {}

producer::~producer() = default;

void producer::send(const std::string& topic, std::optional<bytes_view> key, std::optional<bytes_view> value,
                    std::optional<int32_t> partition, std::function<void(result<record_metadata>)> done) {
  impl_->send(topic, key, value, partition, std::move(done));
}

void producer::flush() { impl_->flush(); }

status producer::init_producer_id() {
  auto id = impl_->client.init_producer_id();
  if (!id) return id.err();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sequencer.set_identity(*id);
  return {};
}

producer_identity producer::identity() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->sequencer.identity();
}

} // namespace capstan::client
