// The partition replica actor: the leader of one partition on this node (with one node, the only
// replica; ISR = {itself}). It owns the partition log actor and adds what Kafka's Partition adds
// on top of a Log: acks and min.insync.replicas on produce, the high watermark, fetches that only
// see offsets below it and long-poll until min_bytes arrive (Kafka's DelayedFetch, woken by
// appends, never by polling), and ListOffsets.
//
// Ordering: the log processes appends and reads in the order sent, so a read issued after the HW
// moved past an append sees that append.

#include "actors/replica/partition_replica_actor.hpp"

#include "actors/countdown.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/log/partition_log_actor.hpp"
#include "actors/replica/delayed_fetch.hpp"
#include "actors/replica/high_watermark.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan {

namespace {

// An acks=-1 produce appended but not yet below the HW (only with followers in the ISR).
struct pending_produce {
  caf::typed_response_promise<produce_result> rp;
  produce_result result;
  std::chrono::steady_clock::time_point deadline;
};

struct partition_replica_state {
  static inline const char* name = "capstan.partition_replica";

  partition_replica_options opts;
  std::string log_name;
  partition_log_actor log;
  offset log_start{0};
  std::optional<high_watermark_tracker> hw;
  // Bytes appended but not yet below the HW, by the batch's end offset (last + 1).
  std::map<offset, int64_t> bytes_above_hw;
  // Running total of the bytes the HW has passed since start (delayed_fetch.hpp).
  int64_t bytes_below_hw = 0;
  delayed_fetch_set parked;
  std::unordered_map<uint64_t, caf::typed_response_promise<fetch_result>> parked_promises;
  // acks=-1 produces waiting for the HW to reach the key (their last offset + 1).
  std::multimap<offset, pending_produce> pending_acks;
  bool closing = false;

