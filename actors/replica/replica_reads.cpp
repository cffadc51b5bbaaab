// What consumers read from a partition leader: fetches below the high watermark, long-polled
// until min_bytes arrive (Kafka's DelayedFetch, woken by the HW moving, never by polling), and
// ListOffsets. A follower answers both with NOT_LEADER_OR_FOLLOWER.

#include <algorithm>
#include <limits>

#include <caf/all.hpp>

#include "actors/countdown.hpp"
#include "actors/replica/log_call.hpp"
#include "actors/replica/partition_replica_state.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan::replica_detail {

namespace {

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
  ask_log(self, rp, read_atom_v, read_request{req.from, req.max_bytes, upto})
      .then(
          [self, rp, done](log_slice& slice) mutable {
            rp.deliver(fetch_result{self->state.high_watermark(), self->state.log_start,
                                    std::move(slice)});
            if (done) done();
          },
          [rp, done](caf::error& e) mutable {
            rp.deliver(std::move(e));
            if (done) done();
          });
}

// The timestamp of the first record at or after `found` with a timestamp >= target, read from
// the batch that holds it (the time index points at the batch).
void answer_offset_for_time(self_ptr self, int64_t found, timestamp_ms target,
                            caf::typed_response_promise<list_offsets_result> rp) {
  auto& st = self->state;
  ask_log(self, rp, read_atom_v, read_request{offset{found}, 1, st.high_watermark()})
      .then([rp, found, target](log_slice& slice) mutable {
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
      });
}

} // namespace

