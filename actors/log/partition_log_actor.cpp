// The partition log actor: owns the segments of one partition directory. It validates and (as
// leader) stamps offsets on appends, routes appends to the active segment and reads to the
// segment holding the offset, rolls, flushes, truncates, and runs retention and compaction
// (docs/storage.md). It mirrors each segment's metadata so it can plan without asking. It keeps
// the partition's idempotent-producer state (docs/idempotence.md): a leader's append checks a
// producer's batch against it and commits it once offsets are assigned, a follower's append
// replays it; snapshots of it are written on roll and close and pruned with the log.
//
// It does no blocking file I/O itself: every segment operation (create, append, read, fsync,
// seal, truncate, delete), the leader-epoch checkpoint and producer snapshot writes go to the
// partition's I/O worker
// (actors/log/io_worker_actor.hpp) by message, and the answers come back as messages.
//
// Ordering: the worker handles the log's requests in the order sent, so a read sent after an
// append sees it. Structural changes that must finish before anything else (truncation) use
// `await`, which holds back other messages until the worker answered.

#include "actors/log/partition_log_actor.hpp"

#include <chrono>
#include <map>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "actors/log/compaction_worker.hpp"
#include "actors/log/io_worker_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/epoch_scan.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/offset_gaps.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "runtime/storage/producer_state_loader.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

namespace {

struct segment_entry {
  segment_ref slot;
  segment_meta meta;
};

struct partition_log_state {
  static inline const char* name = "capstan.partition_log";

  partition_log_options opts;
  segment_options seg_opts;
  io_worker_actor worker;
  // Whether `worker` is this log's own (no pool was given): it then stops with the log.
  bool own_worker = false;
  std::map<offset, segment_entry> segments; // by base offset; the last one is active
  offset log_start{0};
  offset log_end{0};
  offset recovery_point{0};
  offset cleaned_upto{0};
  int64_t unflushed_messages = 0;
  timestamp_ms last_flush_ms = 0;
  timestamp_ms last_retention_ms = 0;
  timestamp_ms last_compaction_ms = 0;
  bool compacting = false;
  // Bumped by every change to sealed segments (truncation, retention, compaction swap), so
  // answers computed against an older layout are discarded.
  uint64_t generation = 0;
  // Set after a storage error: the log then refuses everything (Kafka takes the log dir offline).
  std::optional<error> failed;
  // Where each leader epoch starts in this log; written to leader-epoch-checkpoint on change.
  leader_epoch_cache epochs;
  // The idempotent producers of the log so far (up to log_end); changed only as the log is.
  producer_state producers;
  timestamp_ms last_producer_expiry_ms = 0;