  offset high_watermark() const { return hw->high_watermark(); }
};

using self_ptr = partition_replica_actor::stateful_pointer<partition_replica_state>;

caf::error fail_with(errc code, std::string text) { return to_caf_error(make_error(code, std::move(text))); }

caf::error not_leader(const partition_replica_state& st) {
  return fail_with(errc::not_leader_or_follower, st.log_name + " is closing");
}

void schedule_tick(self_ptr self, std::chrono::milliseconds after) {
  self->delayed_send(self, after, tick_atom_v);
}

// Reads [from, HW) up to max_bytes and answers `rp`; `done` runs after the answer went out.
void answer_fetch(self_ptr self, caf::typed_response_promise<fetch_result> rp,
                  const fetch_request& req, std::function<void()> done = {}) {
  auto& st = self->state;
  const offset upto = st.high_watermark();
  if (req.from >= upto || req.max_bytes <= 0) {
    rp.deliver(fetch_result{upto, st.log_start, log_slice{{}, nullptr, 0, req.from, req.from}});
    if (done) done();
    return;
  }
  self->request(st.log, caf::infinite, read_atom_v, read_request{req.from, req.max_bytes, upto})
    .then(
      [self, rp, done](log_slice& slice) mutable {
        rp.deliver(fetch_result{self->state.high_watermark(), self->state.log_start, std::move(slice)});
        if (done) done();
      },
      [rp, done](caf::error& e) mutable {
        rp.deliver(std::move(e));
        if (done) done();
      });
}

void answer_parked(self_ptr self, const std::vector<parked_fetch>& ready,
                   std::function<void()> done = {}) {
  auto pending = std::make_shared<countdown>(countdown{ready.size() + 1, [done] {
                                                 if (done) done();
                                               }});
  auto arrive = [pending] { pending->arrive(); };
  for (const auto& p : ready) {
    auto it = self->state.parked_promises.find(p.id);
    if (it == self->state.parked_promises.end()) {
      arrive();
      continue;
    }
    auto rp = std::move(it->second);
    self->state.parked_promises.erase(it);
    answer_fetch(self, std::move(rp), p.request, arrive);
  }
  arrive();
}

// The HW moved: count the bytes it passed, complete acks=-1 produces, wake parked fetches.
void on_hw_advanced(self_ptr self) {
  auto& st = self->state;
  const offset hw = st.high_watermark();
  while (!st.bytes_above_hw.empty() && st.bytes_above_hw.begin()->first <= hw) {
    st.bytes_below_hw += st.bytes_above_hw.begin()->second;
    st.bytes_above_hw.erase(st.bytes_above_hw.begin());
  }
  while (!st.pending_acks.empty() && st.pending_acks.begin()->first <= hw) {
    auto& p = st.pending_acks.begin()->second;
    p.result.log_start = st.log_start;
    p.rp.deliver(p.result);
    st.pending_acks.erase(st.pending_acks.begin());
  }
  if (!st.parked.empty()) answer_parked(self, st.parked.take_ready(st.bytes_below_hw));
}

void on_appended(self_ptr self, const append_result& res, int64_t size) {
  auto& st = self->state;
  st.log_start = std::max(st.log_start, res.log_start);
  st.bytes_above_hw[res.last + 1] += size;
  if (st.hw->on_leader_append(res.last + 1)) on_hw_advanced(self);
}

caf::result<produce_result> produce(self_ptr self, produce_request& req) {
  auto& st = self->state;
  if (st.closing) return not_leader(st);
  if (req.acks != 0 && req.acks != 1 && req.acks != -1)
    return fail_with(errc::invalid_required_acks,
                     "acks must be 0, 1 or -1, not " + std::to_string(req.acks));
  if (req.acks == -1 && st.hw->isr_size() < static_cast<size_t>(st.opts.min_insync_replicas))
    return fail_with(errc::not_enough_replicas,
                     st.log_name + ": the ISR has " + std::to_string(st.hw->isr_size()) +
                       " replicas, min.insync.replicas is " +
                       std::to_string(st.opts.min_insync_replicas));
  const auto size = static_cast<int64_t>(req.batch.size());
  auto append = self->request(st.log, caf::infinite, append_atom_v,
                              append_request{std::move(req.batch), append_origin::leader, st.opts.epoch});
  if (req.acks == 0) {
    // Kafka answers acks=0 before appending; a failed append is only logged.
    append.then([self, size](const append_result& res) { on_appended(self, res, size); },
                [self](caf::error& e) {
                  spdlog::warn("{}: acks=0 produce failed: {}", self->state.log_name, to_string(e));
                });
    return produce_result{offset{-1}, no_timestamp, st.log_start};
  }
  auto rp = self->make_response_promise<produce_result>();
  const auto acks = req.acks;
  const auto timeout = std::chrono::milliseconds(std::max<int32_t>(req.timeout_ms, 0));
  append.then(
    [self, rp, acks, size, timeout](const append_result& res) mutable {
      auto& st = self->state;
      on_appended(self, res, size);
      produce_result out{res.first, no_timestamp, st.log_start};
      if (acks == 1 || st.high_watermark() > res.last) {
        rp.deliver(out);
        return;
      }
      st.pending_acks.emplace(res.last + 1,
                              pending_produce{rp, out, self->clock().now() + timeout});
      schedule_tick(self, timeout);
    },
    [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<fetch_result> fetch(self_ptr self, fetch_request req) {
  auto& st = self->state;
  if (st.closing) return not_leader(st);
  const offset hw = st.high_watermark();
  if (req.from < st.log_start || req.from > hw)
    return fail_with(errc::offset_out_of_range,
                     st.log_name + ": offset " + std::to_string(req.from.value()) +
                       " is outside " + std::to_string(st.log_start.value()) + ".." +
                       std::to_string(hw.value()));
  req.max_wait_ms = std::clamp(req.max_wait_ms, 0, st.opts.max_fetch_wait_ms);
  const bool may_wait = req.max_wait_ms > 0 && req.max_bytes > 0;
  auto park = [self](const fetch_request& r, int64_t found, int64_t total,
                     caf::typed_response_promise<fetch_result> rp) {
    auto& st = self->state;
    const auto wait = std::chrono::milliseconds(r.max_wait_ms);
    auto id = st.parked.park(r, found, total, self->clock().now() + wait);
    st.parked_promises.emplace(id, std::move(rp));
    schedule_tick(self, wait);
    // Appends that completed while a read was out count too.
    answer_parked(self, st.parked.take_ready(st.bytes_below_hw));
  };
  auto rp = self->make_response_promise<fetch_result>();
  if (req.from == hw) {
    if (!may_wait || delayed_fetch_set::satisfied(req, 0)) answer_fetch(self, rp, req);
    else park(req, 0, st.bytes_below_hw, rp);
    return rp;
  }
  const int64_t total_at_read = st.bytes_below_hw;
  self->request(st.log, caf::infinite, read_atom_v, read_request{req.from, req.max_bytes, hw})
    .then(
      [self, req, rp, total_at_read, may_wait, park](log_slice& slice) mutable {
        auto& st = self->state;
        const auto found = static_cast<int64_t>(slice.size);
        if (st.closing || !may_wait || delayed_fetch_set::satisfied(req, found)) {
          rp.deliver(fetch_result{st.high_watermark(), st.log_start, std::move(slice)});
          return;
        }
        park(req, found, total_at_read, rp);
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// The timestamp of the first record at or after `found` with a timestamp >= target, read from
// the batch that holds it (the time index points at the batch).
void answer_offset_for_time(self_ptr self, int64_t found, timestamp_ms target,
                            caf::typed_response_promise<list_offsets_result> rp) {
  auto& st = self->state;
  self->request(st.log, caf::infinite, read_atom_v, read_request{offset{found}, 1, st.high_watermark()})
    .then(
      [rp, found, target](log_slice& slice) mutable {
        list_offsets_result out{found, no_timestamp};
        batch_sequence_reader reader(slice.bytes(), std::numeric_limits<size_t>::max());
        bool done = false;
        while (!done) {
          auto b = reader.next();
          if (!b || !*b) break;
          const auto& view = **b;
          view.for_each_record([&](const record_view& r) {
            const int64_t off = view.base_offset().value() + r.offset_delta;
            const timestamp_ms ts = view.timestamp_of(r);
            if (done || off < found || ts < target) return;
            out = list_offsets_result{off, ts};
            done = true;
          });
        }
        rp.deliver(out);
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

caf::result<list_offsets_result> list_offsets(self_ptr self, timestamp_ms ts) {
  auto& st = self->state;
  if (st.closing) return not_leader(st);
  if (ts == latest_timestamp) return list_offsets_result{st.high_watermark().value(), no_timestamp};
  if (ts < 0 && ts != earliest_timestamp) return list_offsets_result{};
  auto rp = self->make_response_promise<list_offsets_result>();
  if (ts == earliest_timestamp) {
    // Asked from the log: retention may have moved the log start since the last append.
    self->request(st.log, caf::infinite, info_atom_v)
      .then(
        [self, rp](const log_info& info) mutable {
          auto& st = self->state;
          st.log_start = std::max(st.log_start, info.log_start);
          rp.deliver(list_offsets_result{st.log_start.value(), no_timestamp});
        },
        [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
    return rp;
  }
  self->request(st.log, caf::infinite, time_atom_v, ts)
    .then(
      [self, rp, ts](int64_t found) mutable {
        if (found < 0 || found >= self->state.high_watermark().value()) {
          rp.deliver(list_offsets_result{});
          return;
        }
        answer_offset_for_time(self, found, ts, rp);
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// Expires parked fetches (answered with what is there) and acks=-1 produces (REQUEST_TIMED_OUT).
void on_tick(self_ptr self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  while (!st.pending_acks.empty()) {
    auto it = std::find_if(st.pending_acks.begin(), st.pending_acks.end(),
                           [now](const auto& kv) { return kv.second.deadline <= now; });
    if (it == st.pending_acks.end()) break;
    it->second.rp.deliver(fail_with(errc::request_timed_out,
                                    st.log_name + ": the ISR did not reach offset " +
                                      std::to_string(it->first.value() - 1) + " in time"));
    st.pending_acks.erase(it);
  }
  if (!st.parked.empty()) answer_parked(self, st.parked.take_expired(now));
}

caf::result<offset> close(self_ptr self) {
  auto& st = self->state;
  auto rp = self->make_response_promise<offset>();
  if (st.closing) {
    rp.deliver(fail_with(errc::not_leader_or_follower, st.log_name + " is already closing"));
    return rp;
  }
  st.closing = true;
  for (auto& [end, p] : st.pending_acks) p.rp.deliver(not_leader(st));
  st.pending_acks.clear();
  answer_parked(self, st.parked.take_all(), [self, rp]() mutable {
    self->request(self->state.log, caf::infinite, close_atom_v)
      .then(
        [self, rp](offset recovery_point) mutable {
          spdlog::info("{}: closed, high watermark {}, recovery point {}", self->state.log_name,
                       self->state.high_watermark().value(), recovery_point.value());
          rp.deliver(recovery_point);
          self->quit();
        },
        [self, rp](caf::error& e) mutable {
          rp.deliver(e);
          self->quit(e);
        });
  });
  return rp;
}

partition_replica_actor::behavior_type partition_replica_behavior(self_ptr self,
                                                                  partition_replica_options opts,
                                                                  partition_log_actor log) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.log_name = st.opts.topic + "-" + std::to_string(st.opts.partition) + " on node " +
                std::to_string(st.opts.node.value());
  st.log = log;
  self->link_to(log);
  // Nothing else is served before the log's offsets are known.
  self->request(log, caf::infinite, info_atom_v)
    .await(
      [self](const log_info& info) {
        auto& st = self->state;
        st.log_start = info.log_start;
        st.hw.emplace(st.opts.node, info.log_end, info.log_end);
        spdlog::info("{}: leader at epoch {}, offsets {}..{}, high watermark {}", st.log_name,
                     st.opts.epoch.value(), info.log_start.value(), info.log_end.value(),
                     st.high_watermark().value());
      },
      [self](caf::error& e) {
        spdlog::error("{}: cannot read the log's offsets: {}", self->state.log_name, to_string(e));
        self->quit(e);
      });
  return {
    [self](produce_atom, produce_request& req) { return produce(self, req); },
    [self](fetch_atom, const fetch_request& req) { return fetch(self, req); },
    [self](offsets_atom, timestamp_ms ts) { return list_offsets(self, ts); },
    [self](info_atom) -> caf::result<log_info> {
      auto rp = self->make_response_promise<log_info>();
      self->request(self->state.log, caf::infinite, info_atom_v)
        .then([rp](const log_info& info) mutable { rp.deliver(info); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
      return rp;
    },
    [self](close_atom) { return close(self); },
    [self](tick_atom) { on_tick(self); },
  };
}

} // namespace

result<partition_replica_actor> spawn_partition_replica(caf::actor_system& sys,
                                                        partition_replica_options options) {
  partition_log_options log_opts;
  log_opts.dir = options.dir;
  log_opts.log_name = options.topic + "-" + std::to_string(options.partition) + " on node " +
                      std::to_string(options.node.value());
  log_opts.config = options.config;
  log_opts.recovery_point = options.recovery_point;
  log_opts.clock = options.clock;
  log_opts.schedule_background_work = options.schedule_background_work;
  auto log = open_partition_log(sys, std::move(log_opts));
  if (!log) return log.err();
  return sys.spawn(partition_replica_behavior, std::move(options), *log);
}

} // namespace capstan