void answer_parked(self_ptr self, const std::vector<parked_fetch>& ready, std::function<void()> done) {
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

namespace {

// The consumer fetch once its epochs are checked: [from, HW), or a wait for min_bytes.
void read_for_consumer(self_ptr self, fetch_request req,
                       caf::typed_response_promise<fetch_result> rp) {
  auto& st = self->state;
  if (st.closing || !st.is_leader()) {
    rp.deliver(not_leader(st));
    return;
  }
  // Out of range is beyond the log end, not the high watermark (Kafka's LocalLog.read): a new
  // leader's HW can trail the one the old leader served, and a consumer that read up to the old HW
  // would otherwise be told its position does not exist and reset it (auto.offset.reset latest
  // skips records). Between the HW and the log end it waits, or gets nothing, as at the HW.
  const offset hw = st.high_watermark();
  if (req.from < st.log_start || req.from > st.log_end) {
    rp.deliver(fail_with(errc::offset_out_of_range,
                         st.log_name + ": offset " + std::to_string(req.from.value()) +
                             " is outside " + std::to_string(st.log_start.value()) + ".." +
                             std::to_string(st.log_end.value())));
    return;
  }
  req.max_wait_ms = std::clamp(req.max_wait_ms, 0, st.opts.max_fetch_wait_ms);
  const bool may_wait = req.max_wait_ms > 0 && req.max_bytes > 0;
  auto park = [self](const fetch_request& r, int64_t found, int64_t total,
                     caf::typed_response_promise<fetch_result> rp) {
    auto& st = self->state;
    const auto deadline = self->clock().now() + std::chrono::milliseconds(r.max_wait_ms);
    auto id = st.parked.park(r, found, total, deadline);
    st.parked_promises.emplace(id, std::move(rp));
    arm_tick(self, deadline);
    // Appends that completed while a read was out count too.
    answer_parked(self, st.parked.take_ready(st.bytes_below_hw));
  };
  if (req.from >= hw) {
    if (!may_wait || delayed_fetch_set::satisfied(req, 0)) answer_fetch(self, rp, req);
    else park(req, 0, st.bytes_below_hw, rp);
    return;
  }
  const int64_t total_at_read = st.bytes_below_hw;
  ask_log(self, rp, read_atom_v, read_request{req.from, req.max_bytes, hw})
      .then([self, req, rp, total_at_read, may_wait, park](log_slice& slice) mutable {
        auto& st = self->state;
        const auto found = static_cast<int64_t>(slice.size);
        if (st.closing || !st.is_leader() || !may_wait || delayed_fetch_set::satisfied(req, found)) {
          rp.deliver(fetch_result{st.high_watermark(), st.log_start, std::move(slice)});
          return;
        }
        park(req, found, total_at_read, rp);
      });
}

} // namespace

caf::result<fetch_result> consumer_fetch(self_ptr self, fetch_request req) {
  auto& st = self->state;
  if (st.closing || !st.is_leader()) return not_leader(st);
  // A consumer whose metadata is older than this leadership (or newer than what this replica has
  // applied) refreshes it rather than read from a replica it did not mean (KIP-320).
  if (req.current_leader_epoch.value() >= 0)
    if (auto e = check_epoch(st, req.current_leader_epoch)) return e;
  // Records of an epoch later than this leadership's: from a leader this replica has not heard
  // of (a caller that names no current epoch), or from an earlier topic of the same name.
  if (req.last_fetched_epoch > st.epoch) {
    const auto why = st.log_name + ": the consumer read records of leader epoch " +
                     std::to_string(req.last_fetched_epoch.value()) + ", later than this leader's " +
                     std::to_string(st.epoch.value());
    return req.current_leader_epoch.value() < 0
               ? fail_with(errc::unknown_leader_epoch, why)
               : fail_with(errc::offset_out_of_range, why + " (the topic was recreated?)");
  }
  auto rp = self->make_response_promise<fetch_result>();
  // Records of this leadership's epoch are never truncated while it leads. Of an earlier one, the
  // consumer may have read a tail a former leader lost in an unclean election: as Kafka's
  // Partition.fetchRecords, the epoch's end here below the consumer's position (or an earlier
  // last epoch than the consumer's) means the log diverged, and the consumer is told where
  // instead of being handed other records at offsets it already read. (An epoch older than the
  // log's first entry ends where that entry starts.) A log without epoch entries cannot be
  // judged; the fetch goes on.
  if (req.last_fetched_epoch.value() < 0 || req.last_fetched_epoch == st.epoch) {
    read_for_consumer(self, req, rp);
    return rp;
  }
  ask_log(self, rp, epoch_atom_v, req.last_fetched_epoch)
      .then([self, req, rp, asked_at = st.epoch](const epoch_end& end) mutable {
        auto& st = self->state;
        // The leadership may have changed while the log answered: the caller starts again.
        if (st.closing || !st.is_leader() || st.epoch != asked_at) {
          rp.deliver(not_leader(st));
          return;
        }
        if (end.epoch.value() >= 0 && (end.epoch < req.last_fetched_epoch || end.end < req.from)) {
          rp.deliver(fetch_result{st.high_watermark(), st.log_start,
                                  log_slice{{}, nullptr, 0, req.from, req.from}, end});
          return;
        }
        read_for_consumer(self, req, rp);
      });
  return rp;
}

caf::result<list_offsets_result> list_offsets(self_ptr self, timestamp_ms ts) {
  auto& st = self->state;
  if (st.closing || !st.is_leader()) return not_leader(st);
  if (ts == latest_timestamp) return list_offsets_result{st.high_watermark().value(), no_timestamp};
  if (ts < 0 && ts != earliest_timestamp) return list_offsets_result{};
  auto rp = self->make_response_promise<list_offsets_result>();
  if (ts == earliest_timestamp) {
    // Asked from the log: retention may have moved the log start since the last append.
    ask_log(self, rp, info_atom_v).then([self, rp](const log_info& info) mutable {
      auto& st = self->state;
      st.log_start = std::max(st.log_start, info.log_start);
      rp.deliver(list_offsets_result{st.log_start.value(), no_timestamp});
    });
    return rp;
  }
  ask_log(self, rp, time_atom_v, ts).then([self, rp, ts](int64_t found) mutable {
    if (found < 0 || found >= self->state.high_watermark().value()) {
      rp.deliver(list_offsets_result{});
      return;
    }
    answer_offset_for_time(self, found, ts, rp);
  });
  return rp;
}

} // namespace capstan::replica_detail