  timestamp_ms now() const { return opts.clock(); }
  segment_entry& active() { return segments.rbegin()->second; }
  std::vector<segment_meta> metas() const {
    std::vector<segment_meta> out;
    out.reserve(segments.size());
    for (const auto& [base, e] : segments) out.push_back(e.meta);
    return out;
  }
};

using self_ptr = partition_log_actor::stateful_pointer<partition_log_state>;

// A storage failure takes the partition offline (Kafka takes the log dir offline): the log
// refuses every new request with the error, lets the requests already sent to its worker answer
// (the worker replies in order, so a no-op sent now answers after all of them), then quits with
// the error as its exit reason. Its replica is linked and goes with it; the replica manager then
// serves the partition by an offline replica that answers KAFKA_STORAGE_ERROR naming the
// partition and this failure. Nothing new is written, so what is on disk stays as the failure
// left it; recovery on the next open cuts a torn tail.
void fail(self_ptr self, const caf::error& e) {
  auto& st = self->state;
  if (st.failed) return;
  st.failed = from_caf_error(e);
  spdlog::error("{}: storage failure, the partition goes offline: {}", st.opts.log_name,
                st.failed->to_string());
  auto quit = [self] { self->quit(to_caf_error(*self->state.failed)); };
  self->request(st.worker, caf::infinite, run_atom_v, io_task{[] {}})
    .then([quit](bool) { quit(); }, [quit](caf::error&) { quit(); });
}

caf::error refuse(const partition_log_state& st) { return to_caf_error(*st.failed); }

// Persists the epoch cache; called after every change, before the batches it describes can be
// flushed (the worker writes it before any flush sent later), so whatever survives below the
// recovery point has its epochs on disk. `done` runs once the file is written, or after a
// failure took the log offline (st.failed is then set).
void save_epochs(self_ptr self, std::function<void()> done = nullptr) {
  auto& st = self->state;
  self->request(st.worker, caf::infinite, epoch_atom_v,
                epoch_checkpoint{st.opts.dir / leader_epoch_checkpoint_name, st.epochs.entries()})
    .then(
      [done](bool) {
        if (done) done();
      },
      [self, done](caf::error& e) {
        fail(self, e);
        if (done) done();
      });
}

void flush_all(self_ptr self, std::function<void(offset)> done);

// Runs `job` (a producer snapshot write or removal) on the worker, after everything sent before;
// a failure takes the log offline like any storage failure. `done` runs once the job ran or
// failed (st.failed is then set).
void run_snapshot_job(self_ptr self, std::function<status()> job,
                      std::function<void()> done = nullptr) {
  auto outcome = std::make_shared<status>();
  self->request(self->state.worker, caf::infinite, run_atom_v,
                io_task{[job = std::move(job), outcome] { *outcome = job(); }})
    .then(
      [self, outcome, done](bool) {
        if (!*outcome) fail(self, to_caf_error(outcome->err()));
        if (done) done();
      },
      [self, done](caf::error& e) {
        fail(self, e);
        if (done) done();
      });
}

// Writes the producer state as of `end` (every batch below it is in the state, none at or past
// it) as <end>.snapshot, so that opening the log replays only the batches from there.
void snapshot_producers(self_ptr self, offset end, std::function<void()> done = nullptr) {
  auto& st = self->state;
  auto copy = std::make_shared<producer_state>(st.producers);
  copy->set_end_offset(end);
  run_snapshot_job(self, [dir = st.opts.dir, copy] { return write_producer_snapshot(dir, *copy); },
                   std::move(done));
}

// A slot for `seg` (null: a segment the worker is yet to create).
segment_ref make_slot(const partition_log_state& st, std::shared_ptr<segment> seg,
                      timestamp_ms created) {
  return std::make_shared<segment_slot>(segment_slot{std::move(seg), st.opts.log_name, created});
}

// Asks the worker to create the segment at `base` and adds it as the active one. Requests sent
// after this one find it created (the worker keeps their order); if the creation fails they are
// refused and the failure takes the log offline.
segment_entry& create_segment(self_ptr self, offset base) {
  auto& st = self->state;
  const auto created = st.now();
  auto slot = make_slot(st, nullptr, created);
  self->request(st.worker, caf::infinite, roll_atom_v, slot,
                segment_spec{st.opts.dir, base, st.seg_opts})
    .then([](const segment_meta&) {}, [self](caf::error& e) { fail(self, e); });
  return st.segments.insert_or_assign(base, segment_entry{slot, segment_meta{base, base, 0, no_timestamp, created}})
    .first->second;
}

// Seals the active segment, starts a new one at `base`, snapshots the producer state there (as
// Kafka does on roll; REQUIRES: the state holds every batch below `base` and none past it), and
// flushes the old segment in the background (Kafka flushes a rolled segment asynchronously; the
// recovery point then moves to `base`).
void roll(self_ptr self, offset base) {
  auto& st = self->state;
  auto old = st.active().slot;
  create_segment(self, base);
  snapshot_producers(self, base);
  auto gen = st.generation;
  self->request(st.worker, caf::infinite, seal_atom_v, old)
    .then([](const segment_meta&) {}, [self](caf::error& e) { fail(self, e); });
  self->request(st.worker, caf::infinite, flush_atom_v, old)
    .then(
      [self, gen, base](const segment_meta&) {
        auto& st = self->state;
        if (gen == st.generation && base > st.recovery_point) st.recovery_point = base;
      },
      [self](caf::error& e) { fail(self, e); });
  spdlog::info("{}: rolled new segment at offset {}", st.opts.log_name, base.value());
}

// Keeps only the batches of `slice` whose last offset is below `upto` (batches are whole, so the
// cut is at a batch boundary).
log_slice trim_to(log_slice slice, offset upto) {
  if (slice.next_offset <= upto) return slice;
  bytes_view all = slice.bytes();
  size_t pos = 0;
  size_t keep = 0;
  offset next = slice.first_offset;
  while (pos < all.size()) {
    auto rest = all.subspan(pos);
    auto size = record_batch_view::frame_size(rest);
    if (!size || *size > rest.size() || *size < batch_format::header_size) break;
    auto view = record_batch_view::parse(rest.subspan(0, *size), std::numeric_limits<size_t>::max());
    if (!view || view->last_offset() >= upto) break;
    next = view->last_offset() + 1;
    keep = pos + *size;
    pos = batch_format::align_up(keep);
  }
  slice.size = keep;
  slice.next_offset = keep == 0 ? slice.first_offset : next;
  if (keep == 0) slice.owner.reset();
  return slice;
}

void read_from(self_ptr self, offset segment_base, read_request req,
               caf::typed_response_promise<log_slice> rp) {
  auto& st = self->state;
  auto it = st.segments.find(segment_base);
  if (it == st.segments.end()) {
    rp.deliver(log_slice{{}, nullptr, 0, req.from, req.from});
    return;
  }
  self->request(st.worker, caf::infinite, read_atom_v, it->second.slot, req.from, req.max_bytes)
    .then(
      [self, segment_base, req, rp](log_slice& slice) mutable {
        auto& st = self->state;
        if (slice.empty()) {
          // Compaction can empty a segment's tail; the offset then lives in a later segment.
          auto next = st.segments.upper_bound(segment_base);
          if (next != st.segments.end() && next->first < req.upto) {
            req.from = std::max(req.from, next->first);
            read_from(self, next->first, req, rp);
            return;
          }
          rp.deliver(log_slice{{}, nullptr, 0, req.from, req.from});
          return;
        }
        rp.deliver(trim_to(std::move(slice), req.upto));
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

// Appends validated batches in `buf`; `frames` are their [pos, size) relative to buf.begin.
// Records each producer's batch in the producer state (after a roll before it, so the roll's
// snapshot excludes it): a leader commits `checked` (REQUIRES: set iff the leader's one batch has
// a producer id), a follower replays. The batches are then in the log as far as every later
// message is concerned: a failed write takes the whole log offline, and a reopen rebuilds the
// state from what is on disk.
// Splits the sequence where the active segment must roll; replies after every part is written,
// and, when `flush` (flush.messages reached), after the fsync too: the acknowledgement then means
// durable, as with Kafka's flush.messages=1.
caf::result<append_result> append_frames(self_ptr self, const batch_buffer& buf,
                                         const std::vector<std::pair<size_t, record_batch_view>>& frames,
                                         const std::optional<producer_append_info>& checked,
                                         append_result res, bool flush) {
  auto& st = self->state;
  auto rp = self->make_response_promise<append_result>();
  auto pending = std::make_shared<countdown>(countdown{1, nullptr});
  auto failed = std::make_shared<std::optional<caf::error>>();
  pending->done = [self, rp, res, failed, flush]() mutable {
    if (*failed) {
      rp.deliver(std::move(**failed));
    } else if (flush) {
      flush_all(self, [self, rp, res](offset) mutable {
        if (self->state.failed) rp.deliver(refuse(self->state));
        else rp.deliver(res);
      });
    } else {
      rp.deliver(res);
    }
  };
  auto send_run = [&](size_t run_begin, size_t run_end) {
    if (run_begin == run_end) return;
    ++pending->remaining;
    self->request(st.worker, caf::infinite, append_atom_v, st.active().slot,
                  batch_buffer{buf.data, buf.begin + run_begin, buf.begin + run_end})
      .then([pending](const segment_meta&) { pending->arrive(); },
            [self, pending, failed](caf::error& e) {
              fail(self, e);
              // The first failure (a roll's, say), not a follow-up "segment is not open".
              *failed = refuse(self->state);
              pending->arrive();
            });
  };
  size_t run_begin = frames.front().first;
  size_t run_end = run_begin;
  for (const auto& [pos, view] : frames) {
    const auto size = static_cast<int64_t>(view.size_bytes());
    if (should_roll(st.active().meta, size, view.last_offset(), st.now(), st.opts.config)) {
      send_run(run_begin, run_end);
      run_begin = pos;
      roll(self, view.base_offset());
    }
    if (view.producer_id() != no_producer_id) {
      if (checked) st.producers.commit(*checked, view.base_offset());
      else st.producers.replay(view);
    }
    auto& meta = st.active().meta;
    meta.size_bytes = static_cast<int64_t>(batch_format::align_up(meta.size_bytes)) + size;
    meta.next = view.last_offset() + 1;
    meta.max_timestamp = std::max(meta.max_timestamp, view.max_timestamp());
    run_end = pos + view.size_bytes();
  }
  send_run(run_begin, run_end);
  pending->arrive();
  return rp;
}

caf::result<append_result> append(self_ptr self, append_request& req) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  const bool leader = req.origin == append_origin::leader;
  if (!req.batches.data || req.batches.size() == 0 || req.batches.end > req.batches.data->size())
    return to_caf_error(make_error(errc::corrupt_message, "empty append"));
  const bool compacted = st.opts.config.cleanup == cleanup_policy::compact;

  // Validate every batch before touching anything: an append is all or nothing.
  bytes_view all = req.batches.view();
  // A leader checks produced CreateTimes against its clock: retention and time lookups trust
  // the max timestamps it stores (docs/storage.md, "Timestamps").
  std::optional<timestamp_bounds> bounds;
  if (leader)
    bounds = timestamp_bounds{st.now(), st.opts.config.timestamp_before_max_ms,
                              st.opts.config.timestamp_after_max_ms};
  batch_sequence_reader reader(all, static_cast<size_t>(st.opts.config.max_message_bytes),
                               leader ? batch_validation::produce : batch_validation::stored,
                               bounds);
  std::vector<std::pair<size_t, record_batch_view>> frames;
  append_result res;
  offset next = st.log_end;
  bool from_producer = false;
  for (;;) {
    auto b = reader.next();
    if (!b) return to_caf_error(b.err());
    if (!*b) break;
    const auto& view = **b;
    if (leader && view.is_control())
      return to_caf_error(make_error(errc::invalid_record, "clients may not send control batches"));
    if (compacted && !view.is_control()) {
      bool keyless = false;
      view.for_each_record([&](const record_view& r) { keyless |= !r.key.has_value(); });
      if (keyless)
        return to_caf_error(make_error(errc::invalid_record,
                                       "compacted topic cannot accept a record without a key"));
    }
    if (!leader && view.base_offset() < next)
      return to_caf_error(make_error(
        errc::offset_out_of_range, "replicated batch at offset " +
                                     std::to_string(view.base_offset().value()) +
                                     " does not follow the log end " + std::to_string(next.value())));
    from_producer |= view.producer_id() != no_producer_id;
    const size_t pos = static_cast<size_t>(view.data().data() - all.data());
    const offset base = leader ? next : view.base_offset();
    next = base + view.last_offset_delta() + 1;
    res.record_count += view.record_count();
    frames.emplace_back(pos, view);
  }
  if (frames.empty()) return to_caf_error(make_error(errc::corrupt_message, "no batch in append"));

  std::optional<producer_append_info> checked;
  if (leader && from_producer) {
    // Kafka's rule since produce v3: one batch per partition, so a batch is checked against the
    // state as it is, not against its own predecessors in the same request.
    if (frames.size() != 1)
      return to_caf_error(make_error(errc::invalid_record,
                                     "a batch with a producer id must be the only batch of its "
                                     "produce"));
    const auto& view = frames.front().second;
    auto check = st.producers.check(producer_batch::of(view), producer_origin::client);
    if (!check) return to_caf_error(check.err());
    if (check->duplicate) {
      const auto& original = *check->duplicate;
      spdlog::debug("{}: producer {} resent sequences {}..{}, answered with offset {}",
                    st.opts.log_name, view.producer_id(), original.first_sequence,
                    original.last_sequence, original.first_offset.value());
      return append_result{original.first_offset, original.last_offset, st.log_start,
                           view.record_count(), true};
    }
    checked = check->append;
  }

  bool epochs_changed = false;
  if (leader) {
    epochs_changed = st.epochs.assign(req.epoch, st.log_end);
    offset base = st.log_end;
    for (const auto& [pos, view] : frames) {
      std::span<uint8_t> mutable_batch{req.batches.data->data() + req.batches.begin + pos,
                                       view.size_bytes()};
      set_base_offset(mutable_batch, base);
      set_partition_leader_epoch(mutable_batch, req.epoch);
      base = base + view.last_offset_delta() + 1;
    }
  }
  if (!leader)
    for (const auto& [pos, view] : frames)
      epochs_changed |= st.epochs.assign(view.partition_leader_epoch(), view.base_offset());
  if (epochs_changed) save_epochs(self);
  res.first = frames.front().second.base_offset();
  res.last = next - 1;
  st.log_end = next;
  res.log_start = st.log_start;
  st.unflushed_messages += res.record_count;
  return append_frames(self, req.batches, frames, checked, res,
                       st.unflushed_messages >= st.opts.config.flush_messages);
}

void flush_all(self_ptr self, std::function<void(offset)> done) {
  auto& st = self->state;
  const offset target = st.log_end;
  const auto gen = st.generation;
  std::vector<segment_ref> dirty;
  for (const auto& [base, e] : st.segments)
    if (e.meta.next > st.recovery_point || e.meta.base >= st.recovery_point) dirty.push_back(e.slot);
  auto pending = std::make_shared<countdown>(countdown{dirty.size() + 1, nullptr});
  pending->done = [self, target, gen, done] {
    auto& st = self->state;
    if (!st.failed && gen == st.generation && target > st.recovery_point) st.recovery_point = target;
    st.last_flush_ms = st.now();
    done(st.recovery_point);
  };
  st.unflushed_messages = 0;
  for (const auto& slot : dirty)
    self->request(st.worker, caf::infinite, flush_atom_v, slot)
      .then([pending](const segment_meta&) { pending->arrive(); },
            [self, pending](caf::error& e) {
              fail(self, e);
              pending->arrive();
            });
  pending->arrive();
}

// Deletes the segments retention wants gone; `done` gets their count once the producer
// snapshots below the new log start are removed too.
void run_retention(self_ptr self, std::function<void(int32_t)> done = nullptr) {
  auto& st = self->state;
  st.last_retention_ms = st.now();
  const size_t n = segments_to_delete(st.metas(), st.now(), st.opts.config);
  for (size_t i = 0; i < n; ++i) {
    auto it = st.segments.begin();
    spdlog::info("{}: retention deletes segment {} (offsets {}..{}, {} bytes)", st.opts.log_name,
                 segment::file_stem(it->first), it->first.value(), it->second.meta.next.value() - 1,
                 it->second.meta.size_bytes);
    self->request(st.worker, caf::infinite, delete_atom_v, it->second.slot)
      .then([](bool) {}, [self](caf::error& e) { fail(self, e); });
    st.segments.erase(it);
  }
  if (n > 0) {
    ++st.generation;
    st.log_start = std::max(st.log_start, st.segments.begin()->first);
    if (st.epochs.truncate_from_start(st.log_start)) save_epochs(self);
    // The producers stay (KIP-360: until they expire); only their older snapshots go.
    run_snapshot_job(
      self,
      [dir = st.opts.dir, start = st.log_start] { return delete_producer_snapshots_before(dir, start); },
      [done, n] {
        if (done) done(static_cast<int32_t>(n));
      });
  } else if (done) {
    done(0);
  }
}

// Finishes a truncation once the dropped segments are gone: cuts the last kept segment, or, when
// nothing is kept, restarts the log empty at `to` (Kafka's truncateFullyAndStartAt).
void truncate_kept(self_ptr self, offset to, caf::typed_response_promise<offset> rp) {
  auto& st = self->state;
  auto finish = [self, rp](offset end) mutable {
    auto& st = self->state;
    st.log_end = end;
    st.recovery_point = std::min(st.recovery_point, end);
    st.cleaned_upto = std::min(st.cleaned_upto, end);
    if (st.epochs.truncate_from_end(end)) save_epochs(self);
    st.producers.truncate_to(end);
    spdlog::info("{}: truncated to offset {}", st.opts.log_name, end.value());
    // A snapshot past the new end describes batches that are gone (and may come back different).
    run_snapshot_job(
      self, [dir = st.opts.dir, end] { return delete_producer_snapshots_after(dir, end); },
      [self, rp, end]() mutable {
        if (self->state.failed) rp.deliver(refuse(self->state));
        else rp.deliver(end);
      });
  };
  if (st.segments.empty()) {
    st.log_start = to;
    create_segment(self, to);
    finish(to);
    return;
  }
  self->request(st.worker, caf::infinite, truncate_atom_v, st.active().slot, to)
    .await(
      [self, finish](const segment_meta& meta) mutable {
        auto& active = self->state.active().meta;
        active.next = meta.next;
        active.size_bytes = meta.size_bytes;
        active.max_timestamp = meta.max_timestamp;
        finish(meta.next);
      },
      [self, rp](caf::error& e) mutable {
        fail(self, e);
        rp.deliver(e);
      });
}

// Drops every batch with an offset >= `to`, whole batches as Kafka does, so the new log end may
// be below `to`. Segments wholly at or after `to` are deleted first, and `await` keeps every other
// message waiting until the files are gone (a new segment may reuse a deleted one's base).
caf::result<offset> drop_segments_from(self_ptr self, offset first_dropped, offset to) {
  auto& st = self->state;
  ++st.generation;
  auto rp = self->make_response_promise<offset>();
  std::vector<segment_ref> dropped;
  for (auto it = st.segments.lower_bound(first_dropped); it != st.segments.end();) {
    dropped.push_back(it->second.slot);
    it = st.segments.erase(it);
  }
  auto pending = std::make_shared<countdown>(countdown{dropped.size() + 1, nullptr});
  pending->done = [self, to, rp] { truncate_kept(self, to, rp); };
  for (const auto& slot : dropped)
    self->request(st.worker, caf::infinite, delete_atom_v, slot)
      .await([pending](bool) { pending->arrive(); },
             [self, pending](caf::error& e) {
               fail(self, e);
               pending->arrive();
             });
  pending->arrive();
  return rp;
}

caf::result<offset> truncate(self_ptr self, offset to) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  if (to >= st.log_end) return st.log_end;
  return drop_segments_from(self, to, to);
}

// Kafka's truncateFullyAndStartAt: every segment goes, and the log restarts empty at `start`
// with no epoch history (the batches that carried it are gone).
caf::result<offset> reset(self_ptr self, offset start) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  if (st.epochs.clear()) save_epochs(self);
  st.producers = producer_state{};
  run_snapshot_job(self, [dir = st.opts.dir] { return delete_all_producer_snapshots(dir); });
  spdlog::warn("{}: restarts empty at offset {} (was {}..{})", st.opts.log_name, start.value(),
               st.log_start.value(), st.log_end.value());
  return drop_segments_from(self, offset{std::numeric_limits<int64_t>::min()}, start);
}

void lookup_time(self_ptr self, offset segment_base, timestamp_ms target,
                 caf::typed_response_promise<int64_t> rp) {
  auto& st = self->state;
  auto it = st.segments.lower_bound(segment_base);
  while (it != st.segments.end() && (it->second.meta.max_timestamp == no_timestamp ||
                                     it->second.meta.max_timestamp < target))
    ++it;
  if (it == st.segments.end()) {
    rp.deliver(int64_t{-1});
    return;
  }
  const offset base = it->first;
  self->request(st.worker, caf::infinite, time_atom_v, it->second.slot, target)
    .then(
      [self, base, target, rp](int64_t found) mutable {
        if (found >= 0) {
          rp.deliver(found);
          return;
        }
        lookup_time(self, base + 1, target, rp);
      },
      [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

// A compaction's cleaned copies to make live, decided by the log against its current layout and
// carried out by its I/O worker (install_compaction); the worker fills in what it opened.
struct compaction_install {
  std::filesystem::path dir;
  segment_options seg_opts;
  offset log_start{0};
  // [new end, next segment base) of every cleaned segment but the last: offsets the cleaned copy
  // no longer holds at its end.
  std::vector<std::pair<offset, offset>> gaps;
  std::vector<compacted_segment> segments;
  // Filled by the worker, in the order of `segments`, up to the first failure.
  std::vector<std::shared_ptr<segment>> opened;
  std::vector<segment_meta> metas;
  std::optional<error> failure;
};

// Runs on the worker. Records the gaps in <dir>/offset-gaps before any install makes them
// visible, so start-up tells them from lost data (docs/storage.md, "Damage"); then renames each
// cleaned copy over its segment and opens and seals it; then drops the staging directory.
void install_compaction(compaction_install& job) {
  auto record_gaps = [&]() -> status {
    auto gaps = read_offset_gaps(job.dir);
    if (!gaps) return gaps.err();
    const auto before = *gaps;
    for (const auto& [from, to] : job.gaps) gaps->add(from, to);
    gaps->drop_below(job.log_start);
    if (*gaps == before) return {};
    return write_offset_gaps(job.dir, *gaps);
  };
  if (auto s = record_gaps(); !s) {
    job.failure = s.err();
  } else {
    for (const auto& cs : job.segments) {
      if (auto s = install_compacted_segment(job.dir, cs); !s) {
        job.failure = s.err();
        break;
      }
      auto seg = segment::open(job.dir, cs.base, segment_open_mode::open_trusted, job.seg_opts);
      if (seg) {
        if (auto s = (*seg)->seal(); !s) seg = s.err();
      }
      if (!seg) {
        job.failure = seg.err();
        break;
      }
      job.metas.push_back(meta_of(**seg, 0));
      job.opened.push_back(std::move(*seg));
    }
  }
  discard_compaction(job.dir);
}

void discard_on_worker(self_ptr self) {
  caf::anon_send(self->state.worker, run_atom_v,
                 io_task{[dir = self->state.opts.dir] { discard_compaction(dir); }});
}

caf::result<compaction_stats> compact(self_ptr self) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  st.last_compaction_ms = st.now();
  if (st.opts.config.cleanup != cleanup_policy::compact || st.compacting || st.segments.size() < 2)
    return compaction_stats{};
  st.compacting = true;
  compaction_input input;
  input.dir = st.opts.dir;
  for (auto it = st.segments.begin(); std::next(it) != st.segments.end(); ++it)
    input.bases.push_back(it->first);
  input.now = st.now();
  input.delete_retention_ms = st.opts.config.delete_retention_ms;
  input.options = st.seg_opts;
  const offset dirty_end = std::prev(st.segments.end())->first;
  const auto gen = st.generation;
  auto rp = self->make_response_promise<compaction_stats>();
  auto worker = spawn_compaction_worker(self->system());
  // Every sealed segment is flushed first: cleaned copies must never be more durable than what
  // they replace, and the worker reads the files.
  flush_all(self, [self, worker, input, gen, dirty_end, rp](offset) mutable {
    self->request(worker, caf::infinite, compact_atom_v, input)
      .then(
        [self, gen, dirty_end, rp](compaction_output& out) mutable {
          auto& st = self->state;
          st.compacting = false;
          if (gen != st.generation || st.failed) {
            discard_on_worker(self);
            rp.deliver(compaction_stats{});
            return;
          }
          auto job = std::make_shared<compaction_install>();
          job->dir = st.opts.dir;
          job->seg_opts = st.seg_opts;
          job->log_start = st.log_start;
          for (const auto& cs : out.segments) {
            auto it = st.segments.find(cs.base);
            // A segment with nothing removed stays as it is: swapping it would only cost I/O.
            if (it == st.segments.end() || cs.records_removed == 0) continue;
            if (std::next(it) != st.segments.end())
              job->gaps.emplace_back(cs.next_after, std::next(it)->first);
            job->segments.push_back(cs);
          }
          // `await`: nothing else touches the segments until the swap is done.
          self->request(st.worker, caf::infinite, run_atom_v, io_task{[job] { install_compaction(*job); }})
            .await(
              [self, job, dirty_end, rp](bool) mutable {
                auto& st = self->state;
                compaction_stats stats;
                for (size_t i = 0; i < job->opened.size(); ++i) {
                  const auto& cs = job->segments[i];
                  auto it = st.segments.find(cs.base);
                  caf::anon_send(st.worker, close_atom_v, it->second.slot);
                  const auto created = it->second.meta.created_ms;
                  it->second.meta = job->metas[i];
                  it->second.meta.created_ms = created;
                  it->second.slot = make_slot(st, job->opened[i], created);
                  ++stats.segments_cleaned;
                  stats.records_removed += cs.records_removed;
                  stats.bytes_before += cs.size_before;
                  stats.bytes_after += cs.size_after;
                }
                ++st.generation;
                st.cleaned_upto = std::max(st.cleaned_upto, dirty_end);
                spdlog::info("{}: compacted {} segments, removed {} records, {} -> {} bytes",
                             st.opts.log_name, stats.segments_cleaned, stats.records_removed,
                             stats.bytes_before, stats.bytes_after);
                if (job->failure) {
                  fail(self, to_caf_error(*job->failure));
                  rp.deliver(refuse(st));
                  return;
                }
                rp.deliver(stats);
              },
              [self, rp](caf::error& e) mutable {
                fail(self, e);
                rp.deliver(std::move(e));
              });
        },
        [self, rp](caf::error& e) mutable {
          self->state.compacting = false;
          discard_on_worker(self);
          spdlog::error("{}: compaction failed: {}", self->state.opts.log_name, to_string(e));
          rp.deliver(std::move(e));
        });
  });
  return rp;
}

// Background schedule: retention every log.retention.check.interval.ms, flush after flush.ms,
// compaction every log.cleaner.backoff.ms when worthwhile, expiry of producers idle for
// producer.id.expiration.ms every producer_expiration_check_interval_ms.
void on_tick(self_ptr self) {
  auto& st = self->state;
  const auto& c = st.opts.config;
  const auto now = st.now();
  if (!st.failed) {
    if (now - st.last_retention_ms >= c.retention_check_interval_ms) run_retention(self);
    if (st.unflushed_messages > 0 && now - st.last_flush_ms >= c.flush_ms)
      flush_all(self, [](offset) {});
    if (!st.compacting && now - st.last_compaction_ms >= c.cleaner_backoff_ms &&
        should_compact(st.metas(), st.cleaned_upto, c))
      caf::anon_send(self, compact_atom_v);
    if (now - st.last_producer_expiry_ms >= producer_expiration_check_interval_ms) {
      st.last_producer_expiry_ms = now;
      if (auto n = st.producers.expire(now, c.producer_id_expiration_ms); n > 0)
        spdlog::info("{}: expired {} idle producers", st.opts.log_name, n);
    }
  }
  self->delayed_send(self, std::chrono::milliseconds(background_interval_ms(c)), tick_atom_v);
}

partition_log_actor::behavior_type partition_log_behavior(self_ptr self, partition_log_options opts,
                                                          std::shared_ptr<loaded_log> loaded,
                                                          leader_epoch_cache epochs,
                                                          producer_state producers) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.epochs = std::move(epochs);
  st.producers = std::move(producers);
  st.worker = st.opts.worker;
  if (!st.worker) {
    // No pool: a worker of its own, linked, so it goes when the log fails or is killed.
    st.worker = spawn_io_worker(self->system());
    st.own_worker = true;
    self->link_to(st.worker);
  }
  st.seg_opts.index_interval_bytes = static_cast<size_t>(st.opts.config.index_interval_bytes);
  st.seg_opts.max_batch_bytes = static_cast<size_t>(st.opts.config.max_message_bytes);
  const auto now = st.now();
  for (auto& seg : loaded->segments) {
    auto meta = meta_of(*seg, now);
    st.segments.emplace(meta.base, segment_entry{make_slot(st, seg, now), meta});
  }
  for (auto it = st.segments.begin(); std::next(it) != st.segments.end(); ++it)
    caf::anon_send(st.worker, seal_atom_v, it->second.slot);
  loaded.reset();
  st.log_start = st.segments.begin()->first;
  st.log_end = st.active().meta.next;
  st.recovery_point = std::min(st.opts.recovery_point, st.log_end);
  st.last_flush_ms = st.last_retention_ms = st.last_compaction_ms = st.last_producer_expiry_ms = now;
  spdlog::info("{}: opened with {} segments, offsets {}..{}, recovery point {}", st.opts.log_name,
               st.segments.size(), st.log_start.value(), st.log_end.value(),
               st.recovery_point.value());
  if (st.opts.schedule_background_work) self->send(self, tick_atom_v);

  return {
    [self](append_atom, append_request& req) { return append(self, req); },
    [self](read_atom, const read_request& req) -> caf::result<log_slice> {
      auto& st = self->state;
      if (st.failed) return refuse(st);
      if (req.from < st.log_start || req.from > st.log_end)
        return to_caf_error(make_error(
          errc::offset_out_of_range,
          "offset " + std::to_string(req.from.value()) + " is outside " +
            std::to_string(st.log_start.value()) + ".." + std::to_string(st.log_end.value())));
      if (req.from == st.log_end || req.from >= req.upto || req.max_bytes <= 0)
        return log_slice{{}, nullptr, 0, req.from, req.from};
      auto rp = self->make_response_promise<log_slice>();
      auto floor = st.segments.upper_bound(req.from);
      read_from(self, floor == st.segments.begin() ? floor->first : std::prev(floor)->first, req, rp);
      return rp;
    },
    [self](time_atom, timestamp_ms target) -> caf::result<int64_t> {
      auto& st = self->state;
      if (st.failed) return refuse(st);
      auto rp = self->make_response_promise<int64_t>();
      lookup_time(self, st.segments.begin()->first, target, rp);
      return rp;
    },
    [self](truncate_atom, offset to) { return truncate(self, to); },
    [self](reset_atom, offset start) { return reset(self, start); },
    [self](epoch_atom, leader_epoch requested) -> caf::result<epoch_end> {
      auto& st = self->state;
      if (st.failed) return refuse(st);
      return st.epochs.end_offset_for(requested, st.log_end);
    },
    [self](newepoch_atom, leader_epoch epoch) -> caf::result<offset> {
      auto& st = self->state;
      if (st.failed) return refuse(st);
      if (!st.epochs.assign(epoch, st.log_end)) return st.log_end;
      auto rp = self->make_response_promise<offset>();
      save_epochs(self, [self, rp, end = st.log_end]() mutable {
        if (self->state.failed) rp.deliver(refuse(self->state));
        else rp.deliver(end);
      });
      return rp;
    },
    [self](flush_atom) -> caf::result<offset> {
      if (self->state.failed) return refuse(self->state);
      auto rp = self->make_response_promise<offset>();
      flush_all(self, [rp](offset point) mutable { rp.deliver(point); });
      return rp;
    },
    [self](retain_atom) -> caf::result<int32_t> {
      if (self->state.failed) return refuse(self->state);
      auto rp = self->make_response_promise<int32_t>();
      run_retention(self, [rp](int32_t n) mutable { rp.deliver(n); });
      return rp;
    },
    [self](compact_atom) { return compact(self); },
    [self](info_atom) -> log_info {
      auto& st = self->state;
      log_info info{st.log_start, st.log_end, st.recovery_point, 0,
                    static_cast<int32_t>(st.segments.size()), st.cleaned_upto, leader_epoch{-1}};
      if (auto latest = st.epochs.latest()) info.latest_epoch = latest->epoch;
      for (const auto& [base, e] : st.segments) info.size_bytes += e.meta.size_bytes;
      return info;
    },
    [self](close_atom) -> caf::result<offset> {
      auto rp = self->make_response_promise<offset>();
      auto finish = [self, rp](offset point) mutable {
        auto& st = self->state;
        for (auto& [base, e] : st.segments) caf::anon_send(st.worker, close_atom_v, e.slot);
        // Queued after the closes, so a worker of the log's own stops once they ran.
        if (st.own_worker) caf::anon_send(st.worker, close_atom_v);
        spdlog::info("{}: closed at offset {}, recovery point {}", self->state.opts.log_name,
                     self->state.log_end.value(), point.value());
        rp.deliver(point);
        self->quit();
      };
      if (self->state.failed) {
        finish(self->state.recovery_point);
      } else {
        // A snapshot at the log end, as Kafka writes on a clean close, so the next open replays
        // nothing.
        flush_all(self, [self, finish](offset point) mutable {
          if (self->state.failed) {
            finish(point);
            return;
          }
          snapshot_producers(self, self->state.log_end, [finish, point]() mutable { finish(point); });
        });
      }
      return rp;
    },
    [self](tick_atom) { on_tick(self); },
  };
}

// The leader-epoch cache of a freshly loaded log: the checkpoint, cut to the log's offsets, plus
// the epochs of batches the checkpoint may not know. Those can only be past the recovery point
// (the checkpoint is written before a new epoch's batches can be flushed), unless the checkpoint
// is missing or unreadable: then every batch is scanned.
result<leader_epoch_cache> load_epochs(const partition_log_options& opts,
                                       const std::vector<std::shared_ptr<segment>>& segments) {
  const auto file = opts.dir / leader_epoch_checkpoint_name;
  const offset log_start = segments.front()->base_offset();
  const offset log_end = segments.back()->next_offset();
  auto stored = read_leader_epoch_checkpoint(file);
  if (!stored)
    spdlog::warn("{}: {}; rebuilding the leader epochs from the log", opts.log_name,
                 stored.err().to_string());
  leader_epoch_cache epochs(stored ? *stored : std::vector<epoch_entry>{});
  bool changed = epochs.truncate_from_end(log_end);
  changed |= epochs.truncate_from_start(log_start);
  offset scan_from = log_start;
  if (stored && !stored->empty())
    scan_from = std::clamp(std::max(opts.recovery_point, epochs.latest() ? epochs.latest()->start : log_start),
                           log_start, log_end);
  auto scanned = scan_epochs(segments, scan_from, epochs);
  if (!scanned) return scanned.err();
  if (changed || *scanned || !stored) {
    if (auto s = write_leader_epoch_checkpoint(file, epochs.entries()); !s) return s.err();
  }
  return epochs;
}

} // namespace

result<loaded_partition_log> load_partition_log(const partition_log_options& opts) {
  if (auto made = make_directories(opts.dir); !made) return made.err();
  segment_options seg_opts;
  seg_opts.index_interval_bytes = static_cast<size_t>(opts.config.index_interval_bytes);
  seg_opts.max_batch_bytes = static_cast<size_t>(opts.config.max_message_bytes);
  auto loaded = load_log(opts.dir, opts.recovery_point, opts.start, seg_opts, opts.log_name);
  if (!loaded) return loaded.err();
  auto epochs = load_epochs(opts, loaded->segments);
  if (!epochs) return epochs.err();
  auto producers = load_producer_state(opts.dir, loaded->segments, opts.log_name);
  if (!producers) return producers.err();
  return loaded_partition_log{std::make_shared<loaded_log>(std::move(*loaded)), std::move(*epochs),
                              std::move(*producers)};
}

partition_log_actor spawn_partition_log(caf::actor_system& sys, partition_log_options opts,
                                        loaded_partition_log loaded) {
  if (!opts.clock)
    opts.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
    };
  return sys.spawn(partition_log_behavior, std::move(opts), std::move(loaded.log),
                   std::move(loaded.epochs), std::move(loaded.producers));
}

result<partition_log_actor> open_partition_log(caf::actor_system& sys, partition_log_options opts) {
  auto loaded = load_partition_log(opts);
  if (!loaded) return loaded.err();
  return spawn_partition_log(sys, std::move(opts), std::move(*loaded));
}

} // namespace capstan
